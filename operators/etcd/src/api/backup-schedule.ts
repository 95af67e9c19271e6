// EtcdBackupSchedule (etcd.capstan.dev/v1alpha1): backups on a cron schedule with retention; the CRD schema, the
// single source of truth, and its TypeScript types. Each backup it makes is an EtcdBackup of its template. The
// schedule's schema and planner are @capstan/backup's, shared with the Vault operator's VaultSnapshotSchedule.
import {
  type BackupRetention,
  DEFAULT_FAILED_HISTORY,
  DEFAULT_KEEP_LAST,
  MAX_AGE_PATTERN,
  MAX_SCHEDULE_NAME_LENGTH,
  type ScheduleTemplate,
  type ScheduleWords,
  schedulePrinterColumns,
  scheduleSchema,
} from "@capstan/backup";
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  type KubeObject,
} from "@capstan/core";
import type * as Type from "typebox/type";
import { backupSpecSchema, DEFAULT_SCHEDULED_DELETION_POLICY, type EtcdBackupSpec } from "./backup.ts";
import { GROUP, VERSION } from "./group.ts";

export type { BackupRetention };
export { DEFAULT_FAILED_HISTORY, DEFAULT_KEEP_LAST, MAX_AGE_PATTERN, MAX_SCHEDULE_NAME_LENGTH };

/** What each scheduled backup is made from. */
export type EtcdBackupTemplate = ScheduleTemplate<EtcdBackupSpec>;

/** An EtcdBackupSchedule object. */
export interface EtcdBackupSchedule extends KubeObject {
  spec: EtcdBackupScheduleSpec;
  status?: EtcdBackupScheduleStatus;
}

/** The EtcdBackupSchedule kind descriptor. */
export const EtcdBackupScheduleKind = defineKind<EtcdBackupSchedule>({
  group: GROUP,
  version: VERSION,
  kind: "EtcdBackupSchedule",
  plural: "etcdbackupschedules",
  namespaced: true,
});

/** How the schedule names what it creates: `failedBackupsHistoryLimit`, `backupTemplate`, `lastSuccessfulBackup`. */
export const ETCD_SCHEDULE_WORDS: ScheduleWords<"backup"> = { noun: "backup", kind: "EtcdBackup" };

/** The openAPIV3Schema of EtcdBackupSchedule. */
export const etcdBackupScheduleSchema = scheduleSchema(
  ETCD_SCHEDULE_WORDS,
  backupSpecSchema("The spec of each backup.", DEFAULT_SCHEDULED_DELETION_POLICY),
);

/** The desired schedule: @capstan/backup's fields, failedBackupsHistoryLimit (default 3) and backupTemplate. */
export type EtcdBackupScheduleSpec = Type.Static<typeof etcdBackupScheduleSchema.properties.spec>;

/** The observed schedule, with the name of the last successful backup. */
export type EtcdBackupScheduleStatus = Type.Static<typeof etcdBackupScheduleSchema.properties.status>;

/** The EtcdBackupSchedule CustomResourceDefinition. */
export function etcdBackupScheduleCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: EtcdBackupScheduleKind,
    singular: "etcdbackupschedule",
    schema: etcdBackupScheduleSchema,
    printerColumns: schedulePrinterColumns(ETCD_SCHEDULE_WORDS),
  });
}
