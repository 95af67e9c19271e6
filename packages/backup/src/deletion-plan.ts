// The deletion planner of a backup object (an EtcdBackup, a VaultSnapshot) with `spec.deletionPolicy: Delete`: a
// finalizer holds it until its stored snapshot is gone. Pure: from the object, its Jobs and its destination claim, the
// one step to take (add the finalizer, stop a running backup Job, delete the S3 object, run or retry the Job that
// removes the file from the claim, remove the finalizer) and the conditions and event to report. What fails outside
// (S3 unreachable, credentials gone) keeps the finalizer and is reported by {@link planDeletionFailure}.
import * as Type from "typebox/type";
import type { BackupDestination } from "./destination.ts";
import type { JobOutcome } from "./job-status.ts";

/** What happens to the stored snapshot when its backup object is deleted. */
export type DeletionPolicy = "Retain" | "Delete";

/**
 * The schema of a backup kind's `spec.deletionPolicy`: Retain or Delete, defaulting to `dflt` (Retain for a one-shot
 * backup, Delete in a schedule's template), `description` saying what deleting the object does to the stored file.
 */
export function deletionPolicySchema(dflt: DeletionPolicy, description: string) {
  return Type.Enum(["Retain", "Delete"], { type: "string", default: dflt, description });
}

/** The backup object as the deletion planner reads it. */
export interface DeletionSubject {
  /** Its kind, for messages: "EtcdBackup", "VaultSnapshot". */
  kind: string;
  /** The finalizer that holds it while its snapshot is deleted. */
  finalizer: string;
  /** spec.deletionPolicy, defaulted. */
  policy: DeletionPolicy;
  finalizers?: readonly string[] | undefined;
  deletionTimestamp?: string | undefined;
  destination: BackupDestination;
  /** Where its snapshot is (or would be) stored: s3://... or pvc://... */
  location: string;
  /** status.jobName and status.phase. */
  jobName?: string | undefined;
  phase?: string | undefined;
}

/** A backup object's fields the deletion reads: its finalizers and deletion, its policy and destination, its Job. */
export interface DeletableBackup {
  metadata: { finalizers?: string[] | undefined; deletionTimestamp?: string | undefined };
  spec: { destination: BackupDestination; deletionPolicy?: DeletionPolicy | undefined };
  status?: { jobName?: string | undefined; phase?: string | undefined } | undefined;
}

/** `obj` as the deletion planner reads it: of `kind`, held by `finalizer`, its policy defaulted, stored at `location`. */
export function deletionSubject(
  obj: DeletableBackup,
  names: { kind: string; finalizer: string; defaultPolicy: DeletionPolicy },
  location: string,
): DeletionSubject {
  return {
    kind: names.kind,
    finalizer: names.finalizer,
    policy: obj.spec.deletionPolicy ?? names.defaultPolicy,
    finalizers: obj.metadata.finalizers,
    deletionTimestamp: obj.metadata.deletionTimestamp,
    destination: obj.spec.destination,
    location,
    jobName: obj.status?.jobName,
    phase: obj.status?.phase,
  };
}

/** A condition the deletion sets. */
export interface DeletionCondition {
  type: "Available" | "Progressing" | "Degraded";
  status: "True" | "False";
  reason: string;
  message: string;
}

/** What the deletion planner reads. */
export interface DeletionPlanInput {
  subject: DeletionSubject;
  /** The Job that takes the snapshot, if it exists. */
  backupJob?: JobOutcome | undefined;
  /** The Job that removes a PVC destination's file, if it exists. */
  deleteJob?: JobOutcome | undefined;
  /** For a PVC destination: its claim; undefined when it does not exist. */
  claim?: { deleting?: boolean } | undefined;
  /** Who uses the snapshot (a restore not ended, a cluster not yet restored from it): it is not deleted meanwhile. */
  usedBy?: string | undefined;
  /** When to look again (milliseconds) while waiting, and while stuck. */
  requeue: { waiting: number; degraded: number };
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

/** The planner's answer; no action: nothing to do about deletion (the object's own planner goes on). */
export interface DeletionPlan {
  action?: DeletionAction;
  conditions: DeletionCondition[];
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
  requeueAfter?: number;
}

const none: DeletionPlan = { conditions: [] };

/** Degraded (and Progressing) while the snapshot cannot be deleted. */
function stuck(
  subject: DeletionSubject,
  requeue: DeletionPlanInput["requeue"],
  reason: string,
  message: string,
): DeletionPlan {
  const full = `${message}; the ${subject.kind} stays until the snapshot is deleted (or the finalizer ${subject.finalizer} is removed by hand)`;
  return {
    conditions: [
      { type: "Progressing", status: "False", reason, message: full },
      { type: "Degraded", status: "True", reason, message: full },
    ],
    event: { type: "Warning", reason, message: full },
    requeueAfter: requeue.degraded,
  };
}

const deleting = (message: string): DeletionCondition[] => [
  { type: "Progressing", status: "True", reason: "DeletingSnapshot", message },
];

/** Plans the deletion side of one reconcile of a backup object. */
export function planDeletion(input: DeletionPlanInput): DeletionPlan {
  const { subject, backupJob, deleteJob, claim, requeue } = input;
  const held = subject.finalizers?.includes(subject.finalizer) === true;
  const beingDeleted = subject.deletionTimestamp !== undefined;

  if (!beingDeleted) {
    // Added before anything is stored, so no snapshot of a Delete object can outlive it unnoticed.
    return subject.policy === "Delete" && !held ? { action: { type: "AddFinalizer" }, conditions: [] } : none;
  }
  if (!held) return none;
  if (subject.policy !== "Delete") return { action: { type: "RemoveFinalizer" }, conditions: [] };

  const location = subject.location;
  const mayHaveStored =
    backupJob !== undefined || subject.jobName !== undefined || subject.phase === "Succeeded";
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
      requeueAfter: requeue.waiting,
    };
  }

  if (input.usedBy !== undefined) {
    // Deleting the snapshot now would pull it from under a restore: the finalizer holds until the restore ends.
    const message = `${location} is not deleted while ${input.usedBy} uses it; it is deleted once that ends`;
    return {
      conditions: [{ type: "Progressing", status: "True", reason: "SnapshotInUse", message }],
      event: { type: "Normal", reason: "SnapshotInUse", message },
      requeueAfter: requeue.waiting,
    };
  }

  if (subject.destination.s3 !== undefined) {
    return { action: { type: "DeleteObject" }, conditions: deleting(`deleting ${location}`) };
  }

  // A PVC destination: a Job mounting the claim removes the file.
  if (claim === undefined || claim.deleting === true) {
    const claimName = subject.destination.pvc?.claimName ?? "";
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
      requeueAfter: requeue.waiting,
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
        subject,
        requeue,
        "SnapshotDeleteFailed",
        `the Job removing ${location} failed (${deleteJob.failed.reason}): ${deleteJob.failed.message}; it is retried`,
      ),
      action: { type: "RetryDeleteJob" },
    };
  }
  return { conditions: deleting(`a Job removes ${location}`), requeueAfter: requeue.waiting };
}

/** What to report when deleting the S3 object failed (`why` names the cause: unreachable, credentials, refused). */
export function planDeletionFailure(
  subject: DeletionSubject,
  requeue: DeletionPlanInput["requeue"],
  reason: string,
  why: string,
): DeletionPlan {
  return stuck(subject, requeue, reason, `deleting ${subject.location} failed: ${why}; it is retried`);
}

/** The S3 object is deleted: let the object go. */
export function planObjectDeleted(subject: DeletionSubject): DeletionPlan {
  return {
    action: { type: "RemoveFinalizer" },
    conditions: [],
    event: { type: "Normal", reason: "SnapshotDeleted", message: `deleted ${subject.location}` },
  };
}
