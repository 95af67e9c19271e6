// EtcdBackupSchedule (etcd.capstan.dev/v1alpha1): backups on a cron schedule with retention; the CRD schema, the
// single source of truth, and its TypeScript types. Each backup it makes is an EtcdBackup of its template.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  conditionsSchema,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
import {
  backupSpecSchema,
  crdFor,
  DEFAULT_SCHEDULED_DELETION_POLICY,
  type EtcdBackupSpec,
} from "./backup.ts";
import { NAME_RULE } from "./backup-destination.ts";
import { GROUP, VERSION } from "./group.ts";

/** Successful backups a schedule keeps when `spec.retention` is omitted. */
export const DEFAULT_KEEP_LAST = 7;
/** Failed backups a schedule keeps (for their status and Job logs) unless `spec.failedBackupsHistoryLimit` says. */
export const DEFAULT_FAILED_HISTORY = 3;
/** Longest EtcdBackupSchedule name: its backups are named `<schedule>-<minutes since the epoch>` (63 at most). */
export const MAX_SCHEDULE_NAME_LENGTH = 52;
/** A retention age: whole numbers with d, h, m or s units, e.g. "7d", "36h", "1d12h". */
export const MAX_AGE_PATTERN = "^([0-9]+(d|h|m|s))+$";

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
