// VaultSnapshot (vault.capstan.dev/v1alpha1): one raft snapshot of a VaultCluster, taken by a Job, verified and stored
// in S3-compatible object storage or on a PersistentVolumeClaim (the destination API is @capstan/backup's, the same
// as an EtcdBackup's). A resource of its own, not a VaultCluster field, so it outlives the cluster (a restore into a
// new VaultCluster reads it) and carries its own destination, credentials and status. The CRD schema and its types.
import { type BackupDestination, type DeletionPolicy, destinationSchemas, NAME_RULE } from "@capstan/backup";
import {
  type Condition,
  type CustomResourceDefinitionObject,
  conditionsSchema,
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
import { GROUP, VERSION } from "./group.ts";

/** Seconds a snapshot may take before it is failed, unless `spec.activeDeadlineSeconds` says otherwise. */
export const DEFAULT_SNAPSHOT_DEADLINE_SECONDS = 3600;

/** A VaultSnapshot keeps its stored file when deleted unless `spec.deletionPolicy` says Delete. */
export const DEFAULT_SNAPSHOT_DELETION_POLICY: DeletionPolicy = "Retain";
/** A schedule's snapshots delete their files with them (so retention frees storage) unless the template says Retain. */
export const DEFAULT_SCHEDULED_SNAPSHOT_DELETION_POLICY: DeletionPolicy = "Delete";

/** The desired snapshot; immutable once created. */
export interface VaultSnapshotSpec {
  /** The VaultCluster, in the same namespace, to snapshot. */
  clusterName: string;
  destination: BackupDestination;
  /** Seconds the snapshot may take, from its creation, before it is failed (default 3600). */
  activeDeadlineSeconds?: number;
  /**
   * Delete: deleting the VaultSnapshot first deletes the stored file (a finalizer holds it until then); Retain: the
   * file stays. Default Retain; Delete in a schedule's snapshotTemplate.
   */
  deletionPolicy?: DeletionPolicy;
}

/** The life cycle of one snapshot. */
export type VaultSnapshotPhase = "Pending" | "Running" | "Succeeded" | "Failed";

/** All phases, in the order the schema lists them. */
export const SNAPSHOT_PHASES: readonly VaultSnapshotPhase[] = ["Pending", "Running", "Succeeded", "Failed"];

/** The observed snapshot. */
export interface VaultSnapshotStatus {
  observedGeneration?: number;
  phase?: VaultSnapshotPhase;
  /** Available (stored and verified), Progressing (the Job runs), Degraded (refused or failed). */
  conditions?: Condition[];
  /** The Job taking the snapshot. */
  jobName?: string;
  /** Size of the snapshot file in bytes. */
  size?: number;
  /** SHA-256 of the snapshot file, hexadecimal. */
  sha256?: string;
  /** Where it is stored: s3://<bucket>/<key> or pvc://<claim>/<path>. */
  location?: string;
  /** The raft index and term of the snapshot (its meta.json). */
  raftIndex?: number;
  raftTerm?: number;
  /** The cluster's Vault version when the Job was made (status.currentVersion). */
  vaultVersion?: string;
  /** The cluster's cluster_id (the keys that open it are that cluster's). */
  clusterID?: string;
  startTime?: string;
  completionTime?: string;
}

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

/** The destination schemas in the Vault operator's words. */
export const snapshotDestination = destinationSchemas({
  path: "<namespace>/<cluster>/<snapshot>-<snapshot uid>.snap",
  owner: "VaultCluster",
  prefixExample: "vault/prod",
  resource: "snapshot",
});

/**
 * The schema of a VaultSnapshot's spec (also a schedule's template spec), without its immutability rule, with its
 * deletionPolicy default.
 */
export const snapshotSpecSchema = (description: string, deletionPolicy: DeletionPolicy): JSONSchemaProps => ({
  type: "object",
  description,
  required: ["clusterName", "destination"],
  properties: {
    clusterName: {
      type: "string",
      description: "The VaultCluster, in the same namespace, to snapshot.",
      minLength: 1,
      maxLength: 45,
      pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?$",
    },
    destination: snapshotDestination.destination,
    activeDeadlineSeconds: {
      type: "integer",
      format: "int64",
      description:
        "Seconds the snapshot may take, from its creation, before it is failed: the wait for what it needs (the cluster, an active node), then its Job's run. Also the lifetime of the Job's Vault token.",
      default: DEFAULT_SNAPSHOT_DEADLINE_SECONDS,
      minimum: 60,
      maximum: 86_400,
    },
    deletionPolicy: {
      type: "string",
      enum: ["Retain", "Delete"],
      default: deletionPolicy,
      description:
        "What deleting the VaultSnapshot does to the stored file: Delete removes it first (a finalizer holds the VaultSnapshot until it is gone; never while a VaultCluster's spec.restore still reads it), Retain leaves it. Default Retain for a VaultSnapshot, Delete in a schedule's snapshotTemplate (so retention frees storage).",
    },
  },
});

const specSchema: JSONSchemaProps = {
  ...snapshotSpecSchema(
    "The snapshot to take; immutable (create another VaultSnapshot for another snapshot).",
    DEFAULT_SNAPSHOT_DELETION_POLICY,
  ),
  "x-kubernetes-validations": [
    {
      rule: "self == oldSelf",
      message: "spec is immutable: create another VaultSnapshot for another snapshot",
    },
  ],
};

const statusSchema: JSONSchemaProps = {
  type: "object",
  description: "The observed snapshot.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from.",
    },
    phase: { type: "string", enum: [...SNAPSHOT_PHASES], description: "Where the snapshot is in its life." },
    conditions: conditionsSchema(
      "Available (the snapshot is stored and verified), Progressing (the Job runs), Degraded (refused spec, forbidden or failed).",
    ),
    jobName: { type: "string", description: "The Job taking the snapshot." },
    size: { type: "integer", format: "int64", description: "Size of the snapshot file in bytes." },
    sha256: { type: "string", description: "SHA-256 of the snapshot file, hexadecimal." },
    location: {
      type: "string",
      description: "Where the snapshot is stored: s3://<bucket>/<key> or pvc://<claim>/<path>.",
    },
    raftIndex: {
      type: "integer",
      format: "int64",
      description: "The snapshot's raft index (its meta.json).",
    },
    raftTerm: { type: "integer", format: "int64", description: "The snapshot's raft term." },
    vaultVersion: {
      type: "string",
      description: "The cluster's Vault version when the snapshot was taken: a restore needs this or newer.",
    },
    clusterID: {
      type: "string",
      description: "The cluster_id of the cluster snapshotted: its unseal keys open a restore of it.",
    },
    startTime: { type: "string", format: "date-time", description: "When the Job was created." },
    completionTime: {
      type: "string",
      format: "date-time",
      description: "When the snapshot was stored (or failed).",
    },
  },
};

/** The openAPIV3Schema of VaultSnapshot. */
export const vaultSnapshotSchema: JSONSchemaProps = {
  type: "object",
  description:
    "One raft snapshot of a VaultCluster, taken with a token that may only read snapshots, verified (its SHA256SUMS), and stored in S3-compatible object storage or on a PersistentVolumeClaim. A restore into a new VaultCluster reads it (spec.restore.snapshot), with the unseal keys of the cluster it was taken from.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      // The Job is named after the snapshot, and its token Secret `<name>-vault-token` (label values: 63 at most).
      rule: `self.metadata.name.size() <= 52 && self.metadata.name.matches('${NAME_RULE}')`,
      message:
        "metadata.name must be at most 52 characters of lowercase letters, digits and '-' (it names the snapshot Job and its token Secret)",
    },
  ],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: specSchema,
    status: statusSchema,
  },
};

/** The VaultSnapshot CustomResourceDefinition. */
export function vaultSnapshotCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: VaultSnapshotKind,
    singular: "vaultsnapshot",
    schema: vaultSnapshotSchema,
    printerColumns: [
      { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Index", type: "integer", jsonPath: ".status.raftIndex" },
      { name: "Size", type: "integer", jsonPath: ".status.size" },
      { name: "Location", type: "string", jsonPath: ".status.location", priority: 1 },
      { name: "Completed", type: "date", jsonPath: ".status.completionTime" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
