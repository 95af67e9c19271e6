// VaultSnapshotSchedule (vault.capstan.dev/v1alpha1): raft snapshots on a cron schedule with retention; the CRD
// schema, the single source of truth, and its TypeScript types. Each snapshot it takes is a VaultSnapshot of its
// template. The schedule's schema, planner and reconcile are @capstan/backup's, shared with the etcd operator's
// EtcdBackupSchedule.
import { type ScheduleWords, schedulePrinterColumns, scheduleSchema } from "@capstan/backup";
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  type KubeObject,
} from "@capstan/core";
import type * as Type from "typebox/type";
import { GROUP, VERSION } from "./group.ts";
import { DEFAULT_SCHEDULED_SNAPSHOT_DELETION_POLICY, snapshotSpecSchema } from "./vault-snapshot.ts";

/** A VaultSnapshotSchedule object. */
export interface VaultSnapshotSchedule extends KubeObject {
  spec: VaultSnapshotScheduleSpec;
  status?: VaultSnapshotScheduleStatus;
}

/** The VaultSnapshotSchedule kind descriptor. */
export const VaultSnapshotScheduleKind = defineKind<VaultSnapshotSchedule>({
  group: GROUP,
  version: VERSION,
  kind: "VaultSnapshotSchedule",
  plural: "vaultsnapshotschedules",
  namespaced: true,
});

/** How the schedule names what it creates: `failedSnapshotsHistoryLimit`, `snapshotTemplate`, `lastSuccessfulSnapshot`. */
export const VAULT_SCHEDULE_WORDS: ScheduleWords<"snapshot"> = { noun: "snapshot", kind: "VaultSnapshot" };

/**
 * Longest VaultSnapshotSchedule name: its snapshots are named `<schedule>-<minutes since 1970>` (9 characters more),
 * and a VaultSnapshot's name is at most 52 (it names the snapshot Job and its token Secret).
 */
export const MAX_SNAPSHOT_SCHEDULE_NAME_LENGTH = 43;

/** The openAPIV3Schema of VaultSnapshotSchedule. */
export const vaultSnapshotScheduleSchema = scheduleSchema(
  VAULT_SCHEDULE_WORDS,
  snapshotSpecSchema("The spec of each snapshot.", DEFAULT_SCHEDULED_SNAPSHOT_DELETION_POLICY),
  MAX_SNAPSHOT_SCHEDULE_NAME_LENGTH,
);

/** The desired schedule: @capstan/backup's fields, failedSnapshotsHistoryLimit (default 3) and snapshotTemplate. */
export type VaultSnapshotScheduleSpec = Type.Static<typeof vaultSnapshotScheduleSchema.properties.spec>;

/** The observed schedule, with the name of the last successful snapshot. */
export type VaultSnapshotScheduleStatus = Type.Static<typeof vaultSnapshotScheduleSchema.properties.status>;

/** The VaultSnapshotSchedule CustomResourceDefinition. */
export function vaultSnapshotScheduleCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: VaultSnapshotScheduleKind,
    singular: "vaultsnapshotschedule",
    schema: vaultSnapshotScheduleSchema,
    printerColumns: schedulePrinterColumns(VAULT_SCHEDULE_WORDS),
  });
}
