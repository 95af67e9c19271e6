// EtcdBackup (one-shot) and EtcdBackupSchedule (cron) in etcd.capstan.dev/v1alpha1: the CRD schemas, the single
// source of truth, and their TypeScript types. Backups are separate from EtcdCluster so they outlive the cluster
// and carry their own destination, credentials and status.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  conditionsSchema,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
import { GROUP, VERSION } from "./group.ts";

/** Seconds a backup Job may run before it is failed, unless `spec.activeDeadlineSeconds` says otherwise. */
export const DEFAULT_BACKUP_DEADLINE_SECONDS = 3600;
/** The S3 region used unless `s3.region` says otherwise. */
export const DEFAULT_S3_REGION = "us-east-1";
/** Keys of the credentials Secret read unless `s3.credentialsSecret` names others. */
export const DEFAULT_ACCESS_KEY_ID_KEY = "AWS_ACCESS_KEY_ID";
export const DEFAULT_SECRET_ACCESS_KEY_KEY = "AWS_SECRET_ACCESS_KEY";
/** Key of the CA Secret read unless `s3.caSecret.key` names another. */
export const DEFAULT_CA_KEY = "ca.crt";
/** Successful backups a schedule keeps when `spec.retention` is omitted. */
export const DEFAULT_KEEP_LAST = 7;
/** Failed backups a schedule keeps (for their status and Job logs) unless `spec.failedBackupsHistoryLimit` says. */
export const DEFAULT_FAILED_HISTORY = 3;
/** Longest EtcdBackupSchedule name: its backups are named `<schedule>-<minutes since the epoch>` (63 at most). */
export const MAX_SCHEDULE_NAME_LENGTH = 52;
/** A retention age: whole numbers with d, h, m or s units, e.g. "7d", "36h", "1d12h". */
export const MAX_AGE_PATTERN = "^([0-9]+(d|h|m|s))+$";

/** A Secret holding S3 credentials, in the backup's namespace. */
export interface S3CredentialsSecret {
  name: string;
  /** Key of the access key ID (default AWS_ACCESS_KEY_ID). */
  accessKeyIDKey?: string;
  /** Key of the secret access key (default AWS_SECRET_ACCESS_KEY). */
  secretAccessKeyKey?: string;
}

/** A key of a Secret in the backup's namespace. */
export interface SecretKeyRef {
  name: string;
  key?: string;
}

/** An S3-compatible bucket; the object key is `<prefix>/<namespace>/<cluster>/<backup>-<backup uid>.db`. */
export interface S3Destination {
  /** Endpoint URL, e.g. "https://minio.storage.svc:9000" (default: AWS S3 for the region). */
  endpoint?: string;
  bucket: string;
  /** Key prefix, without a leading or trailing "/". */
  prefix?: string;
  region?: string;
  /** Address the bucket as <endpoint>/<bucket> instead of <bucket>.<endpoint> (most S3-compatible servers). */
  forcePathStyle?: boolean;
  credentialsSecret: S3CredentialsSecret;
  /** PEM CA bundle to trust for the endpoint (default: the system's CAs). */
  caSecret?: SecretKeyRef;
}

/** A PersistentVolumeClaim that no EtcdCluster owns; the file is `<directory>/<namespace>/<cluster>/<backup>-<backup uid>.db`. */
export interface PVCDestination {
  claimName: string;
  /** Directory inside the volume, without a leading "/" (default: the volume's root). */
  directory?: string;
}

/** Where a snapshot goes: exactly one of `s3` or `pvc`. */
export interface BackupDestination {
  s3?: S3Destination;
  pvc?: PVCDestination;
}

/** What happens to the stored snapshot when its EtcdBackup is deleted. */
export type DeletionPolicy = "Retain" | "Delete";
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

/** How many backups a schedule keeps. A successful backup is deleted once it is beyond `keepLast` or older than `maxAge`; the newest successful backup is always kept. */
export interface BackupRetention {
  /** Keep at most this many successful backups. */
  keepLast?: number;
  /** Delete successful backups older than this, e.g. "7d" or "36h". */
  maxAge?: string;
}

/** What each scheduled backup is made from. */
export interface EtcdBackupTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: EtcdBackupSpec;
}

/** The desired schedule. */
export interface EtcdBackupScheduleSpec {
  /** Cron expression, five fields (minute hour day-of-month month day-of-week) or @hourly, @daily... */
  schedule: string;
  /** IANA time zone the schedule is read in (default UTC). */
  timeZone?: string;
  /** A scheduled time not started within this many seconds is skipped and reported missed (default: never skipped). */
  startingDeadlineSeconds?: number;
  /** Create no new backups until unset (retention still applies). */
  suspend?: boolean;
  retention?: BackupRetention;
  /** Failed backups kept for inspection (default 3). */
  failedBackupsHistoryLimit?: number;
  backupTemplate: EtcdBackupTemplate;
}

/** The observed schedule. */
export interface EtcdBackupScheduleStatus {
  observedGeneration?: number;
  /** Available (schedule valid and the last backup succeeded), Progressing (a backup runs), Degraded. */
  conditions?: Condition[];
  /** The scheduled time of the last backup created. */
  lastScheduleTime?: string;
  /** The last scheduled time that was skipped (past its starting deadline). */
  lastMissedTime?: string;
  /** When the last successful backup completed. */
  lastSuccessfulTime?: string;
  /** Name of the last successful backup. */
  lastSuccessfulBackup?: string;
  /** The next scheduled time. */
  nextScheduleTime?: string;
  /** Name of the backup running now. */
  active?: string;
}

/** An EtcdBackupSchedule object. */
export interface EtcdBackupSchedule extends KubeObject {
  spec: EtcdBackupScheduleSpec;
  status?: EtcdBackupScheduleStatus;
}

/** The EtcdBackupSchedule kind descriptor. */
export const EtcdBackupScheduleKind = defineKind<EtcdBackupSchedule>({
  group: GROUP,
  version: VERSION,
  kind: "EtcdBackupSchedule",
  plural: "etcdbackupschedules",
  namespaced: true,
});

const NAME_RULE = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

const secretName = (description: string): JSONSchemaProps => ({
  type: "string",
  description,
  minLength: 1,
  maxLength: 253,
});

export const s3Schema: JSONSchemaProps = {
  type: "object",
  description:
    "An S3-compatible bucket; the object key is <prefix>/<namespace>/<cluster>/<backup>-<backup uid>.db (the uid keeps it unique when several Kubernetes clusters share a bucket), uploaded in parts.",
  required: ["bucket", "credentialsSecret"],
  properties: {
    endpoint: {
      type: "string",
      description: "Endpoint URL, e.g. https://minio.storage.svc:9000 (default: AWS S3 for the region).",
      maxLength: 2048,
      "x-kubernetes-validations": [
        {
          rule: "isURL(self) && url(self).getScheme() in ['http', 'https']",
          message: "destination.s3.endpoint must be an http:// or https:// URL",
        },
      ],
    },
    bucket: {
      type: "string",
      description: "Bucket name.",
      minLength: 3,
      maxLength: 63,
      pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
    },
    prefix: {
      type: "string",
      description: 'Key prefix, without a leading or trailing "/" (e.g. etcd/prod).',
      maxLength: 512,
      "x-kubernetes-validations": [
        {
          rule: "!self.startsWith('/') && !self.endsWith('/')",
          message: 'destination.s3.prefix must not start or end with "/"',
        },
      ],
    },
    region: { type: "string", description: "Region.", default: DEFAULT_S3_REGION, maxLength: 64 },
    forcePathStyle: {
      type: "boolean",
      description:
        "Address the bucket as <endpoint>/<bucket> rather than <bucket>.<endpoint> (what most S3-compatible servers need).",
    },
    credentialsSecret: {
      type: "object",
      description: "Secret, in the backup's namespace, holding the access key.",
      required: ["name"],
      properties: {
        name: secretName("Secret name."),
        accessKeyIDKey: {
          type: "string",
          description: "Key of the access key ID.",
          default: DEFAULT_ACCESS_KEY_ID_KEY,
          maxLength: 253,
        },
        secretAccessKeyKey: {
          type: "string",
          description: "Key of the secret access key.",
          default: DEFAULT_SECRET_ACCESS_KEY_KEY,
          maxLength: 253,
        },
      },
    },
    caSecret: {
      type: "object",
      description: "Secret, in the backup's namespace, holding a PEM CA bundle to trust for the endpoint.",
      required: ["name"],
      properties: {
        name: secretName("Secret name."),
        key: { type: "string", description: "Key of the bundle.", default: DEFAULT_CA_KEY, maxLength: 253 },
      },
    },
  },
};

const pvcSchema: JSONSchemaProps = {
  type: "object",
  description:
    "A PersistentVolumeClaim no EtcdCluster owns, in the backup's namespace; the file is <directory>/<namespace>/<cluster>/<backup>-<backup uid>.db.",
  required: ["claimName"],
  properties: {
    claimName: secretName("Claim name."),
    directory: {
      type: "string",
      description: 'Directory inside the volume, without a leading "/" (default: the root).',
      maxLength: 512,
      "x-kubernetes-validations": [
        {
          rule: "!self.startsWith('/') && !self.split('/').exists(p, p == '..')",
          message: 'destination.pvc.directory must be a relative path without ".."',
        },
      ],
    },
  },
};

const destinationSchema: JSONSchemaProps = {
  type: "object",
  description: "Where the snapshot goes: exactly one of s3 or pvc.",
  properties: { s3: s3Schema, pvc: pvcSchema },
  "x-kubernetes-validations": [
    {
      rule: "has(self.s3) != has(self.pvc)",
      message: "destination: set exactly one of s3 or pvc",
    },
  ],
};

const backupSpecSchema = (description: string, deletionPolicy: DeletionPolicy): JSONSchemaProps => ({
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

const retentionSchema: JSONSchemaProps = {
  type: "object",
  description:
    "Which successful backups to keep: a backup beyond keepLast or older than maxAge is deleted, but never the newest successful one, one still running, nor one a restore uses or may still use.",
  default: { keepLast: DEFAULT_KEEP_LAST },
  properties: {
    keepLast: {
      type: "integer",
      format: "int32",
      description: "Keep at most this many successful backups.",
      minimum: 1,
      maximum: 1000,
    },
    maxAge: {
      type: "string",
      description:
        "Delete successful backups older than this: whole numbers with d, h, m or s, e.g. 7d or 36h.",
      maxLength: 32,
      pattern: MAX_AGE_PATTERN,
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "has(self.keepLast) || has(self.maxAge)",
      message: "retention: set keepLast, maxAge or both (omit retention for the default keepLast)",
    },
  ],
};

const scheduleSpecSchema: JSONSchemaProps = {
  type: "object",
  description: "When to take backups, how many to keep and what each one is.",
  required: ["schedule", "backupTemplate"],
  properties: {
    schedule: {
      type: "string",
      description:
        "Cron expression: five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly. Checked by the operator (Degraded names the problem).",
      minLength: 1,
      maxLength: 256,
    },
    timeZone: {
      type: "string",
      description: "IANA time zone the schedule is read in, e.g. Europe/Berlin (default UTC).",
      maxLength: 64,
    },
    startingDeadlineSeconds: {
      type: "integer",
      format: "int64",
      description:
        "A scheduled time not started within this many seconds (operator down, a backup still running) is skipped and reported missed; default: the latest missed time is always caught up, once.",
      minimum: 10,
    },
    suspend: {
      type: "boolean",
      description: "Create no new backups until unset; retention still applies.",
    },
    retention: retentionSchema,
    failedBackupsHistoryLimit: {
      type: "integer",
      format: "int32",
      description: "Failed backups kept for inspection; older failed ones are deleted.",
      default: DEFAULT_FAILED_HISTORY,
      minimum: 0,
      maximum: 100,
    },
    backupTemplate: {
      type: "object",
      description: "What each scheduled EtcdBackup is made from.",
      required: ["spec"],
      properties: {
        metadata: {
          type: "object",
          description: "Labels and annotations of each backup.",
          properties: {
            labels: { type: "object", additionalProperties: { type: "string" } },
            annotations: { type: "object", additionalProperties: { type: "string" } },
          },
        },
        spec: backupSpecSchema("The spec of each backup.", DEFAULT_SCHEDULED_DELETION_POLICY),
      },
    },
  },
};

const scheduleStatusSchema: JSONSchemaProps = {
  type: "object",
  description: "The observed schedule.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from.",
    },
    conditions: conditionsSchema(
      "Available (the schedule is valid and the last backup succeeded), Progressing (a backup runs), Degraded (invalid schedule, missed or failed backups).",
    ),
    lastScheduleTime: {
      type: "string",
      format: "date-time",
      description: "Scheduled time of the last backup created.",
    },
    lastMissedTime: {
      type: "string",
      format: "date-time",
      description: "The last scheduled time skipped past its starting deadline.",
    },
    lastSuccessfulTime: {
      type: "string",
      format: "date-time",
      description: "When the last successful backup completed.",
    },
    lastSuccessfulBackup: { type: "string", description: "Name of the last successful backup." },
    nextScheduleTime: { type: "string", format: "date-time", description: "The next scheduled time." },
    active: { type: "string", description: "Name of the backup running now." },
  },
};

/** The openAPIV3Schema of EtcdBackupSchedule. */
export const etcdBackupScheduleSchema: JSONSchemaProps = {
  type: "object",
  description: "EtcdBackups taken on a cron schedule, with retention.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      rule: `self.metadata.name.size() <= ${MAX_SCHEDULE_NAME_LENGTH} && self.metadata.name.matches('${NAME_RULE}')`,
      message: `metadata.name must be at most ${MAX_SCHEDULE_NAME_LENGTH} characters of lowercase letters, digits and '-' (backups are named <schedule>-<minutes since 1970>)`,
    },
  ],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: scheduleSpecSchema,
    status: scheduleStatusSchema,
  },
};

const crdFor = (
  kind: { kind: string; plural: string },
  singular: string,
  schema: JSONSchemaProps,
  columns: NonNullable<
    CustomResourceDefinitionObject["spec"]["versions"][number]["additionalPrinterColumns"]
  >,
): CustomResourceDefinitionObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${kind.plural}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: "Namespaced",
    names: {
      kind: kind.kind,
      plural: kind.plural,
      singular,
      listKind: `${kind.kind}List`,
      categories: ["capstan"],
    },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: structuredClone(schema) },
        subresources: { status: {} },
        additionalPrinterColumns: columns,
      },
    ],
  },
});

/** The EtcdBackup CustomResourceDefinition. */
export function etcdBackupCrd(): CustomResourceDefinitionObject {
  return crdFor(EtcdBackupKind, "etcdbackup", etcdBackupSchema, [
    { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Revision", type: "integer", jsonPath: ".status.revision" },
    { name: "Size", type: "integer", jsonPath: ".status.size" },
    { name: "Location", type: "string", jsonPath: ".status.location", priority: 1 },
    { name: "Completed", type: "date", jsonPath: ".status.completionTime" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ]);
}

/** The EtcdBackupSchedule CustomResourceDefinition. */
export function etcdBackupScheduleCrd(): CustomResourceDefinitionObject {
  return crdFor(EtcdBackupScheduleKind, "etcdbackupschedule", etcdBackupScheduleSchema, [
    { name: "Cluster", type: "string", jsonPath: ".spec.backupTemplate.spec.clusterName" },
    { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
    { name: "Suspend", type: "boolean", jsonPath: ".spec.suspend" },
    { name: "Last", type: "date", jsonPath: ".status.lastScheduleTime" },
    { name: "Last success", type: "date", jsonPath: ".status.lastSuccessfulTime" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ]);
}
