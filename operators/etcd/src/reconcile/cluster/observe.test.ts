import type { Cache, Kind, KubeObject, PodObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { POD_TEMPLATE_HASH_ANNOTATION, podTemplateHash } from "../../desired/member-pod.ts";
import { SEED_CLAIM_ANNOTATION } from "../../desired/names.ts";
import {
  EtcdAuthError,
  type EtcdClient,
  EtcdError,
  type EtcdMember,
  type EtcdStatus,
} from "../../etcd/etcd-client.ts";
import { observe } from "./observe.ts";

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" } },
  status: {
    clusterID: "abc",
    members: [
      { name: "demo-a", id: "a", peerURL: "", clientURLs: [], healthy: true, learner: false, leader: true },
    ],
  },
};

const labels = (member: string) => ({
  "app.kubernetes.io/name": "etcd",
  "etcd.capstan.dev/cluster": "demo",
  "etcd.capstan.dev/member": member,
});
const owner = (uid = "u1") => [
  { apiVersion: "v1", kind: "EtcdCluster", name: "demo", uid, controller: true },
];

const pod = (
  member: string,
  ip: string,
  o: { ready?: boolean; uid?: string; deleting?: boolean } = {},
): PodObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: member,
    namespace: "ns",
    labels: labels(member),
    annotations: { [POD_TEMPLATE_HASH_ANNOTATION]: podTemplateHash(cluster) },
    ownerReferences: owner(o.uid),
    ...(o.deleting ? { deletionTimestamp: "2026-11-30T00:00:00Z" } : {}),
  },
  status: {
    phase: "Running",
    podIP: ip,
    conditions: [
      {
        type: "Ready",
        status: o.ready === false ? "False" : "True",
        lastTransitionTime: "2026-11-30T00:00:00Z",
      },
    ],
  },
});

/** A cache holding these objects (only `list` is used by observe). */
function cacheOf(objects: KubeObject[]): Cache {
  return {
    list: async (kind: Kind) => objects.filter((o) => o.kind === kind.kind),
  } as unknown as Cache;
}

/** A scripted etcd: the member list, and each endpoint's status (absent: it does not answer). */
function fakeEtcd(
  members: EtcdMember[] | Error,
  statuses: Record<string, Partial<EtcdStatus>>,
  seen: string[][] = [],
  alarms: { memberId: string; alarm: string }[] = [],
) {
  return (endpoints: string[]) => {
    seen.push(endpoints);
    return {
      alarmList: async () => alarms,
      memberList: async () => {
        if (members instanceof Error) throw members;
        return { header: { clusterId: "255", memberId: "1", revision: 1, raftTerm: 1 }, members };
      },
      status: async (endpoint: string) => {
        const s = statuses[endpoint];
        if (s === undefined) throw new EtcdError("no answer", [endpoint]);
        const header = { clusterId: "255", memberId: "1", revision: 1, raftTerm: 1 };
        return { header, leader: "0", version: "3.6.15", raftIndex: 100, ...s } as EtcdStatus;
      },
      health: async (endpoint: string) => ({ endpoint, healthy: statuses[endpoint] !== undefined }),
    } as unknown as EtcdClient;
  };
}

const member = (name: string, id: string, o: Partial<EtcdMember> = {}): EtcdMember => ({
  id,
  name,
  peerURLs: [`http://${name}.demo-peer.ns.svc:2380`],
  clientURLs: [`http://${name}.demo-peer.ns.svc:2379`],
  isLearner: false,
  ...o,
});

describe("observe", () => {
  it("lists the members' claims and, of those, the seed claims (made by CreateSeed)", async () => {
    const claim = (member: string, seed: boolean): KubeObject =>
      ({
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: {
          name: `${member}-data`,
          namespace: "ns",
          labels: labels(member),
          ownerReferences: owner(),
          ...(seed ? { annotations: { [SEED_CLAIM_ANNOTATION]: "true" } } : {}),
        },
      }) as KubeObject;
    const { observed } = await observe(
      cluster,
      cacheOf([claim("demo-a", true), claim("demo-b", false)]),
      fakeEtcd([], {}),
    );
    expect(observed.volumes.sort()).toEqual(["demo-a", "demo-b"]);
    expect(observed.seedVolumes).toEqual(["demo-a"]);
  });

  it("joins etcd's members with their pods: health, leader, versions, learners, names from peer URLs", async () => {
    const seen: string[][] = [];
    const cache = cacheOf([
      pod("demo-a", "10.0.0.1"),
      pod("demo-b", "10.0.0.2", { ready: false }),
      pod("demo-c", "10.0.0.3", { ready: false }),
      pod("demo-x", "10.0.0.9", { uid: "someone-else" }),
    ]);
    const etcd = fakeEtcd(
      [
        member("demo-a", "10"),
        member("demo-b", "11"),
        member("", "12", {
          isLearner: true,
          clientURLs: [],
          peerURLs: ["http://demo-c.demo-peer.ns.svc:2380"],
        }),
      ],
      {
        "http://10.0.0.1:2379": { leader: "10", version: "3.6.15", raftIndex: 500 },
        "http://10.0.0.3:2379": { leader: "10", version: "3.6.15", raftIndex: 450 },
      },
      seen,
    );
    const obs = await observe(cluster, cache, etcd);
    expect(seen[0]).toEqual(["http://10.0.0.1:2379", "http://10.0.0.2:2379", "http://10.0.0.3:2379"]);
    expect(obs.clusterID).toBe("ff");
    expect(obs.observed.etcd).toMatchObject({
      reachable: true,
      members: [
        { id: "a", name: "demo-a", healthy: true, leader: true, started: true, raftIndex: 500 },
        { id: "b", name: "demo-b", healthy: false, leader: false, started: true },
        { id: "c", name: "demo-c", healthy: true, isLearner: true, started: false, raftIndex: 450 },
      ],
    });
    expect(obs.observed.pods.map((p) => [p.name, p.ready])).toEqual([
      ["demo-a", true],
      ["demo-b", false],
      ["demo-c", false],
    ]);
    expect(obs.memberStatus.map((m) => [m.name, m.leader, m.version])).toEqual([
      ["demo-a", true, "3.6.15"],
      ["demo-b", false, undefined],
      ["demo-c", false, "3.6.15"],
    ]);
    expect(obs.observed.knownMembers).toEqual(["demo-a"]);
  });

  it("a terminating pod is kept for act but hidden from the planner; an outdated template is flagged", async () => {
    const old = pod("demo-b", "10.0.0.2");
    old.metadata.annotations = {};
    const cache = cacheOf([pod("demo-a", "10.0.0.1", { deleting: true }), old]);
    const obs = await observe(
      cluster,
      cache,
      fakeEtcd([member("demo-b", "11")], { "http://10.0.0.2:2379": {} }),
    );
    expect(obs.pods.has("demo-a")).toBe(true);
    expect(obs.observed.pods).toEqual([{ name: "demo-b", ready: true, outdated: true }]);
    expect(obs.observed.terminating).toEqual([{ name: "demo-a", since: new Date("2026-11-30T00:00:00Z") }]);
    expect(obs.endpoints).toEqual(["http://10.0.0.2:2379"]);
  });

  it("no pod with an IP, or no member answering: etcd unreachable with the reason", async () => {
    const none = await observe(cluster, cacheOf([]), fakeEtcd([], {}));
    expect(none.observed.etcd).toEqual({
      reachable: false,
      error: "no member pod has an IP address",
      failure: "network",
    });
    expect(none.observed.bootstrapped).toBe(true);
    const silent = await observe(
      cluster,
      cacheOf([pod("demo-a", "10.0.0.1")]),
      fakeEtcd(new EtcdError("member list: context deadline exceeded", ["http://10.0.0.1:2379"]), {}),
    );
    expect(silent.observed.etcd).toEqual({
      reachable: false,
      error: "member list: context deadline exceeded",
      failure: "network",
    });
  });

  it("classifies the operator's failure and carries the kubelet's evidence (issue 27)", async () => {
    const at = (err: Error) => observe(cluster, cacheOf([pod("demo-a", "10.0.0.1")]), fakeEtcd(err, {}));
    const tls = await at(
      new EtcdError(
        "member list: no etcd endpoint answered (https://10.0.0.1:2379): https://10.0.0.1:2379: UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate",
        ["https://10.0.0.1:2379"],
      ),
    );
    expect(tls.observed.etcd).toMatchObject({ reachable: false, failure: "tls" });
    const auth = await at(
      new EtcdAuthError("WrongPassword", "authenticate as root: authentication failed", []),
    );
    expect(auth.observed.etcd).toMatchObject({ reachable: false, failure: "auth" });
    const refused = await at(
      new EtcdError("member list: no etcd endpoint answered (x): x: connect ECONNREFUSED 10.0.0.1:2379", []),
    );
    expect(refused.observed.etcd).toMatchObject({ reachable: false, failure: "network" });
    // The voters status last saw, and each pod's Ready condition with whether etcd's container runs.
    expect(refused.observed.knownVoters).toEqual(["demo-a"]);
    const crashed = pod("demo-a", "10.0.0.1");
    crashed.status!.containerStatuses = [
      {
        name: "etcd",
        image: "r:v3.6.15",
        imageID: "",
        ready: false,
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
      },
    ];
    const { observed } = await observe(cluster, cacheOf([crashed]), fakeEtcd(new EtcdError("x", []), {}));
    expect(observed.pods).toEqual([expect.objectContaining({ name: "demo-a", ready: true, running: false })]);
  });

  it("carries why a voter's health check failed, classified", async () => {
    const { observed } = await observe(
      cluster,
      cacheOf([pod("demo-a", "10.0.0.1"), pod("demo-b", "10.0.0.2")]),
      (endpoints: string[]) =>
        ({
          ...fakeEtcd([member("demo-a", "1"), member("demo-b", "2")], {
            "http://10.0.0.1:2379": {},
          })(endpoints),
          health: async (endpoint: string) =>
            endpoint.includes("10.0.0.1")
              ? { endpoint, healthy: true }
              : { endpoint, healthy: false, reason: "connect ECONNREFUSED 10.0.0.2:2379" },
        }) as unknown as EtcdClient,
    );
    if (!observed.etcd.reachable) throw new Error("unreachable");
    const b = observed.etcd.members.find((m) => m.name === "demo-b");
    expect(b).toMatchObject({
      healthy: false,
      healthError: "connect ECONNREFUSED 10.0.0.2:2379",
      healthFailure: "network",
    });
    expect(observed.etcd.members.find((m) => m.name === "demo-a")?.healthError).toBeUndefined();
  });

  it("flags what the planner must not mistake for a dead member: unpullable image, unschedulable, empty data dir", async () => {
    const pulling = pod("demo-a", "10.0.0.1", { ready: false });
    pulling.spec = { containers: [{ name: "etcd", image: "r:v3.6.15" }] };
    pulling.status!.containerStatuses = [
      {
        name: "etcd",
        image: "r:v3.6.15",
        imageID: "",
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } },
      },
    ];
    const pending: PodObject = {
      ...pod("demo-b", "", { ready: false }),
      status: {
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            lastTransitionTime: "2026-11-30T00:01:00Z",
          },
        ],
      },
    };
    const wiped = pod("demo-c", "10.0.0.3", { ready: false });
    wiped.status!.containerStatuses = [
      {
        name: "etcd",
        image: "r:v3.6.15",
        imageID: "",
        ready: false,
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: {
          terminated: {
            exitCode: 1,
            message:
              '{"level":"fatal","msg":"discovery failed","error":"cannot fetch cluster info from peer urls: could not retrieve cluster information from the given URLs"}',
          },
        },
      },
    ];
    const obs = await observe(
      cluster,
      cacheOf([pulling, pending, wiped]),
      fakeEtcd(new EtcdError("no answer", []), {}),
    );
    const byName = new Map(obs.observed.pods.map((p) => [p.name, p]));
    expect(byName.get("demo-a")?.imagePullError).toEqual({
      image: "r:v3.6.15",
      reason: "ImagePullBackOff",
      current: true,
    });
    expect(byName.get("demo-b")?.unschedulableSince).toEqual(new Date("2026-11-30T00:01:00Z"));
    expect(byName.get("demo-c")?.dataLost).toBe(true);
    expect(byName.get("demo-a")?.dataLost).toBeUndefined();
  });

  it("a pull failure the kubelet alternates with CrashLoopBackOff stays a pull failure while the old image is reported", async () => {
    const flapping = pod("demo-a", "10.0.0.1", { ready: false });
    flapping.spec = { containers: [{ name: "etcd", image: "r:v3.6.99" }] };
    flapping.status!.containerStatuses = [
      {
        name: "etcd",
        image: "docker.io/r:v3.6.15", // the old container, stopped for the image change
        imageID: "",
        ready: false,
        restartCount: 1,
        state: {
          waiting: { reason: "CrashLoopBackOff", message: "back-off 20s restarting failed container" },
        },
        lastState: { terminated: { exitCode: 0 } },
      },
    ];
    // A container that crash-loops on the image it was given is a crash loop, not a pull failure.
    const crashing = pod("demo-b", "10.0.0.2", { ready: false });
    crashing.spec = { containers: [{ name: "etcd", image: "r:v3.6.99" }] };
    crashing.status!.containerStatuses = [
      {
        name: "etcd",
        image: "docker.io/r:v3.6.99",
        imageID: "sha256:1",
        ready: false,
        restartCount: 4,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { exitCode: 1 } },
      },
    ];
    const obs = await observe(
      { ...cluster, spec: { ...cluster.spec, version: "3.6.99" } },
      cacheOf([flapping, crashing]),
      fakeEtcd(new EtcdError("no answer", []), {}),
    );
    const byName = new Map(obs.observed.pods.map((p) => [p.name, p]));
    expect(byName.get("demo-a")?.imagePullError).toEqual({
      image: "r:v3.6.99",
      reason: "CrashLoopBackOff, still on docker.io/r:v3.6.15",
      current: true,
    });
    expect(byName.get("demo-b")?.imagePullError).toBeUndefined();
  });

  // The etcd container's states -> dataLost. lastState is history once etcd runs again: a learner whose first join
  // failed ("cannot fetch cluster info") and which joined on the kubelet's restart is not a member that lost data
  // (the CI churn of tls.test.ts: such learners were replaced again and again).
  const fetchFailed =
    '{"level":"fatal","msg":"discovery failed","error":"cannot fetch cluster info from peer urls: could not retrieve cluster information from the given URLs"}';
  const raftLost =
    "panic: tocommit(42) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?";
  type ContainerState = NonNullable<
    NonNullable<NonNullable<PodObject["status"]>["containerStatuses"]>[number]["state"]
  >;
  it.each<[string, ContainerState, ContainerState, boolean]>([
    [
      "crash-looping after a failed start",
      { waiting: { reason: "CrashLoopBackOff" } },
      { terminated: { exitCode: 1, message: fetchFailed } },
      true,
    ],
    ["terminated just now", { terminated: { exitCode: 1, message: raftLost } }, {}, true],
    [
      "terminated now, an older failure in lastState",
      { terminated: { exitCode: 1, message: raftLost } },
      { terminated: { exitCode: 1, message: "other" } },
      true,
    ],
    [
      "running again after a failed join (the learner joined on the restart)",
      { running: { startedAt: "2026-12-02T08:07:30Z" } },
      { terminated: { exitCode: 1, message: fetchFailed } },
      false,
    ],
    [
      "running again after a raft-log panic",
      { running: { startedAt: "2026-12-02T08:07:30Z" } },
      { terminated: { exitCode: 2, message: raftLost } },
      false,
    ],
    [
      "crash-looping for another reason",
      { waiting: { reason: "CrashLoopBackOff" } },
      { terminated: { exitCode: 1, message: "bind: address already in use" } },
      false,
    ],
  ])("dataLost of a container %s", async (_, state, lastState, expected) => {
    const p = pod("demo-d", "10.0.0.4", { ready: false });
    p.status!.containerStatuses = [
      { name: "etcd", image: "r:v3.6.15", imageID: "", ready: false, restartCount: 1, state, lastState },
    ];
    const obs = await observe(cluster, cacheOf([p]), fakeEtcd(new EtcdError("no answer", []), {}));
    expect(obs.observed.pods.find((x) => x.name === "demo-d")?.dataLost === true).toBe(expected);
  });

  it("reads alarms, each member's cluster ID and DB size, and what status remembers (cluster ID, version)", async () => {
    const remembered: EtcdCluster = { ...cluster, status: { ...cluster.status, currentVersion: "3.6.14" } };
    const obs = await observe(
      remembered,
      cacheOf([pod("demo-a", "10.0.0.1")]),
      fakeEtcd(
        [member("demo-a", "10")],
        {
          "http://10.0.0.1:2379": {
            leader: "10",
            header: { clusterId: "4096", memberId: "10", revision: 1, raftTerm: 1 },
            dbSize: 1000,
            dbSizeInUse: 400,
          },
        },
        [],
        [{ memberId: "10", alarm: "NOSPACE" }],
      ),
    );
    expect(obs.observed.knownClusterID).toBe("abc");
    expect(obs.observed.knownVersion).toBe("3.6.14");
    expect(obs.observed.etcd).toMatchObject({
      reachable: true,
      clusterID: "ff",
      alarms: [{ member: "demo-a", alarm: "NOSPACE" }],
      members: [{ name: "demo-a", clusterID: "1000", dbSize: 1000, dbSizeInUse: 400 }],
    });
  });

  it("judges a learner by progress: first seen now, the time kept while its index stands still, reset when it moves", async () => {
    const learner = member("demo-b", "11", { isLearner: true });
    const at = (raftIndex: number) =>
      fakeEtcd([member("demo-a", "10"), learner], {
        "http://10.0.0.1:2379": { leader: "10", raftIndex: 1000 },
        "http://10.0.0.2:2379": { leader: "10", raftIndex },
      });
    const cache = cacheOf([pod("demo-a", "10.0.0.1"), pod("demo-b", "10.0.0.2", { ready: false })]);
    const first = await observe(cluster, cache, at(10));
    const firstSeen = first.observed.learnerProgress?.["demo-b"];
    expect(firstSeen).toBeInstanceOf(Date);
    const stuckSince = "2026-11-30T00:00:00Z";
    const withProgress = (raftIndex: number): EtcdCluster => ({
      ...cluster,
      status: {
        ...cluster.status,
        members: [
          {
            name: "demo-b",
            id: "b",
            peerURL: "",
            clientURLs: [],
            healthy: true,
            learner: true,
            leader: false,
            raftIndex,
            progressTime: stuckSince,
          },
        ],
      },
    });
    const still = await observe(withProgress(10), cache, at(10));
    expect(still.observed.learnerProgress?.["demo-b"]).toEqual(new Date(stuckSince));
    expect(still.memberStatus.find((m) => m.name === "demo-b")).toMatchObject({
      raftIndex: 10,
      progressTime: stuckSince,
    });
    const moved = await observe(withProgress(10), cache, at(20));
    expect(moved.observed.learnerProgress?.["demo-b"]?.getTime()).toBeGreaterThan(
      new Date(stuckSince).getTime(),
    );
    expect(moved.memberStatus.find((m) => m.name === "demo-b")).toMatchObject({ raftIndex: 20 });
  });
});
