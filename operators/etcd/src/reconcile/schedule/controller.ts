// The EtcdBackupSchedule controller: @capstan/backup's schedule reconcile (list the EtcdBackups the schedule controls
// -> plan -> delete by retention, create the due backup -> write status, conditions and events; requeue at the next
// scheduled time), with the etcd operator's kinds, the backups restores use, and the stale-schedule metric.
import {
  reconcileSchedule,
  type ScheduleDefinition,
  scheduledBackupName,
  scheduledObject,
  scheduledTimeAnnotation,
  scheduleLabel,
} from "@capstan/backup";
import {
  type Controller,
  controller,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
} from "@capstan/core";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import {
  ETCD_SCHEDULE_WORDS,
  type EtcdBackupSchedule,
  EtcdBackupScheduleKind,
} from "../../api/backup-schedule.ts";
import { GROUP } from "../../api/group.ts";
import { MANAGED_BY } from "../../desired/names.ts";
import { observeBackupsInUse } from "../backup-use.ts";
import type { EtcdOperatorMetrics } from "../metrics.ts";

/** Label carrying the schedule's name on the backups it creates. */
export const SCHEDULE_LABEL = scheduleLabel(GROUP);
/** Annotation on a scheduled EtcdBackup: the scheduled time it was created for (RFC 3339). */
export const SCHEDULED_TIME_ANNOTATION = scheduledTimeAnnotation(GROUP);
export { scheduledBackupName };

/** Options of {@link etcdBackupScheduleController} and {@link reconcileEtcdBackupSchedule}. */
export interface EtcdBackupScheduleOptions {
  /** capstan_etcd_backup_schedule_stale is set on it. */
  metrics?: EtcdOperatorMetrics;
  /** The time the reconcile plans at (tests); default now. */
  now?: Date;
}

/** The EtcdBackupSchedule as @capstan/backup's schedule reconcile reads it. */
const definition: ScheduleDefinition<EtcdBackupSchedule, EtcdBackup> = {
  scheduleKind: EtcdBackupScheduleKind,
  backupKind: EtcdBackupKind,
  words: ETCD_SCHEDULE_WORDS,
  group: GROUP,
  managedBy: MANAGED_BY,
  settings: (s) => ({ ...s.spec, failedHistoryLimit: s.spec.failedBackupsHistoryLimit }),
  template: (s) => s.spec.backupTemplate,
  inUse: observeBackupsInUse,
};

/** The controller that reconciles EtcdBackupSchedules. */
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

/** The EtcdBackup a schedule creates for `scheduledTime`. */
export function scheduledBackup(schedule: EtcdBackupSchedule, name: string, scheduledTime: Date): EtcdBackup {
  return scheduledObject(definition, schedule, name, scheduledTime);
}

/** One reconcile of one EtcdBackupSchedule. */
export function reconcileEtcdBackupSchedule(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: EtcdBackupScheduleOptions = {},
): Promise<Result | undefined> {
  const metrics = options.metrics;
  return reconcileSchedule(definition, req, ctx, {
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(metrics === undefined
      ? {}
      : {
          observed: (ns, name, stale) => metrics.scheduleObserved(ns, name, stale),
          forget: (ns, name) => metrics.forgetSchedule(ns, name),
        }),
  });
}
