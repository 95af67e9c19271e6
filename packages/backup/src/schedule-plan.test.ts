// Table tests of the backup schedule planner: due or not, concurrency Forbid, missed times and starting
// deadlines, clock skew, DST, a changed schedule, an operator down for a day, and retention.
import { describe, expect, it } from "vitest";
import {
  MAX_COUNTED_MISSED,
  type OwnedBackup,
  parseMaxAge,
  planSchedule,
  retentionDeletes,
  type ScheduleInput,
  type SchedulePlan,
  type ScheduleSettings,
  scheduledBackupName,
  staleBackup,
} from "./schedule-plan.ts";

const T = (iso: string) => new Date(iso);
const CREATED = T("2026-11-01T00:00:00Z");

const spec = (o: Partial<ScheduleSettings> = {}): ScheduleSettings => ({
  schedule: "0 * * * *",
  ...o,
});

const input = (now: string, o: Partial<ScheduleInput> = {}): ScheduleInput => ({
  name: "nightly",
  spec: spec(),
  createdAt: CREATED,
  backups: [],
  now: T(now),
  ...o,
});

const bk = (
  name: string,
  phase: OwnedBackup["phase"],
  scheduled: string,
  completed?: string,
): OwnedBackup => ({
  name,
  ...(phase === undefined ? {} : { phase }),
  scheduledTime: T(scheduled),
  ...(completed === undefined ? {} : { completionTime: T(completed) }),
});

const nameAt = (iso: string) => scheduledBackupName("nightly", T(iso));

type Case = [string, ScheduleInput, Partial<SchedulePlan>];

const cases: Case[] = [
  [
    "first hour after creation: due at 01:00",
    input("2026-11-01T01:00:20Z"),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-01T01:00:00Z"),
        scheduledTime: T("2026-11-01T01:00:00Z"),
        missed: 0,
      },
      next: T("2026-11-01T02:00:00Z"),
    },
  ],
  [
    "exactly at the scheduled second: due",
    input("2026-11-01T01:00:00Z"),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-01T01:00:00Z"),
        scheduledTime: T("2026-11-01T01:00:00Z"),
        missed: 0,
      },
    },
  ],
  [
    "times before the schedule was created are never due",
    input("2026-11-01T00:30:00Z", { createdAt: T("2026-11-01T00:10:00Z") }),
    { decision: { type: "NotDue" }, next: T("2026-11-01T01:00:00Z") },
  ],
  [
    "already created for the latest time: not due, next hour",
    input("2026-11-01T01:40:00Z", { lastScheduleTime: T("2026-11-01T01:00:00Z") }),
    { decision: { type: "NotDue" }, next: T("2026-11-01T02:00:00Z") },
  ],
  [
    "status write lost after create: the existing backup is recorded, not created twice",
    input("2026-11-01T01:00:30Z", {
      lastScheduleTime: T("2026-11-01T00:00:00Z"),
      backups: [bk(nameAt("2026-11-01T01:00:00Z"), "Running", "2026-11-01T01:00:00Z")],
    }),
    {
      decision: {
        type: "AlreadyCreated",
        name: nameAt("2026-11-01T01:00:00Z"),
        scheduledTime: T("2026-11-01T01:00:00Z"),
      },
      active: nameAt("2026-11-01T01:00:00Z"),
    },
  ],
  [
    "a backup still running when the next is due: Forbid, wait for it",
    input("2026-11-01T02:00:05Z", {
      lastScheduleTime: T("2026-11-01T01:00:00Z"),
      backups: [bk(nameAt("2026-11-01T01:00:00Z"), "Running", "2026-11-01T01:00:00Z")],
    }),
    {
      decision: {
        type: "Running",
        active: nameAt("2026-11-01T01:00:00Z"),
        scheduledTime: T("2026-11-01T02:00:00Z"),
      },
      next: T("2026-11-01T03:00:00Z"),
    },
  ],
  [
    "a backup whose status was never written counts as running",
    input("2026-11-01T02:00:05Z", {
      lastScheduleTime: T("2026-11-01T01:00:00Z"),
      backups: [bk(nameAt("2026-11-01T01:00:00Z"), undefined, "2026-11-01T01:00:00Z")],
    }),
    {
      decision: {
        type: "Running",
        active: nameAt("2026-11-01T01:00:00Z"),
        scheduledTime: T("2026-11-01T02:00:00Z"),
      },
    },
  ],
  [
    "the running one ended within the deadline: the late backup is created",
    input("2026-11-01T02:03:00Z", {
      spec: spec({ startingDeadlineSeconds: 600 }),
      lastScheduleTime: T("2026-11-01T01:00:00Z"),
      backups: [
        bk(nameAt("2026-11-01T01:00:00Z"), "Succeeded", "2026-11-01T01:00:00Z", "2026-11-01T02:02:00Z"),
      ],
    }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-01T02:00:00Z"),
        scheduledTime: T("2026-11-01T02:00:00Z"),
        missed: 0,
      },
    },
  ],
  [
    "past the starting deadline (even while one runs): missed, reported once",
    input("2026-11-01T02:20:00Z", {
      spec: spec({ startingDeadlineSeconds: 600 }),
      lastScheduleTime: T("2026-11-01T01:00:00Z"),
      backups: [bk(nameAt("2026-11-01T01:00:00Z"), "Running", "2026-11-01T01:00:00Z")],
    }),
    {
      decision: { type: "Missed", scheduledTime: T("2026-11-01T02:00:00Z"), missed: 0 },
      next: T("2026-11-01T03:00:00Z"),
    },
  ],
  [
    "a missed time already reported is not reported again",
    input("2026-11-01T02:25:00Z", {
      spec: spec({ startingDeadlineSeconds: 600 }),
      lastScheduleTime: T("2026-11-01T01:00:00Z"),
      lastMissedTime: T("2026-11-01T02:00:00Z"),
    }),
    { decision: { type: "NotDue" }, next: T("2026-11-01T03:00:00Z") },
  ],
  [
    "operator down for a day, every minute: ONE catch-up for the latest time, the 1439 missed counted up to the cap",
    input("2026-11-02T10:00:30Z", {
      spec: spec({ schedule: "* * * * *" }),
      lastScheduleTime: T("2026-11-01T10:00:00Z"),
    }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-02T10:00:00Z"),
        scheduledTime: T("2026-11-02T10:00:00Z"),
        missed: MAX_COUNTED_MISSED,
      },
      next: T("2026-11-02T10:01:00Z"),
    },
  ],
  [
    "operator down for three hours, hourly: one catch-up, two missed",
    input("2026-11-01T04:10:00Z", { lastScheduleTime: T("2026-11-01T01:00:00Z") }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-01T04:00:00Z"),
        scheduledTime: T("2026-11-01T04:00:00Z"),
        missed: 2,
      },
    },
  ],
  [
    "operator down for a month, every minute: the count stops at its cap",
    input("2026-12-01T10:00:30Z", {
      spec: spec({ schedule: "* * * * *" }),
      lastScheduleTime: T("2026-11-01T10:00:00Z"),
    }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-12-01T10:00:00Z"),
        scheduledTime: T("2026-12-01T10:00:00Z"),
        missed: MAX_COUNTED_MISSED,
      },
    },
  ],
  [
    "operator down for a day with a deadline: the latest time is missed, none created",
    input("2026-11-02T10:30:00Z", {
      spec: spec({ startingDeadlineSeconds: 300 }),
      lastScheduleTime: T("2026-11-01T10:00:00Z"),
    }),
    { decision: { type: "Missed", scheduledTime: T("2026-11-02T10:00:00Z"), missed: 23 } },
  ],
  [
    "clock went backwards (last schedule time ahead of now): nothing, next after the recorded time",
    input("2026-11-01T02:59:00Z", { lastScheduleTime: T("2026-11-01T03:00:00Z") }),
    { decision: { type: "NotDue" }, next: T("2026-11-01T04:00:00Z") },
  ],
  [
    "schedule changed from 03:00 daily to every 6 hours: the latest new time since the last backup runs once",
    input("2026-11-02T10:00:00Z", {
      spec: spec({ schedule: "0 */6 * * *" }),
      lastScheduleTime: T("2026-11-02T03:00:00Z"),
    }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-02T06:00:00Z"),
        scheduledTime: T("2026-11-02T06:00:00Z"),
        missed: 0,
      },
    },
  ],
  [
    "schedule changed to a time not yet reached since the last backup: not due",
    input("2026-11-02T10:00:00Z", {
      spec: spec({ schedule: "0 12 * * *" }),
      lastScheduleTime: T("2026-11-02T03:00:00Z"),
    }),
    { decision: { type: "NotDue" }, next: T("2026-11-02T12:00:00Z") },
  ],
  [
    "time zone: 03:00 Europe/Berlin is 02:00 UTC in winter",
    input("2026-11-02T02:00:10Z", {
      createdAt: T("2026-11-01T03:00:00Z"),
      spec: spec({ schedule: "0 3 * * *", timeZone: "Europe/Berlin" }),
    }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-02T02:00:00Z"),
        scheduledTime: T("2026-11-02T02:00:00Z"),
        missed: 0,
      },
    },
  ],
  [
    "DST spring forward: 02:30 Berlin does not exist on 29 March, the backup runs at 03:00 local (01:00 UTC), once",
    input("2026-03-29T01:00:30Z", {
      createdAt: T("2026-03-01T00:00:00Z"),
      spec: spec({ schedule: "30 2 * * *", timeZone: "Europe/Berlin" }),
      lastScheduleTime: T("2026-03-28T01:30:00Z"),
    }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-03-29T01:00:00Z"),
        scheduledTime: T("2026-03-29T01:00:00Z"),
        missed: 0,
      },
      next: T("2026-03-30T00:30:00Z"),
    },
  ],
  [
    "DST fall back: 02:30 Berlin happens twice on 25 October, the backup runs at the first only",
    input("2026-10-25T01:30:30Z", {
      createdAt: T("2026-10-01T00:00:00Z"),
      spec: spec({ schedule: "30 2 * * *", timeZone: "Europe/Berlin" }),
      lastScheduleTime: T("2026-10-25T00:30:00Z"),
    }),
    { decision: { type: "NotDue" }, next: T("2026-10-26T01:30:00Z") },
  ],
  [
    "suspended: nothing is created, retention still applies",
    input("2026-11-01T05:00:00Z", {
      spec: spec({ suspend: true, retention: { keepLast: 1 } }),
      backups: [
        bk("nightly-old", "Succeeded", "2026-11-01T01:00:00Z", "2026-11-01T01:01:00Z"),
        bk("nightly-new", "Succeeded", "2026-11-01T02:00:00Z", "2026-11-01T02:01:00Z"),
      ],
    }),
    {
      decision: { type: "Suspended" },
      deletes: [{ name: "nightly-old", reason: "beyond retention.keepLast 1" }],
    },
  ],
  [
    "an invalid cron expression names spec.schedule",
    input("2026-11-01T05:00:00Z", { spec: spec({ schedule: "61 * * * *" }) }),
    { decision: expect.objectContaining({ type: "Invalid", field: "spec.schedule" }) },
  ],
  [
    "six fields (seconds) are refused: backups are scheduled to the minute",
    input("2026-11-01T05:00:00Z", { spec: spec({ schedule: "0 0 * * * *" }) }),
    { decision: expect.objectContaining({ type: "Invalid", field: "spec.schedule" }) },
  ],
  [
    "a schedule that matches no date names spec.schedule",
    input("2026-11-01T05:00:00Z", { spec: spec({ schedule: "0 0 31 2 *" }) }),
    {
      decision: expect.objectContaining({
        type: "Invalid",
        field: "spec.schedule",
        message: expect.stringMatching(/matches no date/),
      }),
    },
  ],
  [
    "an unknown time zone names spec.timeZone",
    input("2026-11-01T05:00:00Z", { spec: spec({ timeZone: "Mars/Olympus" }) }),
    { decision: expect.objectContaining({ type: "Invalid", field: "spec.timeZone" }) },
  ],
  [
    "a malformed maxAge (the schema was bypassed) names spec.retention.maxAge and deletes nothing",
    input("2026-11-01T05:00:00Z", {
      spec: spec({ retention: { maxAge: "1w" } }),
      backups: [bk("a", "Failed", "2026-11-01T01:00:00Z"), bk("b", "Failed", "2026-11-01T02:00:00Z")],
    }),
    { decision: expect.objectContaining({ type: "Invalid", field: "spec.retention.maxAge" }), deletes: [] },
  ],
  [
    "@daily is accepted",
    input("2026-11-02T00:00:10Z", { spec: spec({ schedule: "@daily" }) }),
    {
      decision: {
        type: "Create",
        name: nameAt("2026-11-02T00:00:00Z"),
        scheduledTime: T("2026-11-02T00:00:00Z"),
        missed: 0,
      },
    },
  ],
];

describe("planSchedule", () => {
  it.each(cases)("%s", (_name, given, expected) => {
    expect(planSchedule(given)).toMatchObject(expected);
  });

  it("names backups deterministically within 63 characters", () => {
    const name = scheduledBackupName("s".repeat(52), T("2026-11-01T01:00:00Z"));
    expect(name).toBe(`${"s".repeat(52)}-29891580`);
    expect(name.length).toBeLessThanOrEqual(63);
  });
});

type RetentionCase = [string, Partial<ScheduleSettings>, OwnedBackup[], string, string[]];

const hourly = (n: number, phase: OwnedBackup["phase"] = "Succeeded"): OwnedBackup =>
  bk(
    `b${n}`,
    phase,
    `2026-11-01T${String(n).padStart(2, "0")}:00:00Z`,
    phase === "Succeeded" || phase === "Failed"
      ? `2026-11-01T${String(n).padStart(2, "0")}:05:00Z`
      : undefined,
  );

const retentionCases: RetentionCase[] = [
  [
    "default keepLast 7 of 9",
    {},
    [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => hourly(n)),
    "2026-11-01T12:00:00Z",
    ["b2", "b1"],
  ],
  [
    "keepLast 2",
    { retention: { keepLast: 2 } },
    [1, 2, 3].map((n) => hourly(n)),
    "2026-11-01T12:00:00Z",
    ["b1"],
  ],
  [
    "maxAge 3h: older successful ones go",
    { retention: { maxAge: "3h" } },
    [1, 8, 9, 10].map((n) => hourly(n)),
    "2026-11-01T11:10:00Z",
    ["b8", "b1"],
  ],
  [
    "maxAge never deletes the newest successful, however old",
    { retention: { maxAge: "1h" } },
    [hourly(1), hourly(2), hourly(9, "Failed")],
    "2026-11-01T23:00:00Z",
    ["b1"],
  ],
  [
    "keepLast and maxAge: a backup goes when either says so",
    { retention: { keepLast: 3, maxAge: "2h" } },
    [1, 2, 3, 9, 10].map((n) => hourly(n)),
    "2026-11-01T11:10:00Z",
    ["b9", "b3", "b2", "b1"],
  ],
  [
    "running and pending backups are never deleted, nor counted",
    { retention: { keepLast: 1 } },
    [
      hourly(1),
      hourly(2),
      hourly(3, "Running"),
      hourly(4, "Pending"),
      bk("fresh", undefined, "2026-11-01T05:00:00Z"),
    ],
    "2026-11-01T12:00:00Z",
    ["b1"],
  ],
  [
    "failed backups beyond the history limit go, oldest first",
    { failedHistoryLimit: 1 },
    [hourly(1, "Failed"), hourly(2, "Failed"), hourly(3, "Failed"), hourly(4)],
    "2026-11-01T12:00:00Z",
    ["b2", "b1"],
  ],
  [
    "a history limit of 0 deletes every failed backup",
    { failedHistoryLimit: 0 },
    [hourly(1, "Failed")],
    "2026-11-01T12:00:00Z",
    ["b1"],
  ],
  ["nothing to delete", {}, [hourly(1)], "2026-11-01T12:00:00Z", []],
];

describe("retentionDeletes", () => {
  it.each(retentionCases)("%s", (_name, o, backups, now, expected) => {
    expect(retentionDeletes(spec(o), backups, T(now)).map((d) => d.name)).toEqual(expected);
  });

  it("says why each backup goes", () => {
    expect(
      retentionDeletes(
        spec({ retention: { keepLast: 1, maxAge: "1h" } }),
        [hourly(1), hourly(2)],
        T("2026-11-01T12:00:00Z"),
      ),
    ).toEqual([{ name: "b1", reason: "beyond retention.keepLast 1" }]);
    expect(
      retentionDeletes(
        spec({ retention: { maxAge: "1h" } }),
        [hourly(1), hourly(2)],
        T("2026-11-01T12:00:00Z"),
      ),
    ).toEqual([{ name: "b1", reason: "older than retention.maxAge 1h" }]);
  });
});

describe("retentionDeletes and restores", () => {
  it("keeps a backup a restore uses or may use, beyond keepLast or maxAge, and does not count it", () => {
    const backups = [hourly(1), hourly(2), hourly(3), hourly(4)];
    const inUse = new Map([["b1", "EtcdRestore r1 (Pending)"]]);
    expect(
      retentionDeletes(spec({ retention: { keepLast: 2 } }), backups, T("2026-11-01T12:00:00Z"), inUse),
    ).toEqual([{ name: "b2", reason: "beyond retention.keepLast 2" }]);
    expect(
      retentionDeletes(spec({ retention: { maxAge: "1h" } }), backups, T("2026-11-01T12:00:00Z"), inUse).map(
        (d) => d.name,
      ),
    ).toEqual(["b3", "b2"]);
  });

  it("planSchedule passes what is in use to retention", () => {
    const backups = [hourly(1), hourly(2), hourly(3)];
    const plan = planSchedule(
      input("2026-11-01T12:00:00Z", {
        spec: spec({ retention: { keepLast: 1 } }),
        backups,
        inUse: new Map([["b2", "EtcdCluster c's spec.bootstrap.restore (not restored yet)"]]),
      }),
    );
    expect(plan.deletes.map((d) => d.name)).toEqual(["b1"]);
  });
});

describe("staleBackup", () => {
  const daily = { schedule: "0 3 * * *" };
  it("is stale once the newest success is older than twice the interval, not before", () => {
    const success = T("2026-11-10T03:05:00Z");
    expect(staleBackup(daily, CREATED, success, T("2026-11-12T03:04:00Z"))).toBeUndefined();
    expect(staleBackup(daily, CREATED, success, T("2026-11-12T03:06:00Z"))).toEqual({
      ageMs: 2 * 86_400_000 + 60_000,
      intervalMs: 86_400_000,
    });
  });
  it("with no success, counts from the schedule's creation; a new or suspended schedule is never stale", () => {
    expect(staleBackup(daily, CREATED, undefined, T("2026-11-04T00:00:00Z"))).toMatchObject({
      intervalMs: 86_400_000,
    });
    expect(
      staleBackup(daily, T("2026-11-03T00:00:00Z"), undefined, T("2026-11-03T12:00:00Z")),
    ).toBeUndefined();
    expect(
      staleBackup({ ...daily, suspend: true }, CREATED, undefined, T("2026-11-20T00:00:00Z")),
    ).toBeUndefined();
    expect(
      staleBackup({ schedule: "not cron" }, CREATED, undefined, T("2026-11-20T00:00:00Z")),
    ).toBeUndefined();
  });
});

describe("parseMaxAge", () => {
  it.each([
    ["7d", 7 * 86_400_000],
    ["36h", 36 * 3_600_000],
    ["1d12h", 36 * 3_600_000],
    ["90m", 5_400_000],
    ["30s", 30_000],
  ])("%s", (text, ms) => expect(parseMaxAge(text)).toBe(ms));
  it.each(["", "7", "1w", "1.5h", "h"])("refuses %j", (text) => expect(parseMaxAge(text)).toBeUndefined());
});
