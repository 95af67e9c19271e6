// planNext's rollout rules (14, 15 and 17, rollout.ts): upgrades and pod-template restarts one member at a time,
// the leader last after moving leadership, and defragmentation.
import { describe, expect, it } from "vitest";
import { planNext } from "./plan.ts";
import {
  type Case,
  cluster,
  FRESH,
  MiB,
  member,
  minutesAgo,
  NOW,
  pod,
  spec,
  three,
  withoutVersion,
} from "./test-builders.ts";

const cases: Case[] = [
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

describe("planNext: rollout (rollout.ts)", () => {
  it.each(cases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });

  it("every step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });
});
