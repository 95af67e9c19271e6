// Fixtures of the recovery's observation tests (the fence, learners, the call-off): pods as the cache shows them, data
// claims, an empty cache, an etcd answering as a voter or a learner, and one whose member answers alone.
import type { Cache, PodObject } from "@capstan/core";
import { type EtcdClient, EtcdError } from "../../etcd/etcd-client.ts";
import type { EtcdClientFactory } from "../cluster/observe.ts";

/** A member's pod: running, or being deleted (since `deleting`), on `node`, in `phase`. */
export const recoveryPod = (
  name: string,
  o: { ip?: string; deleting?: string; node?: string; phase?: string } = {},
) =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "ns",
      ...(o.deleting === undefined ? {} : { deletionTimestamp: o.deleting }),
    },
    spec: { containers: [], ...(o.node === undefined ? {} : { nodeName: o.node }) },
    status: { phase: o.phase ?? "Running", ...(o.ip === undefined ? {} : { podIP: o.ip }) },
  }) as unknown as PodObject;

/** A member's data claim as the observation holds it. */
export const recoveryClaim = (name: string) => ({ metadata: { name: `${name}-data`, annotations: {} } });

/** A cache that holds nothing. */
export const noCache = { list: async () => [] } as unknown as Cache;

/** An etcd that answers for demo-b as a learner's or a voter's, listing `members`; records member removals. */
export function learnerAwareEtcd(
  self: { id: string; learner: boolean },
  members: { id: string; name: string; isLearner: boolean }[],
) {
  const calls: string[] = [];
  const factory: EtcdClientFactory = (endpoints) =>
    ({
      status: async (endpoint: string) => ({
        endpoint,
        header: { clusterId: "1", memberId: self.id, revision: 40, raftTerm: 2 },
        memberId: self.id,
        leader: self.id,
        raftIndex: 120,
        isLearner: self.learner,
      }),
      memberList: async () => ({ header: {}, members }),
      health: async () => ({ healthy: true }),
      memberRemove: async (id: string) => {
        calls.push(`remove ${id} via ${endpoints.join(",")}`);
      },
    }) as unknown as EtcdClient;
  return { factory, calls };
}

/** An etcd whose members answer their status alone (raft index 300, no quorum); nothing answers a member list. */
export const aloneEtcd: EtcdClientFactory = (endpoints) =>
  ({
    status: async (endpoint: string) => ({
      endpoint,
      header: { clusterId: "255", memberId: "1", revision: 90, raftTerm: 2 },
      memberId: "1",
      leader: "0",
      version: "3.6.15",
      raftIndex: 300,
      raftAppliedIndex: 300,
      isLearner: false,
      errors: [],
    }),
    memberList: async () => {
      throw new EtcdError("no leader", endpoints);
    },
    health: async (endpoint: string) => ({ endpoint, healthy: false }),
    alarmList: async () => [],
  }) as unknown as EtcdClient;
