// The VaultSnapshotSchedule controller: @capstan/backup's schedule reconcile (the same as the etcd operator's
// EtcdBackupSchedule: list the VaultSnapshots the schedule controls -> plan -> delete by retention, create the due
// snapshot -> write status, conditions and events; requeue at the next scheduled time), with the Vault operator's
// kinds and the snapshots a restore may still read.
import {
  reconcileSchedule,
  type ScheduleDefinition,
  type ScheduleReconcileOptions,
  scheduledObject,
} from "@capstan/backup";
import {
  type Cache,
  type Controller,
  controller,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
} from "@capstan/core";
import { GROUP } from "../api/group.ts";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import { type VaultSnapshot, VaultSnapshotKind } from "../api/vault-snapshot.ts";
import {
  VAULT_SCHEDULE_WORDS,
  type VaultSnapshotSchedule,
  VaultSnapshotScheduleKind,
} from "../api/vault-snapshot-schedule.ts";
import { MANAGED_BY } from "../desired/names.ts";
import { snapshotsInUse } from "../plan/snapshot-use.ts";

/** The snapshots a VaultCluster's spec.restore may still read, in `namespace`. */
export async function observeSnapshotsInUse(cache: Cache, namespace: string) {
  return snapshotsInUse(await cache.list(VaultClusterKind, { namespace }));
}

/** The VaultSnapshotSchedule as @capstan/backup's schedule reconcile reads it. */
const definition: ScheduleDefinition<VaultSnapshotSchedule, VaultSnapshot> = {
  scheduleKind: VaultSnapshotScheduleKind,
  backupKind: VaultSnapshotKind,
  words: VAULT_SCHEDULE_WORDS,
  group: GROUP,
  managedBy: MANAGED_BY,
  settings: (s) => ({
    ...s.spec,
    failedHistoryLimit: s.spec.failedSnapshotsHistoryLimit,
    failedHistoryLimitField: "failedSnapshotsHistoryLimit",
  }),
  template: (s) => s.spec.snapshotTemplate,
  inUse: observeSnapshotsInUse,
};

/** The controller that reconciles VaultSnapshotSchedules. */
export function vaultSnapshotScheduleController(): Controller<VaultSnapshotSchedule> {
  return controller({
    name: "vaultsnapshotschedule",
    for: VaultSnapshotScheduleKind,
    // A snapshot's phase change re-plans its schedule (the next may wait on it; retention counts it).
    owns: [VaultSnapshotKind],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileVaultSnapshotSchedule(req, ctx),
  });
}

/** The VaultSnapshot a schedule creates for `scheduledTime`. */
export function scheduledSnapshot(
  schedule: VaultSnapshotSchedule,
  name: string,
  scheduledTime: Date,
): VaultSnapshot {
  return scheduledObject(definition, schedule, name, scheduledTime);
}

/** One reconcile of one VaultSnapshotSchedule. */
export function reconcileVaultSnapshotSchedule(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: Pick<ScheduleReconcileOptions, "now"> = {},
): Promise<Result | undefined> {
  return reconcileSchedule(definition, req, ctx, options);
}
