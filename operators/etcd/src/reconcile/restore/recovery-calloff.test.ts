// Calling a recovery off (issue 27, item 2), through whole reconciles of the EtcdCluster controller on core's
// in-memory API server: an EtcdRestore deleted, or a quorum answering again, before the fork gives every kept claim
// back, removes the survivor mark and ends (its finalizer released; Cancelled), and the ordinary planner then starts
// the stopped members again on their own claims; after the fork a deletion waits for the recovery to finish; a
// cluster that is gone releases the finalizers of its EtcdRestores.
import { type KubeObject, PersistentVolumeClaim, Pod } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EtcdClusterKind } from "../../api/etcd-cluster.ts";
import {
  type EtcdRestore,
  EtcdRestoreKind,
  KEPT_BY_RESTORE_LABEL,
  RECOVERY_FINALIZER,
} from "../../api/etcd-restore.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { memberPod } from "../../desired/member-pod.ts";
import { CLAIM_UID_LABEL, peerURL } from "../../desired/names.ts";
import { reconcileEtcdCluster } from "../cluster/controller.ts";
import type { EtcdClientFactory } from "../cluster/observe.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { healthyEtcd, testCluster } from "../test-fixture.ts";
import { RECOVERY_PHASE_ANNOTATION, SURVIVOR_ANNOTATION } from "./recovery.ts";
import { aloneEtcd } from "./recovery-fixture.ts";

const cluster = testCluster();
const MEMBERS = ["demo-a", "demo-b", "demo-c"];
const request: EtcdRestore = {
  apiVersion: EtcdRestoreKind.apiVersion,
  kind: EtcdRestoreKind.kind,
  metadata: { name: "dr", namespace: "ns", uid: "r1", creationTimestamp: "2026-12-04T20:00:00Z" },
  spec: { clusterName: "demo", from: "Survivor" },
};

/** Three members lost quorum: demo-a runs (and answers alone), demo-b and demo-c run without answering. */
function lostWorld(): KubeObject[] {
  const initial = MEMBERS.map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  const pods = MEMBERS.map((n, i) => {
    const pod = memberPod({ cluster, member: n, initialCluster: initial, initialClusterState: "existing" });
    pod.status = { phase: "Running", conditions: [], ...(i === 0 ? { podIP: "10.0.0.1" } : {}) };
    return pod;
  });
  return [cluster, ...pods, ...MEMBERS.map((n) => memberDataClaim(cluster, n)!), request];
}

const reconcile = (objects: KubeObject[], etcdClient: EtcdClientFactory = aloneEtcd) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileEtcdCluster(req, ctx, { metrics: new EtcdOperatorMetrics(new Registry()), etcdClient }),
    { kinds: [EtcdClusterKind, EtcdRestoreKind], objects, request: { namespace: "ns", name: "demo" } },
  );

/** Runs `n` reconciles from `objects`; returns the last objects and every write as "verb Kind name[/sub]". */
async function reconciles(objects: KubeObject[], n: number, etcdClient?: EtcdClientFactory) {
  const writes: string[] = [];
  const runs: ReconcileRun[] = [];
  for (let i = 0; i < n; i++) {
    const run = await reconcile(objects, etcdClient);
    run.expectNoError();
    runs.push(run);
    writes.push(
      ...run.writes.map((w) => `${w.verb} ${w.kind} ${w.name}${w.subresource ? `/${w.subresource}` : ""}`),
    );
    objects = run.objects;
  }
  return { objects, writes, runs };
}

const find = <T extends KubeObject>(objects: KubeObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;
const deleted = (objects: KubeObject[]) =>
  objects.map((o) =>
    o.kind === "EtcdRestore"
      ? { ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-12-04T20:05:00Z" } }
      : o,
  );

describe("an EtcdRestore called off before the fork", () => {
  it("deleted after its claims were kept and a member stopped: each claim given back, the mark removed, the finalizer released, the member restarted", async () => {
    // Marked, b and c kept, b stopped (4 steps); the finalizer came before the first.
    const midway = await reconciles(lostWorld(), 4);
    expect(midway.writes.indexOf("patch EtcdRestore dr")).toBeLessThan(
      midway.writes.indexOf("patch PersistentVolumeClaim demo-a-data"),
    );
    expect(find<EtcdRestore>(midway.objects, "EtcdRestore", "dr")?.metadata.finalizers).toEqual([
      RECOVERY_FINALIZER,
    ]);
    expect(find(midway.objects, "Pod", "demo-b")).toBeUndefined();
    expect(
      find(midway.objects, "PersistentVolumeClaim", "demo-b-data")?.metadata.labels?.[KEPT_BY_RESTORE_LABEL],
    ).toBe("dr");

    const off = await reconciles(deleted(midway.objects), 4);
    const trace = off.writes.join("\n");
    expect(
      off.writes.filter((w) => !w.endsWith("/status")),
      trace,
    ).toEqual([
      "patch PersistentVolumeClaim demo-b-data",
      "patch PersistentVolumeClaim demo-c-data",
      "patch PersistentVolumeClaim demo-a-data",
      "patch EtcdRestore dr",
    ]);
    expect(off.writes.some((w) => w.startsWith("delete"))).toBe(false);
    expect(find(off.objects, "EtcdRestore", "dr"), trace).toBeUndefined();
    for (const n of MEMBERS) {
      const claim = find(off.objects, "PersistentVolumeClaim", `${n}-data`);
      expect(claim?.metadata.labels?.[KEPT_BY_RESTORE_LABEL]).toBeUndefined();
      expect(claim?.metadata.labels?.[CLAIM_UID_LABEL]).toBe("u1");
      expect(claim?.metadata.annotations?.[SURVIVOR_ANNOTATION]).toBeUndefined();
    }
    expect(off.runs.at(-1)?.events).toContainEqual(
      expect.objectContaining({
        reason: "CallOff",
        regarding: expect.objectContaining({ kind: "EtcdCluster" }),
      }),
    );

    // The ordinary planner again: demo-b starts on its own claim (no quorum: restarting on data is how it returns).
    const after = await reconcile(off.objects);
    after.expectNoError();
    expect(after.writesOf(Pod).map((w) => `${w.verb} ${w.name}`)).toEqual(["create demo-b"]);
    expect(after.writesOf(PersistentVolumeClaim)).toEqual([]);
  });

  it("a quorum answering again: the same give-back, then Cancelled naming why; the EtcdRestore stays, its finalizer released", async () => {
    const midway = await reconciles(lostWorld(), 3);
    // The zone heals: demo-b and demo-c answer again, with demo-a a healthy quorum.
    const healed = midway.objects.map((o, i) =>
      o.kind === "Pod" ? { ...o, status: { phase: "Running", podIP: `10.0.0.${i + 1}`, conditions: [] } } : o,
    );
    const back = await reconciles(healed, 4, healthyEtcd(cluster));
    const trace = back.writes.join("\n");
    expect(
      back.writes.filter((w) => w.includes("PersistentVolumeClaim")),
      trace,
    ).toEqual([
      "patch PersistentVolumeClaim demo-b-data",
      "patch PersistentVolumeClaim demo-c-data",
      "patch PersistentVolumeClaim demo-a-data",
    ]);
    const dr = find<EtcdRestore>(back.objects, "EtcdRestore", "dr");
    expect(dr?.status).toMatchObject({ phase: "Cancelled", message: expect.stringContaining("quorum") });
    expect(dr?.metadata.finalizers).toBeUndefined();
    const claimB = find(back.objects, "PersistentVolumeClaim", "demo-b-data");
    expect(claimB?.metadata.labels?.[CLAIM_UID_LABEL]).toBe("u1");
    expect(claimB?.metadata.labels?.[KEPT_BY_RESTORE_LABEL]).toBeUndefined();
  });
});

describe("an EtcdRestore deleted after the fork", () => {
  it("is held: the recovery goes on, its status and an Event say why, nothing is given back", async () => {
    // Marked, b and c kept, b and c stopped, a forced (6 steps).
    const forked = await reconciles(lostWorld(), 6);
    expect(
      find(forked.objects, "PersistentVolumeClaim", "demo-a-data")?.metadata.annotations?.[
        RECOVERY_PHASE_ANNOTATION
      ],
    ).toBe("force");
    const run = await reconcile(deleted(forked.objects));
    run.expectNoError();
    const dr = run.get(EtcdRestoreKind, "dr", "ns");
    expect(dr?.metadata.finalizers).toEqual([RECOVERY_FINALIZER]);
    expect(dr?.status?.message).toContain(
      "deletion waits for the recovery to finish (the cluster was forked at ForceNewCluster); remove the finalizer by hand only if",
    );
    expect(run.events).toContainEqual(expect.objectContaining({ type: "Warning", reason: "DeletionHeld" }));
    expect(run.writesOf(PersistentVolumeClaim)).toEqual([]);
    // The recovery's own next step: the survivor started with --force-new-cluster.
    expect(run.writesOf(Pod).map((w) => `${w.verb} ${w.name}`)).toEqual(["create demo-a"]);
  });
});

describe("finalizers of EtcdRestores left behind", () => {
  it("an ended EtcdRestore still holding it (the operator stopped between the two writes) is released", async () => {
    const ended: EtcdRestore = {
      ...request,
      metadata: { ...request.metadata, finalizers: [RECOVERY_FINALIZER] },
      status: { phase: "Succeeded" },
    };
    const run = await reconcile([cluster, ended]);
    run.expectNoError();
    expect(run.get(EtcdRestoreKind, "dr", "ns")?.metadata.finalizers).toBeUndefined();
  });

  it("the EtcdCluster gone: every EtcdRestore naming it is released, whatever its phase; others are not", async () => {
    const running = (name: string, clusterName: string): EtcdRestore => ({
      ...request,
      metadata: { ...request.metadata, name, finalizers: [RECOVERY_FINALIZER] },
      spec: { clusterName, from: "Survivor" },
      status: { phase: "Running" },
    });
    const run = await reconcile([running("dr", "demo"), running("other", "elsewhere")]);
    run.expectNoError();
    expect(run.get(EtcdRestoreKind, "dr", "ns")?.metadata.finalizers).toBeUndefined();
    expect(run.get(EtcdRestoreKind, "other", "ns")?.metadata.finalizers).toEqual([RECOVERY_FINALIZER]);
  });
});
