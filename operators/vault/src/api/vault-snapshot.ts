// VaultSnapshot (vault.capstan.dev/v1alpha1): one raft snapshot of a VaultCluster, taken by a Job, verified and stored
// in S3-compatible object storage or on a PersistentVolumeClaim (the destination API is @capstan/backup's, the same
// as an EtcdBackup's). A resource of its own, not a VaultCluster field, so it outlives the cluster (a restore into a
// new VaultCluster reads it) and carries its own destination, credentials and status. The CRD schema and its types.
import {
  BACKUP_PHASES,
  backupPrinterColumns,
  backupStatusHeadProperties,
  backupStatusTimeProperties,
  type DeletionPolicy,
  deletionPolicySchema,
  destinationSchemas,
  NAME_RULE,
} from "@capstan/backup";
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  type KubeObject,
  type ObjectMeta,
} from "@capstan/core";
import * as Type from "typebox/type";
import { GROUP, VERSION } from "./group.ts";

/** Seconds a snapshot may take before it is failed, unless `spec.activeDeadlineSeconds` says otherwise. */
export const DEFAULT_SNAPSHOT_DEADLINE_SECONDS = 3600;

/** A VaultSnapshot keeps its stored file when deleted unless `spec.deletionPolicy` says Delete. */
export const DEFAULT_SNAPSHOT_DELETION_POLICY: DeletionPolicy = "Retain";
/** A schedule's snapshots delete their files with them (so retention frees storage) unless the template says Retain. */
export const DEFAULT_SCHEDULED_SNAPSHOT_DELETION_POLICY: DeletionPolicy = "Delete";

/** The destination schemas in the Vault operator's words. */
export const snapshotDestination = destinationSchemas({
  path: "<namespace>/<cluster>/<snapshot>-<snapshot uid>.snap",
  owner: "VaultCluster",
  prefixExample: "vault/prod",
  resource: "snapshot",
});

/**
 * The schema of a VaultSnapshot's spec (also a schedule's template spec), with its deletionPolicy default and the
 * CEL rules given (a VaultSnapshot's immutability).
 */
export const snapshotSpecSchema = (
  description: string,
  deletionPolicy: DeletionPolicy,
  rules?: { rule: string; message: string }[],
) =>
  Type.Object(
    {
      clusterName: Type.String({
        description: "The VaultCluster, in the same namespace, to snapshot.",
        minLength: 1,
        maxLength: 45,
        pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?$",
      }),
      destination: snapshotDestination.destination,
      activeDeadlineSeconds: Type.Optional(
        Type.Integer({
          format: "int64",
          description:
            "Seconds the snapshot may take, from its creation, before it is failed: the wait for what it needs (the cluster, an active node), then its Job's run. Also the lifetime of the Job's Vault token.",
          default: DEFAULT_SNAPSHOT_DEADLINE_SECONDS,
          minimum: 60,
          maximum: 86_400,
        }),
      ),
      deletionPolicy: Type.Optional(
        deletionPolicySchema(
          deletionPolicy,
          "What deleting the VaultSnapshot does to the stored file: Delete removes it first (a finalizer holds the VaultSnapshot until it is gone; never while a VaultCluster's spec.restore still reads it), Retain leaves it. Default Retain for a VaultSnapshot, Delete in a schedule's snapshotTemplate (so retention frees storage).",
        ),
      ),
    },
    { description, ...(rules === undefined ? {} : { "x-kubernetes-validations": rules }) },
  );

const specSchema = snapshotSpecSchema(
  "The snapshot to take; immutable (create another VaultSnapshot for another snapshot).",
  DEFAULT_SNAPSHOT_DELETION_POLICY,
  [
    {
      rule: "self == oldSelf",
      message: "spec is immutable: create another VaultSnapshot for another snapshot",
    },
  ],
);

/**
 * The desired snapshot; immutable once created. `activeDeadlineSeconds`: default 3600. `deletionPolicy`: Delete
 * deletes the stored file first (a finalizer holds the VaultSnapshot until then), Retain leaves it; default Retain,
 * Delete in a schedule's snapshotTemplate.
 */
export type VaultSnapshotSpec = Type.Static<typeof specSchema>;

const statusSchema = Type.Object(
  {
    ...backupStatusHeadProperties(
      "snapshot",
      "Available (the snapshot is stored and verified), Progressing (the Job runs), Degraded (refused spec, forbidden or failed).",
    ),
    jobName: Type.Optional(Type.String({ description: "The Job taking the snapshot." })),
    size: Type.Optional(
      Type.Integer({ format: "int64", description: "Size of the snapshot file in bytes." }),
    ),
    sha256: Type.Optional(Type.String({ description: "SHA-256 of the snapshot file, hexadecimal." })),
    location: Type.Optional(
      Type.String({
        description: "Where the snapshot is stored: s3://<bucket>/<key> or pvc://<claim>/<path>.",
      }),
    ),
    raftIndex: Type.Optional(
      Type.Integer({ format: "int64", description: "The snapshot's raft index (its meta.json)." }),
    ),
    raftTerm: Type.Optional(Type.Integer({ format: "int64", description: "The snapshot's raft term." })),
    // status.currentVersion of the cluster when the Job was made
    vaultVersion: Type.Optional(
      Type.String({
        description:
          "The cluster's Vault version when the snapshot was taken: a restore needs this or newer.",
      }),
    ),
    clusterID: Type.Optional(
      Type.String({
        description: "The cluster_id of the cluster snapshotted: its unseal keys open a restore of it.",
      }),
    ),
    ...backupStatusTimeProperties("When the snapshot was stored (or failed)."),
  },
  { description: "The observed snapshot." },
);

/** The observed snapshot. */
export type VaultSnapshotStatus = Type.Static<typeof statusSchema>;

/** The life cycle of one snapshot (@capstan/backup's BackupPhase, shared with EtcdBackup). */
export type VaultSnapshotPhase = NonNullable<VaultSnapshotStatus["phase"]>;

/** All phases, in the order the schema lists them. */
export const SNAPSHOT_PHASES: readonly VaultSnapshotPhase[] = BACKUP_PHASES;

/** A VaultSnapshot object. */
export interface VaultSnapshot extends KubeObject {
  spec: VaultSnapshotSpec;
  status?: VaultSnapshotStatus;
}

/** The VaultSnapshot kind descriptor. */
export const VaultSnapshotKind = defineKind<VaultSnapshot>({
  group: GROUP,
  version: VERSION,
  kind: "VaultSnapshot",
  plural: "vaultsnapshots",
  namespaced: true,
});

/** The openAPIV3Schema of VaultSnapshot. */
export const vaultSnapshotSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: "object" })),
    spec: specSchema,
    status: Type.Optional(statusSchema),
  },
  {
    description:
      "One raft snapshot of a VaultCluster, taken with a token that may only read snapshots, verified (its SHA256SUMS), and stored in S3-compatible object storage or on a PersistentVolumeClaim. A restore into a new VaultCluster reads it (spec.restore.snapshot), with the unseal keys of the cluster it was taken from.",
    "x-kubernetes-validations": [
      {
        // The Job is named after the snapshot, and its token Secret `<name>-vault-token` (label values: 63 at most).
        rule: `self.metadata.name.size() <= 52 && self.metadata.name.matches('${NAME_RULE}')`,
        message:
          "metadata.name must be at most 52 characters of lowercase letters, digits and '-' (it names the snapshot Job and its token Secret)",
      },
    ],
  },
);

/** The VaultSnapshot CustomResourceDefinition. */
export function vaultSnapshotCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: VaultSnapshotKind,
    singular: "vaultsnapshot",
    schema: vaultSnapshotSchema,
    printerColumns: backupPrinterColumns({ name: "Index", jsonPath: ".status.raftIndex" }),
  });
}
