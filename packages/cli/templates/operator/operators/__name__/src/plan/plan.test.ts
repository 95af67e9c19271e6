// planNext as a table: each row an observation and the step it must give.
import type { ConfigMapObject } from "@capstan/core";
import { asApplied } from "@capstan/testing";
import { describe, expect, it } from "vitest";
import { sample } from "../api/sample.ts";
import { desiredConfigMap } from "../desired/config-map.ts";
import { type Observed, planNext } from "./plan.ts";

const desired = desiredConfigMap(sample);
/** The ConfigMap as the API server holds it after an apply of `desired`: stamped with the applied hash. */
const applied: ConfigMapObject = asApplied(desired);
const liveWith = (data: Record<string, string>): ConfigMapObject => ({ ...applied, data });

const table: { name: string; observed: Partial<Observed>; step: string }[] = [
  { name: "nothing yet", observed: { live: undefined }, step: "ApplyConfigMap ConfigMapMissing" },
  { name: "in step", observed: { live: applied }, step: "InSync" },
  {
    name: "someone edited a value",
    observed: { live: liveWith({ greeting: "x", target: "world" }) },
    step: "ApplyConfigMap ConfigMapDrifted",
  },
  { name: "paused wins over drift", observed: { paused: true, live: undefined }, step: "Paused" },
  {
    name: "a foreign ConfigMap of that name",
    observed: { foreign: true, live: applied },
    step: "Degraded ConfigMapNotOwned",
  },
];

describe("planNext", () => {
  it.each(table)("$name -> $step", ({ observed, step }) => {
    const s = planNext({ paused: false, desired, live: undefined, foreign: false, ...observed });
    expect([s.type, "reason" in s ? s.reason : undefined].filter(Boolean).join(" ")).toBe(step);
  });
});
