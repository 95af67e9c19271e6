// Table tests of a server whose data claim is gone or being deleted: its raft peer out first (while quorum holds),
// then the pod, then a new pod on a new claim that joins fresh; never a pod made on a claim that is going.
import { describe, expect, it } from "vitest";
import { ago, healthy3, observed, plan, pod } from "./plan-fixtures.ts";

/** The raft voters demo-<ordinal>, demo-0 leading. */
const voters = (...ordinals: number[]) =>
  ordinals.map((o) => ({ nodeID: `demo-${o}`, address: `demo-${o}`, voter: true, leader: o === 0 }));

describe("a server whose data claim is lost", () => {
  it("its claim being deleted, still a raft peer: RemovePeer first, naming the claim", () => {
    const step = plan(observed(healthy3(), { claimsTerminating: ["data-demo-2"] }));
    expect(step).toMatchObject({ type: "RemovePeer", nodeID: "demo-2", via: "demo-0", reason: "ClaimLost" });
    expect(step.type === "RemovePeer" && step.message).toContain(
      "its data claim data-demo-2 is being deleted",
    );
  });

  it("no longer a peer: the pod is deleted (the claim left alone) to be made again on a new claim", () => {
    const pods = healthy3();
    const servers = voters(0, 1);
    const step = plan(
      observed(pods, { claimsTerminating: ["data-demo-2"], raft: { servers }, knownVoters: 2 }),
    );
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-2", deleteClaim: false, reason: "ClaimLost" });
  });

  it("the pod gone while its claim is still being deleted: no pod made on it, a wait naming the claim", () => {
    const pods = [pod(0, "active"), pod(1, "standby")];
    const servers = voters(0, 1);
    const step = plan(
      observed(pods, {
        claims: ["data-demo-0", "data-demo-1"],
        claimsTerminating: ["data-demo-2"],
        raft: { servers },
        knownVoters: 2,
      }),
    );
    expect(step).toMatchObject({ type: "Wait", reason: "ClaimTerminating" });
  });

  it("the old claim gone too: the pod is made again (with a new claim)", () => {
    const pods = [pod(0, "active"), pod(1, "standby")];
    const servers = voters(0, 1);
    const step = plan(
      observed(pods, { claims: ["data-demo-0", "data-demo-1"], raft: { servers }, knownVoters: 2 }),
    );
    expect(step).toMatchObject({ type: "CreatePod", pod: "demo-2" });
  });

  it("a pod Pending on a claim that no longer exists: replaced once the cache has had time to see the claim", () => {
    const pending = pod(2, "down", { ready: false, pendingSince: ago(120) });
    const pods = [pod(0, "active"), pod(1, "standby"), pending];
    const servers = voters(0, 1, 2);
    const step = plan(observed(pods, { claims: ["data-demo-0", "data-demo-1"], raft: { servers } }));
    expect(step).toMatchObject({ type: "RemovePeer", nodeID: "demo-2", reason: "ClaimLost" });
    expect(step.type === "RemovePeer" && step.message).toContain("no longer exists");
    // A pod just made, whose claim the cache has not seen yet, is left alone.
    const young = pod(2, "down", { ready: false, pendingSince: ago(5) });
    const fresh = plan(
      observed([pods[0]!, pods[1]!, young], { claims: ["data-demo-0", "data-demo-1"], raft: { servers } }),
    );
    expect(fresh.type).not.toBe("RemovePeer");
    expect(fresh.type).not.toBe("DeletePod");
  });

  it("the active pod's claim being deleted: it steps down first", () => {
    const step = plan(observed(healthy3(), { claimsTerminating: ["data-demo-0"] }));
    expect(step).toMatchObject({ type: "StepDown", pod: "demo-0" });
  });

  it("removing its peer would cost the quorum (another voter down): Degraded ClaimLost, nothing removed", () => {
    const pods = [pod(0, "active"), pod(1, "down"), pod(2, "standby")];
    const servers = voters(0, 1, 2);
    const step = plan(observed(pods, { claimsTerminating: ["data-demo-2"], raft: { servers } }));
    expect(step).toMatchObject({ type: "Degraded", reason: "ClaimLost", pods: ["demo-2"] });
  });
});
