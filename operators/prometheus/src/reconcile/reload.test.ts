// Table tests of judgeReloads: which runtimeinfo answers count as reloads, and which pods are failing.
import { describe, expect, it } from "vitest";
import { judgeReloads, type PodRuntime } from "./reload.ts";

const T1 = "2026-12-01T10:00:00Z";
const T2 = "2026-12-01T10:01:00Z";
const pod = (uid: string, info?: [boolean, string]): PodRuntime => ({
  uid,
  name: `prometheus-main-${uid}`,
  ...(info === undefined ? {} : { info: { reloadConfigSuccess: info[0], lastConfigTime: info[1] } }),
});

describe("judgeReloads", () => {
  it.each<
    [
      string,
      Record<string, string>,
      PodRuntime[],
      { success: number; failure: number; failing: string[] },
      Record<string, string>,
    ]
  >([
    [
      "a pod seen for the first time counts nothing",
      {},
      [pod("0", [true, T1])],
      { success: 0, failure: 0, failing: [] },
      { "0": T1 },
    ],
    [
      "same lastConfigTime: no reload",
      { "0": T1 },
      [pod("0", [true, T1])],
      { success: 0, failure: 0, failing: [] },
      { "0": T1 },
    ],
    [
      "a newer successful load",
      { "0": T1 },
      [pod("0", [true, T2])],
      { success: 1, failure: 0, failing: [] },
      { "0": T2 },
    ],
    [
      "a newer failed load",
      { "0": T1 },
      [pod("0", [false, T2])],
      { success: 0, failure: 1, failing: ["prometheus-main-0"] },
      { "0": T2 },
    ],
    [
      "a failure seen again is not counted twice, but still failing",
      { "0": T2 },
      [pod("0", [false, T2])],
      { success: 0, failure: 0, failing: ["prometheus-main-0"] },
      { "0": T2 },
    ],
    [
      "a pod that does not answer keeps its value",
      { "0": T1 },
      [pod("0")],
      { success: 0, failure: 0, failing: [] },
      { "0": T1 },
    ],
    [
      "a pod that is gone is forgotten",
      { "0": T1, "1": T1 },
      [pod("1", [true, T2])],
      { success: 1, failure: 0, failing: [] },
      { "1": T2 },
    ],
    [
      "two pods, both reloaded",
      { a: T1, b: T1 },
      [pod("b", [false, T2]), pod("a", [true, T2])],
      { success: 1, failure: 1, failing: ["prometheus-main-b"] },
      { a: T2, b: T2 },
    ],
  ])("%s", (_name, seen, pods, want, nextSeen) => {
    const v = judgeReloads(new Map(Object.entries(seen)), pods);
    expect({ success: v.success, failure: v.failure, failing: v.failing }).toEqual(want);
    expect(Object.fromEntries(v.seen)).toEqual(nextSeen);
  });
});
