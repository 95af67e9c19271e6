// VaultCluster.spec.restore: a new cluster that starts from a raft snapshot (a VaultSnapshot, an S3 object or a file
// on a claim), unsealed afterwards with the keys of the cluster the snapshot was taken from; and status.restore, what
// the restore did. The S3 and claim sources are @capstan/backup's (an EtcdCluster's spec.bootstrap.restore has the
// same). Schema and types.
import { pvcSourceSchema, SHA256_PATTERN, s3SourceSchema } from "@capstan/backup";
import * as Type from "typebox/type";
import { snapshotDestination } from "./vault-snapshot.ts";

/** The schema of spec.restore. */
export const restoreSchema = Type.Object(
  {
    snapshot: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 253 }) },
        { description: "A VaultSnapshot in this namespace whose phase is Succeeded." },
      ),
    ),
    s3: Type.Optional(
      s3SourceSchema(
        snapshotDestination.s3,
        "restore",
        "An S3 object holding the snapshot (as a VaultSnapshot's status.location names it).",
        "ns/demo/snap-1.snap",
      ),
    ),
    pvc: Type.Optional(
      pvcSourceSchema(
        "restore",
        "A snapshot file on a PersistentVolumeClaim no VaultCluster owns, mounted read-only.",
        "ns/demo/snap-1.snap",
      ),
    ),
    // A VaultSnapshot's status.sha256 when restoring from one.
    sha256: Type.Optional(
      Type.String({
        description:
          "Expected SHA-256 of the snapshot file (hexadecimal): the download is refused when it differs. With snapshot: checked against its status.sha256 too.",
        pattern: SHA256_PATTERN,
      }),
    ),
    unsealKeysSecret: Type.Optional(
      Type.String({
        description:
          "The Secret, in this namespace, holding the unseal keys (unseal-key-0..) of the cluster the snapshot was taken from: once restored, the data opens with those keys only. Default <name>-unseal-keys, the Secret a deleted VaultCluster of this name left behind. Another Secret's keys (and operator-token) are copied into <name>-unseal-keys; it is never written over other keys.",
        minLength: 1,
        maxLength: 253,
      }),
    ),
  },
  {
    description:
      "Start the new cluster from a raft snapshot: exactly one of snapshot, s3 or pvc. A temporary Vault is initialized on the first server, the snapshot is force-restored into it, and the server is unsealed with the keys of the cluster the snapshot was taken from (unsealKeysSecret); the other servers join after. Never over existing data claims. Immutable.",
    "x-kubernetes-validations": [
      {
        rule: "(has(self.snapshot) ? 1 : 0) + (has(self.s3) ? 1 : 0) + (has(self.pvc) ? 1 : 0) == 1",
        message: "restore: set exactly one of snapshot, s3 or pvc",
      },
      {
        rule: "self == oldSelf",
        message:
          "spec.restore is immutable: it says how the cluster started; create a new VaultCluster to restore another snapshot",
      },
    ],
  },
);

/**
 * Where the snapshot comes from (exactly one of snapshot, s3, pvc), and the keys that open it: `unsealKeysSecret`,
 * default `<name>-unseal-keys` (what a deleted VaultCluster of this name left, unseal.retainKeysOnDelete).
 */
export type VaultRestore = Type.Static<typeof restoreSchema>;

/** CEL rules on spec: spec.restore cannot be added to or removed from an existing cluster. */
export const RESTORE_RULES: { rule: string; message: string; fieldPath?: string }[] = [
  {
    rule: "has(self.restore) == has(oldSelf.restore)",
    message: "spec.restore is immutable: it cannot be added to or removed from an existing VaultCluster",
    fieldPath: ".restore",
  },
];

/** The schema of status.restore. */
export const restoreStatusSchema = Type.Object(
  {
    source: Type.String({ description: "snapshot/<name>, s3://<bucket>/<key> or pvc://<claim>/<path>." }),
    completionTime: Type.Optional(
      Type.String({
        format: "date-time",
        description: "When the restored data was first unsealed and served.",
      }),
    ),
    clusterID: Type.Optional(Type.String({ description: "The restored cluster_id (the snapshot's)." })),
  },
  { description: "What the restore from spec.restore did." },
);

/** What a restore did (status.restore). */
export type VaultRestoreStatus = Type.Static<typeof restoreStatusSchema>;
