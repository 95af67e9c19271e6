// Table tests of the backup member choice: a caught-up follower first, the leader only when it alone fits,
// learners, unstarted, unhealthy, lagging and foreign members never.
import { describe, expect, it } from "vitest";
import { type BackupMemberChoice, chooseBackupMember } from "./backup-member.ts";
import type { ObservedMember } from "./plan.ts";
import { member as voter } from "./test-builders.ts";

/** The planner tests' member, at raft index 5000 of cluster c1. */
const member = (name: string, o: Partial<ObservedMember> = {}): ObservedMember =>
  voter(name, { raftIndex: 5000, clusterID: "c1", ...o });
const leader = (o: Partial<ObservedMember> = {}) => member("demo-a", { leader: true, ...o });
const withoutIndex = ({ raftIndex: _, ...m }: ObservedMember): ObservedMember => m;

type Case = [string, ObservedMember[], Partial<BackupMemberChoice> | RegExp];

const cases: Case[] = [
  [
    "a follower rather than the leader",
    [leader(), member("demo-b"), member("demo-c")],
    { ok: true, member: "demo-b", leader: false },
  ],
  [
    "the follower with the highest raft index",
    [leader(), member("demo-b", { raftIndex: 4990 }), member("demo-c", { raftIndex: 4999 })],
    { ok: true, member: "demo-c", raftIndex: 4999 },
  ],
  ["the leader of a one-member cluster", [leader()], { ok: true, member: "demo-a", leader: true }],
  [
    "the leader when every follower is unfit",
    [leader(), member("demo-b", { healthy: false }), member("demo-c", { isLearner: true })],
    { ok: true, member: "demo-a", leader: true },
  ],
  [
    "never a learner, even caught up and ahead",
    [leader({ healthy: false }), member("demo-b", { isLearner: true, raftIndex: 6000 })],
    /demo-b: a learner/,
  ],
  [
    "never a follower more than 1000 entries behind",
    [
      leader({ raftIndex: 10_000 }),
      member("demo-b", { raftIndex: 8999 }),
      member("demo-c", { raftIndex: 9000 }),
    ],
    { ok: true, member: "demo-c" },
  ],
  [
    "never a member that has not started",
    [leader({ healthy: false }), member("demo-b", { started: false })],
    /demo-b: not started/,
  ],
  [
    "never a member without a raft index",
    [leader({ healthy: false }), withoutIndex(member("demo-b"))],
    /demo-b: its raft index is unknown/,
  ],
  [
    "never a member of another cluster",
    [leader(), member("demo-b", { clusterID: "c2" }), member("demo-c", { healthy: false })],
    { ok: true, member: "demo-a" },
  ],
  ["no leader: no choice", [member("demo-b"), member("demo-c")], /no member reports itself leader/],
  [
    "a learner claiming leadership is not a leader",
    [member("demo-b", { isLearner: true, leader: true })],
    /no member reports itself leader/,
  ],
  [
    "two leaders (a partition seen mid-election): no choice",
    [leader(), member("demo-b", { leader: true })],
    /several members report themselves leader \(demo-a, demo-b\)/,
  ],
  [
    "a leader without a raft index: no choice",
    [withoutIndex(leader()), member("demo-b")],
    /reports no raft index/,
  ],
  [
    "everyone unfit: each refusal is named",
    [leader({ healthy: false }), member("demo-b", { raftIndex: 1 })],
    /demo-a: not healthy; demo-b: 4999 raft entries behind the leader \(more than 1000\)/,
  ],
  [
    "equal followers: the first by name, so the choice is stable",
    [leader(), member("demo-c"), member("demo-b")],
    { ok: true, member: "demo-b" },
  ],
];

describe("chooseBackupMember", () => {
  it.each(cases)("%s", (_name, members, expected) => {
    const choice = chooseBackupMember(members);
    if (expected instanceof RegExp) {
      expect(choice.ok).toBe(false);
      expect(choice.ok ? "" : choice.reason).toMatch(expected);
    } else {
      expect(choice).toMatchObject(expected);
    }
  });

  it("takes a tighter lag bound", () => {
    expect(chooseBackupMember([leader(), member("demo-b", { raftIndex: 4990 })], 5)).toMatchObject({
      member: "demo-a",
    });
  });
});
