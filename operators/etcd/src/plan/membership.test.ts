// planNext's membership rules (11, 12, 13 and 16, membership.ts): scale out one learner at a time, promote it once
// caught up, scale in one member at a time keeping a quorum.
import { describe, expect, it } from "vitest";
import { planNext } from "./plan.ts";
import {
  type Case,
  cluster,
  FRESH,
  member,
  minutesAgo,
  NOW,
  pod,
  spec,
  three,
  withoutRaftIndex,
} from "./test-builders.ts";

const cases: Case[] = [
  // scale out
  [
    "seed running: add the first learner",
    spec(),
    cluster([member("demo-a", { leader: true })]),
    { type: "AddLearner", name: FRESH },
  ],
  [
    "scale-out one at a time: learner catching up -> wait, no second AddLearner",
    spec({ replicas: 5 }),
    cluster([...three(), member("demo-d", { isLearner: true, raftIndex: 100 })]),
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "learner with unknown progress: wait",
    spec(),
    cluster([member("demo-a", { leader: true }), withoutRaftIndex(member("demo-b", { isLearner: true }))]),
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "learner caught up but unhealthy: wait",
    spec(),
    cluster([member("demo-a", { leader: true }), member("demo-b", { isLearner: true, healthy: false })]),
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "learner caught up: promote",
    spec(),
    cluster([member("demo-a", { leader: true }), member("demo-b", { isLearner: true, raftIndex: 950 })]),
    { type: "PromoteLearner", id: "id-demo-b", name: "demo-b" },
  ],
  [
    "operator restarted mid-scale-out: member added, pod missing -> start its pod, not another AddLearner",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b", { isLearner: true, started: false, healthy: false }),
      ]),
      pods: [pod("demo-a")],
      volumes: ["demo-a"],
    },
    { type: "StartMemberPod", name: "demo-b", reason: "NotStarted" },
  ],
  [
    "fresh name in use by a member: wait",
    spec({ replicas: 4 }),
    cluster([member("demo-a", { leader: true }), member("demo-b"), member(FRESH)]),
    { type: "Wait", reason: "NameInUse" },
  ],

  // scale in
  [
    "scale-in removes a follower (last by name), never the leader",
    spec({ replicas: 3 }),
    cluster(
      [...three(), member("demo-d"), member("demo-e", { leader: true })].map((m) => ({
        ...m,
        leader: m.name === "demo-e",
      })),
    ),
    { type: "RemoveMember", id: "id-demo-d", name: "demo-d" },
  ],
  [
    "scale-in removes a learner before a follower",
    spec({ replicas: 3 }),
    cluster([...three(), member("demo-d", { isLearner: true })]),
    { type: "RemoveMember", name: "demo-d" },
  ],
  [
    "scale-in removes an unhealthy member first",
    spec({ replicas: 3 }),
    cluster([...three(), member("demo-b2", { healthy: false }), member("demo-d")]),
    { type: "RemoveMember", name: "demo-b2" },
  ],
  [
    "scale-in one at a time: 5 -> 1 removes a single member",
    spec({ replicas: 1 }),
    cluster([...three(), member("demo-d"), member("demo-e")]),
    { type: "RemoveMember", name: "demo-e" },
  ],
  [
    "scale-in removes the unhealthy member and keeps a quorum",
    spec({ replicas: 2 }),
    cluster(
      [member("demo-a", { leader: true }), member("demo-b"), member("demo-c", { healthy: false })].reverse(),
      {
        pods: [pod("demo-a"), pod("demo-b"), pod("demo-c", { ready: false, notReadySince: minutesAgo(1) })],
      },
    ),
    { type: "RemoveMember", name: "demo-c" },
  ],
  [
    "after a replacement: add a member under a new name",
    spec(),
    cluster([member("demo-a", { leader: true }), member("demo-c")]),
    { type: "AddLearner", name: FRESH },
  ],
];

describe("planNext: membership (membership.ts)", () => {
  it.each(cases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });

  it("every step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });
});
