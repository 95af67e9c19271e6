// planNext: the order of the rules, quorum loss on a reachable cluster, and that nothing is removed without a
// quorum. Each rule's own cases live beside its module (bootstrap, gates, member-recovery, membership, rollout).
import { describe, expect, it } from "vitest";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { type Observed, planNext } from "./plan.ts";
import { type Case, cluster, FRESH, member, minutesAgo, NOW, pod, spec, three } from "./test-builders.ts";

const cases: Case[] = [
  ["empty member list: wait", spec(), cluster([]), { type: "Wait", reason: "NoMembers" }],
  ["in sync", spec(), cluster(three()), { type: "InSync" }],

  // quorum loss
  [
    "quorum lost: report, nothing removed",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: false }),
        member("demo-b", { healthy: false }),
        member("demo-c", { healthy: false }),
      ]),
      pods: [pod("demo-a")],
      volumes: [],
    },
    { type: "QuorumLost" },
  ],
  [
    "quorum lost during scale-in: nothing removed",
    spec({ replicas: 1 }),
    cluster([member("demo-a"), member("demo-b", { healthy: false }), member("demo-c", { healthy: false })]),
    { type: "QuorumLost" },
  ],
  [
    "quorum lost with a dead member past the threshold: nothing replaced",
    spec(),
    {
      ...cluster([
        member("demo-a"),
        member("demo-b", { healthy: false }),
        member("demo-c", { healthy: false }),
      ]),
      pods: [pod("demo-a"), pod("demo-b", { ready: false, notReadySince: minutesAgo(60) })],
      volumes: [],
    },
    { type: "QuorumLost" },
  ],
  [
    "learners do not count toward quorum",
    spec(),
    cluster([
      member("demo-a", { healthy: false }),
      member("demo-b", { healthy: false }),
      member("demo-c"),
      member("demo-d", { isLearner: true }),
    ]),
    { type: "QuorumLost" },
  ],
];

describe("planNext", () => {
  it.each(cases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });

  it("every step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });

  it("never removes, replaces or deletes anything while quorum is lost", () => {
    const removals = new Set(["RemoveMember", "ReplaceMember", "CleanupMember", "MoveLeader"]);
    const lost = [
      member("demo-a"),
      member("demo-b", { healthy: false }),
      member("demo-c", { healthy: false }),
    ];
    const variants: [EtcdClusterSpec, Observed][] = [
      [spec({ replicas: 1 }), cluster(lost)],
      [spec({ version: "3.6.14" }), cluster(lost)],
      [spec(), { ...cluster(lost), pods: [pod("demo-a"), pod("demo-x")], volumes: ["demo-x"] }],
      [spec({ storage: { ephemeral: true } }), { ...cluster(lost), pods: [pod("demo-a")] }],
    ];
    for (const [s, observed] of variants) {
      const step = planNext(s, observed, NOW, { freshName: FRESH });
      expect(removals.has(step.type)).toBe(false);
      expect(step.type).toBe("QuorumLost");
    }
  });
});
