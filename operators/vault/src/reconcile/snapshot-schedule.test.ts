// One reconcile of the VaultSnapshotSchedule controller against the in-memory API server at a fixed clock: the due
// VaultSnapshot is created from the template once (a second reconcile makes no second), retention deletes old
// snapshots and failed ones beyond the history limit but never the running one nor one a restore still reads, an
// outage is caught up once, and the conditions speak of snapshots. The shared reconcile's other rules (concurrency
// Forbid, missed times, objects being deleted) are tested once, through the etcd operator's EtcdBackupSchedule
// (operators/etcd/src/reconcile/schedule/controller.test.ts), and the planner in packages/backup.
import type { KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import { type VaultSnapshot, VaultSnapshotKind, type VaultSnapshotPhase } from "../api/vault-snapshot.ts";
import { type VaultSnapshotSchedule, VaultSnapshotScheduleKind } from "../api/vault-snapshot-schedule.ts";
import { reconcileVaultSnapshotSchedule, scheduledSnapshot } from "./snapshot-schedule.ts";
import { cluster } from "./test-fixture.ts";

const schedule = (
  o: Partial<VaultSnapshotSchedule["spec"]> = {},
  status?: VaultSnapshotSchedule["status"],
): VaultSnapshotSchedule => ({
  apiVersion: VaultSnapshotScheduleKind.apiVersion,
  kind: VaultSnapshotScheduleKind.kind,
  metadata: {
    name: "hourly",
    namespace: "ns",
    uid: "us1",
    generation: 1,
    creationTimestamp: "2026-11-30T00:00:00Z",
  },
  spec: {
    schedule: "0 * * * *",
    retention: { keepLast: 2 },
    snapshotTemplate: {
      metadata: { labels: { team: "platform" } },
      spec: {
        clusterName: "demo",
        destination: { pvc: { claimName: "snaps" } },
        deletionPolicy: "Delete",
      },
    },
    ...o,
  },
  ...(status === undefined ? {} : { status }),
});

/** The snapshot's name for `hour` (UTC, 30 Nov 2026): `<schedule>-<minutes since 1970>`. */
const nameAt = (hour: number) => `hourly-${Math.floor(Date.UTC(2026, 10, 30, hour) / 60_000)}`;

/** A snapshot the schedule created for `hour` in `phase`. */
function owned(hour: number, phase: VaultSnapshotPhase | undefined): VaultSnapshot {
  const at = new Date(Date.UTC(2026, 10, 30, hour));
  const s = scheduledSnapshot(schedule(), nameAt(hour), at);
  if (phase !== undefined) {
    s.status = {
      phase,
      ...(phase === "Succeeded" || phase === "Failed"
        ? { completionTime: new Date(at.getTime() + 60_000).toISOString() }
        : {}),
    };
  }
  return s;
}

const reconcile = (objects: readonly KubeObject[], now: string, sched = schedule()) =>
  reconcileOnce((req, ctx) => reconcileVaultSnapshotSchedule(req, ctx, { now: new Date(now) }), {
    kinds: [VaultSnapshotScheduleKind, VaultSnapshotKind, VaultClusterKind],
    objects,
    request: sched,
  });

const condition = (objects: readonly KubeObject[], type: string) =>
  (objects.find((o) => o.kind === "VaultSnapshotSchedule") as VaultSnapshotSchedule).status?.conditions?.find(
    (c) => c.type === type,
  );

describe("reconcileVaultSnapshotSchedule", () => {
  it("creates the due VaultSnapshot from the template, once", async () => {
    const run = await reconcile([schedule()], "2026-11-30T01:00:05Z");
    run.expectNoError();
    const created = run.get(VaultSnapshotKind, nameAt(1), "ns");
    expect(created?.spec).toEqual(schedule().spec.snapshotTemplate.spec);
    expect(created?.metadata.labels).toMatchObject({
      team: "platform",
      "vault.capstan.dev/schedule": "hourly",
      "app.kubernetes.io/managed-by": "capstan-vault-operator",
    });
    expect(created?.metadata.annotations?.["vault.capstan.dev/scheduled-time"]).toBe(
      "2026-11-30T01:00:00.000Z",
    );
    expect(created?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "VaultSnapshotSchedule",
      uid: "us1",
      controller: true,
    });
    expect(run.get(VaultSnapshotScheduleKind, "hourly", "ns")?.status).toMatchObject({
      lastScheduleTime: "2026-11-30T01:00:00.000Z",
      nextScheduleTime: "2026-11-30T02:00:00.000Z",
      active: nameAt(1),
    });
    expect(condition(run.objects, "Progressing")).toMatchObject({
      status: "True",
      reason: "SnapshotRunning",
      message: `VaultSnapshot ${nameAt(1)} is running`,
    });
    expect(run.events.map((e) => e.reason)).toEqual(["SnapshotCreated"]);
    expect(run.result?.requeueAfter).toBe(59 * 60_000 + 55_000);

    const again = await reconcile(run.objects, "2026-11-30T01:00:30Z");
    again.expectNoError();
    again.expectNoWrites();
  });

  it("deletes snapshots beyond keepLast and failed ones beyond the history limit, never the running one", async () => {
    const objects = [
      schedule({ failedSnapshotsHistoryLimit: 0 }, { lastScheduleTime: "2026-11-30T05:00:00Z" }),
      owned(1, "Succeeded"),
      owned(2, "Succeeded"),
      owned(3, "Succeeded"),
      owned(4, "Failed"),
      owned(5, "Running"),
    ];
    const run = await reconcile(objects, "2026-11-30T05:30:00Z");
    run.expectNoError();
    expect(run.writesOf(VaultSnapshotKind).map((w) => `${w.verb} ${w.name}`)).toEqual([
      `delete ${nameAt(1)}`,
      `delete ${nameAt(4)}`,
    ]);
    expect(run.events.map((e) => e.note)).toEqual([
      `deleted VaultSnapshot ${nameAt(1)}: beyond retention.keepLast 2`,
      `deleted VaultSnapshot ${nameAt(4)}: failed, beyond failedSnapshotsHistoryLimit 0`,
    ]);
    expect(run.get(VaultSnapshotScheduleKind, "hourly", "ns")?.status).toMatchObject({
      lastSuccessfulSnapshot: nameAt(3),
      lastSuccessfulTime: "2026-11-30T03:01:00.000Z",
      active: nameAt(5),
    });
  });

  it("never deletes a snapshot a VaultCluster's spec.restore has not restored yet", async () => {
    const restoring = {
      ...cluster(3),
      spec: { ...cluster(3).spec, restore: { snapshot: { name: nameAt(1) } } },
    };
    const objects = [
      schedule({}, { lastScheduleTime: "2026-11-30T03:00:00Z" }),
      owned(1, "Succeeded"),
      owned(2, "Succeeded"),
      owned(3, "Succeeded"),
      restoring,
    ];
    const run = await reconcile(objects, "2026-11-30T03:30:00Z");
    run.expectNoError();
    expect(run.writesOf(VaultSnapshotKind)).toEqual([]);
    // Restored: it goes as retention says.
    const restored = {
      ...restoring,
      status: { restore: { source: `snapshot/${nameAt(1)}`, completionTime: "2026-11-30T03:10:00Z" } },
    };
    const after = await reconcile([...objects.slice(0, 4), restored], "2026-11-30T03:30:00Z");
    expect(after.writesOf(VaultSnapshotKind).map((w) => w.name)).toEqual([nameAt(1)]);
  });

  it("after an operator outage, takes one catch-up snapshot and says how many times were skipped", async () => {
    const run = await reconcile(
      [schedule({}, { lastScheduleTime: "2026-11-30T01:00:00Z" }), owned(1, "Succeeded")],
      "2026-11-30T05:10:00Z",
    );
    run.expectNoError();
    expect(run.writesOf(VaultSnapshotKind).map((w) => `${w.verb} ${w.name}`)).toEqual([
      `create ${nameAt(5)}`,
    ]);
    expect(run.events).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "SnapshotCreated",
        note: expect.stringContaining("(3 earlier scheduled times were skipped)"),
      }),
    ]);
  });

  it("is Degraded SnapshotStale naming the newest success when every later one failed", async () => {
    const objects = [
      schedule({}, { lastScheduleTime: "2026-11-30T04:00:00Z" }),
      owned(1, "Succeeded"),
      owned(2, "Failed"),
      owned(3, "Failed"),
      owned(4, "Failed"),
    ];
    const run = await reconcile(objects, "2026-11-30T04:30:00Z");
    run.expectNoError();
    const degraded = condition(run.objects, "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "SnapshotStale" });
    expect(degraded?.message).toContain(`the newest successful snapshot, ${nameAt(1)}, completed 3h 29m ago`);
    expect(degraded?.message).toContain(`the last snapshot, ${nameAt(4)}, failed`);
  });

  it("suspended: creates nothing, retention still applies", async () => {
    const run = await reconcile(
      [schedule({ suspend: true, retention: { keepLast: 1 } }), owned(1, "Succeeded"), owned(2, "Succeeded")],
      "2026-11-30T03:00:10Z",
    );
    run.expectNoError();
    expect(run.writesOf(VaultSnapshotKind).map((w) => `${w.verb} ${w.name}`)).toEqual([
      `delete ${nameAt(1)}`,
    ]);
    expect(condition(run.objects, "Progressing")).toMatchObject({ status: "False", reason: "Suspended" });
    expect(run.result).toBeUndefined();
  });

  it("is Degraded naming spec.timeZone for an unknown zone, with one event", async () => {
    const bad = schedule({ timeZone: "Mars/Olympus" });
    const run = await reconcile([bad], "2026-11-30T01:00:05Z", bad);
    run.expectNoError();
    expect(run.writesOf(VaultSnapshotKind)).toEqual([]);
    expect(condition(run.objects, "Degraded")).toMatchObject({ status: "True", reason: "InvalidSchedule" });
    expect(condition(run.objects, "Degraded")?.message).toMatch(/^spec.timeZone "Mars\/Olympus"/);
    expect(run.events.map((e) => e.reason)).toEqual(["InvalidSchedule"]);
    const again = await reconcile(run.objects, "2026-11-30T01:00:30Z", bad);
    expect(again.events).toEqual([]);
  });
});
