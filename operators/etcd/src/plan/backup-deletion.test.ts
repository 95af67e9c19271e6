// Table tests of the EtcdBackup deletion planner: the finalizer comes with deletionPolicy Delete, a deleted backup
// stops its running Job, then deletes its S3 object or runs the Job that removes its file, retries a failed
// removal, lets go when nothing was stored or the claim is gone, and reports a failure without letting go.
import { describe, expect, it } from "vitest";
import type { DeletionPolicy, EtcdBackup, EtcdBackupStatus } from "../api/backup.ts";
import {
  type DeletionInput,
  planBackupDeletion,
  planDeletionFailure,
  planObjectDeleted,
  SNAPSHOT_FINALIZER,
} from "./backup-deletion.ts";

const backup = (
  o: {
    policy?: DeletionPolicy;
    pvc?: boolean;
    finalizer?: boolean;
    deleting?: boolean;
    status?: EtcdBackupStatus;
  } = {},
): EtcdBackup => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdBackup",
  metadata: {
    name: "b1",
    namespace: "db",
    ...(o.finalizer === true ? { finalizers: ["other.example/keep", SNAPSHOT_FINALIZER] } : {}),
    ...(o.deleting === true ? { deletionTimestamp: "2026-11-29T12:00:00Z" } : {}),
  },
  spec: {
    clusterName: "demo",
    destination:
      o.pvc === true
        ? { pvc: { claimName: "backups", directory: "etcd" } }
        : { s3: { bucket: "bk", prefix: "p", credentialsSecret: { name: "creds" } } },
    ...(o.policy === undefined ? {} : { deletionPolicy: o.policy }),
  },
  ...(o.status === undefined ? {} : { status: o.status }),
});

const succeeded: EtcdBackupStatus = {
  phase: "Succeeded",
  jobName: "b1",
  completionTime: "2026-11-29T11:00:00Z",
};
const doneJob = { succeeded: true };
const runningJob = { succeeded: false };
const failedJob = {
  succeeded: false,
  failed: { reason: "BackoffLimitExceeded", message: "rm: permission denied" },
};
const del = { policy: "Delete" as const, finalizer: true, deleting: true };

type Row = [
  string,
  DeletionInput,
  { action?: string; reason?: string; degraded?: boolean; requeue?: boolean },
];

const rows: Row[] = [
  // Not being deleted.
  [
    "Delete without the finalizer: add it",
    { backup: backup({ policy: "Delete" }) },
    { action: "AddFinalizer" },
  ],
  ["Delete with the finalizer: nothing", { backup: backup({ policy: "Delete", finalizer: true }) }, {}],
  ["Retain: no finalizer", { backup: backup({ policy: "Retain" }) }, {}],
  ["no policy (defaulted Retain): no finalizer", { backup: backup() }, {}],
  // Being deleted.
  ["deleted without the finalizer: nothing", { backup: backup({ policy: "Delete", deleting: true }) }, {}],
  [
    "Retain but the finalizer is there (added by hand): let go, delete nothing",
    { backup: backup({ policy: "Retain", finalizer: true, deleting: true }) },
    { action: "RemoveFinalizer" },
  ],
  [
    "nothing was ever stored (no Job): let go",
    { backup: backup({ ...del, status: { phase: "Pending" } }) },
    { action: "RemoveFinalizer", reason: "NothingStored" },
  ],
  [
    "the backup Job still runs: stop it first",
    { backup: backup({ ...del, status: { phase: "Running", jobName: "b1" } }), backupJob: runningJob },
    { action: "DeleteBackupJob", requeue: true },
  ],
  [
    "S3, succeeded: delete the object",
    { backup: backup({ ...del, status: succeeded }), backupJob: doneJob },
    { action: "DeleteObject" },
  ],
  [
    "S3, failed after its Job ran (a part may be stored): delete the object",
    { backup: backup({ ...del, status: { phase: "Failed", jobName: "b1" } }), backupJob: failedJob },
    { action: "DeleteObject" },
  ],
  [
    "S3, succeeded, its Job already garbage-collected: delete the object",
    { backup: backup({ ...del, status: succeeded }) },
    { action: "DeleteObject" },
  ],
  [
    "PVC: no removal Job yet: create it",
    { backup: backup({ ...del, pvc: true, status: succeeded }), claim: {} },
    { action: "CreateDeleteJob", requeue: true },
  ],
  [
    "PVC: the removal Job runs: wait",
    { backup: backup({ ...del, pvc: true, status: succeeded }), claim: {}, deleteJob: runningJob },
    { requeue: true },
  ],
  [
    "PVC: the removal Job succeeded: let go",
    { backup: backup({ ...del, pvc: true, status: succeeded }), claim: {}, deleteJob: doneJob },
    { action: "RemoveFinalizer", reason: "SnapshotDeleted" },
  ],
  [
    "PVC: the removal Job failed: Degraded, keep the finalizer, retry with a new Job",
    { backup: backup({ ...del, pvc: true, status: succeeded }), claim: {}, deleteJob: failedJob },
    { action: "RetryDeleteJob", reason: "SnapshotDeleteFailed", degraded: true, requeue: true },
  ],
  [
    "PVC: the claim is gone (the file with it): let go",
    { backup: backup({ ...del, pvc: true, status: succeeded }) },
    { action: "RemoveFinalizer", reason: "ClaimGone" },
  ],
  [
    "PVC: the claim is being deleted (a namespace going): let go",
    { backup: backup({ ...del, pvc: true, status: succeeded }), claim: { deleting: true } },
    { action: "RemoveFinalizer", reason: "ClaimGone" },
  ],
  [
    "S3: a restore still uses the snapshot: kept, the finalizer holds, looked at again",
    { backup: backup({ ...del, status: succeeded }), usedBy: "EtcdRestore r1 (Running)" },
    { reason: "SnapshotInUse", requeue: true },
  ],
  [
    "PVC: a cluster not yet restored from it: no removal Job",
    { backup: backup({ ...del, pvc: true, status: succeeded }), claim: {}, usedBy: "EtcdCluster c" },
    { reason: "SnapshotInUse", requeue: true },
  ],
  [
    "in use but deletionPolicy Retain: the snapshot stays anyway, let go",
    { backup: backup({ policy: "Retain", finalizer: true, deleting: true }), usedBy: "EtcdRestore r1" },
    { action: "RemoveFinalizer" },
  ],
];

describe("planBackupDeletion", () => {
  it.each(rows)("%s", (_name, input, want) => {
    const plan = planBackupDeletion(input);
    expect(plan.action?.type).toBe(want.action);
    expect(plan.event?.reason).toBe(want.reason);
    const degraded = plan.conditions.find((c) => c.type === "Degraded");
    expect(degraded?.status === "True").toBe(want.degraded === true);
    expect(plan.requeueAfter !== undefined).toBe(want.requeue === true);
  });

  it("names the location and how to let go by hand when a removal fails", () => {
    const plan = planBackupDeletion({
      backup: backup({ ...del, pvc: true, status: succeeded }),
      claim: {},
      deleteJob: failedJob,
    });
    expect(plan.event?.type).toBe("Warning");
    expect(plan.event?.message).toContain("pvc://backups/etcd/db/demo/b1.db");
    expect(plan.event?.message).toContain("rm: permission denied");
    expect(plan.event?.message).toContain(SNAPSHOT_FINALIZER);
  });
});

describe("planDeletionFailure and planObjectDeleted", () => {
  it("S3 unreachable or credentials gone: Degraded naming why, the finalizer stays, retried", () => {
    const plan = planDeletionFailure(
      backup({ ...del, status: succeeded }),
      "CredentialsNotFound",
      "Secret db/creds does not exist",
    );
    expect(plan.action).toBeUndefined();
    expect(plan.conditions.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "CredentialsNotFound",
    });
    expect(plan.event).toMatchObject({ type: "Warning", reason: "CredentialsNotFound" });
    expect(plan.event?.message).toContain("s3://bk/p/db/demo/b1.db");
    expect(plan.event?.message).toContain("Secret db/creds does not exist");
    expect(plan.requeueAfter).toBeGreaterThan(0);
  });

  it("the object deleted: let go", () => {
    const plan = planObjectDeleted(backup({ ...del, status: succeeded }));
    expect(plan.action).toEqual({ type: "RemoveFinalizer" });
    expect(plan.event).toMatchObject({ type: "Normal", reason: "SnapshotDeleted" });
  });
});
