// The EtcdBackup deletion planner: @capstan/backup's (shared with the Vault operator's VaultSnapshot) for an
// EtcdBackup. With `spec.deletionPolicy: Delete`, a finalizer holds the EtcdBackup until its stored snapshot is gone:
// the operator deletes an S3 object itself, a Job removes a file from a claim.
import {
  type DeletionAction,
  type DeletionPlan,
  type DeletionSubject,
  deletionSubject,
  planDeletion,
  planDeletionFailure as sharedDeletionFailure,
  planObjectDeleted as sharedObjectDeleted,
} from "@capstan/backup";
import { DEFAULT_DELETION_POLICY, type EtcdBackup } from "../api/backup.ts";
import { backupLocation } from "../desired/backup-job.ts";
import type { ObservedClaim, ObservedJob } from "./backup.ts";
import { BACKUP_REQUEUE } from "./backup.ts";

export type { DeletionAction, DeletionPlan };

/** The finalizer that holds an EtcdBackup with deletionPolicy Delete until its snapshot is deleted. */
export const SNAPSHOT_FINALIZER = "etcd.capstan.dev/delete-snapshot";

/** What the deletion planner reads. */
export interface DeletionInput {
  backup: EtcdBackup;
  /** The Job that takes the snapshot, if it exists. */
  backupJob?: ObservedJob | undefined;
  /** The Job that removes a PVC destination's file, if it exists. */
  deleteJob?: ObservedJob | undefined;
  /** For a PVC destination: its claim; undefined when it does not exist. */
  claim?: (ObservedClaim & { deleting?: boolean }) | undefined;
  /** Who uses the snapshot (a restore not ended, a cluster not yet restored from it): it is not deleted meanwhile. */
  usedBy?: string | undefined;
}

/** The EtcdBackup as the shared deletion planner reads it. */
export function backupDeletionSubject(backup: EtcdBackup): DeletionSubject {
  const names = { kind: "EtcdBackup", finalizer: SNAPSHOT_FINALIZER, defaultPolicy: DEFAULT_DELETION_POLICY };
  return deletionSubject(backup, names, backupLocation(backup));
}

/** Plans the deletion side of one reconcile of an EtcdBackup. */
export function planBackupDeletion(input: DeletionInput): DeletionPlan {
  return planDeletion({
    subject: backupDeletionSubject(input.backup),
    backupJob: input.backupJob,
    deleteJob: input.deleteJob,
    claim: input.claim,
    usedBy: input.usedBy,
    requeue: BACKUP_REQUEUE,
  });
}

/** What to report when deleting the S3 object failed (`why` names the cause: unreachable, credentials, refused). */
export function planDeletionFailure(backup: EtcdBackup, reason: string, why: string): DeletionPlan {
  return sharedDeletionFailure(backupDeletionSubject(backup), BACKUP_REQUEUE, reason, why);
}

/** The S3 object is deleted: let the EtcdBackup go. */
export function planObjectDeleted(backup: EtcdBackup): DeletionPlan {
  return sharedObjectDeleted(backupDeletionSubject(backup));
}
