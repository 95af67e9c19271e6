// Table tests of issue 27 item 3 in the disaster-recovery planner: the fence before a survivor is forked with
// --force-new-cluster (every other member's pod gone; a Terminating one is not gone), shared with the recovery from
// a backup, which waits at the same point as before.
import { describe, expect, it } from "vitest";
import { fence } from "./fence.ts";
import { planRecovery, type RecoveryMember, type RecoveryObserved, type RecoveryStep } from "./recovery.ts";

import { fromBackup, m, obs, st } from "./test-builders.ts";

const SINCE = new Date("2026-12-04T20:00:00Z");
const kept = (name: string, o: Partial<RecoveryMember> = {}) =>
  m(name, { claimOwned: false, claimKept: true, pod: false, ...o });
const stuck = (name: string, node = "node-2") => kept(name, { terminating: { since: SINCE, node } });
const survivor = (o: Partial<RecoveryMember> = {}) =>
  m("b", { survivorMark: true, status: st(120), membersListed: 3, ...o });

type Case = [string, RecoveryObserved, Partial<RecoveryStep>];

const survivorCases: Case[] = [
  [
    "fence: another member's pod Terminating (its node unreachable) blocks --force-new-cluster",
    obs([stuck("a"), survivor(), kept("c")]),
    {
      type: "Wait",
      reason: "WaitingForFence",
      message: expect.stringMatching(
        /pod a is Terminating since 2026-12-04T20:00:00.000Z on node node-2: etcd may still be running behind a partition.*kubectl delete pod a --force --grace-period=0/,
      ),
    },
  ],
  [
    "fence: every Terminating pod is named, not only the first",
    obs([stuck("a"), survivor(), stuck("c", "node-3")]),
    {
      type: "Wait",
      reason: "WaitingForFence",
      message: expect.stringMatching(/pod a is Terminating.*node-2.*pod c is Terminating.*node-3/),
    },
  ],
  [
    "fence: every other pod gone -> --force-new-cluster",
    obs([kept("a"), survivor(), kept("c")]),
    { type: "ForceNewCluster", name: "b" },
  ],
  [
    "fence: an ended (Failed) pod of another member still exists: deleted first (it then goes at once)",
    obs([kept("a", { podEnded: true }), survivor(), kept("c")]),
    { type: "StopMember", name: "a" },
  ],
  [
    "fence: the running pod of a member whose claim is gone is stopped too, not left to run next to the fork",
    obs([kept("a"), survivor(), m("c", { claimOwned: false })]),
    { type: "StopMember", name: "c" },
  ],
  [
    "fence: once past it (phase force written), a Terminating pod seen later does not send it back",
    obs([stuck("a"), survivor({ recoveryPhase: "force", pod: false }), kept("c")]),
    { type: "StartSurvivor", name: "b", forceNewCluster: true },
  ],
];

describe("planRecovery from a survivor: the fence", () => {
  it.each(survivorCases)("%s", (_name, o, want) => expect(planRecovery(o)).toMatchObject(want));
});

// Recovery from a backup: the same fence before the restore, at the same point as before.
const bobs = (members: RecoveryMember[]) => obs(members, { from: "Backup", backup: fromBackup() });

const backupCases: Case[] = [
  [
    "backup: an old pod Terminating blocks the restore, named with its node",
    bobs([kept("a"), stuck("b"), kept("c")]),
    {
      type: "Wait",
      reason: "WaitingForFence",
      message: expect.stringMatching(/pod b is Terminating since .* on node node-2/),
    },
  ],
  [
    "backup: every old pod gone -> the restore starts",
    bobs([kept("a"), kept("b"), kept("c")]),
    { type: "StartRestore", name: "demo-seed1" },
  ],
];

describe("planRecovery from a backup: the shared fence", () => {
  it.each(backupCases)("%s", (_name, o, want) => expect(planRecovery(o)).toMatchObject(want));
});

describe("fence", () => {
  it("passes when no other pod exists, and names each one still present otherwise", () => {
    expect(fence([], "x")).toBeUndefined();
    const w = fence([{ name: "p2" }, { name: "p1", terminatingSince: SINCE, node: "n1" }], "forking");
    expect(w).toMatchObject({ type: "Wait", reason: "WaitingForFence", pods: ["p1", "p2"] });
    expect(w?.message).toContain("not forking while another member's pod exists");
    expect(w?.message).toContain("pod p2 still exists");
  });
});
