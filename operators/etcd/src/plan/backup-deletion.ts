// The EtcdBackup deletion planner: with `spec.deletionPolicy: Delete`, a finalizer holds the EtcdBackup until its
// stored snapshot is gone. Pure: from the backup, its Jobs and its destination claim, the one step to take (add
// the finalizer, stop a running backup Job, delete the S3 object, run or retry the Job that removes the file from
// the claim, remove the finalizer) and the conditions and event to report. What fails outside (S3 unreachable,
// credentials gone) keeps the finalizer and is reported by {@link planDeletionFailure}.
import { DEFAULT_DELETION_POLICY, type EtcdBackup } from "../api/backup.ts";
import { backupLocation } from "../desired/backup-job.ts";
import type { ObservedClaim, ObservedJob, PlannedCondition } from "./backup.ts";
import { BACKUP_REQUEUE } from "./backup.ts";

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

/** One step of a deletion. */
export type DeletionAction =
  | { type: "AddFinalizer" }
  | { type: "RemoveFinalizer" }
  /** Stop the backup Job still running, so no upload lands after the object is deleted. */
  | { type: "DeleteBackupJob" }
  /** Delete the S3 object (the reconciler does it with the credentials Secret). */
  | { type: "DeleteObject" }
  /** Create the Job that removes the file from the claim. */
  | { type: "CreateDeleteJob" }
  /** Delete the failed removal Job, so the next attempt creates a fresh one. */
  | { type: "RetryDeleteJob" };

/** The planner's answer; no action: nothing to do about deletion (the backup's own planner goes on). */
export interface DeletionPlan {
  action?: DeletionAction;
  conditions: PlannedCondition[];
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
  requeueAfter?: number;
}

const none: DeletionPlan = { conditions: [] };

/** Degraded (and Progressing) while the snapshot cannot be deleted. */
function stuck(reason: string, message: string): DeletionPlan {
  const full = `${message}; the EtcdBackup stays until the snapshot is deleted (or the finalizer ${SNAPSHOT_FINALIZER} is removed by hand)`;
  return {
    conditions: [
      { type: "Progressing", status: "False", reason, message: full },
      { type: "Degraded", status: "True", reason, message: full },
    ],
    event: { type: "Warning", reason, message: full },
    requeueAfter: BACKUP_REQUEUE.degraded,
  };
}

const deleting = (message: string): PlannedCondition[] => [
  { type: "Progressing", status: "True", reason: "DeletingSnapshot", message },
];

/** Plans the deletion side of one reconcile of an EtcdBackup. */
export function planBackupDeletion(input: DeletionInput): DeletionPlan {
  const { backup, backupJob, deleteJob, claim } = input;
  const policy = backup.spec.deletionPolicy ?? DEFAULT_DELETION_POLICY;
  const held = backup.metadata.finalizers?.includes(SNAPSHOT_FINALIZER) === true;
  const beingDeleted = backup.metadata.deletionTimestamp !== undefined;

  if (!beingDeleted) {
    // Added before anything is stored, so no snapshot of a Delete backup can outlive it unnoticed.
    return policy === "Delete" && !held ? { action: { type: "AddFinalizer" }, conditions: [] } : none;
  }
  if (!held) return none;
  if (policy !== "Delete") return { action: { type: "RemoveFinalizer" }, conditions: [] };

  const location = backupLocation(backup);
  const status = backup.status ?? {};
  const mayHaveStored =
    backupJob !== undefined || status.jobName !== undefined || status.phase === "Succeeded";
  if (!mayHaveStored) {
    return {
      action: { type: "RemoveFinalizer" },
      conditions: [],
      event: {
        type: "Normal",
        reason: "NothingStored",
        message: "no snapshot was stored: nothing to delete",
      },
    };
  }
  if (backupJob !== undefined && !backupJob.succeeded && backupJob.failed === undefined) {
    return {
      action: { type: "DeleteBackupJob" },
      conditions: deleting(`stopping the backup Job before deleting ${location}`),
      requeueAfter: BACKUP_REQUEUE.waiting,
    };
  }

  if (input.usedBy !== undefined) {
    // Deleting the snapshot now would pull it from under a restore: the finalizer holds until the restore ends.
    const message = `${location} is not deleted while ${input.usedBy} uses it; it is deleted once that ends`;
    return {
      conditions: [{ type: "Progressing", status: "True", reason: "SnapshotInUse", message }],
      event: { type: "Normal", reason: "SnapshotInUse", message },
      requeueAfter: BACKUP_REQUEUE.waiting,
    };
  }

  if (backup.spec.destination.s3 !== undefined) {
    return { action: { type: "DeleteObject" }, conditions: deleting(`deleting ${location}`) };
  }

  // A PVC destination: a Job mounting the claim removes the file.
  if (claim === undefined || claim.deleting === true) {
    const claimName = backup.spec.destination.pvc?.claimName ?? "";
    return {
      action: { type: "RemoveFinalizer" },
      conditions: [],
      event: {
        type: "Normal",
        reason: "ClaimGone",
        message: `PersistentVolumeClaim ${claimName} is ${claim === undefined ? "gone" : "being deleted"}: the snapshot goes with its volume`,
      },
    };
  }
  if (deleteJob === undefined) {
    return {
      action: { type: "CreateDeleteJob" },
      conditions: deleting(`a Job removes ${location}`),
      requeueAfter: BACKUP_REQUEUE.waiting,
    };
  }
  if (deleteJob.succeeded) {
    return {
      action: { type: "RemoveFinalizer" },
      conditions: [],
      event: { type: "Normal", reason: "SnapshotDeleted", message: `deleted ${location}` },
    };
  }
  if (deleteJob.failed !== undefined) {
    return {
      ...stuck(
        "SnapshotDeleteFailed",
        `the Job removing ${location} failed (${deleteJob.failed.reason}): ${deleteJob.failed.message}; it is retried`,
      ),
      action: { type: "RetryDeleteJob" },
    };
  }
  return { conditions: deleting(`a Job removes ${location}`), requeueAfter: BACKUP_REQUEUE.waiting };
}

/** What to report when deleting the S3 object failed (`why` names the cause: unreachable, credentials, refused). */
export function planDeletionFailure(backup: EtcdBackup, reason: string, why: string): DeletionPlan {
  return stuck(reason, `deleting ${backupLocation(backup)} failed: ${why}; it is retried`);
}

/** The S3 object is deleted: let the EtcdBackup go. */
export function planObjectDeleted(backup: EtcdBackup): DeletionPlan {
  return {
    action: { type: "RemoveFinalizer" },
    conditions: [],
    event: { type: "Normal", reason: "SnapshotDeleted", message: `deleted ${backupLocation(backup)}` },
  };
}
