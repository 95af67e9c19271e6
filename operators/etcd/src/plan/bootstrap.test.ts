// planNext when no member answers (rule 2, bootstrap.ts): restart on kept data, quorum loss, the seed, and a
// lost status that must never lead to a second cluster.
import { describe, expect, it } from "vitest";
import { planNext } from "./plan.ts";
import { type Case, cluster, FRESH, member, NOW, pod, spec } from "./test-builders.ts";

const cases: Case[] = [
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
];

describe("planNext: no member answers (bootstrap.ts)", () => {
  it.each(cases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });

  it("every step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });
});
