// The VaultSnapshot deletion planner: @capstan/backup's (shared with the etcd operator's EtcdBackup) for a
// VaultSnapshot. With `spec.deletionPolicy: Delete`, a finalizer holds the VaultSnapshot until its stored file is
// gone: the operator deletes an S3 object itself, a Job removes a file from a claim; never while a VaultCluster's
// spec.restore still reads it.
import { type DeletionPlan, type DeletionSubject, deletionSubject, planDeletion } from "@capstan/backup";
import { DEFAULT_SNAPSHOT_DELETION_POLICY, type VaultSnapshot } from "../api/vault-snapshot.ts";
import { vaultSnapshotLocation } from "../desired/snapshot-job.ts";
import { type ObservedSnapshotJob, SNAPSHOT_REQUEUE } from "./snapshot.ts";

/** The finalizer that holds a VaultSnapshot with deletionPolicy Delete until its stored file is deleted. */
export const SNAPSHOT_FINALIZER = "vault.capstan.dev/delete-snapshot";

/** The VaultSnapshot as the shared deletion planner reads it. */
export function snapshotDeletionSubject(snapshot: VaultSnapshot): DeletionSubject {
  const names = {
    kind: "VaultSnapshot",
    finalizer: SNAPSHOT_FINALIZER,
    defaultPolicy: DEFAULT_SNAPSHOT_DELETION_POLICY,
  };
  return deletionSubject(snapshot, names, vaultSnapshotLocation(snapshot));
}

/** What the deletion planner reads of a VaultSnapshot. */
export interface SnapshotDeletionInput {
  snapshot: VaultSnapshot;
  job?: ObservedSnapshotJob | undefined;
  deleteJob?: ObservedSnapshotJob | undefined;
  claim?: { deleting?: boolean } | undefined;
  usedBy?: string | undefined;
}

/** Plans the deletion side of one reconcile of a VaultSnapshot. */
export function planSnapshotDeletion(input: SnapshotDeletionInput): DeletionPlan {
  return planDeletion({
    subject: snapshotDeletionSubject(input.snapshot),
    backupJob: input.job,
    deleteJob: input.deleteJob,
    claim: input.claim,
    usedBy: input.usedBy,
    requeue: SNAPSHOT_REQUEUE,
  });
}
