// The schema of a backup schedule (EtcdBackupSchedule, VaultSnapshotSchedule), worded for each operator: its spec
// (cron, time zone, starting deadline, suspend, retention, failed history, the template of each backup), its status
// and its printer columns. The fields a schedule's reconcile reads are named after the backup kind's noun
// (`failedBackupsHistoryLimit`, `snapshotTemplate`, `lastSuccessfulSnapshot`), as {@link scheduleFields} says.
import type { Condition, JSONSchemaProps, PrinterColumn } from "@capstan/core";
import { conditionsSchema } from "@capstan/core";
import { NAME_RULE } from "./destination.ts";
import {
  type BackupRetention,
  DEFAULT_FAILED_HISTORY,
  DEFAULT_KEEP_LAST,
  MAX_AGE_PATTERN,
  MAX_SCHEDULE_NAME_LENGTH,
} from "./schedule-plan.ts";

/** How an operator names what its schedule creates. */
export interface ScheduleWords {
  /** The noun, lower case: "backup", "snapshot". */
  noun: string;
  /** The kind each scheduled time creates: "EtcdBackup", "VaultSnapshot". */
  kind: string;
}

/** The field names a schedule's spec and status use for `words`. */
export interface ScheduleFields {
  /** The spec's failed history limit: `failed<Noun>sHistoryLimit`. */
  failedHistoryLimit: string;
  /** The spec's template: `<noun>Template`. */
  template: string;
  /** The status's last successful one: `lastSuccessful<Noun>`. */
  lastSuccessful: string;
}

const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;

/** The field names of a schedule for `words`. */
export function scheduleFields(words: ScheduleWords): ScheduleFields {
  const Noun = capital(words.noun);
  return {
    failedHistoryLimit: `failed${Noun}sHistoryLimit`,
    template: `${words.noun}Template`,
    lastSuccessful: `lastSuccessful${Noun}`,
  };
}

/** A schedule's spec fields every operator has (its template and failed history limit are named by {@link scheduleFields}). */
export interface ScheduleSpecBase {
  /** Cron expression, five fields (minute hour day-of-month month day-of-week) or @hourly, @daily... */
  schedule: string;
  /** IANA time zone the schedule is read in (default UTC). */
  timeZone?: string;
  /** A scheduled time not started within this many seconds is skipped and reported missed (default: never skipped). */
  startingDeadlineSeconds?: number;
  /** Create nothing new until unset (retention still applies). */
  suspend?: boolean;
  retention?: BackupRetention;
}

/** What each scheduled backup is made from: its labels, annotations and spec. */
export interface ScheduleTemplate<Spec> {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Spec;
}

/** A schedule's status fields every operator has (the last successful one's name is named by {@link scheduleFields}). */
export interface ScheduleStatusBase {
  observedGeneration?: number;
  /** Available (schedule valid and the last one succeeded), Progressing (one runs), Degraded. */
  conditions?: Condition[];
  /** The scheduled time of the last one created. */
  lastScheduleTime?: string;
  /** The last scheduled time that was skipped (past its starting deadline). */
  lastMissedTime?: string;
  /** When the last successful one completed. */
  lastSuccessfulTime?: string;
  /** The next scheduled time. */
  nextScheduleTime?: string;
  /** Name of the one running now. */
  active?: string;
}

function retentionSchema(noun: string): JSONSchemaProps {
  return {
    type: "object",
    description: `Which successful ${noun}s to keep: a ${noun} beyond keepLast or older than maxAge is deleted, but never the newest successful one, one still running, nor one a restore uses or may still use.`,
    default: { keepLast: DEFAULT_KEEP_LAST },
    properties: {
      keepLast: {
        type: "integer",
        format: "int32",
        description: `Keep at most this many successful ${noun}s.`,
        minimum: 1,
        maximum: 1000,
      },
      maxAge: {
        type: "string",
        description: `Delete successful ${noun}s older than this: whole numbers with d, h, m or s, e.g. 7d or 36h.`,
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
}

/** The spec schema of a schedule creating `words.kind`s from a template whose spec is `templateSpec`. */
export function scheduleSpecSchema(words: ScheduleWords, templateSpec: JSONSchemaProps): JSONSchemaProps {
  const { noun, kind } = words;
  const fields = scheduleFields(words);
  return {
    type: "object",
    description: `When to take ${noun}s, how many to keep and what each one is.`,
    required: ["schedule", fields.template],
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
        description: `A scheduled time not started within this many seconds (operator down, a ${noun} still running) is skipped and reported missed; default: the latest missed time is always caught up, once.`,
        minimum: 10,
      },
      suspend: {
        type: "boolean",
        description: `Create no new ${noun}s until unset; retention still applies.`,
      },
      retention: retentionSchema(noun),
      [fields.failedHistoryLimit]: {
        type: "integer",
        format: "int32",
        description: `Failed ${noun}s kept for inspection; older failed ones are deleted.`,
        default: DEFAULT_FAILED_HISTORY,
        minimum: 0,
        maximum: 100,
      },
      [fields.template]: {
        type: "object",
        description: `What each scheduled ${kind} is made from.`,
        required: ["spec"],
        properties: {
          metadata: {
            type: "object",
            description: `Labels and annotations of each ${noun}.`,
            properties: {
              labels: { type: "object", additionalProperties: { type: "string" } },
              annotations: { type: "object", additionalProperties: { type: "string" } },
            },
          },
          spec: templateSpec,
        },
      },
    },
  };
}

/** The status schema of a schedule creating `words.kind`s. */
export function scheduleStatusSchema(words: ScheduleWords): JSONSchemaProps {
  const { noun } = words;
  return {
    type: "object",
    description: "The observed schedule.",
    properties: {
      observedGeneration: {
        type: "integer",
        format: "int64",
        description: "The metadata.generation this status was computed from.",
      },
      conditions: conditionsSchema(
        `Available (the schedule is valid and the last ${noun} succeeded), Progressing (a ${noun} runs), Degraded (invalid schedule, missed or failed ${noun}s).`,
      ),
      lastScheduleTime: {
        type: "string",
        format: "date-time",
        description: `Scheduled time of the last ${noun} created.`,
      },
      lastMissedTime: {
        type: "string",
        format: "date-time",
        description: "The last scheduled time skipped past its starting deadline.",
      },
      lastSuccessfulTime: {
        type: "string",
        format: "date-time",
        description: `When the last successful ${noun} completed.`,
      },
      [scheduleFields(words).lastSuccessful]: {
        type: "string",
        description: `Name of the last successful ${noun}.`,
      },
      nextScheduleTime: { type: "string", format: "date-time", description: "The next scheduled time." },
      active: { type: "string", description: `Name of the ${noun} running now.` },
    },
  };
}

/**
 * The openAPIV3Schema of a schedule: its name rule, spec and status. What it creates is named
 * `<schedule>-<minutes since 1970>` (8 digits until 2160): `maxNameLength` leaves room for that suffix in the
 * longest name the created kind accepts (52 for a 63-character one).
 */
export function scheduleSchema(
  words: ScheduleWords,
  templateSpec: JSONSchemaProps,
  maxNameLength = MAX_SCHEDULE_NAME_LENGTH,
): JSONSchemaProps {
  return {
    type: "object",
    description: `${words.kind}s taken on a cron schedule, with retention.`,
    required: ["spec"],
    "x-kubernetes-validations": [
      {
        rule: `self.metadata.name.size() <= ${maxNameLength} && self.metadata.name.matches('${NAME_RULE}')`,
        message: `metadata.name must be at most ${maxNameLength} characters of lowercase letters, digits and '-' (${words.noun}s are named <schedule>-<minutes since 1970>)`,
      },
    ],
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: scheduleSpecSchema(words, templateSpec),
      status: scheduleStatusSchema(words),
    },
  };
}

/** A schedule's printer columns: its template's cluster, the cron, suspend, the last and last successful times. */
export function schedulePrinterColumns(words: ScheduleWords): PrinterColumn[] {
  return [
    { name: "Cluster", type: "string", jsonPath: `.spec.${scheduleFields(words).template}.spec.clusterName` },
    { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
    { name: "Suspend", type: "boolean", jsonPath: ".spec.suspend" },
    { name: "Last", type: "date", jsonPath: ".status.lastScheduleTime" },
    { name: "Last success", type: "date", jsonPath: ".status.lastSuccessfulTime" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ];
}
