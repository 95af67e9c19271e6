// planNext's quorum rule (7, quorum.ts): with no active node, an election waited for or the loss reported; with
// one, the quorum counted from the raft voters (issue 28, item 12): seen on the local cluster, the active pod
// was deleted seconds after the third pod joined (still a non-voter: autopilot promotes it after server
// stabilization), then a standby was lost with its claim. One voter of two was left, yet the operator waited "for
// v-2 (not yet a raft voter)" and reported Available. Now: Degraded QuorumLost naming the missing voters.
import { quorum } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { observed, plan, pod } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

const peer = (o: number, voter: boolean, leader = false) => ({
  nodeID: `demo-${o}`,
  address: `demo-${o}`,
  voter,
  leader,
});

describe("the quorum, counted from the raft voters", () => {
  it("one voter of two unsealed, the third server still a non-voter: Degraded QuorumLost naming the missing voter", () => {
    const pods = [pod(0, "down", { ready: false }), pod(1, "active"), pod(2, "standby")];
    const servers = [peer(0, true), peer(1, true, true), peer(2, false)];
    const step = plan(observed(pods, { raft: { servers } }));
    expect(step).toMatchObject({ type: "Degraded", reason: "QuorumLost", pods: ["demo-0"] });
    expect(step.message).toContain("1 of 2 raft voters are unsealed (missing: demo-0)");
  });

  it("a non-voter does not count towards the quorum, nor against it", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "down", { ready: false })];
    const servers = [peer(0, true, true), peer(1, true), peer(2, false)];
    const step = plan(observed(pods, { raft: { servers } }));
    expect(step.type === "Degraded" && step.reason === "QuorumLost").toBe(false);
  });

  it("two of three voters unsealed: a quorum, the usual wait for the third", () => {
    const pods = [pod(0, "active"), pod(1, "standby"), pod(2, "down", { ready: false })];
    const servers = [peer(0, true, true), peer(1, true), peer(2, true)];
    expect(plan(observed(pods, { raft: { servers } })).type).not.toBe("Degraded");
  });
});

describe("no active node", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    [
      "quorum lost: one of three unsealed, two down; no membership change",
      observed([pod(0, "standby"), pod(1, "down"), pod(2, "down")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Degraded", reason: "QuorumLost" },
    ],
    [
      "every pod uninitialized while the keys exist: the data is gone, no init, no join",
      observed([pod(0, "uninit"), pod(1, "uninit"), pod(2, "uninit")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Degraded", reason: "DataLost" },
    ],
    [
      "two of three unsealed standbys and no active: an election is due",
      observed([pod(0, "standby"), pod(1, "standby"), pod(2, "down")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Wait", reason: "ElectingLeader" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));
});

describe("quorum()", () => {
  it.each([
    [1, 1],
    [3, 2],
    [4, 3],
    [5, 3],
  ])("quorum(%i) = %i", (n, q) => expect(quorum(n)).toBe(q));
});
