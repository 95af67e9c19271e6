// Issue 27 through whole reconciles of the EtcdCluster controller (core's in-memory API server, a scripted etcd):
// three member pods Ready by their kubelet while the operator's calls are refused (a NetworkPolicy shutting it out)
// never start automatic recovery nor a requested EtcdRestore, and an armed clock is reset; the same cluster with its
// pods not Ready still recovers. The root Secret the operator made, lost while etcd has auth on, is never made again.
import type { KubeObject, PodObject } from "@capstan/core";
import { Pod, Secret } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { type EtcdRestore, EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { type EtcdClient, EtcdError } from "../../etcd/etcd-client.ts";
import { reconcileEtcdCluster } from "../cluster/controller.ts";
import type { EtcdClientFactory } from "../cluster/observe.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { MEMBERS, runningMembers, testCluster } from "../test-fixture.ts";
import { automaticRestoreName } from "./automatic-recovery.ts";

const LOST = new Date(Date.now() - 20 * 60_000);

/** ns/demo with automatic recovery on (600 s), three voters last seen, the loss recorded 20 minutes ago. */
const cluster = (o: Partial<EtcdCluster["spec"]> = {}, lostSince: Date | undefined = LOST): EtcdCluster => {
  const c = testCluster({ recovery: { automatic: { enabled: true, afterSeconds: 600 } }, ...o });
  return {
    ...c,
    status: {
      ...c.status,
      members: MEMBERS.map((name, i) => ({
        name,
        id: String(101 + i),
        peerURL: "",
        clientURLs: [],
        healthy: true,
        learner: false,
        leader: i === 0,
      })),
      ...(lostSince === undefined ? {} : { quorumLostSince: lostSince.toISOString() }),
    },
  };
};

/** The member pods and claims: Ready with etcd running (the kubelet's /readyz passes), or not Ready. */
function members(c: EtcdCluster, ready: boolean): KubeObject[] {
  return runningMembers(c).map((o) => {
    if (o.kind !== "Pod") return o;
    const pod = o as PodObject;
    pod.status = {
      ...pod.status,
      conditions: [
        { type: "Ready", status: ready ? "True" : "False", lastTransitionTime: LOST.toISOString() },
      ],
      containerStatuses: [
        {
          name: "etcd",
          image: "r:v3.6.15",
          imageID: "",
          ready,
          restartCount: 0,
          state: ready
            ? { running: { startedAt: LOST.toISOString() } }
            : { waiting: { reason: "CrashLoopBackOff" } },
        },
      ],
    };
    return pod;
  });
}

/** An etcd whose every call fails the way a NetworkPolicy makes it fail for the operator. */
const refusingEtcd: EtcdClientFactory = (endpoints) => {
  const fail = async () => {
    const each = endpoints.map((e) => `${e}: connect ECONNREFUSED ${e.replace(/^https?:\/\//, "")}`);
    throw new EtcdError(
      `member list: no etcd endpoint answered (${endpoints.join(", ")}): ${each.join("; ")}`,
      endpoints,
    );
  };
  return new Proxy({}, { get: () => fail }) as unknown as EtcdClient;
};

const backup: EtcdBackup = {
  apiVersion: EtcdBackupKind.apiVersion,
  kind: EtcdBackupKind.kind,
  metadata: { name: "nightly", namespace: "ns" },
  spec: { clusterName: "demo", destination: { pvc: { claimName: "backups" } } },
  // Taken from this cluster (the test cluster's ID is ff): automatic recovery restores only its own data.
  status: { phase: "Succeeded", completionTime: "2026-12-01T00:00:00Z", clusterID: "ff" },
};

const reconcile = (c: EtcdCluster, objects: KubeObject[], etcdClient = refusingEtcd) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, { metrics: new EtcdOperatorMetrics(new Registry()), etcdClient }),
    { kinds: [EtcdClusterKind, EtcdBackupKind, EtcdRestoreKind], objects: [c, ...objects], request: c },
  );

const statusOf = (run: ReconcileRun) => run.get(EtcdClusterKind, "demo", "ns")?.status;
const degraded = (run: ReconcileRun) => statusOf(run)?.conditions?.find((c) => c.type === "Degraded");
/** Writes that would stop or replace a member: pods deleted or created, claims changed. */
const memberWrites = (run: ReconcileRun) =>
  run.writes.filter((w) => w.kind === "Pod" || w.kind === "PersistentVolumeClaim");

describe("a loss of quorum judged from the kubelet's readiness, in a reconcile", () => {
  it("3 of 3 pods Ready, the operator refused, the clock armed past afterSeconds: no EtcdRestore, OperatorCutOff, the clock reset", async () => {
    const c = cluster();
    const run = await reconcile(c, [...members(c, true), backup]);
    run.expectNoError();
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
    expect(run.get(EtcdRestoreKind, automaticRestoreName(c, LOST), "ns")).toBeUndefined();
    expect(memberWrites(run)).toEqual([]);
    expect(degraded(run)).toMatchObject({ status: "True", reason: "OperatorCutOff" });
    expect(degraded(run)?.message).toContain("3 of 3 voting members' pods are Ready by their kubelet probes");
    expect(degraded(run)?.message).toContain("ECONNREFUSED");
    expect(statusOf(run)?.quorumLostSince).toBeUndefined();
    expect(statusOf(run)?.conditions?.find((x) => x.type === "Available")).toMatchObject({
      status: "Unknown",
      reason: "OperatorCutOff",
    });
    expect(run.events).toContainEqual(expect.objectContaining({ type: "Warning", reason: "OperatorCutOff" }));
  });

  it("the same cluster with its pods not Ready: QuorumLost, and the automatic EtcdRestore after afterSeconds", async () => {
    const c = cluster();
    const run = await reconcile(c, [...members(c, false), backup]);
    run.expectNoError();
    expect(run.get(EtcdRestoreKind, automaticRestoreName(c, LOST), "ns")?.spec.source).toEqual({
      backup: { name: "nightly" },
    });
    expect(statusOf(run)?.quorumLostSince).toBe(LOST.toISOString());
  });

  it("a requested EtcdRestore while 3 of 3 pods are Ready: refused (Failed) naming the evidence, no member touched", async () => {
    const c = cluster({}, undefined);
    const request: EtcdRestore = {
      apiVersion: EtcdRestoreKind.apiVersion,
      kind: EtcdRestoreKind.kind,
      metadata: { name: "dr", namespace: "ns", uid: "r1", creationTimestamp: "2026-12-04T00:00:00Z" },
      spec: { clusterName: "demo", from: "Backup", source: { backup: { name: "nightly" } } },
    };
    const run = await reconcile(c, [...members(c, true), backup, request]);
    run.expectNoError();
    const status = run.get(EtcdRestoreKind, "dr", "ns")?.status;
    expect(status?.phase).toBe("Failed");
    expect(status?.message).toContain("the loss of quorum is not confirmed");
    expect(status?.message).toContain("3 of 3 voting members' pods are Ready");
    expect(memberWrites(run)).toEqual([]);
    expect(run.get(Pod, "demo-a", "ns")).toBeDefined();
  });
});

describe("the root Secret the operator made, lost while etcd has auth on (issue 27, item 5)", () => {
  it("is never made again with a new password: Degraded RootSecretMissing naming it, no recovery", async () => {
    const c = cluster({ auth: { enabled: true } });
    const withAuth: EtcdCluster = { ...c, status: { ...c.status, auth: "Enabled" } };
    const run = await reconcile(withAuth, [...members(withAuth, true), backup]);
    run.expectNoError();
    expect(run.get(Secret, "demo-root", "ns")).toBeUndefined();
    expect(run.writes.filter((w) => w.kind === "Secret")).toEqual([]);
    expect(degraded(run)).toMatchObject({ status: "True", reason: "RootSecretMissing" });
    expect(degraded(run)?.message).toContain("Secret ns/demo-root");
    expect(degraded(run)?.message).toContain("restore the Secret");
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
  });

  it("before etcd's auth is on (status.auth Disabled) it is made, as before", async () => {
    const c = cluster({ auth: { enabled: true } }, undefined);
    const withAuth: EtcdCluster = { ...c, status: { ...c.status, auth: "Disabled" } };
    const run = await reconcile(withAuth, [...members(withAuth, true)]);
    run.expectNoError();
    expect(run.get(Secret, "demo-root", "ns")).toBeDefined();
  });
});
