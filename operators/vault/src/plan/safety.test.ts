// Table tests of the planner for spec changes it must refuse or hold back: a scale-in while another voter is down,
// a downgrade of spec.version, a change of storage.size.
import { describe, expect, it } from "vitest";
import { observed, plan, pod } from "./plan-fixtures.ts";

describe("scale-in waits while another voter is down (fault tolerance never taken by our own step)", () => {
  const five = (down: number[] = []) =>
    observed(
      [0, 1, 2, 3, 4].map((o) => pod(o, o === 0 ? "active" : down.includes(o) ? "down" : "standby")),
      {
        raft: {
          servers: [0, 1, 2, 3, 4].map((o) => ({
            nodeID: `demo-${o}`,
            address: `demo-${o}`,
            voter: true,
            leader: o === 0,
          })),
        },
      },
    );

  it("5 -> 3 with demo-1 down: no RemovePeer of demo-4 (4 voters with one down would tolerate 0)", () => {
    const step = plan(five([1]));
    expect(step).toMatchObject({ type: "Wait", reason: "QuorumAtRisk" });
    expect(step.type === "Wait" && step.message).toContain("while demo-1 is not healthy");
    expect(step.type === "Wait" && step.message).toContain("tolerate 0 more failures");
  });

  it("5 -> 3 with every voter healthy: the peer goes", () => {
    expect(plan(five())).toMatchObject({ type: "RemovePeer", nodeID: "demo-4", reason: "ScaleIn" });
  });

  it("5 -> 3 with the victim itself down: removed (a dead voter's removal never lowers the tolerance)", () => {
    expect(plan(five([4]))).toMatchObject({ type: "RemovePeer", nodeID: "demo-4", reason: "ScaleIn" });
  });

  it("5 -> 3 with the victim and another voter down: waits for the other", () => {
    expect(plan(five([2, 4]))).toMatchObject({ type: "Wait", reason: "QuorumAtRisk" });
  });
});
