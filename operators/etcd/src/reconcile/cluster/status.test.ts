import { type Condition, type PodObject, statusMergePatch } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster, EtcdClusterStatus } from "../../api/etcd-cluster.ts";
import type { ObservedMember, Step } from "../../plan/plan.ts";
import type { Observation } from "./observe.ts";
import { conditionsOf, phaseOf, statusOf } from "./status.ts";

const NOW = new Date("2026-11-30T01:00:00Z");

const cluster = (o: Partial<EtcdCluster["spec"]> = {}, status?: EtcdClusterStatus): EtcdCluster => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 4 },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" }, ...o },
  ...(status === undefined ? {} : { status }),
});

const member = (name: string, o: Partial<ObservedMember> = {}): ObservedMember => ({
  id: name.slice(-1),
  name,
  peerURLs: [`http://${name}.demo-peer.ns.svc:2380`],
  isLearner: false,
  started: true,
  healthy: true,
  leader: false,
  version: "3.6.15",
  ...o,
});

const readyPod = (name: string, ready = true): PodObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  status: { phase: "Running", conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});

const obs = (
  members: ObservedMember[] | undefined,
  pods = members?.map((m) => m.name) ?? [],
): Observation => ({
  observed:
    members === undefined
      ? { etcd: { reachable: false, error: "refused" }, pods: [], volumes: [], bootstrapped: true }
      : { etcd: { reachable: true, members }, pods: [], volumes: [], bootstrapped: true },
  pods: new Map(pods.map((n) => [n, readyPod(n)])),
  claims: new Map(),
  members: [],
  memberStatus: (members ?? []).map((m) => ({
    name: m.name,
    id: m.id,
    peerURL: m.peerURLs[0] ?? "",
    clientURLs: [],
    ...(m.version === undefined ? {} : { version: m.version }),
    healthy: m.healthy,
    learner: m.isLearner,
    leader: m.leader,
  })),
  ...(members === undefined ? {} : { clusterID: "c1" }),
  endpoints: [],
});

const three = () => [member("demo-a", { leader: true }), member("demo-b"), member("demo-c")];
const inSync: Step = { type: "InSync", message: "3 members on 3.6.15, all healthy" };
const cond = (list: Condition[], type: string) => list.find((c) => c.type === type);

describe("phaseOf", () => {
  it.each<[string, Partial<EtcdCluster["spec"]>, Step, string, EtcdClusterStatus["phase"]?]>([
    ["in sync", {}, inSync, "Running"],
    ["paused wins", { paused: true }, { type: "Wait", reason: "Paused", message: "" }, "Paused"],
    ["quorum lost", {}, { type: "QuorumLost", message: "" }, "QuorumLost"],
    ["refused version", {}, { type: "Degraded", reason: "X", message: "" }, "Degraded"],
    [
      "adding a learner after creation",
      {},
      { type: "AddLearner", name: "n", message: "" },
      "Scaling",
      "Running",
    ],
    [
      "adding a learner while creating",
      {},
      { type: "AddLearner", name: "n", message: "" },
      "Creating",
      "Creating",
    ],
    [
      "pod template roll-out",
      {},
      { type: "RestartMember", id: "1", name: "n", message: "" },
      "Updating",
      "Running",
    ],
    [
      "upgrade",
      {},
      { type: "UpgradeMember", id: "1", name: "n", from: "a", to: "b", message: "" },
      "Upgrading",
    ],
    [
      "replacement",
      {},
      { type: "ReplaceMember", id: "1", name: "n", reason: "DataLost", message: "" },
      "Recovering",
    ],
    [
      "restart on data",
      {},
      { type: "StartMemberPod", name: "n", reason: "PodMissing", message: "" },
      "Recovering",
      "Running",
    ],
    [
      "waiting on a new version",
      { version: "3.6.16" },
      { type: "Wait", reason: "MemberUnhealthy", message: "" },
      "Upgrading",
      "Running",
    ],
  ])("%s", (_, spec, step, phase, previous) => {
    const c = cluster(spec, previous === undefined ? undefined : { phase: previous });
    expect(phaseOf(c, obs(three()), step)).toBe(phase);
  });
});

describe("conditionsOf", () => {
  it("in sync: Available, not Progressing, not Degraded, with observedGeneration", () => {
    const list = conditionsOf(cluster(), obs(three()), inSync, NOW);
    expect(cond(list, "Available")).toMatchObject({
      status: "True",
      reason: "QuorumHealthy",
      observedGeneration: 4,
    });
    expect(cond(list, "Progressing")).toMatchObject({ status: "False", reason: "InSync" });
    expect(cond(list, "Degraded")).toMatchObject({ status: "False" });
  });

  it("a refused spec is Degraded with the planner's reason and the message naming the field", () => {
    const step: Step = {
      type: "Degraded",
      reason: "UnsupportedVersionChange",
      field: "spec.version",
      message: "spec.version: downgrading from 3.6.15 to 3.5.1 is not supported",
    };
    const list = conditionsOf(cluster(), obs(three()), step, NOW);
    expect(cond(list, "Degraded")).toMatchObject({ status: "True", reason: "UnsupportedVersionChange" });
    expect(cond(list, "Degraded")?.message).toContain("spec.version");
    expect(cond(list, "Available")?.status).toBe("True");
  });

  it("quorum lost: not Available, Degraded QuorumLost", () => {
    const members = [
      member("demo-a"),
      member("demo-b", { healthy: false }),
      member("demo-c", { healthy: false }),
    ];
    const list = conditionsOf(cluster(), obs(members), { type: "QuorumLost", message: "1 of 3" }, NOW);
    expect(cond(list, "Available")).toMatchObject({ status: "False", reason: "QuorumLost" });
    expect(cond(list, "Degraded")).toMatchObject({ status: "True", reason: "QuorumLost" });
  });

  it("unreachable after bootstrap: not Available, reason Unreachable", () => {
    const list = conditionsOf(cluster(), obs(undefined), { type: "QuorumLost", message: "x" }, NOW);
    expect(cond(list, "Available")).toMatchObject({ status: "False", reason: "Unreachable" });
  });

  it("the operator cut off while the kubelet finds the members Ready: Available Unknown, not False (issue 27)", () => {
    const step = { type: "Degraded", reason: "OperatorCutOff", message: "3 of 3 pods Ready" } as const;
    const list = conditionsOf(cluster(), obs(undefined), step, NOW);
    expect(cond(list, "Available")).toMatchObject({ status: "Unknown", reason: "OperatorCutOff" });
    expect(cond(list, "Degraded")).toMatchObject({ status: "True", reason: "OperatorCutOff" });
    // Another Degraded reason says nothing of the quorum: the operator's view stands.
    const other = conditionsOf(cluster(), obs(undefined), { ...step, reason: "ImagePullFailed" }, NOW);
    expect(cond(other, "Available")).toMatchObject({ status: "False", reason: "Unreachable" });
  });

  it("keeps lastTransitionTime while a status does not change", () => {
    const first = conditionsOf(cluster(), obs(three()), inSync, new Date("2026-01-01T00:00:00Z"));
    const again = conditionsOf(cluster({}, { conditions: first }), obs(three()), inSync, NOW);
    expect(again).toEqual(first);
  });
});

describe("statusOf and statusPatch", () => {
  it("a steady state writes nothing", () => {
    const c = cluster();
    const status = statusOf(c, obs(three()), inSync, NOW);
    expect(
      statusMergePatch(
        JSON.parse(JSON.stringify(status)),
        statusOf({ ...c, status }, obs(three()), inSync, NOW),
      ),
    ).toBe(undefined);
  });

  it("reports members, leader, lowest version, replicas, ready pods, selector and endpoint", () => {
    const members = [
      member("demo-a", { leader: true, version: "3.6.16" }),
      member("demo-b"),
      member("demo-c"),
    ];
    const o = obs(members);
    o.pods.set("demo-c", readyPod("demo-c", false));
    const status = statusOf(cluster(), o, inSync, NOW);
    expect(status).toMatchObject({
      observedGeneration: 4,
      replicas: 3,
      readyReplicas: 2,
      leader: "demo-a",
      currentVersion: "3.6.15",
      clusterID: "c1",
      selector: "app.kubernetes.io/name=etcd,etcd.capstan.dev/cluster=demo",
      clientEndpoint: "http://demo-client.ns.svc:2379",
    });
    expect(status.members?.map((m) => m.name)).toEqual(["demo-a", "demo-b", "demo-c"]);
  });

  it("unreachable: keeps the last members, marked unhealthy, and the cluster ID", () => {
    const before = statusOf(cluster(), obs(three()), inSync, NOW);
    const after = statusOf(
      cluster({}, before),
      obs(undefined, ["demo-a"]),
      { type: "QuorumLost", message: "m" },
      NOW,
    );
    expect(after.members?.map((m) => [m.name, m.healthy, m.leader])).toEqual([
      ["demo-a", false, false],
      ["demo-b", false, false],
      ["demo-c", false, false],
    ]);
    expect(after.clusterID).toBe("c1");
    expect(after.leader).toBeUndefined();
  });

  it("a field that disappears is removed with null", () => {
    const before = statusOf(cluster(), obs(three()), inSync, NOW);
    const after = statusOf(cluster({}, before), obs(undefined), { type: "QuorumLost", message: "m" }, NOW);
    expect(statusMergePatch(before, after)?.status.leader).toBeNull();
  });
});

describe("status during failures (issue 10)", () => {
  const lost = () => [
    member("demo-a", { leader: true }),
    member("demo-b", { healthy: false }),
    member("demo-c", { healthy: false }),
  ];
  const restart: Step = {
    type: "StartMemberPod",
    name: "demo-b",
    reason: "PodMissing",
    message: "restarting",
  };

  it("quorum lost while a member is restarted on its data: Degraded stays True, phase QuorumLost", () => {
    const c = cluster({}, { phase: "QuorumLost" });
    const list = conditionsOf(c, obs(lost()), restart, NOW);
    expect(cond(list, "Degraded")).toMatchObject({ status: "True", reason: "QuorumLost" });
    expect(cond(list, "Progressing")).toMatchObject({ status: "True", reason: "StartMemberPod" });
    expect(phaseOf(c, obs(lost()), restart)).toBe("QuorumLost");
  });

  it("no member answers while waiting: Degraded True with the reason", () => {
    const step: Step = { type: "Wait", reason: "PodTerminating", message: "" };
    const list = conditionsOf(cluster(), obs(undefined), step, NOW);
    expect(cond(list, "Degraded")).toMatchObject({ status: "True", reason: "QuorumLost" });
    expect(cond(list, "Degraded")?.message).toContain("refused");
    expect(phaseOf(cluster(), obs(undefined), step)).toBe("QuorumLost");
  });

  it("an alarm is never Available", () => {
    const o = obs(three());
    o.observed = {
      ...o.observed,
      etcd: { reachable: true, members: three(), alarms: [{ member: "demo-b", alarm: "NOSPACE" }] },
    };
    const step: Step = { type: "Degraded", reason: "AlarmNospace", message: "etcd alarm NOSPACE" };
    const list = conditionsOf(cluster(), o, step, NOW);
    expect(cond(list, "Available")).toMatchObject({ status: "False", reason: "Alarm" });
    expect(cond(list, "Degraded")).toMatchObject({ status: "True", reason: "AlarmNospace" });
  });

  it("keeps the cluster ID once known, even when another one answers", () => {
    const c = cluster({}, { clusterID: "c1" });
    const o = { ...obs(three()), clusterID: "c2" };
    const step: Step = { type: "Degraded", reason: "ClusterIDMismatch", message: "" };
    expect(statusOf(c, o, step, NOW).clusterID).toBe("c1");
  });
});
