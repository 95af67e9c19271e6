// EtcdBackup (one-shot) in etcd.capstan.dev/v1alpha1: the CRD schemas, the single
// source of truth, and their TypeScript types. Backups are separate from EtcdCluster so they outlive the cluster
// and carry their own destination, credentials and status.

import type { DeletionPolicy } from "@capstan/backup";
import {
  type Condition,
  type CustomResourceDefinitionObject,
  conditionsSchema,
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
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

/** The desired backup; immutable once created. */
export interface EtcdBackupSpec {
  /** The EtcdCluster, in the same namespace, to take the snapshot from. */
  clusterName: string;
  destination: BackupDestination;
  /** Seconds the backup Job may run before it is failed (default 3600). */
  activeDeadlineSeconds?: number;
  /**
   * Delete: deleting the EtcdBackup first deletes the stored snapshot (a finalizer holds it until then); Retain:
   * the snapshot stays. Default Retain; Delete in a schedule's backupTemplate.
   */
  deletionPolicy?: DeletionPolicy;
}

/** The life cycle of one backup. */
export type EtcdBackupPhase = "Pending" | "Running" | "Succeeded" | "Failed";

/** All backup phases, in the order the schema lists them. */
export const BACKUP_PHASES: readonly EtcdBackupPhase[] = ["Pending", "Running", "Succeeded", "Failed"];

/** The observed backup. */
export interface EtcdBackupStatus {
  observedGeneration?: number;
  phase?: EtcdBackupPhase;
  /** Available (the snapshot is stored and verified), Progressing, Degraded (refused spec or failed). */
  conditions?: Condition[];
  /** The member the snapshot was taken from. */
  member?: string;
  /** The Job taking the snapshot. */
  jobName?: string;
  /** The snapshot's revision (etcdutl snapshot status). */
  revision?: number;
  /** Size of the snapshot in bytes. */
  size?: number;
  /** SHA-256 of the snapshot file, hexadecimal. */
  sha256?: string;
  /** etcd version of the member the snapshot was taken from. */
  etcdVersion?: string;
  /** Cluster ID (hexadecimal) of the cluster the snapshot was taken from. */
  clusterID?: string;
  /** Where the snapshot is stored: s3://<bucket>/<key> or pvc://<claim>/<path>. */
  location?: string;
  startTime?: string;
  completionTime?: string;
}

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

/** The schema of an EtcdBackup spec (also a schedule's template spec), with its deletionPolicy default. */
export const backupSpecSchema = (description: string, deletionPolicy: DeletionPolicy): JSONSchemaProps => ({
  type: "object",
  description,
  required: ["clusterName", "destination"],
  properties: {
    clusterName: {
      type: "string",
      description: "The EtcdCluster, in the same namespace, to take the snapshot from.",
      minLength: 1,
      maxLength: 50,
    },
    destination: destinationSchema,
    activeDeadlineSeconds: {
      type: "integer",
      format: "int64",
      description:
        "Seconds the backup may take before it is failed: its Job's run, and (from its creation) the wait for what it needs before the Job starts (the cluster, a member to snapshot, its claim).",
      default: DEFAULT_BACKUP_DEADLINE_SECONDS,
      minimum: 60,
      maximum: 86_400,
    },
    deletionPolicy: {
      type: "string",
      enum: ["Retain", "Delete"],
      default: deletionPolicy,
      description:
        "What deleting the EtcdBackup does to the stored snapshot: Delete removes it first (a finalizer holds the EtcdBackup until it is gone), Retain leaves it. Default Retain for an EtcdBackup, Delete in a schedule's backupTemplate (so retention frees storage).",
    },
  },
});

const backupStatusSchema: JSONSchemaProps = {
  type: "object",
  description: "The observed backup.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from.",
    },
    phase: { type: "string", enum: [...BACKUP_PHASES], description: "Where the backup is in its life." },
    conditions: conditionsSchema(
      "Available (the snapshot is stored and verified), Progressing (the Job runs), Degraded (refused spec or failed).",
    ),
    member: { type: "string", description: "The member the snapshot was taken from." },
    jobName: { type: "string", description: "The Job taking the snapshot." },
    revision: { type: "integer", format: "int64", description: "The snapshot's revision." },
    size: { type: "integer", format: "int64", description: "Size of the snapshot in bytes." },
    sha256: { type: "string", description: "SHA-256 of the snapshot file, hexadecimal." },
    etcdVersion: { type: "string", description: "etcd version of the member the snapshot was taken from." },
    clusterID: { type: "string", description: "Cluster ID (hexadecimal) the snapshot was taken from." },
    location: {
      type: "string",
      description: "Where the snapshot is stored: s3://<bucket>/<key> or pvc://<claim>/<path>.",
    },
    startTime: { type: "string", format: "date-time", description: "When the Job was created." },
    completionTime: {
      type: "string",
      format: "date-time",
      description: "When the snapshot was stored (or the backup failed).",
    },
  },
};

/** The openAPIV3Schema of EtcdBackup. */
export const etcdBackupSchema: JSONSchemaProps = {
  type: "object",
  description:
    "One snapshot of an EtcdCluster, verified and stored in S3-compatible object storage or on a PersistentVolumeClaim.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      // The backup's Job is named after it and Job names are label values (63 at most).
      rule: `self.metadata.name.size() <= 63 && self.metadata.name.matches('${NAME_RULE}')`,
      message:
        "metadata.name must be at most 63 characters of lowercase letters, digits and '-' (it names the backup Job)",
    },
  ],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      ...backupSpecSchema(
        "The backup to take; immutable (create another EtcdBackup for another snapshot).",
        DEFAULT_DELETION_POLICY,
      ),
      "x-kubernetes-validations": [
        {
          rule: "self == oldSelf",
          message: "spec is immutable: create another EtcdBackup for another snapshot",
        },
      ],
    },
    status: backupStatusSchema,
  },
};

/** The EtcdBackup CustomResourceDefinition. */
export function etcdBackupCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: EtcdBackupKind,
    singular: "etcdbackup",
    schema: etcdBackupSchema,
    printerColumns: [
      { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Revision", type: "integer", jsonPath: ".status.revision" },
      { name: "Size", type: "integer", jsonPath: ".status.size" },
      { name: "Location", type: "string", jsonPath: ".status.location", priority: 1 },
      { name: "Completed", type: "date", jsonPath: ".status.completionTime" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
