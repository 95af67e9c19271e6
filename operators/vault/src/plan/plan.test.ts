// planNext across its rules: what status loses (a wiped status) never changes the step; the rules by concern are
// tested beside their modules (gates, bootstrap, unseal, quorum, token, membership, stalled, rollout .test.ts).
import { describe, expect, it } from "vitest";
import { healthy3, observed, plan, pod, vaultOf } from "./plan-fixtures.ts";

describe("status wiped", () => {
  it("no knownClusterID or voters in status: the keys' cluster_id and the raft config still guide it", () => {
    const o = observed(healthy3(), { knownClusterID: undefined, knownVoters: undefined });
    expect(plan(o)).toMatchObject({ type: "InSync" });
    const stranger = observed(
      [
        pod(0, "active"),
        pod(1, "standby", { vault: vaultOf("standby", "1.14.8", "beef") }),
        pod(2, "standby"),
      ],
      { knownClusterID: undefined },
    );
    expect(plan(stranger)).toMatchObject({ type: "Degraded", reason: "ClusterIDMismatch" });
  });

  it("all pods gone, claims kept: restarted on their data, never a second init", () => {
    const o = observed([], {
      claims: ["data-demo-0", "data-demo-1", "data-demo-2"],
      raft: { error: "no pod" },
    });
    expect(plan(o)).toMatchObject({ type: "CreatePod", pod: "demo-0", reason: "Restart" });
  });
});
