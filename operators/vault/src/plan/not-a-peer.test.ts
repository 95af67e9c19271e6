// Table tests of a pod that is no longer a raft peer (issue 28, item 5): a scale-in reverted after its peer was
// removed, autopilot's dead-server cleanup, a peer removed by hand. It was waited on forever ("not a raft peer");
// once it has been unsealed and Ready for a while without being in the configuration, its pod and claim are deleted
// and a new pod joins fresh, only while the other voters hold a healthy quorum.
import { describe, expect, it } from "vitest";
import { ago, observed, plan, pod } from "./plan-fixtures.ts";

/** The raft voters demo-<ordinal>, demo-0 leading. */
const voters = (...ordinals: number[]) =>
  ordinals.map((o) => ({ nodeID: `demo-${o}`, address: `demo-${o}`, voter: true, leader: o === 0 }));

describe("a pod that is no longer a raft peer", () => {
  it("unsealed and Ready for 2 minutes, not in the configuration: its pod and claim are deleted, saying why", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "standby", { readySince: ago(180) })];
    const step = plan(observed(pods, { raft: { servers: voters(0, 1) }, knownVoters: 2 }));
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-2", deleteClaim: true, reason: "NotAPeer" });
    expect(step.type === "DeletePod" && step.message).toContain("not in the raft configuration");
  });

  it("just unsealed (a join completes seconds after the unseal): waited on, not wiped", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "standby", { readySince: ago(20) })];
    const step = plan(observed(pods, { raft: { servers: voters(0, 1) }, knownVoters: 2 }));
    expect(step).toMatchObject({ type: "Wait", reason: "PodNotReady" });
    expect(step.message).toContain("demo-2 (not a raft peer)");
  });

  it("sealed (a join waiting for its unseal): unsealed, never wiped", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "sealed", { readySince: ago(600) })];
    const step = plan(observed(pods, { raft: { servers: voters(0, 1) }, knownVoters: 2 }));
    expect(step).toMatchObject({ type: "Unseal", pod: "demo-2" });
  });

  it("while another voter is down (the quorum not healthy without it): nothing is deleted", () => {
    const pods = [
      pod(0, "active"),
      pod(1, "down", { ready: false }),
      pod(2, "standby", { readySince: ago(600) }),
    ];
    const step = plan(observed(pods, { raft: { servers: voters(0, 1) }, knownVoters: 2 }));
    expect(step.type).not.toBe("DeletePod");
  });

  it("beyond spec.replicas: left to the scale-in, not wiped as a member", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "standby", { readySince: ago(600) })];
    const step = plan(observed(pods, { raft: { servers: voters(0, 1) }, knownVoters: 2 }), { replicas: 2 });
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-2", reason: "ScaleIn" });
  });
});
