// One reconcile of the EtcdBackupSchedule controller against the in-memory API server at a fixed clock: the due
// backup is created once (a second reconcile makes no second), retention deletes old backups, a running backup
// holds the next, and an invalid schedule is Degraded naming the field.
import type { KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdBackup, EtcdBackupKind, type EtcdBackupPhase } from "../../api/backup.ts";
import { type EtcdBackupSchedule, EtcdBackupScheduleKind } from "../../api/backup-schedule.ts";
import { EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import {
  reconcileEtcdBackupSchedule,
  SCHEDULE_LABEL,
  SCHEDULED_TIME_ANNOTATION,
  scheduledBackup,
  scheduledBackupName,
} from "./controller.ts";

const schedule = (
  o: Partial<EtcdBackupSchedule["spec"]> = {},
  status?: EtcdBackupSchedule["status"],
): EtcdBackupSchedule => ({
  apiVersion: EtcdBackupScheduleKind.apiVersion,
  kind: EtcdBackupScheduleKind.kind,
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
    backupTemplate: {
      metadata: { labels: { team: "db" } },
      spec: { clusterName: "demo", destination: { pvc: { claimName: "backups" } } },
    },
    ...o,
  },
  ...(status === undefined ? {} : { status }),
});

/** A backup the schedule created for `hour` (UTC, 30 Nov 2026) in `phase`. */
function owned(hour: number, phase: EtcdBackupPhase | undefined): EtcdBackup {
  const at = new Date(Date.UTC(2026, 10, 30, hour));
  const b = scheduledBackup(schedule(), scheduledBackupName("hourly", at), at);
  if (phase !== undefined) {
    b.status = {
      phase,
      ...(phase === "Succeeded" ? { completionTime: new Date(at.getTime() + 60_000).toISOString() } : {}),
    };
  }
  return b;
}

const reconcile = (objects: readonly KubeObject[], now: string, sched = schedule()) =>
  reconcileOnce((req, ctx) => reconcileEtcdBackupSchedule(req, ctx, { now: new Date(now) }), {
    kinds: [EtcdBackupScheduleKind, EtcdBackupKind],
    objects,
    request: sched,
  });

describe("reconcileEtcdBackupSchedule", () => {
  it("creates the due backup from the template, once", async () => {
    const run = await reconcile([schedule()], "2026-11-30T01:00:05Z");
    run.expectNoError();
    const name = scheduledBackupName("hourly", new Date("2026-11-30T01:00:00Z"));
    const created = run.get(EtcdBackupKind, name, "ns");
    expect(created?.spec).toEqual(schedule().spec.backupTemplate.spec);
    expect(created?.metadata.labels).toMatchObject({ team: "db", [SCHEDULE_LABEL]: "hourly" });
    expect(created?.metadata.annotations?.[SCHEDULED_TIME_ANNOTATION]).toBe("2026-11-30T01:00:00.000Z");
    expect(created?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "EtcdBackupSchedule",
      uid: "us1",
      controller: true,
    });
    expect(run.get(EtcdBackupScheduleKind, "hourly", "ns")?.status).toMatchObject({
      lastScheduleTime: "2026-11-30T01:00:00.000Z",
      nextScheduleTime: "2026-11-30T02:00:00.000Z",
      active: name,
    });
    expect(run.result?.requeueAfter).toBe(59 * 60_000 + 55_000);

    const again = await reconcile(run.objects, "2026-11-30T01:00:30Z");
    again.expectNoError();
    expect(again.writesOf(EtcdBackupKind)).toEqual([]);
  });

  it("after a lost status write, records the existing backup instead of creating another", async () => {
    const run = await reconcile([schedule(), owned(1, "Running")], "2026-11-30T01:00:05Z");
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind)).toEqual([]);
    expect(run.get(EtcdBackupScheduleKind, "hourly", "ns")?.status?.lastScheduleTime).toBe(
      "2026-11-30T01:00:00.000Z",
    );
  });

  it("deletes backups beyond keepLast, never the running one", async () => {
    const objects = [
      schedule({}, { lastScheduleTime: "2026-11-30T04:00:00Z" }),
      owned(1, "Succeeded"),
      owned(2, "Succeeded"),
      owned(3, "Succeeded"),
      owned(4, "Running"),
    ];
    const run = await reconcile(objects, "2026-11-30T04:30:00Z");
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind).map((w) => `${w.verb} ${w.name}`)).toEqual([
      `delete ${owned(1, undefined).metadata.name}`,
    ]);
    expect(run.get(EtcdBackupScheduleKind, "hourly", "ns")?.status).toMatchObject({
      lastSuccessfulBackup: owned(3, undefined).metadata.name,
      active: owned(4, undefined).metadata.name,
    });
  });

  it("never deletes a backup an EtcdRestore not yet ended restores from", async () => {
    const restore = {
      apiVersion: EtcdRestoreKind.apiVersion,
      kind: EtcdRestoreKind.kind,
      metadata: { name: "back-to-one", namespace: "ns" },
      spec: {
        clusterName: "demo",
        from: "Backup",
        source: { backup: { name: owned(1, undefined).metadata.name } },
      },
      status: { phase: "Running" },
    } as KubeObject;
    const objects = [
      schedule({}, { lastScheduleTime: "2026-11-30T04:00:00Z" }),
      owned(1, "Succeeded"),
      owned(2, "Succeeded"),
      owned(3, "Succeeded"),
      owned(4, "Running"),
      restore,
    ];
    const run = await reconcileOnce(
      (req, ctx) => reconcileEtcdBackupSchedule(req, ctx, { now: new Date("2026-11-30T04:30:00Z") }),
      {
        kinds: [EtcdBackupScheduleKind, EtcdBackupKind, EtcdRestoreKind],
        objects,
        request: schedule(),
      },
    );
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind)).toEqual([]);
  });

  it("is Degraded BackupStale when the newest success is older than twice the interval, naming it", async () => {
    // Hourly; the newest success completed at 01:01, every backup since failed; now 04:30 (3.5 h later).
    const objects = [
      schedule({}, { lastScheduleTime: "2026-11-30T04:00:00Z" }),
      owned(1, "Succeeded"),
      owned(2, "Failed"),
      owned(3, "Failed"),
      owned(4, "Failed"),
    ];
    const run = await reconcile(objects, "2026-11-30T04:30:00Z");
    run.expectNoError();
    const degraded = run
      .get(EtcdBackupScheduleKind, "hourly", "ns")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "BackupStale" });
    expect(degraded?.message).toContain(
      `the newest successful backup, ${owned(1, undefined).metadata.name}, completed 3h 29m ago`,
    );
    expect(degraded?.message).toContain("more than twice the schedule's interval (1h)");
    // The gauge behind the chart's EtcdBackupScheduleStale alert says so too.
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    await reconcileOnce(
      (req, ctx) => reconcileEtcdBackupSchedule(req, ctx, { now: new Date("2026-11-30T04:30:00Z"), metrics }),
      { kinds: [EtcdBackupScheduleKind, EtcdBackupKind], objects, request: schedule() },
    );
    expect(await registry.metrics()).toMatch(
      /capstan_etcd_backup_schedule_stale\{object_namespace="ns",object_name="hourly"\} 1/,
    );
    // Within twice the interval: only the failure is reported.
    const fresh = await reconcile(objects.slice(0, 3), "2026-11-30T02:30:00Z");
    expect(
      fresh
        .get(EtcdBackupScheduleKind, "hourly", "ns")
        ?.status?.conditions?.find((c) => c.type === "Degraded")?.reason,
    ).toBe("BackupFailed");
  });

  it("does not count a backup being deleted (its snapshot going) nor delete it again", async () => {
    const going = owned(1, "Succeeded");
    going.metadata.finalizers = ["etcd.capstan.dev/delete-snapshot"];
    going.metadata.deletionTimestamp = "2026-11-30T04:00:00Z";
    const objects = [
      schedule({}, { lastScheduleTime: "2026-11-30T03:00:00Z" }),
      going,
      owned(2, "Succeeded"),
      owned(3, "Succeeded"),
    ];
    const run = await reconcile(objects, "2026-11-30T03:30:00Z");
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind)).toEqual([]);
  });

  it("holds the next backup while one runs (concurrency Forbid)", async () => {
    const run = await reconcile(
      [schedule({}, { lastScheduleTime: "2026-11-30T01:00:00Z" }), owned(1, "Running")],
      "2026-11-30T02:00:10Z",
    );
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind)).toEqual([]);
  });

  it("ignores backups it does not control", async () => {
    const foreign = owned(1, "Succeeded");
    foreign.metadata.ownerReferences = [];
    const run = await reconcile(
      [
        schedule({ retention: { keepLast: 1 } }, { lastScheduleTime: "2026-11-30T03:00:00Z" }),
        foreign,
        owned(2, "Succeeded"),
        owned(3, "Succeeded"),
      ],
      "2026-11-30T03:30:00Z",
    );
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind).map((w) => w.name)).toEqual([owned(2, undefined).metadata.name]);
  });

  it("reports a missed time, stays Degraded until the next backup is created", async () => {
    const sched = schedule({ startingDeadlineSeconds: 60 }, { lastScheduleTime: "2026-11-30T01:00:00Z" });
    const run = await reconcile([sched, owned(1, "Succeeded")], "2026-11-30T02:30:00Z", sched);
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind)).toEqual([]);
    expect(run.events.map((e) => e.reason)).toEqual(["MissedSchedule"]);
    const degraded = (objects: readonly KubeObject[]) =>
      (objects.find((o) => o.kind === "EtcdBackupSchedule") as EtcdBackupSchedule).status?.conditions?.find(
        (c) => c.type === "Degraded",
      );
    expect(run.get(EtcdBackupScheduleKind, "hourly", "ns")?.status?.lastMissedTime).toBe(
      "2026-11-30T02:00:00.000Z",
    );
    expect(degraded(run.objects)).toMatchObject({ status: "True", reason: "MissedSchedule" });

    const later = await reconcile(run.objects, "2026-11-30T02:40:00Z", sched);
    later.expectNoWrites();

    const next = await reconcile(later.objects, "2026-11-30T03:00:10Z", sched);
    expect(next.writesOf(EtcdBackupKind).map((w) => w.verb)).toEqual(["create"]);
    expect(degraded(next.objects)).toMatchObject({ status: "False" });
  });

  it("is Degraded naming spec.schedule for an invalid expression, with one event", async () => {
    const bad = schedule({ schedule: "every hour" });
    const run = await reconcile([bad], "2026-11-30T01:00:05Z", bad);
    run.expectNoError();
    expect(run.writesOf(EtcdBackupKind)).toEqual([]);
    const degraded = run
      .get(EtcdBackupScheduleKind, "hourly", "ns")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "InvalidSchedule" });
    expect(degraded?.message).toMatch(/^spec.schedule "every hour" is not a cron expression/);
    expect(run.events.map((e) => e.reason)).toEqual(["InvalidSchedule"]);
    expect(run.result).toBeUndefined();

    const again = await reconcile(run.objects, "2026-11-30T01:05:00Z", bad);
    again.expectNoWrites();
  });
});
