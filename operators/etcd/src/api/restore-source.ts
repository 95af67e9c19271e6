// EtcdCluster.spec.bootstrap.restore: a new cluster whose seed member starts from a snapshot (an EtcdBackup, an S3
// object or a file on a PersistentVolumeClaim), and status.restore, what the restore did. Schema and types; the S3
// and claim sources are @capstan/backup's (a VaultCluster's spec.restore has the same).
import {
  type PVCSource,
  pvcSourceSchema,
  type S3Source,
  SHA256_PATTERN,
  s3SourceSchema,
} from "@capstan/backup";
import * as Type from "typebox/type";
import { s3Schema } from "./backup.ts";

export type { PVCSource, S3Source };

/** Revisions added to the snapshot's on restore unless `bumpRevision` says otherwise (etcd's docs suggest 1e9). */
export const DEFAULT_BUMP_REVISION = 1_000_000_000;
/** The largest bumpRevision accepted (revisions stay exact JavaScript numbers). */
export const MAX_BUMP_REVISION = 1_000_000_000_000;

/**
 * The schema of a snapshot source (exactly one of backup, s3 or pvc; sha256; bumpRevision): spec.bootstrap.restore
 * of an EtcdCluster, spec.source of an EtcdRestore from a backup. `field` is how messages name it.
 */
export function restoreSourceSchema(field: string, description: string) {
  return Type.Object(
    {
      backup: Type.Optional(
        Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 253 }) },
          { description: "An EtcdBackup in this namespace whose phase is Succeeded." },
        ),
      ),
      s3: Type.Optional(
        s3SourceSchema(
          s3Schema,
          field,
          "An S3 object holding the snapshot (as an EtcdBackup's status.location names it).",
          "ns/demo/demo-1.db",
        ),
      ),
      pvc: Type.Optional(
        pvcSourceSchema(
          field,
          "A snapshot file on a PersistentVolumeClaim no EtcdCluster owns, mounted read-only.",
          "ns/demo/demo-1.db",
        ),
      ),
      sha256: Type.Optional(
        Type.String({
          description:
            "Expected SHA-256 of the snapshot (hexadecimal); the download is refused when it differs. With backup: checked against the backup's status.sha256 too.",
          pattern: SHA256_PATTERN,
        }),
      ),
      bumpRevision: Type.Optional(
        Type.Integer({
          format: "int64",
          description:
            "Added to the snapshot's revision (etcdutl --bump-revision; old revisions are marked compacted), so watchers of the old cluster never see a revision go backwards: more than the writes made since the snapshot.",
          default: DEFAULT_BUMP_REVISION,
          minimum: 0,
          maximum: MAX_BUMP_REVISION,
        }),
      ),
    },
    {
      description,
      "x-kubernetes-validations": [
        {
          rule: "(has(self.backup) ? 1 : 0) + (has(self.s3) ? 1 : 0) + (has(self.pvc) ? 1 : 0) == 1",
          message: `${field}: set exactly one of backup, s3 or pvc`,
        },
      ],
    },
  );
}

/**
 * Where the seed's snapshot comes from (exactly one of backup, s3, pvc), and how it is restored: `sha256` is the
 * snapshot's expected SHA-256 (a backup's status.sha256 when restoring from a backup), `bumpRevision` is added to its
 * revision (etcdutl --bump-revision) so watchers never see revisions go back.
 */
export type EtcdBootstrapRestore = Type.Static<ReturnType<typeof restoreSourceSchema>>;

/** An EtcdBackup in the cluster's namespace, phase Succeeded. */
export type RestoreBackupRef = NonNullable<EtcdBootstrapRestore["backup"]>;

const restoreSchema = restoreSourceSchema(
  "bootstrap.restore",
  "Start the new cluster from a snapshot: exactly one of backup, s3 or pvc. The seed member's data is restored from it (revision bumped, old revisions marked compacted), then the cluster grows with learners. Needs persistent storage.",
);

/** The schema of spec.bootstrap. */
export const bootstrapSchema = Type.Object(
  { restore: Type.Optional(restoreSchema) },
  {
    description: "How a new cluster starts; immutable. Without it the cluster starts empty.",
    "x-kubernetes-validations": [
      {
        rule: "self == oldSelf",
        message:
          "spec.bootstrap is immutable: it only says how the cluster started; create a new EtcdCluster to restore another snapshot",
      },
    ],
  },
);

/** How a new cluster starts; immutable. */
export type EtcdBootstrap = Type.Static<typeof bootstrapSchema>;

/** CEL rules on spec for bootstrap (added or removed after creation; restore needs persistent storage). */
export const RESTORE_BOOTSTRAP_RULES: { rule: string; message: string; fieldPath?: string }[] = [
  {
    rule: "has(self.bootstrap) == has(oldSelf.bootstrap)",
    message: "spec.bootstrap is immutable: it cannot be added to or removed from an existing EtcdCluster",
    fieldPath: ".bootstrap",
  },
  {
    rule: "!has(self.bootstrap) || !has(self.bootstrap.restore) || !has(self.storage) || !has(self.storage.ephemeral) || !self.storage.ephemeral",
    message:
      "spec.bootstrap.restore needs persistent storage (storage.size): the snapshot is restored into the seed's claim before it starts",
    fieldPath: ".bootstrap.restore",
  },
];

/** The schema of status.restore. */
export const restoreStatusSchema = Type.Object(
  {
    source: Type.String({ description: "backup/<name>, s3://<bucket>/<key> or pvc://<claim>/<path>." }),
    // Known when restored from an EtcdBackup.
    snapshotRevision: Type.Optional(
      Type.Integer({ format: "int64", description: "The snapshot's revision." }),
    ),
    revision: Type.Optional(
      Type.Integer({
        format: "int64",
        description: "The revision the restored cluster starts from (snapshot revision + bumpRevision).",
      }),
    ),
    bumpRevision: Type.Optional(
      Type.Integer({ format: "int64", description: "Revisions added on restore." }),
    ),
    // When the snapshot was restored into the seed's volume.
    completionTime: Type.Optional(
      Type.String({ format: "date-time", description: "When the snapshot was restored." }),
    ),
    // Once the seed answers.
    clusterID: Type.Optional(Type.String({ description: "The restored cluster's ID, in hexadecimal." })),
  },
  { description: "What the restore from spec.bootstrap.restore did." },
);

/** What a restore did (status.restore). */
export type EtcdClusterRestoreStatus = Type.Static<typeof restoreStatusSchema>;
