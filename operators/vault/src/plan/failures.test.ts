// Table tests of the planner for pods the kubelet cannot run and keys that cannot unseal: each is Degraded naming
// the pod and the evidence (the kubelet's reason, the key counts), never a wait that lasts for ever.
import { describe, expect, it } from "vitest";
import { type ObservedPod, planNext } from "./plan.ts";
import { KEYS, observed, plan, pod, spec } from "./plan-fixtures.ts";
import type { ContainerFailure } from "./stalled.ts";
import { judgeUnsealOutcome } from "./unseal.ts";

const crashLoop: ContainerFailure = {
  reason: "CrashLoopBackOff",
  message: "back-off 5m0s restarting failed container=vault",
  restarts: 7,
  lastExit: { exitCode: 1, reason: "Error", message: "Error parsing config: invalid listener" },
};
const crashing = (ordinal: number, extra: Partial<ObservedPod> = {}) =>
  pod(ordinal, "down", { containerFailure: crashLoop, ...extra });

describe("crash-looping and failing containers: Degraded with the kubelet's reason", () => {
  it("a crash-looping standby of a serving cluster (was: waiting, 'not answering')", () => {
    const step = plan(observed([pod(0, "active"), pod(1, "standby"), crashing(2)]));
    expect(step).toMatchObject({ type: "Degraded", reason: "PodCrashLooping", pods: ["demo-2"] });
    const message = step.type === "Degraded" ? step.message : "";
    expect(message).toContain("demo-2");
    expect(message).toContain("CrashLoopBackOff");
    expect(message).toContain("restarted 7 times");
    expect(message).toContain("last exit code 1 (Error): Error parsing config: invalid listener");
  });

  it("the only pod crash-looping after init: no active node, no 'no Vault pod answers yet' wait", () => {
    const step = plan(observed([crashing(0)], { knownVoters: 1 }), { replicas: 1 });
    expect(step).toMatchObject({ type: "Degraded", reason: "PodCrashLooping", pods: ["demo-0"] });
  });

  it("pod 0 crash-looping before init: no PodStarting wait", () => {
    const step = plan(observed([crashing(0)], { keys: undefined, raft: { error: "no active pod" } }));
    expect(step).toMatchObject({ type: "Degraded", reason: "PodCrashLooping", pods: ["demo-0"] });
  });

  it("every pod failing to pull its image after init: ImagePullFailed, not a wait", () => {
    const pulling = (o: number) =>
      pod(o, "down", { imagePullError: { image: "hashicorp/vault:1.14.8", reason: "ImagePullBackOff" } });
    const step = plan(observed([pulling(0), pulling(1), pulling(2)], { knownVoters: 3 }));
    expect(step).toMatchObject({ type: "Degraded", reason: "ImagePullFailed" });
    expect(step.type === "Degraded" && step.pods).toEqual(["demo-0", "demo-1", "demo-2"]);
  });

  it("a container the kubelet cannot create (a missing ConfigMap key): PodContainerFailed", () => {
    const failing = pod(2, "down", {
      containerFailure: {
        reason: "CreateContainerConfigError",
        message: 'configmap "x" not found',
        restarts: 0,
      },
    });
    const step = plan(observed([pod(0, "active"), pod(1, "standby"), failing]));
    expect(step).toMatchObject({ type: "Degraded", reason: "PodContainerFailed", pods: ["demo-2"] });
    expect(step.type === "Degraded" && step.message).toContain(
      'CreateContainerConfigError (configmap "x" not found)',
    );
  });

  it("quorum lost because pods crash-loop: QuorumLost names them and the kubelet's reason", () => {
    const step = plan(observed([pod(0, "sealed"), crashing(1), crashing(2)], { knownVoters: 3 }), {});
    // demo-0 is sealed: it is unsealed first (always safe).
    expect(step).toMatchObject({ type: "Unseal", pod: "demo-0" });
    const after = plan(observed([pod(0, "standby"), crashing(1), crashing(2)], { knownVoters: 3 }));
    expect(after).toMatchObject({ type: "Degraded", reason: "QuorumLost", pods: ["demo-1", "demo-2"] });
    expect(after.type === "Degraded" && after.message).toContain("demo-1 does not run");
  });
});

describe("unseal keys", () => {
  const sealed = (threshold?: number) =>
    pod(1, "sealed", threshold === undefined ? {} : { seal: { threshold, shares: 5, progress: 0 } });

  it("fewer keys than Vault's threshold: UnsealKeysInsufficient naming the pod and the counts", () => {
    const step = plan(
      observed([pod(0, "active"), sealed(3), pod(2, "standby")], { keys: { ...KEYS, unsealKeys: 2 } }),
    );
    expect(step).toMatchObject({ type: "Degraded", reason: "UnsealKeysInsufficient", pods: ["demo-1"] });
    expect(step.type === "Degraded" && step.message).toContain(
      "needs 3 unseal keys but the keys Secret holds 2",
    );
  });

  it("without a seal-status, spec.unseal.threshold is the threshold", () => {
    const o = observed([pod(0, "active"), sealed(), pod(2, "standby")], { keys: { ...KEYS, unsealKeys: 2 } });
    expect(plan(o)).toMatchObject({ type: "Degraded", reason: "UnsealKeysInsufficient" });
    expect(plan(o, { unseal: { ...spec().unseal, threshold: 2 } })).toMatchObject({ type: "Unseal" });
  });

  it("Vault's threshold wins over spec's", () => {
    const o = observed([pod(0, "active"), sealed(2), pod(2, "standby")], {
      keys: { ...KEYS, unsealKeys: 2 },
    });
    expect(planNext("demo", spec(), o, new Date())).toMatchObject({ type: "Unseal", pod: "demo-1" });
  });

  it("enough keys: Unseal", () => {
    expect(plan(observed([pod(0, "active"), sealed(3), pod(2, "standby")]))).toMatchObject({
      type: "Unseal",
      pod: "demo-1",
    });
  });
});

describe("judgeUnsealOutcome: what an Unseal's failure says about the keys", () => {
  const error = (status: number, ...errors: string[]) => ({ error: { status, errors } });
  it.each([
    ["400 invalid key", error(400, "Unseal failed, invalid key"), "UnsealKeysInvalid"],
    [
      "400 key too short",
      error(400, "invalid key: key is shorter than minimum 16 bytes"),
      "UnsealKeysInvalid",
    ],
    ["400 not base64", error(400, "'key' must be a valid hex or base64 string"), "UnsealKeysInvalid"],
    ["500 cannot combine", error(500, "failed to compute combined key: foo"), "UnsealKeysInvalid"],
    ["no answer", error(0, "connect ECONNREFUSED"), undefined],
    ["a joining node without the challenge", error(500, "invalid key size 0"), undefined],
    ["standby answer", error(400, "Vault is in standby mode"), undefined],
    ["503 sealed while restarting", error(503, "Vault is sealed"), undefined],
  ])("%s", (_, outcome, reason) => {
    const step = judgeUnsealOutcome("demo-1", outcome, 5, 3);
    if (reason === undefined) expect(step).toBeUndefined();
    else expect(step).toMatchObject({ type: "Degraded", reason, pods: ["demo-1"] });
  });

  it("every key entered and still sealed: invalid with enough keys, insufficient with too few", () => {
    const still = { stillSealed: true as const, message: "demo-1 is still sealed after 1 of 3 keys" };
    expect(judgeUnsealOutcome("demo-1", still, 5, 3)).toMatchObject({ reason: "UnsealKeysInvalid" });
    expect(judgeUnsealOutcome("demo-1", still, 2, 3)).toMatchObject({ reason: "UnsealKeysInsufficient" });
  });
});
