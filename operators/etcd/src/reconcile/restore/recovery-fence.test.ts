// What the recovery observes for its fence (issue 27 item 3): a pod being deleted is not gone.
import { type KubeObject, PersistentVolumeClaim } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { type EtcdRestore, EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { peerURL } from "../../desired/names.ts";
import { reconcileEtcdCluster } from "../cluster/controller.ts";
import type { Observation } from "../cluster/observe.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { observeRecoveryMembers, RECOVERY_PHASE_ANNOTATION } from "./recovery.ts";
import { aloneEtcd, learnerAwareEtcd, noCache, recoveryClaim, recoveryPod } from "./recovery-fixture.ts";

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1" },
  spec: { replicas: 3, version: "3.6.15", repository: "repo/etcd", storage: { size: "1Gi" } },
};

describe("observeRecoveryMembers", () => {
  it("a pod being deleted is not gone: terminating since when, on which node; an ended pod is seen too", async () => {
    const obs = {
      claims: new Map([
        ["demo-a", recoveryClaim("demo-a")],
        ["demo-c", recoveryClaim("demo-c")],
      ]),
      pods: new Map([
        [
          "demo-a",
          recoveryPod("demo-a", { deleting: "2026-12-04T20:00:00Z", node: "node-2", ip: "10.0.0.1" }),
        ],
        ["demo-c", recoveryPod("demo-c", { phase: "Failed" })],
      ]),
    } as unknown as Observation;
    const etcd = learnerAwareEtcd({ id: "2", learner: false }, []);
    const members = await observeRecoveryMembers(cluster, "dr", noCache, obs, etcd.factory);
    expect(members.find((x) => x.name === "demo-a")).toMatchObject({
      pod: false,
      terminating: { since: new Date("2026-12-04T20:00:00Z"), node: "node-2" },
    });
    expect(members.find((x) => x.name === "demo-a")?.podEnded).toBeUndefined();
    expect(members.find((x) => x.name === "demo-c")).toMatchObject({ pod: false, podEnded: true });
    expect(members.find((x) => x.name === "demo-c")?.terminating).toBeUndefined();
  });
});

// A survivor recovery, reconcile after reconcile on core's in-memory API server, with another member's pod stuck
// Terminating (its node unreachable: a finalizer keeps it in the fake server, as a missing kubelet does in a real
// one): nothing is forked until a human force-deletes it, and the cluster's status says why.
const survivorRequest: EtcdRestore = {
  apiVersion: EtcdRestoreKind.apiVersion,
  kind: EtcdRestoreKind.kind,
  metadata: { name: "dr", namespace: "ns", uid: "r1", creationTimestamp: "2026-12-04T20:00:00Z" },
  spec: { clusterName: "demo", from: "Survivor" },
};
const bootstrapped: EtcdCluster = {
  ...cluster,
  metadata: { ...cluster.metadata, generation: 1 },
  status: { clusterID: "ff", observedGeneration: 1 },
};

function stuckWorld(): KubeObject[] {
  const initial = ["demo-a", "demo-b", "demo-c"].map((n) => ({ name: n, peerURL: peerURL(bootstrapped, n) }));
  const member = (name: string) =>
    memberPod({
      cluster: bootstrapped,
      member: name,
      initialCluster: initial,
      initialClusterState: "existing",
    });
  const a = member("demo-a");
  a.status = { phase: "Running", podIP: "10.0.0.1", conditions: [] };
  const b = member("demo-b");
  b.metadata.deletionTimestamp = "2026-12-04T19:55:00Z";
  b.metadata.finalizers = ["test.capstan.dev/node-unreachable"];
  b.spec = { ...b.spec!, nodeName: "node-2" };
  b.status = { phase: "Running", conditions: [] };
  return [
    bootstrapped,
    a,
    b,
    memberDataClaim(bootstrapped, "demo-a")!,
    memberDataClaim(bootstrapped, "demo-b")!,
    survivorRequest,
  ];
}

const reconcileSurvivor = (objects: KubeObject[]) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient: aloneEtcd,
      }),
    { kinds: [EtcdClusterKind, EtcdRestoreKind], objects, request: bootstrapped },
  );

describe("a survivor recovery next to a pod stuck Terminating", () => {
  it("waits (WaitingForFence, naming the pod and its node) until the pod is gone, then forks", async () => {
    let objects = stuckWorld();
    const writes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const run = await reconcileSurvivor(objects);
      run.expectNoError();
      writes.push(
        ...run.writes.map((w) => `${w.verb} ${w.kind} ${w.name}${w.subresource ? `/${w.subresource}` : ""}`),
      );
      objects = run.objects;
    }
    const trace = writes.join("\n");
    // Chosen and the other claim kept, but the survivor's pod is never deleted nor recreated with the flag.
    expect(writes, trace).toContain("patch PersistentVolumeClaim demo-b-data");
    expect(
      writes.filter((w) => /Pod demo-a/.test(w)),
      trace,
    ).toEqual([]);
    const find = <T extends KubeObject>(kind: string, name: string) =>
      objects.find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;
    const claimA = find<KubeObject>("PersistentVolumeClaim", "demo-a-data");
    expect(claimA?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION]).toBeUndefined();
    const restoreNow = find<EtcdRestore>("EtcdRestore", "dr");
    expect(restoreNow?.status?.phase).toBe("Running");
    expect(restoreNow?.status?.message).toMatch(
      /pod demo-b is Terminating since 2026-12-04T19:55:00.000Z on node node-2: etcd may still be running behind a partition.*kubectl delete pod demo-b --force --grace-period=0/,
    );
    const progressing = find<EtcdCluster>("EtcdCluster", "demo")?.status?.conditions?.find(
      (c) => c.type === "Progressing",
    );
    expect(progressing).toMatchObject({
      reason: "WaitingForFence",
      message: expect.stringContaining("pod demo-b"),
    });

    // A human confirms node-2 is down and force-deletes the pod: the fence passes and the survivor is forked.
    objects = objects.filter((o) => !(o.kind === "Pod" && o.metadata.name === "demo-b"));
    const run = await reconcileSurvivor(objects);
    run.expectNoError();
    expect(run.writes.map((w) => `${w.verb} ${w.kind} ${w.name}`)).toEqual(
      expect.arrayContaining(["patch PersistentVolumeClaim demo-a-data", "delete Pod demo-a"]),
    );
    expect(
      run.get(PersistentVolumeClaim, "demo-a-data", "ns")?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION],
    ).toBe("force");
  });
});
