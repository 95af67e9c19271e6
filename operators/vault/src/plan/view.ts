// The planner's view of one observation, and what every rule needs from it: the options with their defaults,
// quorum arithmetic, the image spec asks for, the pods sorted and the live ones apart, and (once an active node
// answered the raft configuration) who is a healthy voter. The rules themselves live by concern beside plan.ts:
// gates.ts, bootstrap.ts, quorum.ts, token.ts, membership.ts, rollout.ts and the modules they name.
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { type StalledTimings, spreadHint } from "./stalled.ts";
import type { Observed, ObservedPeer, ObservedPod, PlanOptions, Step } from "./types.ts";

/** Defaults of {@link PlanOptions}. */
export const PLAN_DEFAULTS: Required<PlanOptions> = {
  initGraceMs: 2 * 60_000,
  unschedulableAfterMs: 2 * 60_000,
  pendingAfterMs: 10 * 60_000,
  terminatingAfterMs: 5 * 60_000,
  notPeerAfterMs: 2 * 60_000,
  registrationAfterMs: 60_000,
};

/** The image a VaultCluster's pods run: `<repository>:<version>`. */
export function vaultImage(spec: Pick<VaultClusterSpec, "repository" | "version">): string {
  return `${spec.repository}:${spec.version}`;
}

/**
 * True when the container the kubelet runs is `image` (the runtime may report it fully qualified, e.g.
 * docker.io/hashicorp/vault:1.14.8). Without a container status, the pod spec's image is taken.
 */
export function runsImage(p: Pick<ObservedPod, "image" | "runningImage">, image: string): boolean {
  const running = p.runningImage ?? p.image;
  return running === image || running.endsWith(`/${image}`);
}

/** A Wait step. */
export function wait(reason: string, message: string): Step {
  return { type: "Wait", reason, message };
}

/** A Degraded step, naming `pods` when given. */
export function degraded(reason: string, message: string, pods?: string[]): Step {
  return { type: "Degraded", reason, message, ...(pods === undefined ? {} : { pods }) };
}

/** One observation as every rule reads it. */
export interface View {
  cluster: string;
  spec: VaultClusterSpec;
  observed: Observed;
  now: Date;
  /** The options with their defaults, and what spec's placement says about an unschedulable pod. */
  opts: Required<PlanOptions> & StalledTimings;
  /** The image spec asks for. */
  image: string;
  /** Every pod, terminating ones included, by ordinal. */
  pods: ObservedPod[];
  /** The pods not being deleted. */
  live: ObservedPod[];
  /** The cluster_id this VaultCluster is: recorded in status, else beside the keys. */
  known: string | undefined;
  /** Live pods that answer initialized. */
  initialized: ObservedPod[];
}

/** The view of one observation. */
export function view(
  cluster: string,
  spec: VaultClusterSpec,
  observed: Observed,
  now: Date,
  options: PlanOptions,
): View {
  const hint = spreadHint(spec.podTemplate, spec.replicas);
  const opts = { ...PLAN_DEFAULTS, ...options, ...(hint === undefined ? {} : { unschedulableHint: hint }) };
  const pods = [...observed.pods].sort((a, b) => a.ordinal - b.ordinal);
  const live = pods.filter((p) => p.terminatingSince === undefined);
  return {
    cluster,
    spec,
    observed,
    now,
    opts,
    image: vaultImage(spec),
    pods,
    live,
    known: observed.knownClusterID ?? observed.keys?.clusterID,
    initialized: live.filter((p) => p.vault.reachable && p.vault.initialized),
  };
}

/** The view once an active node answered the raft configuration. */
export interface RaftView extends View {
  /** The active pod. */
  active: ObservedPod;
  /** The raft configuration the active node reports. */
  servers: ObservedPeer[];
  peerIDs: Set<string>;
  /** Every pod by name, terminating ones included. */
  byName: Map<string, ObservedPod>;
  /** Names of every pod, terminating ones included. */
  podNames: Set<string>;
  /** Voters in the raft configuration. */
  voterCount: number;
  /** Whether the pod of `nodeID` is healthy: Ready, unsealed and a raft voter (see {@link healthy}). */
  healthyID(nodeID: string): boolean;
}

/** The raft view of `v`, with `active` and the `servers` it reported. */
export function raftView(v: View, active: ObservedPod, servers: ObservedPeer[]): RaftView {
  const peerIDs = new Set(servers.map((s) => s.nodeID));
  const byName = new Map(v.pods.map((p) => [p.name, p]));
  return {
    ...v,
    active,
    servers,
    peerIDs,
    byName,
    podNames: new Set(v.pods.map((p) => p.name)),
    voterCount: servers.filter((s) => s.voter).length,
    healthyID: (id) => healthy(byName.get(id), peerIDs, servers),
  };
}

/** Ready in Kubernetes, unsealed, and a raft voter. */
export function healthy(p: ObservedPod | undefined, peerIDs: Set<string>, servers: ObservedPeer[]): boolean {
  if (p === undefined || p.terminatingSince !== undefined) return false;
  return sickness(p, peerIDs, servers) === undefined;
}

/** Why a pod is not healthy (for the messages), or undefined when it is. */
export function sickness(p: ObservedPod, peerIDs: Set<string>, servers: ObservedPeer[]): string | undefined {
  if (!runsImage(p, p.image)) return `still running ${p.runningImage}, to be restarted on ${p.image}`;
  if (!p.vault.reachable) return "not answering";
  if (!p.vault.initialized) return "not joined";
  if (p.vault.sealed) return "sealed";
  if (!peerIDs.has(p.name)) return "not a raft peer";
  if (servers.find((s) => s.nodeID === p.name)?.voter !== true) return "not yet a raft voter";
  if (!p.ready) return "not ready";
  return undefined;
}
