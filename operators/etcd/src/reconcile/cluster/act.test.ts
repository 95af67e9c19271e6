import type { PodObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { SEED_CLAIM_ANNOTATION } from "../../desired/names.ts";
import type { EtcdClient, EtcdMember } from "../../etcd/etcd-client.ts";
import { recordingClient } from "../test-fixture.ts";
import { act, memberIdToDecimal } from "./act.ts";
import type { Observation } from "./observe.ts";

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: { replicas: 3, version: "3.6.16", repository: "repo/etcd", storage: { size: "1Gi" } },
  status: {
    members: [
      {
        name: "demo-a",
        id: "a",
        peerURL: "http://demo-a.demo-peer.ns.svc:2380",
        clientURLs: [],
        healthy: false,
        learner: false,
        leader: false,
      },
      {
        name: "demo-b",
        id: "b",
        peerURL: "http://demo-b.demo-peer.ns.svc:2380",
        clientURLs: [],
        healthy: false,
        learner: false,
        leader: false,
      },
    ],
  },
};

function etcdMember(name: string, id: string, started = true): EtcdMember {
  return {
    id,
    name: started ? name : "",
    peerURLs: [`http://${name}.demo-peer.ns.svc:2380`],
    clientURLs: [],
    isLearner: !started,
  };
}

/** Records every etcd call; the member list answers `listed` (decimal IDs), or throws when it is an Error. */
function recordingEtcd(
  listed: EtcdMember[] | Error = [etcdMember("demo-a", "10"), etcdMember("demo-b", "11")],
) {
  const calls: string[] = [];
  const etcd = {
    memberList: async (o: { linearizable?: boolean } = {}) => {
      calls.push(o.linearizable === true ? "list linearizable" : "list");
      if (listed instanceof Error) throw listed;
      return { header: {}, members: listed };
    },
    defragment: async (endpoint: string) => void calls.push(`defragment ${endpoint}`),
    memberAddAsLearner: async (urls: string[]) => {
      calls.push(`add ${urls.join(",")}`);
      return { id: "1", name: "", peerURLs: urls, clientURLs: [], isLearner: true };
    },
    memberPromote: async (id: string) => void calls.push(`promote ${id}`),
    memberRemove: async (id: string) => void calls.push(`remove ${id}`),
    moveLeader: async (id: string) => void calls.push(`move ${id}`),
  };
  return { factory: () => etcd as unknown as EtcdClient, calls };
}

const pod = (
  name: string,
  image = "repo/etcd:v3.6.15",
  o: Partial<PodObject["metadata"]> = {},
): PodObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, ...o },
  spec: { containers: [{ name: "etcd", image }] },
});

/** The etcd container's args of a created pod. */
const argsOf = (body: unknown): string[] => (body as PodObject | undefined)?.spec?.containers[0]?.args ?? [];

const obs = (o: Partial<Observation> = {}): Observation => ({
  observed: { etcd: { reachable: true, members: [] }, pods: [], volumes: [], bootstrapped: true },
  pods: new Map(),
  claims: new Map(),
  members: [],
  memberStatus: [],
  endpoints: ["http://10.0.0.1:2379"],
  ...o,
});

describe("act", () => {
  it("converts hexadecimal member IDs to etcd's decimal form", () => {
    expect(memberIdToDecimal("ffffffffffffffff")).toBe("18446744073709551615");
    // A pair from a real etcd log (member 2c2bc3b10c179611 listed in raft voters as 3182852726846887441).
    expect(memberIdToDecimal("2c2bc3b10c179611")).toBe("3182852726846887441");
  });

  it("CreateSeed: a claim and a pod that bootstraps a new cluster of itself", async () => {
    const api = recordingClient();
    const r = await act(
      { type: "CreateSeed", name: "demo-a", message: "" },
      { client: api.client, cluster, obs: obs() },
    );
    expect(r).toEqual({ done: true });
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual([
      "create PersistentVolumeClaim demo-a-data",
      "create Pod demo-a",
    ]);
    // The claim says it is a seed's: if the operator stops before the pod is made, the planner resumes the seed.
    const claim = api.calls[0]?.body as { metadata: { annotations?: Record<string, string> } };
    expect(claim.metadata.annotations?.[SEED_CLAIM_ANNOTATION]).toBe("true");
    const args = argsOf(api.calls[1]?.body);
    expect(args).toContain("--initial-cluster-state=new");
    expect(args).toContain("--initial-cluster=demo-a=http://demo-a.demo-peer.ns.svc:2380");
  });

  it("StartMemberPod for a learner: --initial-cluster lists every member, names recovered from peer URLs", async () => {
    const api = recordingClient();
    const o = obs({ members: [etcdMember("demo-a", "10"), etcdMember("demo-c", "12", false)] });
    await act(
      { type: "StartMemberPod", name: "demo-c", reason: "NotStarted", message: "" },
      { client: api.client, cluster, obs: o },
    );
    const args = argsOf(api.calls.at(-1)?.body);
    expect(args).toContain("--initial-cluster-state=existing");
    expect(args).toContain(
      "--initial-cluster=demo-a=http://demo-a.demo-peer.ns.svc:2380,demo-c=http://demo-c.demo-peer.ns.svc:2380",
    );
  });

  it("StartMemberPod on kept data: only itself in --initial-cluster (an empty data dir then stops etcd), no new claim", async () => {
    const api = recordingClient();
    const o = obs({
      members: [etcdMember("demo-a", "10"), etcdMember("demo-b", "11")],
      claims: new Map([["demo-b", { metadata: { name: "demo-b-data" } }]]),
    });
    await act(
      { type: "StartMemberPod", name: "demo-b", reason: "PodMissing", message: "" },
      { client: api.client, cluster, obs: o },
    );
    expect(api.calls.map((c) => `${c.verb} ${c.kind}`)).toEqual(["create Pod"]);
    const args = argsOf(api.calls[0]?.body);
    expect(args).toContain("--initial-cluster-state=existing");
    expect(args).toContain("--initial-cluster=demo-b=http://demo-b.demo-peer.ns.svc:2380");
  });

  it("removals confirm the member in a linearizable member list; one already gone is not removed again", async () => {
    const api = recordingClient();
    const etcd = recordingEtcd([etcdMember("demo-a", "10")]);
    const ctx = { client: api.client, cluster, obs: obs(), etcdClient: etcd.factory };
    expect(await act({ type: "RemoveMember", id: "b", name: "demo-b", message: "" }, ctx)).toEqual({
      done: true,
    });
    expect(etcd.calls).toEqual(["list linearizable"]);
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual([
      "delete Pod demo-b",
      "delete PersistentVolumeClaim demo-b-data",
    ]);
  });

  it("CleanupMember deletes nothing while a quorum still lists the member, or when the quorum cannot be read", async () => {
    const api = recordingClient();
    const listed = recordingEtcd([etcdMember("demo-a", "10"), etcdMember("demo-b", "11", false)]);
    const step = { type: "CleanupMember", name: "demo-b", message: "" } as const;
    expect(
      await act(step, { client: api.client, cluster, obs: obs(), etcdClient: listed.factory }),
    ).toMatchObject({ done: false, reason: "MemberStillListed" });
    const noQuorum = recordingEtcd(new Error("etcdserver: request timed out"));
    await expect(
      act(step, { client: api.client, cluster, obs: obs(), etcdClient: noQuorum.factory }),
    ).rejects.toThrow("timed out");
    expect(api.calls).toEqual([]);
    const gone = recordingEtcd([etcdMember("demo-a", "10")]);
    await act(step, { client: api.client, cluster, obs: obs(), etcdClient: gone.factory });
    expect(gone.calls).toEqual(["list linearizable"]);
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual([
      "delete Pod demo-b",
      "delete PersistentVolumeClaim demo-b-data",
    ]);
  });

  it("ReplaceMember of a stuck-terminating member force-deletes its pod after MemberRemove", async () => {
    const api = recordingClient();
    const etcd = recordingEtcd();
    const ctx = { client: api.client, cluster, obs: obs(), etcdClient: etcd.factory };
    await act(
      { type: "ReplaceMember", id: "b", name: "demo-b", reason: "StuckTerminating", message: "" },
      ctx,
    );
    expect(etcd.calls).toEqual(["list linearizable", "remove 11"]);
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name} ${c.body ?? ""}`)).toEqual([
      "delete Pod demo-b force",
      "delete PersistentVolumeClaim demo-b-data ",
    ]);
  });

  it("Defragment asks only the member's own endpoint", async () => {
    const etcd = recordingEtcd();
    const o = obs({ pods: new Map([["demo-b", { ...pod("demo-b"), status: { podIP: "10.0.0.2" } }]]) });
    await act(
      { type: "Defragment", id: "b", name: "demo-b", message: "" },
      { client: recordingClient().client, cluster, obs: o, etcdClient: etcd.factory },
    );
    expect(etcd.calls).toEqual(["defragment http://10.0.0.2:2379"]);
  });

  it("StartMemberPod waits while the old pod terminates, and deletes a failed one first", async () => {
    const api = recordingClient();
    const terminating = obs({
      pods: new Map([["demo-b", pod("demo-b", undefined, { deletionTimestamp: "x" })]]),
    });
    const step = { type: "StartMemberPod", name: "demo-b", reason: "PodMissing", message: "" } as const;
    expect(await act(step, { client: api.client, cluster, obs: terminating })).toMatchObject({
      done: false,
      reason: "PodTerminating",
    });
    expect(api.calls).toEqual([]);
    const failed = obs({ pods: new Map([["demo-b", pod("demo-b")]]) });
    await act(step, { client: api.client, cluster, obs: failed });
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual(["delete Pod demo-b"]);
  });

  it("membership steps call etcd with decimal IDs; removals then delete the pod and claim", async () => {
    const api = recordingClient();
    const etcd = recordingEtcd();
    const ctx = { client: api.client, cluster, obs: obs(), etcdClient: etcd.factory };
    await act({ type: "AddLearner", name: "demo-d", message: "" }, ctx);
    await act({ type: "PromoteLearner", id: "ff", name: "demo-d", message: "" }, ctx);
    await act({ type: "MoveLeader", from: "a", to: "10", toName: "demo-d", message: "" }, ctx);
    await act({ type: "RemoveMember", id: "b", name: "demo-b", message: "" }, ctx);
    expect(etcd.calls).toEqual([
      "add http://demo-d.demo-peer.ns.svc:2380",
      "promote 255",
      "move 16",
      "list linearizable",
      "remove 11",
    ]);
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual([
      "delete Pod demo-b",
      "delete PersistentVolumeClaim demo-b-data",
    ]);
  });

  it("RestartMember deletes only the pod: the member restarts on its data", async () => {
    const api = recordingClient();
    await act(
      { type: "RestartMember", id: "a", name: "demo-a", message: "" },
      { client: api.client, cluster, obs: obs() },
    );
    expect(api.calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual(["delete Pod demo-a"]);
  });

  it("MemberRemove is asked through the other members, never the one being removed", async () => {
    const seen: string[][] = [];
    const etcd = recordingEtcd();
    const ctx = {
      client: recordingClient().client,
      cluster,
      obs: obs({
        endpoints: ["http://10.0.0.1:2379", "http://10.0.0.2:2379"],
        pods: new Map([["demo-a", { ...pod("demo-a"), status: { podIP: "10.0.0.1" } }]]),
      }),
      etcdClient: (endpoints: string[]) => {
        seen.push(endpoints);
        return etcd.factory();
      },
    };
    await act({ type: "RemoveMember", id: "a", name: "demo-a", message: "" }, ctx);
    expect(seen).toEqual([["http://10.0.0.2:2379"]]);
    expect(etcd.calls).toEqual(["list linearizable", "remove 10"]);
  });

  it("UpgradeMember patches the etcd container's image once, then waits for the restart", async () => {
    const api = recordingClient();
    const step = {
      type: "UpgradeMember",
      id: "a",
      name: "demo-a",
      from: "3.6.15",
      to: "3.6.16",
      message: "",
    } as const;
    const old = obs({ pods: new Map([["demo-a", pod("demo-a")]]) });
    expect(await act(step, { client: api.client, cluster, obs: old })).toEqual({ done: true });
    expect(api.calls[0]?.body).toEqual([
      { op: "test", path: "/spec/containers/0/name", value: "etcd" },
      { op: "replace", path: "/spec/containers/0/image", value: "repo/etcd:v3.6.16" },
    ]);
    const patched = obs({ pods: new Map([["demo-a", pod("demo-a", "repo/etcd:v3.6.16")]]) });
    expect(await act(step, { client: api.client, cluster, obs: patched })).toMatchObject({
      done: false,
      reason: "MemberRestarting",
    });
    expect(api.calls).toHaveLength(1);
  });
});
