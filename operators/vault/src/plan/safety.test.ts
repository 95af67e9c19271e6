// Table tests of the planner for spec changes it must refuse or hold back: a scale-in while another voter is down,
// a downgrade of spec.version, a change of storage.size.
import { describe, expect, it } from "vitest";
import { healthy3, IMAGE, OLD, observed, plan, pod } from "./plan-fixtures.ts";
import { compareVersions } from "./versions.ts";

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

describe("a downgrade of spec.version is refused", () => {
  it("every pod on 1.14.8, spec 1.14.6: DowngradeRefused naming both versions, no pod changed", () => {
    const step = plan(observed(healthy3(), { knownVersion: "1.14.8" }), { version: "1.14.6" });
    expect(step).toMatchObject({ type: "Degraded", reason: "DowngradeRefused" });
    expect(step.type === "Degraded" && step.message).toContain("spec.version 1.14.6 is older than 1.14.8");
    expect(step.type === "Degraded" && step.message).toContain("the active node demo-0 runs it");
  });

  it("status wiped: the active node's answer is enough", () => {
    expect(plan(observed(healthy3()), { version: "1.14.6" })).toMatchObject({ reason: "DowngradeRefused" });
  });

  it("no active node answers: status.currentVersion is enough, and a gone pod is not restarted on 1.14.6", () => {
    const o = observed([pod(0, "sealed"), pod(2, "down")], {
      claims: ["data-demo-0", "data-demo-1", "data-demo-2"],
      knownVersion: "1.14.8",
    });
    const step = plan(o, { version: "1.14.6" });
    expect(step).toMatchObject({ type: "Degraded", reason: "DowngradeRefused" });
    expect(step.type === "Degraded" && step.message).toContain("status.currentVersion");
  });

  it("a sealed pod is still unsealed (unsealing changes no version)", () => {
    const o = observed([pod(0, "active"), pod(1, "sealed"), pod(2, "standby")], { knownVersion: "1.14.8" });
    expect(plan(o, { version: "1.14.6" })).toMatchObject({ type: "Unseal", pod: "demo-1" });
  });

  it("reverting an upgrade that has not reached the active node is a rollback, not a downgrade", () => {
    const o = observed(
      [
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE }),
        pod(2, "standby", { image: OLD }),
      ],
      { knownVersion: "1.14.6" },
    );
    expect(plan(o, { version: "1.14.6" })).toMatchObject({
      type: "UpgradePod",
      pod: "demo-1",
      to: OLD,
    });
  });

  it("an upgrade goes on", () => {
    const old3 = [
      pod(0, "active", { image: OLD }),
      pod(1, "standby", { image: OLD }),
      pod(2, "standby", { image: OLD }),
    ];
    expect(plan(observed(old3, { knownVersion: "1.14.6" }))).toMatchObject({
      type: "UpgradePod",
      pod: "demo-1",
      to: IMAGE,
    });
  });

  it.each([
    ["1.14.8", "1.14.6", 1],
    ["1.9.0", "1.10.0", -1],
    ["1.14.8+ent", "1.14.8", 0],
    ["2.0.0", "1.99.99", 1],
  ])("compareVersions(%s, %s) has the sign of %i", (a, b, sign) =>
    expect(Math.sign(compareVersions(a, b))).toBe(sign),
  );
});

describe("storage.size against the claims: never silently ignored", () => {
  const sized = (size: string, extra: Record<string, string> = {}) =>
    observed(healthy3(), {
      claimSizes: { "data-demo-0": size, "data-demo-1": size, "data-demo-2": size, ...extra },
      namespace: "ns",
    });

  it("the claims match: InSync", () => {
    expect(plan(sized("1Gi"))).toMatchObject({ type: "InSync" });
    expect(plan(sized("1024Mi"))).toMatchObject({ type: "InSync" });
  });

  it("spec grew to 2Gi: StorageNotExpanded naming the claims and the command", () => {
    const step = plan(sized("1Gi"), { storage: { size: "2Gi" } });
    expect(step).toMatchObject({ type: "Degraded", reason: "StorageNotExpanded" });
    const message = step.type === "Degraded" ? step.message : "";
    expect(message).toContain(
      "spec.storage.size is 2Gi but data-demo-0 (1Gi), data-demo-1 (1Gi), data-demo-2 (1Gi)",
    );
    expect(message).toContain(
      `kubectl patch pvc <claim> -n ns -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'`,
    );
  });

  it("claims expanded by hand: InSync again", () => {
    expect(plan(sized("2Gi"), { storage: { size: "2Gi" } })).toMatchObject({ type: "InSync" });
  });

  it("spec smaller than the claims (an object older than the CEL rule): StorageShrinkRefused", () => {
    expect(plan(sized("2Gi"), { storage: { size: "1Gi" } })).toMatchObject({
      type: "Degraded",
      reason: "StorageShrinkRefused",
    });
  });

  it("a claim beyond spec.replicas (to be deleted on scale-in) is not judged", () => {
    expect(plan(sized("1Gi", { "data-demo-7": "512Mi" }))).toMatchObject({ type: "InSync" });
  });

  it("a rollout or scale-out goes first: the size is judged once nothing else is to do", () => {
    expect(plan(sized("1Gi"), { storage: { size: "2Gi" }, replicas: 5 })).toMatchObject({
      type: "CreatePod",
      pod: "demo-3",
    });
  });
});
