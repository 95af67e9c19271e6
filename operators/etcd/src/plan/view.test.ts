// The planner's view: quorum arithmetic, and removals that keep a quorum of healthy voters (moving leadership
// away first).
import { quorum } from "@capstan/core";
import { describe, expect, it } from "vitest";
import { cluster, member, NOW, pod, spec } from "./test-builders.ts";
import type { ObservedMember, Step } from "./types.ts";
import { View } from "./view.ts";

describe("quorum", () => {
  it.each([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [9, 5],
  ])("of %i voters is %i", (voters, q) => expect(quorum(voters)).toBe(q));
});

describe("View.removal", () => {
  const remove = (m: ObservedMember): Step => ({
    type: "RemoveMember",
    id: m.id,
    name: m.name,
    message: "x",
  });
  const view = (members: ObservedMember[], terminating: string[] = []) => {
    const observed = {
      ...cluster(members),
      terminating: terminating.map((name) => ({ name, since: NOW })),
      pods: members.map((m) => pod(m.name, { ready: m.healthy })),
    };
    return new View(spec(), observed, members, NOW, { freshName: "demo-fresh" });
  };
  const a = member("demo-a", { leader: true });
  const b = member("demo-b");
  const c = member("demo-c");
  it.each<[string, ObservedMember[], string[], ObservedMember, Partial<Step>]>([
    ["a healthy follower of three", [a, b, c], [], c, { type: "RemoveMember", name: "demo-c" }],
    ["the leader: leadership moves first", [a, b, c], [], a, { type: "MoveLeader", toName: "demo-b" }],
    ["the last voter", [a], [], a, { type: "Wait", reason: "LastMember" }],
    [
      "a follower while another is sick",
      [a, member("demo-b", { healthy: false }), c],
      [],
      c,
      { type: "Wait", reason: "QuorumAtRisk" },
    ],
    [
      "a follower while another's pod is terminating",
      [a, b, c],
      ["demo-b"],
      c,
      { type: "Wait", reason: "QuorumAtRisk" },
    ],
    [
      "a learner, always",
      [a, member("demo-l", { isLearner: true })],
      [],
      member("demo-l", { isLearner: true }),
      { type: "RemoveMember" },
    ],
  ])("%s", (_, members, terminating, victim, expected) => {
    expect(view(members, terminating).removal(victim, remove(victim))).toMatchObject(expected);
  });
});
