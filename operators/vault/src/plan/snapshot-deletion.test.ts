// The VaultSnapshot deletion planner (@capstan/backup's, as etcd's EtcdBackup uses it): a VaultSnapshot is Retain
// unless it says Delete, the finalizer comes before anything is stored, and a deleted snapshot's file is named by
// where it was recorded.
import { describe, expect, it } from "vitest";
import type { VaultSnapshot } from "../api/vault-snapshot.ts";
import { planSnapshotDeletion, SNAPSHOT_FINALIZER, snapshotDeletionSubject } from "./snapshot-deletion.ts";

const snapshot = (o: Partial<VaultSnapshot["spec"]> = {}, meta: Partial<VaultSnapshot["metadata"]> = {}) =>
  ({
    apiVersion: "vault.capstan.dev/v1alpha1",
    kind: "VaultSnapshot",
    metadata: { name: "s1", namespace: "ns", uid: "u1", ...meta },
    spec: {
      clusterName: "demo",
      destination: { s3: { bucket: "b", prefix: "p", credentialsSecret: { name: "c" } } },
      ...o,
    },
  }) as VaultSnapshot;

const deleting = { finalizers: [SNAPSHOT_FINALIZER], deletionTimestamp: "2026-12-07T00:00:00Z" };

describe("planSnapshotDeletion", () => {
  it.each<[string, VaultSnapshot, string | undefined]>([
    ["default Retain: no finalizer", snapshot(), undefined],
    ["Delete: the finalizer, before anything", snapshot({ deletionPolicy: "Delete" }), "AddFinalizer"],
    [
      "Delete, held: nothing more",
      snapshot({ deletionPolicy: "Delete" }, { finalizers: [SNAPSHOT_FINALIZER] }),
      undefined,
    ],
    [
      "Retain, held by hand and deleted: let go",
      snapshot({ deletionPolicy: "Retain" }, deleting),
      "RemoveFinalizer",
    ],
    [
      "Delete, deleted, nothing stored: let go",
      snapshot({ deletionPolicy: "Delete" }, deleting),
      "RemoveFinalizer",
    ],
  ])("%s", (_name, s, action) => {
    expect(planSnapshotDeletion({ snapshot: s }).action?.type).toBe(action);
  });

  it("deletes the recorded S3 object of a stored snapshot, stopping a running Job first", () => {
    const s = {
      ...snapshot({ deletionPolicy: "Delete" }, deleting),
      status: { phase: "Succeeded" as const, jobName: "s1", location: "s3://b/p/ns/demo/s1-u1.snap" },
    };
    expect(planSnapshotDeletion({ snapshot: s })).toMatchObject({
      action: { type: "DeleteObject" },
      conditions: [{ reason: "DeletingSnapshot", message: "deleting s3://b/p/ns/demo/s1-u1.snap" }],
    });
    expect(planSnapshotDeletion({ snapshot: s, job: { succeeded: false } }).action?.type).toBe(
      "DeleteBackupJob",
    );
    expect(
      planSnapshotDeletion({ snapshot: s, usedBy: "VaultCluster x's spec.restore (not restored yet)" })
        .action,
    ).toBeUndefined();
  });

  it("names the VaultSnapshot and its finalizer", () => {
    expect(snapshotDeletionSubject(snapshot())).toMatchObject({
      kind: "VaultSnapshot",
      finalizer: "vault.capstan.dev/delete-snapshot",
      policy: "Retain",
      location: "s3://b/p/ns/demo/s1-u1.snap",
    });
  });
});
