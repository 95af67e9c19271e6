import { describe, expect, it } from "vitest";
import {
  type Condition,
  conditionsEqual,
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
} from "./conditions.ts";

const T0 = new Date("2026-11-29T22:00:00.456Z");
const T1 = new Date("2026-11-29T23:30:00Z");

const available = {
  type: "Available",
  status: "True",
  reason: "AllMembersReady",
  message: "3/3 members ready",
  observedGeneration: 1,
} as const;

describe("setCondition", () => {
  it("appends a new condition stamped with now, in RFC 3339 seconds precision", () => {
    const before: Condition[] = [
      {
        type: "Progressing",
        status: "False",
        reason: "Idle",
        message: "",
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ];
    const after = setCondition(before, available, T0);
    expect(after).toEqual([before[0], { ...available, lastTransitionTime: "2026-11-29T22:00:00Z" }]);
    expect(before).toHaveLength(1); // input untouched: a new array
    expect(after).not.toBe(before);
  });

  it("moves lastTransitionTime when the status changes, and keeps the position", () => {
    const list = setCondition([], available, T0);
    const withOther = setCondition(list, { ...available, type: "Degraded", status: "False" }, T0);
    const after = setCondition(withOther, { ...available, status: "False", reason: "QuorumLost" }, T1);
    expect(after.map((c) => c.type)).toEqual(["Available", "Degraded"]);
    expect(findCondition(after, "Available")).toMatchObject({
      status: "False",
      reason: "QuorumLost",
      lastTransitionTime: "2026-11-29T23:30:00Z",
    });
  });

  it("keeps lastTransitionTime when only reason, message or observedGeneration change", () => {
    const list = setCondition(undefined, available, T0);
    const after = setCondition(
      list,
      { ...available, reason: "Scaling", message: "4/4 members ready", observedGeneration: 2 },
      T1,
    );
    expect(after).toEqual([
      {
        ...available,
        reason: "Scaling",
        message: "4/4 members ready",
        observedGeneration: 2,
        lastTransitionTime: "2026-11-29T22:00:00Z",
      },
    ]);
  });

  it("uses a given lastTransitionTime on a transition, but ignores it when the status stays", () => {
    const list = setCondition(undefined, { ...available, lastTransitionTime: "2025-05-05T05:05:05Z" }, T1);
    expect(list[0]?.lastTransitionTime).toBe("2025-05-05T05:05:05Z");
    const same = setCondition(list, { ...available, lastTransitionTime: "2027-01-01T00:00:00Z" }, T1);
    expect(same[0]?.lastTransitionTime).toBe("2025-05-05T05:05:05Z");
  });

  it("drops observedGeneration when the new condition has none", () => {
    const { observedGeneration: _, ...noGeneration } = available;
    const after = setCondition(setCondition(undefined, available, T0), noGeneration, T0);
    expect(after[0]).not.toHaveProperty("observedGeneration");
  });

  it.each([
    ["", "empty"],
    ["quorum lost", "space"],
    ["1Bad", "leading digit"],
    ["Bad-Reason", "dash"],
    ["Trailing:", "trailing colon"],
  ])("rejects reason %j (%s) with a clear error", (reason) => {
    expect(() => setCondition(undefined, { ...available, reason }, T0)).toThrow(
      /reason .* is invalid.*CamelCase/,
    );
  });

  it("accepts reasons with digits, underscores, commas and colons inside", () => {
    expect(() => setCondition(undefined, { ...available, reason: "Member_2,Lost:Now" }, T0)).not.toThrow();
  });

  it("rejects a message longer than 32768 characters, an invalid status and an invalid type", () => {
    expect(() => setCondition(undefined, { ...available, message: "x".repeat(32769) }, T0)).toThrow(/32768/);
    expect(() => setCondition(undefined, { ...available, message: "x".repeat(32768) }, T0)).not.toThrow();
    expect(() => setCondition(undefined, { ...available, status: "Yes" as "True" }, T0)).toThrow(
      /status "Yes"/,
    );
    expect(() => setCondition(undefined, { ...available, type: "not a type" }, T0)).toThrow(/type/);
  });
});

describe("condition queries", () => {
  const list = setCondition(
    setCondition(undefined, available, T0),
    { ...available, type: "Degraded", status: "False" },
    T0,
  );

  it("finds, tests and removes by type", () => {
    expect(findCondition(list, "Degraded")?.status).toBe("False");
    expect(findCondition(list, "Missing")).toBeUndefined();
    expect(findCondition(undefined, "Available")).toBeUndefined();
    expect(isConditionTrue(list, "Available")).toBe(true);
    expect(isConditionTrue(list, "Degraded")).toBe(false);
    expect(isConditionTrue(list, "Missing")).toBe(false);
    const removed = removeCondition(list, "Available");
    expect(removed.map((c) => c.type)).toEqual(["Degraded"]);
    expect(list).toHaveLength(2);
  });

  it("conditionsEqual ignores order but not content", () => {
    const reversed = [...list].reverse();
    expect(conditionsEqual(list, reversed)).toBe(true);
    expect(conditionsEqual(undefined, [])).toBe(true);
    expect(conditionsEqual(list, list.slice(1))).toBe(false);
    for (const change of [
      { status: "False" as const },
      { reason: "Other" },
      { message: "other" },
      { lastTransitionTime: "2030-01-01T00:00:00Z" },
      { observedGeneration: 7 },
    ]) {
      const changed = list.map((c) => (c.type === "Available" ? { ...c, ...change } : c));
      expect(conditionsEqual(list, changed), JSON.stringify(change)).toBe(false);
    }
  });

  it("a repeated identical setCondition is a no-op by conditionsEqual", () => {
    expect(conditionsEqual(setCondition(list, available, T1), list)).toBe(true);
  });
});
