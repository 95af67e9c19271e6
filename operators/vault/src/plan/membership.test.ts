// planNext's membership rules (9, 11 and 14, membership.ts): joins through the active node (a wiped pod's old peer
// removed first), scale-out one pod at a time, scale-in one peer, pod and claim at a time keeping a quorum.
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { healthy3, observed, peers, plan, pod } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

describe("joins", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    [
      "a new pod uninitialized: it joins through the active pod",
      observed([pod(0, "active"), pod(1, "uninit")]),
      { type: "JoinRaft", pod: "demo-1", leader: "demo-0" },
    ],
    [
      "keys present and a pod reporting uninitialized never re-inits, even pod 0",
      observed([pod(0, "uninit"), pod(1, "active"), pod(2, "standby")], {
        raft: {
          servers: [
            { nodeID: "demo-1", address: "a", voter: true, leader: true },
            { nodeID: "demo-2", address: "b", voter: true, leader: false },
          ],
        },
      }),
      { type: "JoinRaft", pod: "demo-0", leader: "demo-1" },
    ],
    [
      "a pod whose data was lost: its old peer is removed first",
      observed([pod(0, "active"), pod(1, "uninit"), pod(2, "standby")], {
        raft: {
          servers: ["demo-0", "demo-1", "demo-2"].map((n, i) => ({
            nodeID: n,
            address: n,
            voter: true,
            leader: i === 0,
          })),
        },
      }),
      { type: "RemovePeer", nodeID: "demo-1", via: "demo-0", reason: "DataLost" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));
});

describe("scaling", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    ["in sync", observed(healthy3()), { type: "InSync" }],
    [
      "3 -> 5: one pod at a time",
      observed(healthy3()),
      { type: "CreatePod", pod: "demo-3", reason: "ScaleOut" },
      { replicas: 5 },
    ],
    [
      "3 -> 5: the new pod is not a voter yet: wait before the next",
      observed([...healthy3(), pod(3, "standby")], {
        raft: peers(["demo-0", "demo-1", "demo-2", "demo-3"], "demo-0", ["demo-3"]),
      }),
      { type: "Wait", reason: "PodNotReady" },
      { replicas: 5 },
    ],
    [
      "3 -> 5: the new pod is still starting",
      observed([...healthy3(), pod(3, "down")]),
      { type: "Wait", reason: "PodNotReady" },
      { replicas: 5 },
    ],
    [
      "5 -> 3: the peer of the highest ordinal goes first",
      observed([...healthy3(), pod(3, "standby"), pod(4, "standby")]),
      { type: "RemovePeer", nodeID: "demo-4", via: "demo-0", reason: "ScaleIn" },
    ],
    [
      "5 -> 3: then its pod and claim",
      observed([...healthy3(), pod(3, "standby"), pod(4, "standby")], {
        raft: peers(["demo-0", "demo-1", "demo-2", "demo-3"], "demo-0"),
      }),
      { type: "DeletePod", pod: "demo-4", deleteClaim: true, reason: "ScaleIn" },
    ],
    [
      "5 -> 3: the victim is active: step down first",
      observed([
        pod(0, "standby"),
        pod(1, "standby"),
        pod(2, "standby"),
        pod(3, "standby"),
        pod(4, "active"),
      ]),
      { type: "StepDown", pod: "demo-4" },
    ],
    [
      "5 -> 3: a claim left without pod or peer (interrupted scale-in) is deleted",
      observed(healthy3(), { claims: ["data-demo-0", "data-demo-1", "data-demo-2", "data-demo-3"] }),
      { type: "DeletePod", pod: "demo-3", deleteClaim: true },
    ],
    [
      "5 -> 3: a dead peer without pod beyond replicas is removed (bank-vaults#796)",
      observed(healthy3(), { raft: peers(["demo-0", "demo-1", "demo-2", "demo-4"], "demo-0") }),
      { type: "RemovePeer", nodeID: "demo-4", reason: "Orphan" },
    ],
    [
      "removal refused when it would break the quorum of healthy voters",
      observed([pod(0, "active"), pod(1, "down"), pod(2, "down"), pod(3, "standby"), pod(4, "standby")], {
        raft: peers(["demo-0", "demo-1", "demo-2", "demo-3", "demo-4"], "demo-0"),
        claims: [],
      }),
      { type: "Wait", reason: "QuorumAtRisk" },
    ],
    [
      "pod and claim deleted by hand: recreated as a new pod (then its old peer is removed, it rejoins)",
      observed([pod(0, "active"), pod(2, "standby")], {
        claims: ["data-demo-0", "data-demo-2"],
        raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0"),
      }),
      { type: "CreatePod", pod: "demo-1", reason: "ScaleOut" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));

  it("a pod and claim deleted by hand, its peer already removed: created again", () => {
    const o = observed([pod(0, "active"), pod(2, "standby")], {
      claims: ["data-demo-0", "data-demo-2"],
      raft: peers(["demo-0", "demo-2"], "demo-0"),
    });
    expect(plan(o)).toMatchObject({ type: "CreatePod", pod: "demo-1", reason: "ScaleOut" });
  });
});
