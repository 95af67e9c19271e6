// EtcdBackup (one-shot) in etcd.capstan.dev/v1alpha1: the CRD schemas, the single
// source of truth, and their TypeScript types. Backups are separate from EtcdCluster so they outlive the cluster
// and carry their own destination, credentials and status.

import {
  BACKUP_PHASES,
  backupPrinterColumns,
  backupStatusHeadProperties,
  backupStatusTimeProperties,
  type DeletionPolicy,
  deletionPolicySchema,
} from "@capstan/backup";
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  type KubeObject,
} from "@capstan/core";
import * as Type from "typebox/type";
import {
  type BackupDestination,
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_S3_REGION,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  destinationSchema,
  NAME_RULE,
  type PVCDestination,
  type S3CredentialsSecret,
  type S3Destination,
  type SecretKeyRef,
  s3Schema,
} from "./backup-destination.ts";
import { GROUP, VERSION } from "./group.ts";

// Where a backup goes lives in backup-destination.ts (EtcdBackupSchedule in backup-schedule.ts); the
// destination's names are exported from here too, as before.
export type { BackupDestination, PVCDestination, S3CredentialsSecret, S3Destination, SecretKeyRef };
export {
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_S3_REGION,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  s3Schema,
};

/** Seconds a backup Job may run before it is failed, unless `spec.activeDeadlineSeconds` says otherwise. */
export const DEFAULT_BACKUP_DEADLINE_SECONDS = 3600;

/** What happens to the stored snapshot when its EtcdBackup is deleted (@capstan/backup's, shared with VaultSnapshot). */
export type { DeletionPolicy };
/** A one-shot EtcdBackup keeps its snapshot when deleted unless `spec.deletionPolicy` says Delete. */
export const DEFAULT_DELETION_POLICY: DeletionPolicy = "Retain";
/** A schedule's backups delete their snapshots with them (so retention frees storage) unless the template says Retain. */
export const DEFAULT_SCHEDULED_DELETION_POLICY: DeletionPolicy = "Delete";

/** All backup phases, in the order the schema lists them (@capstan/backup's, shared with VaultSnapshot). */
export { BACKUP_PHASES };

/** An EtcdBackup object. */
export interface EtcdBackup extends KubeObject {
  spec: EtcdBackupSpec;
  status?: EtcdBackupStatus;
}

/** The EtcdBackup kind descriptor. */
export const EtcdBackupKind = defineKind<EtcdBackup>({
  group: GROUP,
  version: VERSION,
  kind: "EtcdBackup",
  plural: "etcdbackups",
  namespaced: true,
});

/**
 * The schema of an EtcdBackup spec (also a schedule's template spec), with its deletionPolicy default and the CEL
 * `rules` on the spec, if any.
 */
export function backupSpecSchema(
  description: string,
  deletionPolicy: DeletionPolicy,
  rules?: { rule: string; message: string }[],
) {
  return Type.Object(
    {
      clusterName: Type.String({
        description: "The EtcdCluster, in the same namespace, to take the snapshot from.",
        minLength: 1,
        maxLength: 50,
      }),
      destination: destinationSchema,
      activeDeadlineSeconds: Type.Optional(
        Type.Integer({
          format: "int64",
          description:
            "Seconds the backup may take before it is failed: its Job's run, and (from its creation) the wait for what it needs before the Job starts (the cluster, a member to snapshot, its claim).",
          default: DEFAULT_BACKUP_DEADLINE_SECONDS,
          minimum: 60,
          maximum: 86_400,
        }),
      ),
      // Delete: deleting the EtcdBackup first deletes the stored snapshot (a finalizer holds it until then).
      deletionPolicy: Type.Optional(
        deletionPolicySchema(
          deletionPolicy,
          "What deleting the EtcdBackup does to the stored snapshot: Delete removes it first (a finalizer holds the EtcdBackup until it is gone), Retain leaves it. Default Retain for an EtcdBackup, Delete in a schedule's backupTemplate (so retention frees storage).",
        ),
      ),
    },
    { description, ...(rules === undefined ? {} : { "x-kubernetes-validations": rules }) },
  );
}

/** The desired backup; immutable once created (activeDeadlineSeconds defaults to 3600). */
export type EtcdBackupSpec = Type.Static<ReturnType<typeof backupSpecSchema>>;

const backupStatusSchema = Type.Object(
  {
    ...backupStatusHeadProperties(
      "backup",
      "Available (the snapshot is stored and verified), Progressing (the Job runs), Degraded (refused spec or failed).",
    ),
    member: Type.Optional(Type.String({ description: "The member the snapshot was taken from." })),
    jobName: Type.Optional(Type.String({ description: "The Job taking the snapshot." })),
    revision: Type.Optional(Type.Integer({ format: "int64", description: "The snapshot's revision." })),
    size: Type.Optional(Type.Integer({ format: "int64", description: "Size of the snapshot in bytes." })),
    sha256: Type.Optional(Type.String({ description: "SHA-256 of the snapshot file, hexadecimal." })),
    etcdVersion: Type.Optional(
      Type.String({ description: "etcd version of the member the snapshot was taken from." }),
    ),
    clusterID: Type.Optional(
      Type.String({ description: "Cluster ID (hexadecimal) the snapshot was taken from." }),
    ),
    location: Type.Optional(
      Type.String({
        description: "Where the snapshot is stored: s3://<bucket>/<key> or pvc://<claim>/<path>.",
      }),
    ),
    ...backupStatusTimeProperties("When the snapshot was stored (or the backup failed)."),
  },
  { description: "The observed backup." },
);

/** The observed backup. */
export type EtcdBackupStatus = Type.Static<typeof backupStatusSchema>;

/** The life cycle of one backup. */
export type EtcdBackupPhase = NonNullable<EtcdBackupStatus["phase"]>;

/** The openAPIV3Schema of EtcdBackup. */
export const etcdBackupSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: "object" })),
    spec: backupSpecSchema(
      "The backup to take; immutable (create another EtcdBackup for another snapshot).",
      DEFAULT_DELETION_POLICY,
      [
        {
          rule: "self == oldSelf",
          message: "spec is immutable: create another EtcdBackup for another snapshot",
        },
      ],
    ),
    status: Type.Optional(backupStatusSchema),
  },
  {
    description:
      "One snapshot of an EtcdCluster, verified and stored in S3-compatible object storage or on a PersistentVolumeClaim.",
    "x-kubernetes-validations": [
      {
        // The backup's Job is named after it and Job names are label values (63 at most).
        rule: `self.metadata.name.size() <= 63 && self.metadata.name.matches('${NAME_RULE}')`,
        message:
          "metadata.name must be at most 63 characters of lowercase letters, digits and '-' (it names the backup Job)",
      },
    ],
  },
);

/** The EtcdBackup CustomResourceDefinition. */
export function etcdBackupCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: EtcdBackupKind,
    singular: "etcdbackup",
    schema: etcdBackupSchema,
    printerColumns: backupPrinterColumns({ name: "Revision", jsonPath: ".status.revision" }),
  });
}
