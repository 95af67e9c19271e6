// Table tests of the planner: a broken pod never blocks its own fix. A pod built from an older spec that the
// kubelet reports not Ready is replaced with the current spec while the quorum does not need it; a pod that was
// never scheduled is removed by a scale-in.
import { describe, expect, it } from "vitest";
import type { ObservedPeer, ObservedPod } from "./plan.ts";
import { ago, IMAGE, OLD, observed, plan, pod } from "./plan-fixtures.ts";

const crashLoop = { reason: "CrashLoopBackOff", restarts: 5 };
const voters = (...ordinals: number[]): { servers: ObservedPeer[] } => ({
  servers: ordinals.map((o) => ({ nodeID: `demo-${o}`, address: `demo-${o}`, voter: true, leader: o === 0 })),
});

describe("a broken pod never blocks its own fix", () => {
  it("a crash-looping upgrade is rolled back: spec.version reverted, the crashing pod goes back first", () => {
    const pods: ObservedPod[] = [
      pod(0, "active", { image: OLD }),
      pod(1, "down", { image: IMAGE, runningImage: IMAGE, containerFailure: crashLoop }),
      pod(2, "standby", { image: OLD }),
    ];
    const step = plan(observed(pods, { raft: voters(0, 1, 2), knownVersion: "1.14.6" }), {
      version: "1.14.6",
    });
    expect(step).toMatchObject({ type: "UpgradePod", pod: "demo-1", from: IMAGE, to: OLD });
    expect(step.type === "UpgradePod" && step.message).toContain("CrashLoopBackOff");
  });

  it("a single pod crash-looping on a new release is rolled back (no active node, no downgrade refusal)", () => {
    const only = pod(0, "down", { image: IMAGE, runningImage: IMAGE, containerFailure: crashLoop });
    const step = plan(
      observed([only], { raft: { error: "no active pod" }, knownVoters: 1, knownVersion: "1.14.6" }),
      {
        replicas: 1,
        version: "1.14.6",
      },
    );
    expect(step).toMatchObject({ type: "UpgradePod", pod: "demo-0", to: OLD });
  });

  it("a bad config reverted: the crash-looping pod built from it is made again from the current spec", () => {
    const pods = [
      pod(0, "active"),
      pod(1, "standby"),
      pod(2, "down", { templateOutdated: true, containerFailure: crashLoop }),
    ];
    expect(plan(observed(pods, { raft: voters(0, 1, 2) }))).toMatchObject({
      type: "DeletePod",
      pod: "demo-2",
      deleteClaim: false,
      reason: "Restart",
    });
  });

  it("an unschedulable pod is replaced once podTemplate is fixed", () => {
    const stuck = pod(2, "down", {
      templateOutdated: true,
      unschedulableSince: ago(600),
      pendingSince: ago(600),
    });
    const step = plan(observed([pod(0, "active"), pod(1, "standby"), stuck], { raft: voters(0, 1, 2) }));
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-2", deleteClaim: false });
    expect(step.type === "DeletePod" && step.message).toContain("no node can take it");
  });

  it("before init: pod 0 crash-looping on a config since fixed is made again", () => {
    const first = pod(0, "down", { templateOutdated: true, containerFailure: crashLoop });
    expect(plan(observed([first], { keys: undefined, raft: { error: "no active pod" } }))).toMatchObject({
      type: "DeletePod",
      pod: "demo-0",
    });
  });

  it("scaling back in removes a pod that was never scheduled (and its claim)", () => {
    const never = pod(3, "down", { unschedulableSince: ago(600), pendingSince: ago(600) });
    const step = plan(observed([pod(0, "active"), pod(1, "standby"), pod(2, "standby"), never]));
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-3", deleteClaim: true, reason: "ScaleIn" });
  });
});

describe("what is not replaced", () => {
  it("a pod of the current spec that crash-loops: Degraded (replacing it would change nothing)", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "down", { containerFailure: crashLoop })];
    expect(plan(observed(pods, { raft: voters(0, 1, 2) }))).toMatchObject({
      type: "Degraded",
      reason: "PodCrashLooping",
    });
  });

  it("an outdated pod that is Ready (merely not yet a voter) waits for the rollout's turn", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "standby", { templateOutdated: true })];
    const raft = { servers: voters(0, 1, 2).servers.map((s) => ({ ...s, voter: s.nodeID !== "demo-2" })) };
    expect(plan(observed(pods, { raft }))).toMatchObject({ type: "Wait", reason: "PodNotReady" });
  });

  it("a node Vault reports unsealed is never replaced out of turn, even when its readiness lags", () => {
    const pods = [
      pod(0, "active", { image: OLD, ready: false }),
      pod(1, "standby", { image: OLD }),
      pod(2, "standby", { image: OLD }),
    ];
    expect(plan(observed(pods, { raft: voters(0, 1, 2), knownVersion: "1.14.6" }))).toMatchObject({
      type: "Wait",
      reason: "PodNotReady",
    });
  });

  it("no active node and spec.version below what every pod ran: the downgrade is refused, no pod replaced", () => {
    const only = pod(0, "down", { image: IMAGE, runningImage: IMAGE, containerFailure: crashLoop });
    const o = observed([only], { raft: { error: "no active pod" }, knownVoters: 1, knownVersion: "1.14.8" });
    expect(plan(o, { replicas: 1, version: "1.14.6" })).toMatchObject({
      type: "Degraded",
      reason: "DowngradeRefused",
    });
  });

  it("the quorum already lost (another voter down too): the broken pod serves nothing, so it is replaced", () => {
    const pods = [
      pod(0, "active"),
      pod(1, "down"),
      pod(2, "down", { templateOutdated: true, containerFailure: crashLoop }),
    ];
    expect(plan(observed(pods, { raft: voters(0, 1, 2) }))).toMatchObject({
      type: "DeletePod",
      pod: "demo-2",
      deleteClaim: false,
    });
  });

  it("the quorum already lost, nothing to replace: Degraded QuorumLost naming the missing voters", () => {
    const pods = [pod(0, "active"), pod(1, "down"), pod(2, "down")];
    expect(plan(observed(pods, { raft: voters(0, 1, 2) }))).toMatchObject({
      type: "Degraded",
      reason: "QuorumLost",
      pods: ["demo-1", "demo-2"],
    });
  });
});
