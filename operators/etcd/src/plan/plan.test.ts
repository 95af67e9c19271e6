import { describe, expect, it } from "vitest";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { type Observed, type ObservedMember, type ObservedPod, planNext, quorum, type Step } from "./plan.ts";
import { member, spec } from "./test-builders.ts";

const NOW = new Date("2026-11-29T12:00:00Z");
const FRESH = "demo-fresh";
const minutesAgo = (n: number) => new Date(NOW.getTime() - n * 60_000);

const withoutRaftIndex = ({ raftIndex: _, ...m }: ObservedMember): ObservedMember => m;
const withoutVersion = ({ version: _, ...m }: ObservedMember): ObservedMember => m;

const pod = (name: string, o: Partial<ObservedPod> = {}): ObservedPod => ({ name, ready: true, ...o });

/** A reachable cluster where every member has a ready pod and a volume, unless overridden. */
const cluster = (members: ObservedMember[], o: Partial<Observed> = {}): Observed => ({
  etcd: { reachable: true, members },
  pods: members.map((m) => pod(m.name, { ready: m.healthy })),
  volumes: members.map((m) => m.name),
  bootstrapped: true,
  ...o,
});

const three = (o: Partial<ObservedMember> = {}) => [
  member("demo-a", { leader: true, ...o }),
  member("demo-b", o),
  member("demo-c", o),
];

type Case = [string, EtcdClusterSpec, Observed, Partial<Step>];

const cases: Case[] = [
  // paused
  [
    "paused: nothing, even on a sick cluster",
    spec({ paused: true }),
    cluster(three({ healthy: false })),
    { type: "Wait", reason: "Paused" },
  ],

  // bootstrap
  [
    "empty cluster: seed",
    spec(),
    { etcd: { reachable: false, error: "no endpoints" }, pods: [], volumes: [], bootstrapped: false },
    { type: "CreateSeed", name: FRESH },
  ],
  [
    "seed pod starting: wait, no second seed",
    spec(),
    {
      etcd: { reachable: false, error: "connection refused" },
      pods: [pod("demo-a", { ready: false })],
      volumes: ["demo-a"],
      bootstrapped: false,
    },
    { type: "Wait", reason: "SeedStarting" },
  ],
  [
    "bootstrapped cluster that does not answer: quorum lost, never a new seed",
    spec(),
    {
      etcd: { reachable: false, error: "context deadline exceeded" },
      pods: [],
      volumes: [],
      bootstrapped: true,
    },
    { type: "QuorumLost" },
  ],
  [
    "no member answers, pods gone, volumes kept: restart a known member on its data",
    spec(),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [pod("demo-b", { ready: false })],
      volumes: ["demo-a", "demo-b", "demo-c"],
      bootstrapped: true,
      knownMembers: ["demo-c", "demo-a", "demo-b"],
    },
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "no member answers, status.members wiped (clusterID recovered): restart a member from its claim, not wait for ever",
    spec(),
    {
      etcd: { reachable: false, error: "no etcd endpoint answered" },
      pods: [pod("demo-b", { ready: false })],
      volumes: ["demo-a", "demo-b", "demo-c"],
      bootstrapped: true,
      knownMembers: [],
    },
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "no member answers, status.members stale (one name): the other claims' pods are restarted too",
    spec(),
    {
      etcd: { reachable: false, error: "no etcd endpoint answered" },
      pods: [pod("demo-a", { ready: false })],
      volumes: ["demo-a", "demo-b", "demo-c"],
      bootstrapped: true,
      knownMembers: ["demo-a"],
    },
    { type: "StartMemberPod", name: "demo-b", reason: "PodMissing" },
  ],
  [
    "no member answers, pods and volumes gone: quorum lost, nothing started",
    spec(),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: [],
      bootstrapped: true,
      knownMembers: ["demo-a", "demo-b", "demo-c"],
    },
    { type: "QuorumLost" },
  ],
  [
    "no member answers, ephemeral storage: quorum lost (a restart on empty data is unsafe)",
    spec({ storage: { ephemeral: true } }),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: [],
      bootstrapped: true,
      knownMembers: ["demo-a"],
    },
    { type: "QuorumLost" },
  ],
  [
    "quorum lost because two pods were deleted: restart one on its data",
    spec(),
    {
      ...cluster([
        member("demo-a"),
        member("demo-b", { healthy: false }),
        member("demo-c", { healthy: false }),
      ]),
      pods: [pod("demo-a")],
    },
    { type: "StartMemberPod", name: "demo-b", reason: "PodMissing" },
  ],
  ["empty member list: wait", spec(), cluster([]), { type: "Wait", reason: "NoMembers" }],

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
  ["in sync", spec(), cluster(three()), { type: "InSync" }],
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
    "after a replacement: add a member under a new name",
    spec(),
    cluster([member("demo-a", { leader: true }), member("demo-c")]),
    { type: "AddLearner", name: FRESH },
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

  // podTemplate roll-outs
  [
    "changed podTemplate: a follower's pod restarted first",
    spec(),
    {
      ...cluster(three()),
      pods: three().map((m) => pod(m.name, { outdated: true })),
    },
    { type: "RestartMember", name: "demo-b" },
  ],
  [
    "changed podTemplate, only the leader left outdated: move leadership first",
    spec(),
    { ...cluster(three()), pods: [pod("demo-a", { outdated: true }), pod("demo-b"), pod("demo-c")] },
    { type: "MoveLeader", from: "id-demo-a", toName: "demo-b" },
  ],
  [
    "changed podTemplate on a sick cluster: wait",
    spec(),
    {
      ...cluster(three()),
      pods: [pod("demo-a"), pod("demo-b", { outdated: true }), pod("demo-c", { ready: false })],
    },
    { type: "Wait", reason: "MemberUnhealthy" },
  ],
  [
    "changed podTemplate with one persistent member: restarted (a short outage, data kept)",
    spec({ replicas: 1 }),
    { ...cluster([member("demo-a", { leader: true })]), pods: [pod("demo-a", { outdated: true })] },
    { type: "RestartMember", name: "demo-a" },
  ],
  [
    "changed podTemplate with one ephemeral member: never restarted (it would lose all data)",
    spec({ replicas: 1, storage: { ephemeral: true } }),
    {
      ...cluster([member("demo-a", { leader: true })]),
      pods: [pod("demo-a", { outdated: true })],
      volumes: [],
    },
    { type: "Wait", reason: "LastMember" },
  ],
  [
    "version change and podTemplate change together: the upgrade goes first",
    spec({ version: "3.6.16" }),
    { ...cluster(three()), pods: three().map((m) => pod(m.name, { outdated: true })) },
    { type: "UpgradeMember", name: "demo-b" },
  ],

  // upgrades
  [
    "version change alone triggers an upgrade: a follower first",
    spec(),
    cluster(three({ version: "3.6.14" })),
    { type: "UpgradeMember", name: "demo-b", from: "3.6.14", to: "3.6.15" },
  ],
  [
    "upgrade continues with the next follower",
    spec(),
    cluster([
      member("demo-a", { leader: true, version: "3.6.14" }),
      member("demo-b"),
      member("demo-c", { version: "3.6.14" }),
    ]),
    { type: "UpgradeMember", name: "demo-c" },
  ],
  [
    "only the leader left: move leadership to an upgraded member first",
    spec(),
    cluster([member("demo-a", { leader: true, version: "3.6.14" }), member("demo-b"), member("demo-c")]),
    { type: "MoveLeader", from: "id-demo-a", to: "id-demo-b" },
  ],
  [
    "former leader, now a follower: upgraded last",
    spec(),
    cluster([member("demo-a", { version: "3.6.14" }), member("demo-b", { leader: true }), member("demo-c")]),
    { type: "UpgradeMember", name: "demo-a" },
  ],
  [
    "single member: upgrade the leader in place",
    spec({ replicas: 1 }),
    cluster([member("demo-a", { leader: true, version: "3.6.14" })]),
    { type: "UpgradeMember", name: "demo-a" },
  ],
  [
    "minor upgrade 3.5 -> 3.6 is allowed",
    spec(),
    cluster(three({ version: "3.5.33" })),
    { type: "UpgradeMember", name: "demo-b", from: "3.5.33" },
  ],
  [
    "patch downgrade within a minor is allowed",
    spec({ version: "3.6.14" }),
    cluster(three()),
    { type: "UpgradeMember", name: "demo-b", to: "3.6.14" },
  ],
  [
    "upgrade refused while a member is unhealthy",
    spec(),
    {
      ...cluster(three({ version: "3.6.14" })),
      pods: [pod("demo-a"), pod("demo-b"), pod("demo-c", { ready: false, notReadySince: minutesAgo(1) })],
    },
    { type: "Wait", reason: "MemberUnhealthy" },
  ],
  [
    "upgrade waits for every member to report a version",
    spec(),
    cluster([
      member("demo-a", { leader: true, version: "3.6.14" }),
      member("demo-b"),
      withoutVersion(member("demo-c")),
    ]),
    { type: "Wait", reason: "VersionUnknown" },
  ],
  [
    "minor downgrade refused",
    spec({ version: "3.5.21" }),
    cluster(three()),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "two-minor jump refused",
    spec({ version: "3.6.15" }),
    cluster(three({ version: "3.4.35" })),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "major change refused",
    spec({ version: "4.0.0" }),
    cluster(three()),
    { type: "Degraded", field: "spec.version" },
  ],
  [
    "jump judged from the lowest member version, mid-upgrade",
    spec({ version: "3.7.0" }),
    cluster([member("demo-a", { leader: true, version: "3.5.21" }), member("demo-b"), member("demo-c")]),
    { type: "Degraded", field: "spec.version" },
  ],
  [
    "malformed version refused",
    spec({ version: "latest" }),
    cluster(three()),
    { type: "Degraded", reason: "InvalidVersion", field: "spec.version" },
  ],
  [
    "a refused version blocks scale-out (no member starts on it)",
    spec({ version: "3.5.21", replicas: 5 }),
    cluster(three()),
    { type: "Degraded", field: "spec.version" },
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

// Issue 10: the failures an SRE meets (identity, wiped data, stuck pods, bad versions, full disks).
const MiB = 1024 * 1024;
const safetyCases: Case[] = [
  // identity and data safety
  [
    "status lost (no clusterID), every pod gone, claims kept: restart on the data, never a new seed",
    spec(),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: ["demo-b", "demo-a", "demo-c"],
      bootstrapped: false,
    },
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "the seed's claim was made but not its pod (the operator stopped between the two): start the seed on it",
    spec(),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: ["demo-a"],
      seedVolumes: ["demo-a"],
      bootstrapped: false,
    },
    { type: "CreateSeed", name: "demo-a" },
  ],
  [
    "a seed claim beside other members' claims: restart on the data, never a new seed",
    spec(),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: ["demo-a", "demo-b"],
      seedVolumes: ["demo-a"],
      bootstrapped: false,
    },
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "a seed claim of a bootstrapped cluster (status kept): a restart on its data, not a new seed",
    spec({ replicas: 1 }),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: ["demo-a"],
      seedVolumes: ["demo-a"],
      bootstrapped: true,
      knownMembers: ["demo-a"],
    },
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "status lost and every restarted member found an empty data directory: Degraded, nothing deleted",
    spec(),
    {
      etcd: { reachable: false, error: "connection refused" },
      pods: [pod("demo-a", { ready: false, dataLost: true })],
      volumes: ["demo-a"],
      bootstrapped: false,
    },
    { type: "Degraded", reason: "DataLost" },
  ],
  [
    "the member list answers with another cluster ID: Degraded naming both",
    spec(),
    {
      ...cluster(three()),
      etcd: { reachable: true, members: three(), clusterID: "c2" },
      knownClusterID: "c1",
    },
    { type: "Degraded", reason: "ClusterIDMismatch" },
  ],
  [
    "one member answers with another cluster ID: Degraded, nothing removed",
    spec({ replicas: 2 }),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { clusterID: "c9" }),
      ]),
      knownClusterID: "c1",
    },
    { type: "Degraded", reason: "ClusterIDMismatch" },
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
    "an operator-owned flag in extraArgs (stored before the CEL rule): Degraded naming the field",
    spec({ extraArgs: { "snapshot-count": "100", "data-dir": "/tmp" } }),
    cluster(three()),
    { type: "Degraded", reason: "OperatorOwnedFlag", field: "spec.extraArgs.data-dir" },
  ],
  [
    "an operator-owned flag as ETCD_* in extraEnv: Degraded",
    spec({ extraEnv: [{ name: "ETCD_INITIAL_CLUSTER", value: "x" }] }),
    cluster(three()),
    { type: "Degraded", reason: "OperatorOwnedFlag", field: "spec.extraEnv" },
  ],

  // upgrades
  [
    "3.5 -> 3.6 refused below 3.5.32 (etcd's upgrade guide)",
    spec({ version: "3.6.15" }),
    cluster(three({ version: "3.5.31" })),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "3.5.32 -> 3.6 allowed",
    spec({ version: "3.6.15" }),
    cluster(three({ version: "3.5.32" })),
    { type: "UpgradeMember", name: "demo-b" },
  ],
  [
    "quorum lost with a refused version: no member is restarted on it",
    spec({ version: "3.6.15" }),
    {
      ...cluster([
        member("demo-a", { version: "3.5.20" }),
        member("demo-b", { healthy: false, version: "3.5.20" }),
        member("demo-c", { healthy: false, version: "3.5.20" }),
      ]),
      pods: [pod("demo-a")],
    },
    { type: "Degraded", reason: "UnsupportedVersionChange" },
  ],
  [
    "no member answers, refused version against the last known version: nothing started",
    spec({ version: "3.6.15" }),
    {
      etcd: { reachable: false, error: "no member pod has an IP address" },
      pods: [],
      volumes: ["demo-a", "demo-b", "demo-c"],
      bootstrapped: true,
      knownMembers: ["demo-a", "demo-b", "demo-c"],
      knownVersion: "3.5.20",
    },
    { type: "Degraded", reason: "UnsupportedVersionChange" },
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
  [
    "fragmented databases: a follower defragmented first, the leader last",
    spec(),
    cluster([
      member("demo-a", { leader: true, dbSize: 200 * MiB, dbSizeInUse: 20 * MiB }),
      member("demo-b", { dbSize: 200 * MiB, dbSizeInUse: 190 * MiB }),
      member("demo-c", { dbSize: 200 * MiB, dbSizeInUse: 50 * MiB }),
    ]),
    { type: "Defragment", name: "demo-c" },
  ],
  [
    "only the leader fragmented: defragmented",
    spec(),
    cluster([
      member("demo-a", { leader: true, dbSize: 200 * MiB, dbSizeInUse: 20 * MiB }),
      member("demo-b", { dbSize: 200 * MiB, dbSizeInUse: 190 * MiB }),
      member("demo-c", { dbSize: 200 * MiB, dbSizeInUse: 190 * MiB }),
    ]),
    { type: "Defragment", name: "demo-a" },
  ],
  [
    "a small database is never defragmented",
    spec(),
    cluster(three({ dbSize: 10 * MiB, dbSizeInUse: 1 * MiB })),
    { type: "InSync" },
  ],
];

describe("planNext: failures an SRE meets (issue 10)", () => {
  it.each(safetyCases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });
});
