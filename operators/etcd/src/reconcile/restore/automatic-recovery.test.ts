// spec.recovery.automatic wired into one reconcile of the EtcdCluster controller (core's in-memory API server, an
// etcd that answers nothing): the loss of quorum dated in status, ONE EtcdRestore of the newest Succeeded backup
// once it is old enough, none before, Degraded naming the field without a backup.
import type { KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { AUTOMATIC_RESTORE_LABEL, EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { peerURL } from "../../desired/names.ts";
import { type EtcdClient, EtcdError } from "../../etcd/etcd-client.ts";
import { reconcileEtcdCluster } from "../cluster/controller.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { MEMBERS, testCluster } from "../test-fixture.ts";
import { automaticRestoreName } from "./automatic-recovery.ts";

const LOST = new Date(Date.now() - 20 * 60_000);
const cluster = (o: { lostSince?: string; enabled?: boolean } = {}): EtcdCluster => {
  const c = testCluster({ recovery: { automatic: { enabled: o.enabled ?? true, afterSeconds: 600 } } });
  return {
    ...c,
    status: {
      ...c.status,
      members: MEMBERS.map((name) => ({
        name,
        id: "1",
        peerURL: "",
        clientURLs: [],
        healthy: false,
        learner: false,
        leader: false,
      })),
      ...(o.lostSince === undefined ? {} : { quorumLostSince: o.lostSince }),
    },
  };
};

/** Three running member pods whose etcd answers nothing. */
function members(c: EtcdCluster): KubeObject[] {
  const initial = MEMBERS.map((n) => ({ name: n, peerURL: peerURL(c, n) }));
  return MEMBERS.flatMap((n, i) => {
    const pod = memberPod({
      cluster: c,
      member: n,
      initialCluster: initial,
      initialClusterState: "existing",
    });
    pod.status = { phase: "Running", podIP: `10.0.0.${i + 1}`, conditions: [] };
    return [pod, memberDataClaim(c, n)!];
  });
}

/** A backup of the cluster "demo" taken from cluster ID `clusterID` (the test cluster's is ff). */
const backup = (name: string, completionTime: string, phase = "Succeeded", clusterID = "ff"): EtcdBackup => ({
  apiVersion: EtcdBackupKind.apiVersion,
  kind: EtcdBackupKind.kind,
  metadata: { name, namespace: "ns" },
  spec: { clusterName: "demo", destination: { pvc: { claimName: "backups" } } },
  status: { phase: phase as "Succeeded", completionTime, clusterID },
});

const silentEtcd = () => {
  const fail = async () => {
    throw new EtcdError("unavailable", ["10.0.0.1"]);
  };
  return () => new Proxy({}, { get: () => fail }) as unknown as EtcdClient;
};

/**
 * An etcd where only the member at 10.0.0.3 answers, and only its own status (a member left without a quorum):
 * raft index 900, revision 700, cluster ID ff (255), unless `clusterId` says another.
 */
const oneSurvivor =
  (clusterId = "255") =>
  (endpoints: string[]) =>
    new Proxy({} as Record<string, unknown>, {
      get: (_t, prop) => async (endpoint: unknown) => {
        if (prop === "status" && typeof endpoint === "string" && endpoint.includes("10.0.0.3")) {
          return {
            endpoint,
            header: { clusterId, memberId: "3", revision: 700, raftTerm: 4 },
            memberId: "3",
            leader: "0",
            version: "3.6.15",
            dbSize: 1,
            dbSizeInUse: 1,
            raftIndex: 900,
            raftTerm: 4,
            raftAppliedIndex: 900,
            isLearner: false,
            errors: [],
          };
        }
        throw new EtcdError("unavailable", endpoints);
      },
    }) as unknown as EtcdClient;

/** One reconcile of `c` among `objects` (which hold `c` as the API server has it), its etcd silent by default. */
const reconcileAmong = (c: EtcdCluster, objects: KubeObject[], etcdClient = silentEtcd()) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, {
        metrics: new EtcdOperatorMetrics(new Registry()),
        etcdClient,
      }),
    { kinds: [EtcdClusterKind, EtcdBackupKind, EtcdRestoreKind], objects, request: c },
  );

async function reconcile(c: EtcdCluster, extra: KubeObject[]) {
  const run = await reconcileAmong(c, [c, ...members(c), ...extra]);
  run.expectNoError();
  return run;
}

describe("spec.recovery.automatic in a reconcile", () => {
  it("quorum just lost: the time is recorded, nothing is created", async () => {
    const run = await reconcile(cluster(), [backup("b1", "2026-12-01T00:00:00Z")]);
    const since = run.get(EtcdClusterKind, "demo", "ns")?.status?.quorumLostSince;
    expect(since).toBeDefined();
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
  });

  it("lost for longer than afterSeconds: ONE EtcdRestore of the newest Succeeded backup, labelled, with an Event", async () => {
    const c = cluster({ lostSince: LOST.toISOString() });
    const run = await reconcile(c, [
      backup("b1", "2026-12-01T00:00:00Z"),
      backup("b2", "2026-12-01T06:00:00Z"),
      backup("b3", "2026-12-01T07:00:00Z", "Failed"),
    ]);
    const name = automaticRestoreName(c, LOST);
    const created = run.get(EtcdRestoreKind, name, "ns");
    expect(created?.spec).toEqual({
      clusterName: "demo",
      from: "Backup",
      source: { backup: { name: "b2" } },
    });
    expect(created?.metadata.labels?.[AUTOMATIC_RESTORE_LABEL]).toBe("demo");
    expect(run.events.map((e) => e.reason)).toContain("AutomaticRecovery");
    // The recorded time is kept, not moved to now.
    expect(run.get(EtcdClusterKind, "demo", "ns")?.status?.quorumLostSince).toBe(LOST.toISOString());
    // A second reconcile (a restart: only the objects are known) creates no other.
    const again = await reconcileAmong(c, run.objects);
    expect(again.writesOf(EtcdRestoreKind).filter((w) => w.verb === "create")).toEqual([]);
  });

  it("a member still answers with this cluster's data (the other two lost): ONE EtcdRestore from: Survivor, not the older backup", async () => {
    const c = cluster({ lostSince: LOST.toISOString() });
    const run = await reconcileAmong(
      c,
      [c, ...members(c), backup("b2", "2026-12-01T06:00:00Z")],
      oneSurvivor() as never,
    );
    run.expectNoError();
    const created = run.get(EtcdRestoreKind, automaticRestoreName(c, LOST), "ns");
    expect(created?.spec).toEqual({ clusterName: "demo", from: "Survivor" });
    const event = run.events.find((e) => e.reason === "AutomaticRecovery");
    expect(event?.note).toContain("recovering from demo-c, the member with the newest data (revision 700");
  });

  it("the only member answering belongs to another cluster (another cluster ID): the backup, never that member", async () => {
    const c = cluster({ lostSince: LOST.toISOString() });
    const run = await reconcileAmong(
      c,
      [c, ...members(c), backup("b2", "2026-12-01T06:00:00Z")],
      oneSurvivor("4096") as never,
    );
    run.expectNoError();
    expect(run.get(EtcdRestoreKind, automaticRestoreName(c, LOST), "ns")?.spec).toEqual({
      clusterName: "demo",
      from: "Backup",
      source: { backup: { name: "b2" } },
    });
  });

  it("a member's pod being deleted (its node failing over): no EtcdRestore, the armed clock cleared, QuorumLost says why", async () => {
    const c = cluster({ lostSince: LOST.toISOString() });
    const objects = members(c).map((o) =>
      o.kind === "Pod" && o.metadata.name === "demo-b"
        ? {
            ...o,
            metadata: {
              ...o.metadata,
              deletionTimestamp: new Date(Date.now() - 60_000).toISOString(),
              finalizers: ["test/hold"],
            },
          }
        : o,
    );
    const run = await reconcileAmong(c, [c, ...objects, backup("b2", "2026-12-01T06:00:00Z")]);
    run.expectNoError();
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
    const status = run.get(EtcdClusterKind, "demo", "ns")?.status;
    expect(status?.quorumLostSince).toBeUndefined();
    const degraded = status?.conditions?.find((x) => x.type === "Degraded");
    expect(degraded?.reason).toBe("QuorumLost");
    expect(degraded?.message).toContain("waits for Kubernetes' failover: the pods of demo-b");
  });

  it("disabled: only the time is recorded", async () => {
    const run = await reconcile(cluster({ enabled: false, lostSince: LOST.toISOString() }), [
      backup("b1", "2026-12-01T00:00:00Z"),
    ]);
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
  });

  it("no Succeeded backup: Degraded naming spec.recovery.automatic, with an Event", async () => {
    const run = await reconcile(cluster({ lostSince: LOST.toISOString() }), [
      backup("b3", "2026-12-01T07:00:00Z", "Failed"),
    ]);
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
    const degraded = run
      .get(EtcdClusterKind, "demo", "ns")
      ?.status?.conditions?.find((x) => x.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "AutomaticRecoveryNoBackup" });
    expect(degraded?.message).toContain("spec.recovery.automatic");
    expect(run.events.map((e) => e.reason)).toContain("AutomaticRecoveryNoBackup");
  });

  it("a backup of another cluster of the same name (another cluster ID) is never restored: Degraded naming it", async () => {
    const run = await reconcile(cluster({ lostSince: LOST.toISOString() }), [
      backup("old-life", "2026-12-01T07:00:00Z", "Succeeded", "b0"),
    ]);
    expect(run.writesOf(EtcdRestoreKind)).toEqual([]);
    const degraded = run
      .get(EtcdClusterKind, "demo", "ns")
      ?.status?.conditions?.find((x) => x.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "AutomaticRecoveryNoBackup" });
    expect(degraded?.message).toContain("old-life (b0)");
    expect(degraded?.message).toContain("cluster ID ff");
  });
});
