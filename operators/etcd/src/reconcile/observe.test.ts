import type { Cache, Kind, KubeObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import { POD_TEMPLATE_HASH_ANNOTATION, type PodObject, podTemplateHash } from "../desired/member-pod.ts";
import { type EtcdClient, EtcdError, type EtcdMember, type EtcdStatus } from "../etcd/etcd-client.ts";
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
) {
  return (endpoints: string[]) => {
    seen.push(endpoints);
    return {
      memberList: async () => {
        if (members instanceof Error) throw members;
        return { header: { clusterId: "255", memberId: "1", revision: 1, raftTerm: 1 }, members };
      },
      status: async (endpoint: string) => {
        const s = statuses[endpoint];
        if (s === undefined) throw new EtcdError("no answer", [endpoint]);
        return { leader: "0", version: "3.6.15", raftIndex: 100, ...s } as EtcdStatus;
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
    expect(obs.endpoints).toEqual(["http://10.0.0.2:2379"]);
  });

  it("no pod with an IP, or no member answering: etcd unreachable with the reason", async () => {
    const none = await observe(cluster, cacheOf([]), fakeEtcd([], {}));
    expect(none.observed.etcd).toEqual({ reachable: false, error: "no member pod has an IP address" });
    expect(none.observed.bootstrapped).toBe(true);
    const silent = await observe(
      cluster,
      cacheOf([pod("demo-a", "10.0.0.1")]),
      fakeEtcd(new EtcdError("member list: context deadline exceeded", ["http://10.0.0.1:2379"]), {}),
    );
    expect(silent.observed.etcd).toEqual({
      reachable: false,
      error: "member list: context deadline exceeded",
    });
  });
});
