// Table tests of judgeReloads (which runtimeinfo answers count as reloads, and which pods are failing), of
// judgeGenerations (when a candidate generation is accepted by every pod, which pods refused it) and of the reloader's
// state file as the operator reads it.
import { describe, expect, it } from "vitest";
import {
  judgeGenerations,
  judgeReloads,
  type PodGeneration,
  type PodRuntime,
  parseReloaderState,
  reloadErrorFromLog,
} from "./reload.ts";

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

const G1 = "1111111111111111";
const G2 = "2222222222222222";
const gpod = (name: string, state?: [string, string?, string?], currentImage = true): PodGeneration => ({
  name,
  currentImage,
  ...(state === undefined
    ? {}
    : { state: { accepted: state[0], refused: state[1] ?? "", message: state[2] ?? "" } }),
});

describe("judgeGenerations", () => {
  it.each<[string, string, PodGeneration[], boolean, string[]]>([
    ["every pod on the candidate", G2, [gpod("a", [G2]), gpod("b", [G2])], true, []],
    ["two pods at different generations", G2, [gpod("a", [G2]), gpod("b", [G1])], false, []],
    ["a pod that did not answer", G2, [gpod("a", [G2]), gpod("b")], false, []],
    ["a pod on another image (mid-upgrade)", G2, [gpod("a", [G2]), gpod("b", [G2], false)], false, []],
    ["no pod at all", G2, [], false, []],
    ["no candidate known", "", [gpod("a", [""])], false, []],
    ["a pod refused the candidate", G2, [gpod("b", [G1, G2, "bad"]), gpod("a", [G2])], false, ["b"]],
    ["a refusal of an older candidate is history", G2, [gpod("a", [G1, G1, "old"])], false, []],
  ])("%s", (_, candidate, pods, allAccepted, refused) => {
    const v = judgeGenerations(candidate, pods);
    expect(v.allAccepted).toBe(allAccepted);
    expect(v.refused.map((r) => r.pod)).toEqual(refused);
  });

  it("a refusal carries what the pod still runs and Prometheus's message", () => {
    expect(judgeGenerations(G2, [gpod("a", [G1, G2, "failed to reload config: x"])]).refused).toEqual([
      { pod: "a", accepted: G1, message: "failed to reload config: x" },
    ]);
  });
});

describe("parseReloaderState", () => {
  it("reads the three fields; a message may hold '='; anything else is no state", () => {
    expect(parseReloaderState(`accepted=${G1}\nrefused=${G2}\nmessage=a=b: c\n`)).toEqual({
      accepted: G1,
      refused: G2,
      message: "a=b: c",
    });
    expect(parseReloaderState("accepted=\nrefused=\nmessage=\n")).toEqual({
      accepted: "",
      refused: "",
      message: "",
    });
    expect(parseReloaderState("<html>404 page not found</html>")).toBeUndefined();
  });
});

describe("reloadErrorFromLog", () => {
  // Prometheus 3.16's own log of a refused reload (from last-good.real.test.ts), between two good loads.
  const log = [
    'time=2026-12-07T00:04:31.415Z level=INFO source=main.go:1744 msg="Loading configuration file" filename=/etc/prometheus/config/prometheus.yml',
    'time=2026-12-07T00:04:31.419Z level=INFO source=main.go:1786 msg="Completed loading of configuration file" rules=3.2ms filename=/etc/prometheus/config/prometheus.yml',
    'time=2026-12-07T00:04:31.863Z level=INFO source=main.go:1744 msg="Loading configuration file" filename=/etc/prometheus/config/prometheus.yml',
    'time=2026-12-07T00:04:31.864Z level=ERROR source=manager.go:286 msg="loading groups failed" component="rule manager" err="/etc/prometheus/rules/monitoring_a.yaml: 5:15: group \\"a\\", rule 1, \\"bad:one\\": could not parse expression: 1:6: parse error: expected type range vector in call to function \\"rate\\", got instant vector"',
    'time=2026-12-07T00:04:31.864Z level=ERROR source=main.go:1772 msg="Failed to apply configuration" err="error loading rules, previous rule set restored"',
    'time=2026-12-07T00:04:31.865Z level=ERROR source=main.go:1442 msg="Error reloading config" err="one or more errors occurred while applying the new configuration (--config.file=\\"/etc/prometheus/config/prometheus.yml\\")"',
    'time=2026-12-07T00:04:40.000Z level=INFO source=scrape.go:1 msg="something later"',
  ].join("\n");

  it("the errors Prometheus logged for its last refused reload, in its words", () => {
    expect(reloadErrorFromLog(log)).toBe(
      '/etc/prometheus/rules/monitoring_a.yaml: 5:15: group "a", rule 1, "bad:one": could not parse expression: 1:6: parse error: expected type range vector in call to function "rate", got instant vector; error loading rules, previous rule set restored',
    );
  });

  it("nothing when the log holds no refused reload", () => {
    expect(reloadErrorFromLog(log.split("\n").slice(0, 2).join("\n"))).toBeUndefined();
    expect(reloadErrorFromLog("")).toBeUndefined();
  });
});
