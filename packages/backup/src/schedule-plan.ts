// The backup schedule planner the operators share (EtcdBackupSchedule, VaultSnapshotSchedule): from a schedule's
// settings, the clock and the backups it owns, what to do now: create the backup due (named after its scheduled time,
// so a retry after a lost status write never makes two), wait, or report a missed time; and which backups retention
// deletes. Pure: `now` is an input, cron times come from croner (no timers are started).
import { Cron } from "croner";
import * as Type from "typebox/type";
import type { BackupPhase } from "./backup-schema.ts";

/** Successful backups a schedule keeps when its retention is omitted. */
export const DEFAULT_KEEP_LAST = 7;
/** Failed backups a schedule keeps (for their status and Job logs) unless its history limit says otherwise. */
export const DEFAULT_FAILED_HISTORY = 3;
/** Longest schedule name: its backups are named `<schedule>-<minutes since the epoch>` (63 at most). */
export const MAX_SCHEDULE_NAME_LENGTH = 52;
/** A retention age: whole numbers with d, h, m or s units, e.g. "7d", "36h", "1d12h". */
export const MAX_AGE_PATTERN = "^([0-9]+(d|h|m|s))+$";

/** The schema of a schedule's `retention`, worded with the backup kind's `noun` ("backup", "snapshot"). */
export function retentionSchema(noun: string) {
  return Type.Object(
    {
      keepLast: Type.Optional(
        Type.Integer({
          format: "int32",
          description: `Keep at most this many successful ${noun}s.`,
          minimum: 1,
          maximum: 1000,
        }),
      ),
      maxAge: Type.Optional(
        Type.String({
          description: `Delete successful ${noun}s older than this: whole numbers with d, h, m or s, e.g. 7d or 36h.`,
          maxLength: 32,
          pattern: MAX_AGE_PATTERN,
        }),
      ),
    },
    {
      description: `Which successful ${noun}s to keep: a ${noun} beyond keepLast or older than maxAge is deleted, but never the newest successful one, one still running, nor one a restore uses or may still use.`,
      default: { keepLast: DEFAULT_KEEP_LAST },
      "x-kubernetes-validations": [
        {
          rule: "has(self.keepLast) || has(self.maxAge)",
          message: "retention: set keepLast, maxAge or both (omit retention for the default keepLast)",
        },
      ],
    },
  );
}

/**
 * How many backups a schedule keeps. A successful backup is deleted once it is beyond `keepLast` or older than
 * `maxAge` (e.g. "7d" or "36h"); the newest successful backup is always kept.
 */
export type BackupRetention = Type.Static<ReturnType<typeof retentionSchema>>;

/** A schedule's settings, whatever the operator calls its fields (its failed-history limit, its template). */
export interface ScheduleSettings {
  /** Cron expression, five fields (minute hour day-of-month month day-of-week) or @hourly, @daily... */
  schedule: string;
  /** IANA time zone the schedule is read in (default UTC). */
  timeZone?: string | undefined;
  /** A scheduled time not started within this many seconds is skipped and reported missed (default: never skipped). */
  startingDeadlineSeconds?: number | undefined;
  /** Create no new backups until unset (retention still applies). */
  suspend?: boolean | undefined;
  retention?: BackupRetention | undefined;
  /** Failed backups kept for inspection (default 3). */
  failedHistoryLimit?: number | undefined;
  /** The spec field of that limit, for messages (default "failedBackupsHistoryLimit"). */
  failedHistoryLimitField?: string | undefined;
}

/** Backups a restore uses or may still use, each with who uses it (for messages): retention keeps them. */
export type BackupsInUse = ReadonlyMap<string, string>;

/** Missed scheduled times are counted up to this many (the count is only reported; a month down is not 43200 steps). */
export const MAX_COUNTED_MISSED = 100;

/** A backup the schedule owns. */
export interface OwnedBackup {
  name: string;
  /** Unset until the backup's reconciler first writes status: counted as running. */
  phase?: BackupPhase;
  /** Its scheduled time (annotation), or its creation time. */
  scheduledTime: Date;
  completionTime?: Date;
}

/** What the planner reads. */
export interface ScheduleInput {
  /** The schedule's metadata.name. */
  name: string;
  spec: ScheduleSettings;
  /** The schedule's creationTimestamp: times before it are never due. */
  createdAt: Date;
  /** status.lastScheduleTime. */
  lastScheduleTime?: Date;
  /** status.lastMissedTime. */
  lastMissedTime?: Date;
  backups: OwnedBackup[];
  now: Date;
  /** Backups a restore uses or may still use: retention keeps them. */
  inUse?: BackupsInUse;
}

/** What to do about the next backup. */
export type ScheduleDecision =
  /** The schedule cannot be read; `field` names the spec field, `message` what is wrong and what to write. */
  | { type: "Invalid"; field: string; message: string }
  | { type: "Suspended" }
  /** No scheduled time has come since the last one handled. */
  | { type: "NotDue" }
  /** Create the backup `name` for `scheduledTime`; `missed` earlier times since the last handled one are skipped. */
  | { type: "Create"; name: string; scheduledTime: Date; missed: number }
  /** The backup for the due time exists already (created before a status write was lost): record it. */
  | { type: "AlreadyCreated"; name: string; scheduledTime: Date }
  /** A backup is due but `active` still runs (concurrency Forbid); planned again when it ends. */
  | { type: "Running"; active: string; scheduledTime: Date }
  /** The due time passed its starting deadline: skip it and report it. */
  | { type: "Missed"; scheduledTime: Date; missed: number };

/** A backup retention deletes, and why. */
export interface RetentionDelete {
  name: string;
  reason: string;
}

/** The planner's answer. */
export interface SchedulePlan {
  decision: ScheduleDecision;
  /** Backups to delete (never a running one, never the newest successful one). */
  deletes: RetentionDelete[];
  /** The first scheduled time after now and after the last handled time (unset when suspended or invalid). */
  next?: Date;
  /** The backup running now, if any. */
  active?: string;
}

/** The deterministic name of the backup scheduled at `time`: `<schedule>-<minutes since 1970, UTC>`. */
export function scheduledBackupName(schedule: string, time: Date): string {
  return `${schedule}-${Math.floor(time.getTime() / 60_000)}`;
}

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** Milliseconds of a retention age such as "7d" or "1d12h"; undefined when it is not one. */
export function parseMaxAge(text: string): number | undefined {
  if (!/^([0-9]+[dhms])+$/.test(text)) return undefined;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/([0-9]+)([dhms])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

/** The cron schedule of `spec` in its time zone, or the problem naming the field. */
export function parseSchedule(
  spec: Pick<ScheduleSettings, "schedule" | "timeZone">,
): Cron | { field: string; message: string } {
  const timezone = spec.timeZone ?? "UTC";
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    return {
      field: "spec.timeZone",
      message: `spec.timeZone "${timezone}" is not an IANA time zone: write one such as UTC or Europe/Berlin`,
    };
  }
  let cron: Cron;
  try {
    cron = new Cron(spec.schedule, { timezone, mode: "5-part" });
  } catch (err) {
    return {
      field: "spec.schedule",
      message: `spec.schedule "${spec.schedule}" is not a cron expression (${(err as Error).message}): write five fields, minute hour day-of-month month day-of-week, e.g. "0 3 * * *", or @hourly, @daily, @weekly`,
    };
  }
  if (cron.nextRun(new Date(0)) === null) {
    return {
      field: "spec.schedule",
      message: `spec.schedule "${spec.schedule}" matches no date (e.g. February 31st): it would never take a backup`,
    };
  }
  return cron;
}

const running = (b: OwnedBackup) => b.phase === undefined || b.phase === "Pending" || b.phase === "Running";
const newestFirst = (a: OwnedBackup, b: OwnedBackup) =>
  (b.completionTime ?? b.scheduledTime).getTime() - (a.completionTime ?? a.scheduledTime).getTime() ||
  b.scheduledTime.getTime() - a.scheduledTime.getTime() ||
  (a.name < b.name ? 1 : -1);

/**
 * The backups retention deletes: successful ones beyond `keepLast` or older than `maxAge` (their completion
 * time; the newest successful backup is always kept), and failed ones beyond `failedHistoryLimit`.
 * Pending and running backups are never deleted, nor one a restore uses or may still use (`inUse`: it stays, and
 * is not counted against keepLast).
 */
export function retentionDeletes(
  spec: Pick<ScheduleSettings, "retention" | "failedHistoryLimit" | "failedHistoryLimitField">,
  backups: OwnedBackup[],
  now: Date,
  inUse: BackupsInUse = new Map(),
): RetentionDelete[] {
  const retention = spec.retention ?? { keepLast: DEFAULT_KEEP_LAST };
  const maxAgeMs = retention.maxAge === undefined ? undefined : parseMaxAge(retention.maxAge);
  const out: RetentionDelete[] = [];
  const succeeded = backups.filter((b) => b.phase === "Succeeded" && !inUse.has(b.name)).sort(newestFirst);
  succeeded.forEach((b, i) => {
    if (i === 0) return;
    if (retention.keepLast !== undefined && i >= retention.keepLast) {
      out.push({ name: b.name, reason: `beyond retention.keepLast ${retention.keepLast}` });
    } else if (
      maxAgeMs !== undefined &&
      now.getTime() - (b.completionTime ?? b.scheduledTime).getTime() > maxAgeMs
    ) {
      out.push({ name: b.name, reason: `older than retention.maxAge ${retention.maxAge}` });
    }
  });
  const failedLimit = spec.failedHistoryLimit ?? DEFAULT_FAILED_HISTORY;
  const field = spec.failedHistoryLimitField ?? "failedBackupsHistoryLimit";
  backups
    .filter((b) => b.phase === "Failed")
    .sort(newestFirst)
    .slice(failedLimit)
    .forEach((b) => {
      out.push({ name: b.name, reason: `failed, beyond ${field} ${failedLimit}` });
    });
  return out;
}

/** How stale a schedule's newest successful backup is, when it is older than twice the schedule's interval. */
export interface StaleBackup {
  /** Since the newest successful backup completed (or, with none, since the schedule was created). */
  ageMs: number;
  /** The time between the schedule's last two scheduled times. */
  intervalMs: number;
}

/**
 * The schedule's newest successful backup (`lastSuccess`, its completion; none: the schedule's creation) is older
 * than twice its interval (the time between its last two scheduled times before `now`): every backup in between
 * failed, was missed or never started. Undefined when it is not, or the schedule is invalid, suspended or too new
 * to have two scheduled times.
 */
export function staleBackup(
  spec: Pick<ScheduleSettings, "schedule" | "timeZone" | "suspend">,
  createdAt: Date,
  lastSuccess: Date | undefined,
  now: Date,
): StaleBackup | undefined {
  if (spec.suspend === true) return undefined;
  const cron = parseSchedule(spec);
  if (!(cron instanceof Cron)) return undefined;
  const [last, before] = cron.previousRuns(2, now);
  if (last === undefined || before === undefined || before < createdAt) return undefined;
  const intervalMs = last.getTime() - before.getTime();
  const ageMs = now.getTime() - (lastSuccess ?? createdAt).getTime();
  return ageMs > 2 * intervalMs ? { ageMs, intervalMs } : undefined;
}

/** Scheduled times strictly between `after` and `before`, counted up to {@link MAX_COUNTED_MISSED}. */
function countBetween(cron: Cron, after: Date, before: Date): number {
  let n = 0;
  for (let t = cron.nextRun(after); t !== null && t < before && n < MAX_COUNTED_MISSED; t = cron.nextRun(t))
    n++;
  return n;
}

/** Plans one reconcile of a backup schedule. */
export function planSchedule(input: ScheduleInput): SchedulePlan {
  const { spec, now, backups } = input;
  const active = backups
    .filter(running)
    .sort((a, b) => a.scheduledTime.getTime() - b.scheduledTime.getTime())[0]?.name;
  const base = {
    deletes: retentionDeletes(spec, backups, now, input.inUse),
    ...(active === undefined ? {} : { active }),
  };
  const maxAge = spec.retention?.maxAge;
  if (maxAge !== undefined && parseMaxAge(maxAge) === undefined) {
    return {
      ...base,
      deletes: [],
      decision: {
        type: "Invalid",
        field: "spec.retention.maxAge",
        message: `spec.retention.maxAge "${maxAge}" is not an age: write whole numbers with d, h, m or s, e.g. 7d or 36h`,
      },
    };
  }
  const cron = parseSchedule(spec);
  if (!(cron instanceof Cron)) return { ...base, decision: { type: "Invalid", ...cron } };
  if (spec.suspend) return { ...base, decision: { type: "Suspended" } };

  // Everything up to `handled` has been created or reported missed (or predates the schedule).
  const handled = new Date(
    Math.max(
      input.createdAt.getTime(),
      input.lastScheduleTime?.getTime() ?? 0,
      input.lastMissedTime?.getTime() ?? 0,
    ),
  );
  // previousRuns is exclusive of its reference and works in whole seconds: one second past now includes now.
  const latest = cron.previousRuns(1, new Date(now.getTime() + 1000)).find((t) => t <= now);
  const nextAfter = (t: Date) =>
    cron.nextRun(new Date(Math.max(t.getTime(), now.getTime(), handled.getTime())));
  const withNext = (plan: Omit<SchedulePlan, "next">, after: Date): SchedulePlan => {
    const next = nextAfter(after);
    return next === null ? plan : { ...plan, next };
  };
  if (latest === undefined || latest <= handled)
    return withNext({ ...base, decision: { type: "NotDue" } }, now);

  const name = scheduledBackupName(input.name, latest);
  if (backups.some((b) => b.name === name)) {
    return withNext({ ...base, decision: { type: "AlreadyCreated", name, scheduledTime: latest } }, latest);
  }
  const missed = countBetween(cron, handled, latest);
  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== undefined && now.getTime() - latest.getTime() > deadline * 1000) {
    return withNext({ ...base, decision: { type: "Missed", scheduledTime: latest, missed } }, latest);
  }
  if (active !== undefined) {
    return withNext({ ...base, decision: { type: "Running", active, scheduledTime: latest } }, latest);
  }
  return withNext({ ...base, decision: { type: "Create", name, scheduledTime: latest, missed } }, latest);
}
