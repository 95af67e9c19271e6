// The conditions of a backup schedule (EtcdBackupSchedule, VaultSnapshotSchedule), worded for its operator: Available
// (the schedule is valid and the last one succeeded), Progressing (one runs) and Degraded (invalid schedule, the
// newest success older than twice the interval, a missed time, a failed one). Pure: the reconcile passes the clock.
import { type Condition, setCondition } from "@capstan/core";
import { type OwnedBackup, type SchedulePlan, type ScheduleSettings, staleBackup } from "./schedule-plan.ts";
import type { ScheduleStatusBase, ScheduleWords } from "./schedule-schema.ts";

/** "2d 3h", "5h 10m", "42m", "30s": the two largest units. */
export function humanDuration(ms: number): string {
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  for (const [unit, size] of units) {
    if (rest >= size || (parts.length === 0 && unit === "s")) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

/** The reason of a Degraded=True condition, if Degraded is True. */
export function degradedReason(conditions: readonly Condition[] | undefined): string | undefined {
  const d = conditions?.find((c) => c.type === "Degraded");
  return d?.status === "True" ? d.reason : undefined;
}

/** The condition reasons that name the noun: BackupStale / SnapshotStale and so on. */
export function scheduleReasons(words: ScheduleWords) {
  const Noun = `${words.noun.charAt(0).toUpperCase()}${words.noun.slice(1)}`;
  return {
    stale: `${Noun}Stale`,
    failed: `${Noun}Failed`,
    running: `${Noun}Running`,
    lastSucceeded: `Last${Noun}Succeeded`,
    lastFailed: `Last${Noun}Failed`,
    none: `No${Noun}Yet`,
    created: `${Noun}Created`,
    deleted: `${Noun}Deleted`,
  };
}

/** What the schedule's conditions are computed from. */
export interface ScheduleConditionsInput {
  words: ScheduleWords;
  settings: ScheduleSettings;
  generation?: number | undefined;
  createdAt: Date;
  /** The conditions now on the schedule. */
  conditions?: Condition[] | undefined;
  /** The status about to be written (its last schedule, missed and success times). */
  status: ScheduleStatusBase;
  /** The name of the newest successful one, as that status says it. */
  lastSuccessful?: string | undefined;
  plan: SchedulePlan;
  backups: readonly OwnedBackup[];
  active: string | undefined;
  now: Date;
}

/** Available, Progressing and Degraded of the schedule. */
export function scheduleConditions(input: ScheduleConditionsInput): Condition[] {
  const { words, status, plan, backups, active, now } = input;
  const reasons = scheduleReasons(words);
  const gen = input.generation === undefined ? {} : { observedGeneration: input.generation };
  const finished = backups
    .filter((b) => b.phase === "Succeeded" || b.phase === "Failed")
    .sort((a, b) => b.scheduledTime.getTime() - a.scheduledTime.getTime())[0];
  const d = plan.decision;
  // The last time handled was skipped: Degraded until a later one is created.
  const missed =
    status.lastMissedTime !== undefined &&
    Date.parse(status.lastMissedTime) > Date.parse(status.lastScheduleTime ?? "1970-01-01T00:00:00Z")
      ? status.lastMissedTime
      : undefined;
  const stale = staleBackup(
    input.settings,
    input.createdAt,
    status.lastSuccessfulTime === undefined ? undefined : new Date(status.lastSuccessfulTime),
    now,
  );
  const noun = words.noun;
  const degraded =
    d.type === "Invalid"
      ? { status: "True" as const, reason: "InvalidSchedule", message: d.message }
      : stale !== undefined
        ? {
            status: "True" as const,
            reason: reasons.stale,
            message: `${
              input.lastSuccessful === undefined
                ? `no ${noun} has succeeded since the schedule was created`
                : `the newest successful ${noun}, ${input.lastSuccessful}, completed`
            } ${humanDuration(stale.ageMs)} ago, more than twice the schedule's interval (${humanDuration(stale.intervalMs)})${
              finished?.phase === "Failed"
                ? `; the last ${noun}, ${finished.name}, failed: see its status`
                : ""
            }`,
          }
        : missed !== undefined
          ? {
              status: "True" as const,
              reason: "MissedSchedule",
              message: `the ${noun} for ${missed} was not started within spec.startingDeadlineSeconds (until the next one is created)`,
            }
          : finished?.phase === "Failed"
            ? {
                status: "True" as const,
                reason: reasons.failed,
                message: `the last ${noun}, ${finished.name}, failed: see its status`,
              }
            : { status: "False" as const, reason: "AsExpected", message: "" };
  const available =
    d.type === "Invalid"
      ? { status: "False" as const, reason: "InvalidSchedule", message: d.message }
      : finished?.phase === "Succeeded"
        ? {
            status: "True" as const,
            reason: reasons.lastSucceeded,
            message: `the last ${noun}, ${finished.name}, succeeded`,
          }
        : {
            status: "False" as const,
            reason: finished === undefined ? reasons.none : reasons.lastFailed,
            message: "",
          };
  const progressing =
    active === undefined
      ? { status: "False" as const, reason: d.type === "Suspended" ? "Suspended" : "Waiting", message: "" }
      : {
          status: "True" as const,
          reason: reasons.running,
          message: `${words.kind} ${active} is running`,
        };
  let conditions: Condition[] | undefined = input.conditions;
  conditions = setCondition(conditions, { type: "Available", ...available, ...gen }, now);
  conditions = setCondition(conditions, { type: "Progressing", ...progressing, ...gen }, now);
  conditions = setCondition(conditions, { type: "Degraded", ...degraded, ...gen }, now);
  return conditions;
}
