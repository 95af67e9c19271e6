// The EtcdBackupSchedule controller: list the EtcdBackups the schedule controls -> plan (plan/backup-schedule.ts)
// -> delete by retention, create the due backup -> write status, conditions and events; requeue at the next
// scheduled time.
import {
  type Condition,
  type Controller,
  controller,
  isAlreadyExists,
  isNotFound,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  setCondition,
  setControllerReference,
  statusMergePatch,
} from "@capstan/core";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import {
  type EtcdBackupSchedule,
  EtcdBackupScheduleKind,
  type EtcdBackupScheduleStatus,
} from "../../api/backup-schedule.ts";
import { MANAGED_BY } from "../../desired/names.ts";
import {
  type OwnedBackup,
  planSchedule,
  SCHEDULED_TIME_ANNOTATION,
  type SchedulePlan,
  staleBackup,
} from "../../plan/backup-schedule.ts";
import { observeBackupsInUse } from "../backup-use.ts";
import type { EtcdOperatorMetrics } from "../metrics.ts";

/** Label carrying the schedule's name on the backups it creates. */
export const SCHEDULE_LABEL = "etcd.capstan.dev/schedule";

/** The controller that reconciles EtcdBackupSchedules. */
/** Options of {@link etcdBackupScheduleController} and {@link reconcileEtcdBackupSchedule}. */
export interface EtcdBackupScheduleOptions {
  /** capstan_etcd_backup_schedule_stale is set on it. */
  metrics?: EtcdOperatorMetrics;
  /** The time the reconcile plans at (tests); default now. */
  now?: Date;
}

export function etcdBackupScheduleController(
  options: Omit<EtcdBackupScheduleOptions, "now"> = {},
): Controller<EtcdBackupSchedule> {
  return controller({
    name: "etcdbackupschedule",
    for: EtcdBackupScheduleKind,
    // A backup's phase change re-plans its schedule (the next may wait on it; retention counts it).
    owns: [EtcdBackupKind],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileEtcdBackupSchedule(req, ctx, options),
  });
}

/** The backups `schedule` controls, as the planner reads them. */
function ownedBackups(schedule: EtcdBackupSchedule, all: EtcdBackup[]): OwnedBackup[] {
  const uid = schedule.metadata.uid;
  return (
    all
      .filter((b) => b.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true)
      // One being deleted (its finalizer deleting the snapshot) is gone as far as retention counts.
      .filter((b) => b.metadata.deletionTimestamp === undefined)
      .map((b) => {
        const scheduled = b.metadata.annotations?.[SCHEDULED_TIME_ANNOTATION] ?? b.metadata.creationTimestamp;
        const done = b.status?.completionTime;
        return {
          name: b.metadata.name ?? "",
          ...(b.status?.phase === undefined ? {} : { phase: b.status.phase }),
          scheduledTime: new Date(scheduled ?? 0),
          ...(done === undefined ? {} : { completionTime: new Date(done) }),
        };
      })
  );
}

/** The EtcdBackup a schedule creates for `scheduledTime`. */
export function scheduledBackup(schedule: EtcdBackupSchedule, name: string, scheduledTime: Date): EtcdBackup {
  const template = schedule.spec.backupTemplate;
  const backup: EtcdBackup = {
    apiVersion: EtcdBackupKind.apiVersion,
    kind: EtcdBackupKind.kind,
    metadata: {
      name,
      namespace: schedule.metadata.namespace ?? "",
      labels: {
        ...template.metadata?.labels,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        [SCHEDULE_LABEL]: schedule.metadata.name ?? "",
      },
      annotations: {
        ...template.metadata?.annotations,
        [SCHEDULED_TIME_ANNOTATION]: scheduledTime.toISOString(),
      },
    },
    spec: structuredClone(template.spec),
  };
  setControllerReference(schedule, EtcdBackupScheduleKind, backup);
  return backup;
}

/** One reconcile of one EtcdBackupSchedule. */
export async function reconcileEtcdBackupSchedule(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: EtcdBackupScheduleOptions = {},
): Promise<Result | undefined> {
  const now = options.now ?? new Date();
  const schedule = await ctx.cache.get(EtcdBackupScheduleKind, req.name, req.namespace);
  if (schedule === undefined || schedule.metadata.deletionTimestamp !== undefined) {
    options.metrics?.forgetSchedule(req.namespace ?? "", req.name);
    return undefined;
  }
  const namespace = schedule.metadata.namespace ?? "";
  const all = await ctx.cache.list(EtcdBackupKind, { namespace });
  const backups = ownedBackups(schedule, all);
  const status = schedule.status ?? {};
  const plan = planSchedule({
    name: schedule.metadata.name ?? "",
    spec: schedule.spec,
    createdAt: new Date(schedule.metadata.creationTimestamp ?? 0),
    ...(status.lastScheduleTime === undefined ? {} : { lastScheduleTime: new Date(status.lastScheduleTime) }),
    ...(status.lastMissedTime === undefined ? {} : { lastMissedTime: new Date(status.lastMissedTime) }),
    backups,
    now,
    inUse: await observeBackupsInUse(ctx.cache, namespace),
  });

  for (const d of plan.deletes) {
    try {
      await ctx.client.delete(EtcdBackupKind, d.name, namespace, { signal: ctx.signal });
      ctx.recorder.event(
        schedule,
        "Normal",
        "BackupDeleted",
        "Retention",
        `deleted EtcdBackup ${d.name}: ${d.reason}`,
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  const next: EtcdBackupScheduleStatus = { ...status };
  const decision = plan.decision;
  let active = plan.active;
  if (decision.type === "Create") {
    try {
      await ctx.client.create(
        EtcdBackupKind,
        scheduledBackup(schedule, decision.name, decision.scheduledTime),
        {
          signal: ctx.signal,
        },
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const missed = decision.missed > 0 ? ` (${decision.missed} earlier scheduled times were skipped)` : "";
    ctx.recorder.event(
      schedule,
      decision.missed > 0 ? "Warning" : "Normal",
      "BackupCreated",
      "Schedule",
      `created EtcdBackup ${decision.name} for ${decision.scheduledTime.toISOString()}${missed}`,
    );
    next.lastScheduleTime = decision.scheduledTime.toISOString();
    active = decision.name;
  } else if (decision.type === "AlreadyCreated") {
    next.lastScheduleTime = decision.scheduledTime.toISOString();
  } else if (decision.type === "Missed") {
    next.lastMissedTime = decision.scheduledTime.toISOString();
    ctx.recorder.event(
      schedule,
      "Warning",
      "MissedSchedule",
      "Schedule",
      `no backup for ${decision.scheduledTime.toISOString()}: not started within spec.startingDeadlineSeconds (${schedule.spec.startingDeadlineSeconds}s)${decision.missed > 0 ? `; ${decision.missed} earlier times were skipped too` : ""}`,
    );
  } else if (decision.type === "Invalid" && findDegradedReason(status) !== "InvalidSchedule") {
    ctx.recorder.event(schedule, "Warning", "InvalidSchedule", "Schedule", decision.message);
  }

  if (plan.next === undefined) delete next.nextScheduleTime;
  else next.nextScheduleTime = plan.next.toISOString();
  if (active === undefined) delete next.active;
  else next.active = active;
  const deleted = new Set(plan.deletes.map((d) => d.name));
  const lastSuccess = backups
    .filter((b) => b.phase === "Succeeded" && !deleted.has(b.name))
    .sort((a, b) => (b.completionTime?.getTime() ?? 0) - (a.completionTime?.getTime() ?? 0))[0];
  if (lastSuccess !== undefined) {
    next.lastSuccessfulBackup = lastSuccess.name;
    if (lastSuccess.completionTime !== undefined)
      next.lastSuccessfulTime = lastSuccess.completionTime.toISOString();
  }
  next.conditions = conditionsOf(schedule, next, plan, backups, active, now);
  const degraded = next.conditions.find((c) => c.type === "Degraded");
  options.metrics?.scheduleObserved(
    namespace,
    req.name,
    degraded?.status === "True" && degraded.reason === "BackupStale",
  );
  if (schedule.metadata.generation !== undefined) next.observedGeneration = schedule.metadata.generation;

  const patch = statusMergePatch(schedule.status, next);
  if (patch !== undefined) {
    await ctx.client.patchStatus(EtcdBackupScheduleKind, req.name, req.namespace, patch, "merge", {
      signal: ctx.signal,
    });
  }
  if (plan.next === undefined) return undefined;
  return { requeueAfter: Math.max(1000, plan.next.getTime() - now.getTime()) };
}

/** "2d 3h", "5h 10m", "42m", "30s": the two largest units. */
function humanDuration(ms: number): string {
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  for (const [unit, size] of units) {
    if (rest >= size || (parts.length === 0 && unit === "s")) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

function findDegradedReason(status: EtcdBackupScheduleStatus): string | undefined {
  const d = status.conditions?.find((c) => c.type === "Degraded");
  return d?.status === "True" ? d.reason : undefined;
}

/** Available, Progressing and Degraded of the schedule. */
function conditionsOf(
  schedule: EtcdBackupSchedule,
  status: EtcdBackupScheduleStatus,
  plan: SchedulePlan,
  backups: OwnedBackup[],
  active: string | undefined,
  now: Date,
): Condition[] {
  const generation = schedule.metadata.generation;
  const gen = generation === undefined ? {} : { observedGeneration: generation };
  const finished = backups
    .filter((b) => b.phase === "Succeeded" || b.phase === "Failed")
    .sort((a, b) => b.scheduledTime.getTime() - a.scheduledTime.getTime())[0];
  const d = plan.decision;
  // The last time handled was skipped: Degraded until a later backup is created.
  const missed =
    status.lastMissedTime !== undefined &&
    Date.parse(status.lastMissedTime) > Date.parse(status.lastScheduleTime ?? "1970-01-01T00:00:00Z")
      ? status.lastMissedTime
      : undefined;
  const stale = staleBackup(
    schedule.spec,
    new Date(schedule.metadata.creationTimestamp ?? 0),
    status.lastSuccessfulTime === undefined ? undefined : new Date(status.lastSuccessfulTime),
    now,
  );
  const degraded =
    d.type === "Invalid"
      ? { status: "True" as const, reason: "InvalidSchedule", message: d.message }
      : stale !== undefined
        ? {
            status: "True" as const,
            reason: "BackupStale",
            message: `${
              status.lastSuccessfulBackup === undefined
                ? "no backup has succeeded since the schedule was created"
                : `the newest successful backup, ${status.lastSuccessfulBackup}, completed`
            } ${humanDuration(stale.ageMs)} ago, more than twice the schedule's interval (${humanDuration(stale.intervalMs)})${
              finished?.phase === "Failed"
                ? `; the last backup, ${finished.name}, failed: see its status`
                : ""
            }`,
          }
        : missed !== undefined
          ? {
              status: "True" as const,
              reason: "MissedSchedule",
              message: `the backup for ${missed} was not started within spec.startingDeadlineSeconds (until the next one is created)`,
            }
          : finished?.phase === "Failed"
            ? {
                status: "True" as const,
                reason: "BackupFailed",
                message: `the last backup, ${finished.name}, failed: see its status`,
              }
            : { status: "False" as const, reason: "AsExpected", message: "" };
  const available =
    d.type === "Invalid"
      ? { status: "False" as const, reason: "InvalidSchedule", message: d.message }
      : finished?.phase === "Succeeded"
        ? {
            status: "True" as const,
            reason: "LastBackupSucceeded",
            message: `the last backup, ${finished.name}, succeeded`,
          }
        : {
            status: "False" as const,
            reason: finished === undefined ? "NoBackupYet" : "LastBackupFailed",
            message: "",
          };
  const progressing =
    active === undefined
      ? { status: "False" as const, reason: d.type === "Suspended" ? "Suspended" : "Waiting", message: "" }
      : { status: "True" as const, reason: "BackupRunning", message: `EtcdBackup ${active} is running` };
  let conditions: Condition[] | undefined = schedule.status?.conditions;
  conditions = setCondition(conditions, { type: "Available", ...available, ...gen }, now);
  conditions = setCondition(conditions, { type: "Progressing", ...progressing, ...gen }, now);
  conditions = setCondition(conditions, { type: "Degraded", ...degraded, ...gen }, now);
  return conditions;
}
