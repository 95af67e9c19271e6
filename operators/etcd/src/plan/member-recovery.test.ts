// planNext's member recovery rules (6 to 10, member-recovery.ts): members without a pod, stuck or unschedulable
// pods, dead members and stalled learners, alarms, images that cannot be pulled, leftovers of a removal.
import { describe, expect, it } from "vitest";
import { type Observed, planNext } from "./plan.ts";
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
  // recovery
  [
    "pod gone, data volume kept: restart the member in place",
    spec(),
    { ...cluster(three()), pods: [pod("demo-a"), pod("demo-c")] },
    { type: "StartMemberPod", name: "demo-b", reason: "PodMissing" },
  ],
  [
    "pod and PVC gone: replace the member (remove now, add a fresh one later)",
    spec(),
    { ...cluster(three()), pods: [pod("demo-a"), pod("demo-c")], volumes: ["demo-a", "demo-c"] },
    { type: "ReplaceMember", id: "id-demo-b", name: "demo-b", reason: "DataLost" },
  ],
  [
    "ephemeral storage, pod gone: replace, never restart on empty data",
    spec({ storage: { ephemeral: true } }),
    { ...cluster(three()), pods: [pod("demo-a"), pod("demo-c")] },
    { type: "ReplaceMember", name: "demo-b", reason: "DataLost" },
  ],
  [
    "dead follower past the threshold, quorum holds: replace",
    spec(),
    {
      ...cluster(three()),
      etcd: {
        reachable: true,
        members: [member("demo-a", { leader: true }), member("demo-b", { healthy: false }), member("demo-c")],
      },
      pods: [pod("demo-a"), pod("demo-b", { ready: false, notReadySince: minutesAgo(6) }), pod("demo-c")],
    },
    { type: "ReplaceMember", name: "demo-b", reason: "Unhealthy" },
  ],
  [
    "unhealthy within the threshold: wait",
    spec(),
    {
      ...cluster(three()),
      etcd: {
        reachable: true,
        members: [member("demo-a", { leader: true }), member("demo-b", { healthy: false }), member("demo-c")],
      },
      pods: [pod("demo-a"), pod("demo-b", { ready: false, notReadySince: minutesAgo(4) }), pod("demo-c")],
    },
    { type: "Wait", reason: "MemberUnhealthy" },
  ],
  [
    "a learner that has not answered (no progress) since it was first seen long ago: replaced",
    spec({ replicas: 4 }),
    {
      ...cluster([...three(), withoutRaftIndex(member("demo-d", { isLearner: true, healthy: false }))]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, notReadySince: minutesAgo(60) }),
      ],
      learnerProgress: { "demo-d": minutesAgo(60) },
    },
    { type: "ReplaceMember", name: "demo-d", reason: "LearnerStalled" },
  ],
  [
    "a learner that answers but is still catching up after a long time: kept",
    spec({ replicas: 4 }),
    {
      ...cluster([...three(), member("demo-d", { isLearner: true, raftIndex: 10 })]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, notReadySince: minutesAgo(60) }),
      ],
    },
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "a learner that does not answer yet, pod just started: wait",
    spec({ replicas: 4 }),
    {
      ...cluster([...three(), member("demo-d", { isLearner: true, healthy: false })]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, notReadySince: minutesAgo(1) }),
      ],
    },
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "dead leader (pod not ready past threshold, still leading): move leadership first",
    spec(),
    {
      ...cluster(three()),
      pods: [pod("demo-a", { ready: false, notReadySince: minutesAgo(10) }), pod("demo-b"), pod("demo-c")],
    },
    { type: "MoveLeader", from: "id-demo-a", to: "id-demo-b", toName: "demo-b" },
  ],
  [
    "replacing would leave fewer healthy voters than a quorum: wait",
    spec({ replicas: 5 }),
    {
      ...cluster([...three(), member("demo-d", { healthy: false }), member("demo-e", { healthy: false })]),
      pods: [
        pod("demo-a"),
        pod("demo-b", { ready: false, notReadySince: minutesAgo(10) }),
        pod("demo-c"),
        pod("demo-d", { ready: false, notReadySince: minutesAgo(1) }),
        pod("demo-e", { ready: false, notReadySince: minutesAgo(1) }),
      ],
    },
    { type: "Wait", reason: "QuorumAtRisk" },
  ],
  [
    "the only member is dead: never remove the last voter",
    spec({ replicas: 1 }),
    {
      ...cluster([member("demo-a", { leader: true })]),
      pods: [pod("demo-a", { ready: false, notReadySince: minutesAgo(30) })],
    },
    { type: "Wait", reason: "LastMember" },
  ],
  [
    "a pod left by an interrupted removal: clean it up",
    spec(),
    {
      ...cluster(three()),
      pods: [...three().map((m) => pod(m.name)), pod("demo-old")],
      volumes: ["demo-a", "demo-b", "demo-c", "demo-old"],
    },
    { type: "CleanupMember", name: "demo-old" },
  ],
  [
    "a member whose data directory is empty (refused to rejoin): removed and replaced",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { healthy: false }),
      ]),
      pods: [
        pod("demo-a"),
        pod("demo-b"),
        pod("demo-c", { ready: false, dataLost: true, notReadySince: minutesAgo(1) }),
      ],
    },
    { type: "ReplaceMember", name: "demo-c", reason: "DataLost" },
  ],
  [
    "stuck terminating past the threshold while quorum holds: replaced",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { healthy: false }),
      ]),
      pods: [pod("demo-a"), pod("demo-b")],
      terminating: [{ name: "demo-c", since: minutesAgo(10) }],
    },
    { type: "ReplaceMember", name: "demo-c", reason: "StuckTerminating" },
  ],
  [
    "a member whose pod is terminating counts as lost: no replacement that would need it",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b", { healthy: false }),
        member("demo-c"),
      ]),
      pods: [pod("demo-a")],
      terminating: [
        { name: "demo-b", since: minutesAgo(10) },
        { name: "demo-c", since: minutesAgo(1) },
      ],
    },
    { type: "Wait", reason: "QuorumAtRisk" },
  ],
  [
    "stuck terminating within the threshold: wait for it (start once it is gone)",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { healthy: false }),
      ]),
      pods: [pod("demo-a"), pod("demo-b")],
      terminating: [{ name: "demo-c", since: minutesAgo(1) }],
    },
    { type: "StartMemberPod", name: "demo-c" },
  ],
  [
    "image cannot be pulled: Degraded naming it, the member is never replaced (even past the threshold)",
    spec({ version: "3.6.99" }),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b", { healthy: false }),
        member("demo-c"),
      ]),
      pods: [
        pod("demo-a"),
        pod("demo-b", {
          ready: false,
          notReadySince: minutesAgo(30),
          imagePullError: { image: "repo:v3.6.99", reason: "ImagePullBackOff", current: true },
        }),
        pod("demo-c"),
      ],
    },
    { type: "Degraded", reason: "ImagePullFailed" },
  ],
  [
    "spec.version reverted: the member stuck on the unpullable image is moved back",
    spec({ version: "3.6.15" }),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b", { healthy: false }),
        member("demo-c"),
      ]),
      pods: [
        pod("demo-a"),
        pod("demo-b", {
          ready: false,
          notReadySince: minutesAgo(30),
          imagePullError: { image: "repo:v3.6.99", reason: "ErrImagePull", current: false },
        }),
        pod("demo-c"),
      ],
    },
    { type: "UpgradeMember", name: "demo-b", to: "3.6.15" },
  ],

  // stuck members
  [
    "a pod unschedulable past the threshold, quorum holds: replaced",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { healthy: false }),
      ]),
      pods: [
        pod("demo-a"),
        pod("demo-b"),
        pod("demo-c", { ready: false, unschedulableSince: minutesAgo(10) }),
      ],
    },
    { type: "ReplaceMember", name: "demo-c", reason: "Unschedulable" },
  ],
  [
    "a pod unschedulable within the threshold: wait",
    spec(),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { healthy: false }),
      ]),
      pods: [
        pod("demo-a"),
        pod("demo-b"),
        pod("demo-c", { ready: false, unschedulableSince: minutesAgo(2) }),
      ],
    },
    { type: "Wait", reason: "MemberUnhealthy" },
  ],
  [
    "spec.recovery.unschedulableSeconds is honoured",
    spec({ recovery: { unschedulableSeconds: 60 } }),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { healthy: false }),
      ]),
      pods: [
        pod("demo-a"),
        pod("demo-b"),
        pod("demo-c", { ready: false, unschedulableSince: minutesAgo(2) }),
      ],
    },
    { type: "ReplaceMember", name: "demo-c", reason: "Unschedulable" },
  ],
  [
    "a learner receiving a large snapshot for 30 minutes but still progressing: kept",
    spec({ replicas: 4 }),
    {
      ...cluster([...three(), member("demo-d", { isLearner: true, healthy: false, ...{ raftIndex: 10 } })]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, notReadySince: minutesAgo(30) }),
      ],
      learnerProgress: { "demo-d": minutesAgo(1) },
    },
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "a learner without progress past spec.recovery.learnerStallSeconds: replaced",
    spec({ replicas: 4 }),
    {
      ...cluster([...three(), member("demo-d", { isLearner: true, raftIndex: 10 })]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, notReadySince: minutesAgo(30) }),
      ],
      learnerProgress: { "demo-d": minutesAgo(11) },
    },
    { type: "ReplaceMember", name: "demo-d", reason: "LearnerStalled" },
  ],
  [
    'a learner that never started exited with "cannot fetch cluster info" (its peers\' DNS not yet resolvable): a failed join, not lost data: kept, the kubelet restarts it',
    spec({ replicas: 4 }),
    {
      ...cluster([
        ...three(),
        withoutRaftIndex(member("demo-d", { isLearner: true, started: false, healthy: false })),
      ]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, dataLost: true, notReadySince: minutesAgo(1) }),
      ],
      learnerProgress: { "demo-d": minutesAgo(1) },
    },
    { type: "Wait", reason: "LearnerCatchingUp" },
  ],
  [
    "a learner that never started and keeps failing to join past spec.recovery.learnerStallSeconds: replaced as stalled",
    spec({ replicas: 4 }),
    {
      ...cluster([
        ...three(),
        withoutRaftIndex(member("demo-d", { isLearner: true, started: false, healthy: false })),
      ]),
      pods: [
        ...three().map((m) => pod(m.name)),
        pod("demo-d", { ready: false, dataLost: true, notReadySince: minutesAgo(11) }),
      ],
      learnerProgress: { "demo-d": minutesAgo(11) },
    },
    { type: "ReplaceMember", name: "demo-d", reason: "LearnerStalled" },
  ],

  // disk
  [
    "NOSPACE alarm: Degraded with the reason, never InSync",
    spec(),
    {
      ...cluster(three()),
      etcd: { reachable: true, members: three(), alarms: [{ member: "demo-b", alarm: "NOSPACE" }] },
    },
    { type: "Degraded", reason: "AlarmNospace" },
  ],
  [
    "CORRUPT alarm: Degraded",
    spec(),
    {
      ...cluster(three()),
      etcd: { reachable: true, members: three(), alarms: [{ member: "demo-c", alarm: "CORRUPT" }] },
    },
    { type: "Degraded", reason: "AlarmCorrupt" },
  ],
];

describe("planNext: member recovery (member-recovery.ts)", () => {
  it.each(cases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });

  it("every step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });

  it("honours a custom dead-member threshold", () => {
    const observed: Observed = {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b", { healthy: false }),
        member("demo-c"),
      ]),
      pods: [pod("demo-a"), pod("demo-b", { ready: false, notReadySince: minutesAgo(2) }), pod("demo-c")],
    };
    expect(planNext(spec(), observed, NOW, { freshName: FRESH, deadAfterMs: 60_000 })).toMatchObject({
      type: "ReplaceMember",
      name: "demo-b",
    });
  });
});
