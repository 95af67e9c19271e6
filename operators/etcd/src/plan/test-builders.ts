// Builders the planner's table tests share: the clock, a spec with the defaults the API server applies, and an observed member
// that is a healthy started voter on 3.6.15 unless a case says otherwise; the recovery planner's member, status and
// observation, and a recovery from a backup.
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import type { RecoveryFromBackup, RecoveryMember, RecoveryObserved } from "./recovery.ts";
import type { ObservedRestore } from "./restore.ts";
import type { Observed, ObservedMember, ObservedPod, Step } from "./types.ts";

/** A spec of 3 members on 3.6.15 with 1Gi claims, overridden by `o`. */
export const spec = (o: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec => ({
  replicas: 3,
  version: "3.6.15",
  repository: "gcr.io/etcd-development/etcd",
  storage: { size: "1Gi" },
  ...o,
});

/** A healthy, started voter `name` (id `id-<name>`, raft index 1000), overridden by `o`. */
export const member = (name: string, o: Partial<ObservedMember> = {}): ObservedMember => ({
  id: `id-${name}`,
  name,
  peerURLs: [`http://${name}.demo-peer.ns.svc:2380`],
  isLearner: false,
  started: true,
  healthy: true,
  leader: false,
  version: "3.6.15",
  raftIndex: 1000,
  ...o,
});

/** A member as the recovery planner sees it: its claim owned, its pod present, unless `o` says otherwise. */
export const m = (name: string, o: Partial<RecoveryMember> = {}): RecoveryMember => ({
  name,
  claimOwned: true,
  pod: true,
  ...o,
});
/** A member's etcd status: its raft index, revision and cluster ID. */
export const st = (raftIndex: number, revision = raftIndex) => ({ raftIndex, revision, clusterID: "c1" });
/** The recovery request "dr" from a survivor, quorum lost, over `members`; `o` overrides. */
export const obs = (members: RecoveryMember[], o: Partial<RecoveryObserved> = {}): RecoveryObserved => ({
  request: "dr",
  from: "Survivor",
  quorum: false,
  members,
  ...o,
});
/**
 * A recovery from the Succeeded EtcdBackup nightly (etcd 3.6.15, revision 42) into seed demo-seed1, nothing of it
 * made yet; `restore` and `o` override.
 */
export const fromBackup = (
  restore: Partial<ObservedRestore> = {},
  o: Partial<RecoveryFromBackup> = {},
): RecoveryFromBackup => ({
  spec: spec({ bootstrap: { restore: { backup: { name: "nightly" } } } }),
  seed: "demo-seed1",
  source: "backup/nightly",
  restore: {
    claims: [],
    operatorImage: true,
    backup: { phase: "Succeeded", etcdVersion: "3.6.15", revision: 42 },
    ...restore,
  },
  ...o,
});

/** The planner tests' clock. */
export const NOW = new Date("2026-11-29T12:00:00Z");
/** The name planNext is offered for a new member. */
export const FRESH = "demo-fresh";
/** `n` minutes before NOW. */
export const minutesAgo = (n: number) => new Date(NOW.getTime() - n * 60_000);
export const MiB = 1024 * 1024;

/** The member without a reported raft index. */
export const withoutRaftIndex = ({ raftIndex: _, ...m }: ObservedMember): ObservedMember => m;
/** The member without a reported version. */
export const withoutVersion = ({ version: _, ...m }: ObservedMember): ObservedMember => m;

/** A member pod, ready unless `o` says otherwise. */
export const pod = (name: string, o: Partial<ObservedPod> = {}): ObservedPod => ({ name, ready: true, ...o });

/** A reachable cluster where every member has a ready pod and a volume, unless overridden. */
export const cluster = (members: ObservedMember[], o: Partial<Observed> = {}): Observed => ({
  etcd: { reachable: true, members },
  pods: members.map((m) => pod(m.name, { ready: m.healthy })),
  volumes: members.map((m) => m.name),
  bootstrapped: true,
  ...o,
});

/** Three healthy members, demo-a leading, each overridden by `o`. */
export const three = (o: Partial<ObservedMember> = {}) => [
  member("demo-a", { leader: true, ...o }),
  member("demo-b", o),
  member("demo-c", o),
];

/** A planner table case: its name, the spec, the observation, and what the step must match. */
export type Case = [string, EtcdClusterSpec, Observed, Partial<Step>];
