// The schema of a backup schedule (EtcdBackupSchedule, VaultSnapshotSchedule), worded for each operator: its spec
// (cron, time zone, starting deadline, suspend, retention, failed history, the template of each backup), its status
// and its printer columns. The fields a schedule's reconcile reads are named after the backup kind's noun
// (`failedBackupsHistoryLimit`, `snapshotTemplate`, `lastSuccessfulSnapshot`), as {@link scheduleFields} says.
import type { PrinterColumn } from "@capstan/core";
import { conditionsSchema } from "@capstan/core";
import * as Type from "typebox/type";
import { NAME_RULE } from "./destination.ts";
import { DEFAULT_FAILED_HISTORY, MAX_SCHEDULE_NAME_LENGTH, retentionSchema } from "./schedule-plan.ts";

/** How an operator names what its schedule creates. */
export interface ScheduleWords<Noun extends string = string> {
  /** The noun, lower case: "backup", "snapshot". */
  noun: Noun;
  /** The kind each scheduled time creates: "EtcdBackup", "VaultSnapshot". */
  kind: string;
}

/** The field names a schedule's spec and status use for `words`. */
export interface ScheduleFields<Noun extends string = string> {
  /** The spec's failed history limit: `failed<Noun>sHistoryLimit`. */
  failedHistoryLimit: `failed${Capitalize<Noun>}sHistoryLimit`;
  /** The spec's template: `<noun>Template`. */
  template: `${Noun}Template`;
  /** The status's last successful one: `lastSuccessful<Noun>`. */
  lastSuccessful: `lastSuccessful${Capitalize<Noun>}`;
}

const capital = <S extends string>(s: S) => `${s.charAt(0).toUpperCase()}${s.slice(1)}` as Capitalize<S>;

/** The field names of a schedule for `words`. */
export function scheduleFields<Noun extends string>(words: ScheduleWords<Noun>): ScheduleFields<Noun> {
  const Noun = capital(words.noun);
  return {
    failedHistoryLimit: `failed${Noun}sHistoryLimit`,
    template: `${words.noun}Template`,
    lastSuccessful: `lastSuccessful${Noun}`,
  };
}

/** The spec fields of a schedule every operator has (its template and failed history limit are named by the noun). */
function scheduleSpecBaseProperties(noun: string) {
  return {
    schedule: Type.String({
      description:
        "Cron expression: five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly. Checked by the operator (Degraded names the problem).",
      minLength: 1,
      maxLength: 256,
    }),
    timeZone: Type.Optional(
      Type.String({
        description: "IANA time zone the schedule is read in, e.g. Europe/Berlin (default UTC).",
        maxLength: 64,
      }),
    ),
    startingDeadlineSeconds: Type.Optional(
      Type.Integer({
        format: "int64",
        description: `A scheduled time not started within this many seconds (operator down, a ${noun} still running) is skipped and reported missed; default: the latest missed time is always caught up, once.`,
        minimum: 10,
      }),
    ),
    suspend: Type.Optional(
      Type.Boolean({ description: `Create no new ${noun}s until unset; retention still applies.` }),
    ),
    retention: Type.Optional(retentionSchema(noun)),
  };
}

/**
 * A schedule's spec fields every operator has (its template and failed history limit are named by
 * {@link scheduleFields}): the cron `schedule`, its `timeZone` (default UTC), the `startingDeadlineSeconds` past which
 * a scheduled time is skipped and reported missed (default: never skipped), `suspend` (create nothing new until
 * unset; retention still applies) and `retention`.
 */
export type ScheduleSpecBase = Type.Static<Type.TObject<ReturnType<typeof scheduleSpecBaseProperties>>>;

const stringMap = Type.Unsafe<Record<string, string>>({
  type: "object",
  additionalProperties: { type: "string" },
});

function templateMetadataSchema(noun: string) {
  return Type.Object(
    { labels: Type.Optional(stringMap), annotations: Type.Optional(stringMap) },
    { description: `Labels and annotations of each ${noun}.` },
  );
}

/** What each scheduled backup is made from: its labels, annotations and spec. */
export interface ScheduleTemplate<Spec> {
  metadata?: Type.Static<ReturnType<typeof templateMetadataSchema>>;
  spec: Spec;
}

/** The schema of a schedule's template: what each scheduled `words.kind` is made from. */
function templateSchema<Spec extends Type.TSchema>(words: ScheduleWords, templateSpec: Spec) {
  return Type.Object(
    { metadata: Type.Optional(templateMetadataSchema(words.noun)), spec: templateSpec },
    { description: `What each scheduled ${words.kind} is made from.` },
  );
}

/** The properties of a schedule's spec for `Noun`, its template's spec being `Spec`. */
export type ScheduleSpecProperties<Noun extends string, Spec extends Type.TSchema> = ReturnType<
  typeof scheduleSpecBaseProperties
> &
  Record<ScheduleFields<Noun>["failedHistoryLimit"], Type.TOptional<Type.TInteger>> &
  Record<ScheduleFields<Noun>["template"], ReturnType<typeof templateSchema<Spec>>>;

/** The spec schema of a schedule creating `words.kind`s from a template whose spec is `templateSpec`. */
export function scheduleSpecSchema<Noun extends string, Spec extends Type.TSchema>(
  words: ScheduleWords<Noun>,
  templateSpec: Spec,
): Type.TObject<ScheduleSpecProperties<Noun, Spec>> {
  const { noun } = words;
  const fields = scheduleFields(words);
  const properties = {
    ...scheduleSpecBaseProperties(noun),
    [fields.failedHistoryLimit]: Type.Optional(
      Type.Integer({
        format: "int32",
        description: `Failed ${noun}s kept for inspection; older failed ones are deleted.`,
        default: DEFAULT_FAILED_HISTORY,
        minimum: 0,
        maximum: 100,
      }),
    ),
    [fields.template]: templateSchema(words, templateSpec),
  } as ScheduleSpecProperties<Noun, Spec>;
  return Type.Object(properties, {
    description: `When to take ${noun}s, how many to keep and what each one is.`,
  });
}

/** The status fields of a schedule every operator has (the last successful one's name is named by the noun). */
function scheduleStatusBaseProperties(noun: string) {
  return {
    observedGeneration: Type.Optional(
      Type.Integer({
        format: "int64",
        description: "The metadata.generation this status was computed from.",
      }),
    ),
    conditions: Type.Optional(
      conditionsSchema(
        `Available (the schedule is valid and the last ${noun} succeeded), Progressing (a ${noun} runs), Degraded (invalid schedule, missed or failed ${noun}s).`,
      ),
    ),
    lastScheduleTime: Type.Optional(
      Type.String({ format: "date-time", description: `Scheduled time of the last ${noun} created.` }),
    ),
    lastMissedTime: Type.Optional(
      Type.String({
        format: "date-time",
        description: "The last scheduled time skipped past its starting deadline.",
      }),
    ),
    lastSuccessfulTime: Type.Optional(
      Type.String({ format: "date-time", description: `When the last successful ${noun} completed.` }),
    ),
  };
}

/**
 * A schedule's status fields every operator has (the last successful one's name is named by
 * {@link scheduleFields}): `conditions` are Available (schedule valid and the last one succeeded), Progressing (one
 * runs) and Degraded; `active` names the one running now.
 */
export type ScheduleStatusBase = Type.Static<
  Type.TObject<
    ReturnType<typeof scheduleStatusBaseProperties> & ReturnType<typeof scheduleStatusTailProperties>
  >
>;

function scheduleStatusTailProperties(noun: string) {
  return {
    nextScheduleTime: Type.Optional(
      Type.String({ format: "date-time", description: "The next scheduled time." }),
    ),
    active: Type.Optional(Type.String({ description: `Name of the ${noun} running now.` })),
  };
}

/** The properties of a schedule's status for `Noun`. */
export type ScheduleStatusProperties<Noun extends string> = ReturnType<typeof scheduleStatusBaseProperties> &
  Record<ScheduleFields<Noun>["lastSuccessful"], Type.TOptional<Type.TString>> &
  ReturnType<typeof scheduleStatusTailProperties>;

/** The status schema of a schedule creating `words.kind`s. */
export function scheduleStatusSchema<Noun extends string>(
  words: ScheduleWords<Noun>,
): Type.TObject<ScheduleStatusProperties<Noun>> {
  const { noun } = words;
  const properties = {
    ...scheduleStatusBaseProperties(noun),
    [scheduleFields(words).lastSuccessful]: Type.Optional(
      Type.String({ description: `Name of the last successful ${noun}.` }),
    ),
    ...scheduleStatusTailProperties(noun),
  } as ScheduleStatusProperties<Noun>;
  return Type.Object(properties, { description: "The observed schedule." });
}

/**
 * The openAPIV3Schema of a schedule: its name rule, spec and status. What it creates is named
 * `<schedule>-<minutes since 1970>` (8 digits until 2160): `maxNameLength` leaves room for that suffix in the
 * longest name the created kind accepts (52 for a 63-character one).
 */
export function scheduleSchema<Noun extends string, Spec extends Type.TSchema>(
  words: ScheduleWords<Noun>,
  templateSpec: Spec,
  maxNameLength = MAX_SCHEDULE_NAME_LENGTH,
) {
  return Type.Object(
    {
      apiVersion: Type.Optional(Type.String()),
      kind: Type.Optional(Type.String()),
      metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: "object" })),
      spec: scheduleSpecSchema(words, templateSpec),
      status: Type.Optional(scheduleStatusSchema(words)),
    },
    {
      description: `${words.kind}s taken on a cron schedule, with retention.`,
      "x-kubernetes-validations": [
        {
          rule: `self.metadata.name.size() <= ${maxNameLength} && self.metadata.name.matches('${NAME_RULE}')`,
          message: `metadata.name must be at most ${maxNameLength} characters of lowercase letters, digits and '-' (${words.noun}s are named <schedule>-<minutes since 1970>)`,
        },
      ],
    },
  );
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
