// A whole recovery from a backup, reconcile after reconcile, on core's in-memory API server with a scripted etcd
// (a real run is e2e/suites/etcd/restore.test.ts): the world between two reconciles does what the kubelet and the
// Job controller would (a deleted pod goes, the restore Job completes, the seed's pod runs and its etcd answers as
// a new one-member cluster). Every reconcile starts from the objects alone, like a new leader.
import type { KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { type EtcdRestore, EtcdRestoreKind, KEPT_BY_RESTORE_LABEL } from "../../api/etcd-restore.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { dataClaimName, peerURL } from "../../desired/names.ts";
import { type EtcdClient, EtcdError } from "../../etcd/etcd-client.ts";
import { reconcileEtcdCluster } from "../cluster/controller.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { recoveryJobName, recoverySeedName } from "./recovery.ts";

const SHA = "c".repeat(64);
const cluster: EtcdCluster = {
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" } },
  status: { clusterID: "ff", observedGeneration: 1 },
};
const backup: EtcdBackup = {
  apiVersion: EtcdBackupKind.apiVersion,
  kind: EtcdBackupKind.kind,
  metadata: { name: "snap", namespace: "ns" },
  spec: { clusterName: "demo", destination: { pvc: { claimName: "backups" } } },
  status: {
    phase: "Succeeded",
    etcdVersion: "3.6.15",
    revision: 42,
    sha256: SHA,
    size: 1000,
    location: "pvc://backups/ns/demo/snap.db",
    completionTime: "2026-12-02T07:00:00Z",
  },
};
const request: EtcdRestore = {
  apiVersion: EtcdRestoreKind.apiVersion,
  kind: EtcdRestoreKind.kind,
  metadata: { name: "dr", namespace: "ns", uid: "r1", creationTimestamp: "2026-12-02T08:00:00Z" },
  spec: { clusterName: "demo", from: "Backup", source: { backup: { name: "snap" }, bumpRevision: 1000 } },
};
const SEED = recoverySeedName(cluster, request);
const SEED_IP = "10.0.0.9";

/** The survivor (its etcd answers alone, no quorum) with its claim; the other two members are gone with theirs. */
function start(): KubeObject[] {
  const initial = ["demo-a", "demo-b", "demo-c"].map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  const pod = memberPod({
    cluster,
    member: "demo-a",
    initialCluster: initial,
    initialClusterState: "existing",
  });
  pod.status = { phase: "Running", podIP: "10.0.0.1", conditions: [] };
  return [cluster, pod, memberDataClaim(cluster, "demo-a")!, backup, request];
}

/** Peer URLs of the learners added. */
const added: string[] = [];

/** demo-a answers its status alone (no quorum); the seed, once its pod runs, as a new one-member cluster. */
function scriptedEtcd() {
  const header = (id: string, revision: number) => ({ clusterId: id, memberId: "1", revision, raftTerm: 2 });
  const seed = (endpoints: string[]) => endpoints.some((e) => e.includes(SEED_IP));
  const fail = async () => {
    throw new EtcdError("no leader", ["x"]);
  };
  return (endpoints: string[]) =>
    ({
      status: async (endpoint: string) =>
        endpoint.includes(SEED_IP)
          ? {
              endpoint,
              header: header("4660", 1042),
              raftIndex: 5,
              leader: "1",
              version: "3.6.15",
              dbSize: 1,
              dbSizeInUse: 1,
              raftTerm: 2,
              raftAppliedIndex: 5,
              isLearner: false,
              errors: [],
              memberId: "1",
            }
          : {
              endpoint,
              header: header("255", 90),
              raftIndex: 300,
              leader: "0",
              version: "3.6.15",
              dbSize: 1,
              dbSizeInUse: 1,
              raftTerm: 2,
              raftAppliedIndex: 300,
              isLearner: false,
              errors: [],
              memberId: "1",
            },
      memberList: seed(endpoints)
        ? async () => ({
            header: header("4660", 1042),
            members: [
              { id: "1", name: SEED, peerURLs: [peerURL(cluster, SEED)], clientURLs: [], isLearner: false },
            ],
          })
        : fail,
      health: async (endpoint: string) => ({ endpoint, healthy: endpoint.includes(SEED_IP) }),
      alarmList: async () => [],
      memberAddAsLearner: async (urls: string[]) => {
        added.push(...urls);
        return {
          header: header("4660", 1043),
          member: { id: "2", name: "", peerURLs: urls, clientURLs: [], isLearner: true },
          members: [],
        };
      },
    }) as unknown as EtcdClient;
}

/** What the kubelet, the garbage collector and the Job controller do between two reconciles. */
function world(objects: KubeObject[]): KubeObject[] {
  return objects.flatMap((o) => {
    if (o.kind === "Pod" && o.metadata.deletionTimestamp !== undefined) return [];
    if (o.kind === "Job") {
      return [{ ...o, status: { conditions: [{ type: "Complete", status: "True" }] } } as KubeObject];
    }
    if (o.kind === "Pod" && o.metadata.name === SEED) {
      return [
        {
          ...o,
          status: { phase: "Running", podIP: SEED_IP, conditions: [{ type: "Ready", status: "True" }] },
        } as KubeObject,
      ];
    }
    return [o];
  });
}

/** One reconcile of the cluster among `objects`, its etcd scripted, the operator's image known. */
const reconcile = (objects: KubeObject[]) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient: scriptedEtcd(),
        operatorImage: "op:1",
      }),
    { kinds: [EtcdClusterKind, EtcdBackupKind, EtcdRestoreKind], objects, request: cluster },
  );

describe("a recovery from a backup, reconcile after reconcile", () => {
  it("keeps the old claim, restores one seed with one Job, starts it as a new cluster, records the new ID", async () => {
    let objects = start();
    const writes: string[] = [];
    const events: string[] = [];
    let restore: EtcdRestore | undefined;
    for (let i = 0; i < 20; i++) {
      const run = await reconcile(objects);
      run.expectNoError();
      writes.push(
        ...run.writes.map((w) => `${w.verb} ${w.kind} ${w.name}${w.subresource ? `/${w.subresource}` : ""}`),
      );
      events.push(...run.events.map((e) => e.reason));
      restore = run.get(EtcdRestoreKind, "dr", "ns");
      objects = world(run.objects);
      if (restore?.status?.phase === "Succeeded" || restore?.status?.phase === "Failed") break;
    }
    const trace = writes.join("\n");
    expect(restore?.status, trace).toMatchObject({
      phase: "Succeeded",
      seed: SEED,
      source: "backup/snap",
      snapshotRevision: 42,
      revision: 1042,
      clusterID: "1234",
      keptClaims: ["demo-a-data"],
    });
    const find = <T extends KubeObject>(kind: string, name: string) =>
      objects.find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;
    const after = find<EtcdCluster>("EtcdCluster", "demo");
    expect(after?.status?.clusterID).toBe("1234");
    expect(after?.status?.restore).toMatchObject({
      source: "backup/snap",
      snapshotRevision: 42,
      revision: 1042,
      clusterID: "1234",
    });
    const kept = find<KubeObject>("PersistentVolumeClaim", dataClaimName("demo-a"));
    expect(kept?.metadata.labels?.[KEPT_BY_RESTORE_LABEL]).toBe("dr");
    expect(kept?.metadata.ownerReferences ?? []).toEqual([]);
    expect(find("Pod", "demo-a")).toBeUndefined();
    expect(
      writes.filter((w) => w.startsWith("delete PersistentVolumeClaim")),
      trace,
    ).toEqual([]);
    expect(
      writes.filter((w) => w.startsWith("create Job")),
      trace,
    ).toEqual([`create Job ${recoveryJobName(cluster, request)}`]);
    expect(
      writes.filter((w) => w.startsWith("create PersistentVolumeClaim")),
      trace,
    ).toEqual([`create PersistentVolumeClaim ${SEED}-data`]);
    expect(
      writes.filter((w) => w.startsWith("create Pod")),
      trace,
    ).toEqual([`create Pod ${SEED}`]);
    expect(events).toContain("Recovered");
    // The ordinary planner takes over from the new cluster ID: it grows the cluster with a learner, not Degraded.
    const next = await reconcile(objects);
    next.expectNoError();
    expect(next.events.map((e) => e.reason)).toEqual(["AddLearner"]);
    expect(added).toHaveLength(1);
  });
});
