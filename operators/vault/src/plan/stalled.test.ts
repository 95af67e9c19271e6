// planNext's stalled pods (rule 10, stalled.ts): the kubelet's and the scheduler's evidence reported as Degraded
// naming the pod (and the spread rule that holds an unschedulable voter), never a claim deleted.
import { describe, expect, it } from "vitest";
import { ago, healthy3, IMAGE, observed, plan, pod } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

describe("an unschedulable voter names the spread rule that holds it", () => {
  const stuck = observed([
    ...healthy3().slice(0, 2),
    pod(2, "down", { ready: false, unschedulableSince: ago(180) }),
  ]);
  it("with the default (one voter per node required): names antiAffinity, the topology key and what to do", () => {
    const step = plan(stuck);
    expect(step).toMatchObject({ type: "Degraded", reason: "PodUnschedulable" });
    expect(step.message).toContain(
      "spec.podTemplate.antiAffinity is Required: each of the 3 voters needs a node",
    );
    expect(step.message).toContain("kubernetes.io/hostname");
  });
  it("with Preferred, or an affinity of the user's: no such hint", () => {
    for (const podTemplate of [{ antiAffinity: "Preferred" as const }, { affinity: { nodeAffinity: {} } }]) {
      const step = plan(stuck, { podTemplate });
      expect(step).toMatchObject({ type: "Degraded", reason: "PodUnschedulable" });
      expect(step.message).not.toContain("antiAffinity");
    }
  });
});

describe("stalled pods: Degraded naming the pod, never a claim deleted", () => {
  it.each<[string, Observed, Partial<Step>]>([
    [
      "unschedulable for 3 minutes",
      observed([...healthy3().slice(0, 2), pod(2, "down", { ready: false, unschedulableSince: ago(180) })]),
      { type: "Degraded", reason: "PodUnschedulable", pods: ["demo-2"] },
    ],
    [
      "unschedulable for 10 seconds: just wait",
      observed([...healthy3().slice(0, 2), pod(2, "down", { unschedulableSince: ago(10) })]),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "Pending for 20 minutes (claim not bound)",
      observed([...healthy3().slice(0, 2), pod(2, "down", { pendingSince: ago(1200) })]),
      { type: "Degraded", reason: "PodPending", pods: ["demo-2"] },
    ],
    [
      "stuck terminating for 10 minutes",
      observed([...healthy3().slice(0, 2), pod(2, "down", { terminatingSince: ago(600) })]),
      { type: "Degraded", reason: "PodStuckTerminating", pods: ["demo-2"] },
    ],
    [
      "cannot pull spec's image",
      observed([
        ...healthy3().slice(0, 2),
        pod(2, "down", { imagePullError: { image: IMAGE, reason: "ImagePullBackOff" } }),
      ]),
      { type: "Degraded", reason: "ImagePullFailed", pods: ["demo-2"] },
    ],
    [
      "cannot pull an image spec no longer asks for: move it to spec's",
      observed([
        ...healthy3().slice(0, 2),
        pod(2, "down", {
          image: "hashicorp/vault:9.9.9",
          imagePullError: { image: "hashicorp/vault:9.9.9", reason: "ErrImagePull" },
        }),
      ]),
      { type: "UpgradePod", pod: "demo-2", to: IMAGE },
    ],
  ])("%s", (_name, o, want) => {
    const step = plan(o);
    expect(step).toMatchObject(want);
    expect(step.type).not.toBe("DeletePod");
  });
});
