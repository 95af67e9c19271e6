// One reconcile of the EtcdCluster controller against the in-memory API server (core's test kit) and a scripted
// etcd: the wiring around the planner (PodDisruptionBudget from the voters that exist, before any removal).
import { type KubeObject, PodDisruptionBudget } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import { memberDataClaim } from "../desired/cluster-objects.ts";
import { memberPod } from "../desired/member-pod.ts";
import { peerURL } from "../desired/names.ts";
import type { EtcdClient, EtcdMember } from "../etcd/etcd-client.ts";
import { reconcileEtcdCluster } from "./controller.ts";
import { EtcdOperatorMetrics } from "./metrics.ts";

const names = ["demo-a", "demo-b", "demo-c", "demo-d", "demo-e"];
const ids = new Map(names.map((n, i) => [n, String(101 + i)]));

const cluster: EtcdCluster = {
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 2 },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" } },
  status: { clusterID: "ff", observedGeneration: 1 },
};

/** The running member pods and claims of a 5-member cluster. */
function objects(): KubeObject[] {
  const initial = names.map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  return names.flatMap((n, i) => {
    const pod = memberPod({ cluster, member: n, initialCluster: initial, initialClusterState: "existing" });
    pod.status = {
      phase: "Running",
      podIP: `10.0.0.${i + 1}`,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-30T00:00:00Z" }],
    };
    return [pod, memberDataClaim(cluster, n)!];
  });
}

/** A healthy 5-voter etcd, demo-a leading; records the calls. */
function fakeEtcd(calls: string[]) {
  const members: EtcdMember[] = names.map((n) => ({
    id: ids.get(n)!,
    name: n,
    peerURLs: [peerURL(cluster, n)],
    clientURLs: [],
    isLearner: false,
  }));
  const header = { clusterId: "255", memberId: "101", revision: 1, raftTerm: 1 };
  return () =>
    ({
      memberList: async (o: { linearizable?: boolean } = {}) => {
        calls.push(o.linearizable === true ? "list linearizable" : "list");
        return { header, members };
      },
      status: async (endpoint: string) => ({
        endpoint,
        header,
        memberId: "0",
        leader: "101",
        version: "3.6.15",
        dbSize: 1,
        dbSizeInUse: 1,
        raftIndex: 100,
        raftTerm: 1,
        raftAppliedIndex: 100,
        isLearner: false,
        errors: [],
      }),
      health: async (endpoint: string) => ({ endpoint, healthy: true }),
      alarmList: async () => [],
      memberRemove: async (id: string) => void calls.push(`remove ${id}`),
    }) as unknown as EtcdClient;
}

describe("reconcileEtcdCluster", () => {
  it("scaling 5 -> 3: the PodDisruptionBudget keeps a quorum of the 5 voters, applied before the first removal", async () => {
    const calls: string[] = [];
    const run = await reconcileOnce(
      (req, ctx) =>
        reconcileEtcdCluster(req, ctx, {
          metrics: new EtcdOperatorMetrics(new Registry()),
          etcdClient: fakeEtcd(calls),
        }),
      { kinds: [EtcdClusterKind], objects: [cluster, ...objects()], request: cluster },
    );
    run.expectNoError();
    const pdb = run.get(PodDisruptionBudget, "demo", "ns");
    expect(pdb?.spec?.minAvailable).toBe(3);
    const order = run.writes.map((w) => `${w.verb} ${w.kind}`);
    const pdbAt = order.findIndex((w) => w.endsWith("PodDisruptionBudget"));
    const removalAt = order.indexOf("delete Pod");
    expect(pdbAt).toBeGreaterThanOrEqual(0);
    expect(removalAt).toBeGreaterThan(pdbAt);
    expect(calls).toContain("list linearizable");
    expect(calls.filter((c) => c.startsWith("remove"))).toHaveLength(1);
  });
});
