// Tests of stepConditions: each row of its table, and observedGeneration on both conditions.
import { describe, expect, it } from "vitest";
import { type PlannedStep, stepConditions } from "./step-conditions.ts";

type Row = [string, PlannedStep, [string, string, string], [string, string, string]];

describe("stepConditions", () => {
  it.each<Row>([
    [
      "in sync",
      { type: "InSync", message: "3 members" },
      ["False", "InSync", "3 members"],
      ["False", "AsExpected", ""],
    ],
    [
      "refused",
      { type: "Degraded", reason: "StorageShrink", message: "spec.storage cannot shrink" },
      ["False", "StorageShrink", "spec.storage cannot shrink"],
      ["True", "StorageShrink", "spec.storage cannot shrink"],
    ],
    [
      "paused",
      { type: "Wait", reason: "Paused", message: "spec.paused is set" },
      ["False", "Paused", "spec.paused is set"],
      ["False", "AsExpected", ""],
    ],
    [
      "waiting",
      { type: "Wait", reason: "PodStarting", message: "m-1 is starting" },
      ["True", "PodStarting", "m-1 is starting"],
      ["False", "AsExpected", ""],
    ],
    [
      "acting",
      { type: "AddLearner", reason: "ScaleUp", message: "adding m-3" },
      ["True", "AddLearner", "adding m-3"],
      ["False", "AsExpected", ""],
    ],
  ])("%s", (_, step, [ps, pr, pm], [ds, dr, dm]) => {
    const { progressing, degraded } = stepConditions(step, 7);
    expect(progressing).toEqual({
      type: "Progressing",
      status: ps,
      reason: pr,
      message: pm,
      observedGeneration: 7,
    });
    expect(degraded).toEqual({
      type: "Degraded",
      status: ds,
      reason: dr,
      message: dm,
      observedGeneration: 7,
    });
  });
});
