// A VaultRecovery through the VaultCluster's reconcile, against core's in-memory API server and scripted Vault
// nodes: each run starts from the objects alone (as an operator restarted after any step would), the kubelet's part
// is played between runs. The whole path (mark, fork, survivor on peers.json, unseal, verify, replace the old claims,
// hand back, Succeeded), refusals, calling off, a status wiped mid-way, and the cluster's planner held off meanwhile.
import {
  type KubeObject,
  PersistentVolumeClaim,
  type PersistentVolumeClaimObject,
  Pod,
  type PodObject,
} from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { RECOVERY_FINALIZER, type VaultRecovery, VaultRecoveryKind } from "../api/vault-recovery.ts";
import { RECOVERY_INIT_CONTAINER, RECOVERY_POD_ANNOTATION } from "../desired/recovery-pod.ts";
import type { VaultClient, VaultHealth } from "../vault/vault-client.ts";
import { reconcileVaultCluster } from "./controller.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import type { VaultTarget } from "./observe.ts";
import { RECOVERY_PHASE_ANNOTATION, SURVIVOR_ANNOTATION } from "./recovery.ts";
import { cluster, keysSecretWithToken, noKeys, OPERATOR_TOKEN_INFO, podObjects } from "./test-fixture.ts";

/** What one scripted Vault server is. */
interface Node {
  initialized: boolean;
  sealed: boolean;
  standby: boolean;
  applied: number;
  /** The raft configuration it reports when active. */
  servers: string[];
  /** It runs on a peers.json naming only itself: once unsealed it leads alone. */
  peersJson?: boolean;
}

/** Scripted Vault servers by pod name (from the servername the operator dials). */
function fakeVaults(nodes: Map<string, Node>, calls: string[]) {
  return (t: VaultTarget) => {
    const name = t.servername.split(".")[0] ?? "";
    const node = () => {
      const n = nodes.get(name);
      if (n === undefined)
        throw Object.assign(new Error(`connect ECONNREFUSED ${t.address}`), { status: 0, errors: [] });
      return n;
    };
    return {
      close: async () => undefined,
      health: async (): Promise<VaultHealth> => ({
        initialized: node().initialized,
        sealed: node().sealed,
        standby: node().standby,
        version: "1.14.8",
        cluster_id: "cid-1",
      }),
      sealStatus: async () => ({ sealed: node().sealed, initialized: true, t: 2, n: 3, progress: 0 }),
      unsealWith: async () => {
        calls.push(`unseal ${name}`);
        const n = node();
        n.sealed = false;
        if (n.peersJson === true) {
          n.standby = false;
          n.servers = [name];
        }
        return { sealed: false, t: 2, n: 3, progress: 0 };
      },
      leader: async () => {
        calls.push(`leader ${name}`);
        return {
          ha_enabled: true,
          is_self: false,
          leader_address: "",
          raft_applied_index: node().applied,
          raft_committed_index: node().applied,
        };
      },
      raftConfiguration: async () =>
        node().servers.map((id) => ({
          node_id: id,
          address: `${id}:8201`,
          leader: id === name,
          voter: true,
          protocol_version: "3",
        })),
      autopilotState: async () => ({
        healthy: false,
        failure_tolerance: 0,
        leader: name,
        voters: node().servers,
        servers: {},
      }),
      lookupSelf: async () => OPERATOR_TOKEN_INFO,
      raftJoin: async () => {
        calls.push(`join ${name}`);
        return true;
      },
    } as unknown as VaultClient;
  };
}

const demo = (): VaultCluster => ({
  ...cluster(3),
  spec: { ...cluster(3).spec, podTemplate: { antiAffinity: "Preferred" } },
  status: {
    clusterID: "cid-1",
    raftPeers: ["demo-0", "demo-1", "demo-2"].map((id, i) => ({
      nodeID: id,
      address: `${id}:8201`,
      voter: true,
      leader: i === 0,
    })),
  },
});

/** A request naming demo-0 (the lost servers keep their claims: the operator does not choose alone then). */
const request = (over: Partial<VaultRecovery["spec"]> = {}): VaultRecovery => ({
  apiVersion: VaultRecoveryKind.apiVersion,
  kind: VaultRecoveryKind.kind,
  metadata: { name: "dr", namespace: "ns", uid: "r-uid", creationTimestamp: "2026-12-06T00:00:00Z" },
  spec: { clusterName: "demo", survivor: "demo-0", ...over },
});

/** A request that leaves the choice to the operator. */
const autoRequest = (): VaultRecovery => {
  const r = request();
  r.spec = { clusterName: "demo" };
  return r;
};

/** The kubelet: every pod of the cluster runs with an IP; Ready when its Vault is unsealed. */
function kubelet(objects: KubeObject[], nodes: Map<string, Node>): KubeObject[] {
  return objects.map((o) => {
    if (o.kind !== "Pod") return o;
    const pod = structuredClone(o) as PodObject;
    const name = pod.metadata.name ?? "";
    const n = nodes.get(name);
    const ordinal = Number(name.split("-").pop());
    // What Vault's Kubernetes service registration writes on its own pod (a server that answers labels itself).
    if (n !== undefined) {
      pod.metadata.labels = {
        ...pod.metadata.labels,
        "vault-initialized": String(n.initialized),
        "vault-sealed": String(n.sealed),
        "vault-active": String(n.initialized && !n.sealed && !n.standby),
      };
    }
    pod.status = {
      phase: "Running",
      podIP: `10.0.0.${ordinal + 1}`,
      conditions: [
        {
          type: "Ready",
          status: n?.initialized && !n.sealed ? "True" : "False",
          lastTransitionTime: "2026-12-01T00:00:00Z",
        },
      ],
    };
    return pod;
  });
}

/** demo after losing demo-1 and demo-2's pods (their claims kept): demo-0 runs alone, an unsealed standby. */
function lostQuorum(): { objects: KubeObject[]; nodes: Map<string, Node> } {
  const c = demo();
  const claim = (i: number) => {
    const pvc = podObjects(c, i)[1] as PersistentVolumeClaimObject;
    pvc.metadata.uid = `claim-${i}`;
    return pvc;
  };
  const [pod0] = podObjects(c, 0);
  const nodes = new Map<string, Node>([
    [
      "demo-0",
      {
        initialized: true,
        sealed: false,
        standby: true,
        applied: 120,
        servers: ["demo-0", "demo-1", "demo-2"],
      },
    ],
  ]);
  return {
    objects: kubelet([c, pod0!, claim(0), claim(1), claim(2), keysSecretWithToken()], nodes),
    nodes,
  };
}

async function run(objects: KubeObject[], nodes: Map<string, Node>, calls: string[] = []) {
  const r = await reconcileOnce(
    (req, ctx) =>
      reconcileVaultCluster(req, ctx, {
        metrics: new VaultOperatorMetrics(new Registry()),
        keys: noKeys(),
        reloaderImage: "busybox:1.37",
        vaultClient: fakeVaults(nodes, calls),
      }),
    { kinds: [VaultClusterKind, VaultRecoveryKind], objects, request: demo() },
  );
  r.expectNoError();
  return r;
}

const claimOf = (
  r: { get: (k: typeof PersistentVolumeClaim, n: string, ns: string) => unknown },
  n: string,
) => r.get(PersistentVolumeClaim, n, "ns") as PersistentVolumeClaimObject | undefined;

describe("a VaultRecovery, reconciled by its VaultCluster", () => {
  it("recovers from the survivor on peers.json: fence, fork, unseal, verify, replace the old claims, rejoin", async () => {
    const { objects, nodes } = lostQuorum();
    const calls: string[] = [];
    // 1. The survivor is chosen from its own raft indexes and marked on its claim; the finalizer comes first.
    let r = await run([...objects, request()], nodes, calls);
    expect(calls).toContain("leader demo-0");
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.metadata.finalizers).toEqual([RECOVERY_FINALIZER]);
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Running",
      stage: "Fencing",
      survivor: "demo-0",
      raftIndex: 120,
    });
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[SURVIVOR_ANNOTATION]).toBe("r-uid");
    // The cluster's planner is held off: demo-1 and demo-2 are not started again on their old claims.
    expect(r.writesOf(Pod).filter((w) => w.verb === "create")).toEqual([]);
    expect(
      r.get(VaultClusterKind, "demo", "ns")?.status?.conditions?.find((c) => c.type === "Progressing"),
    ).toMatchObject({
      reason: "RecoveryMarkSurvivor",
    });
    expect(r.get(VaultClusterKind, "demo", "ns")?.status?.phase).toBe("Recovering");

    // 2. No other pod exists: the fork is marked (with the claims to replace, by uid), the survivor's pod deleted.
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION]).toBe("fork");
    expect(r.get(Pod, "demo-0", "ns")).toBeUndefined();
    expect(claimOf(r, "data-demo-1")).toBeDefined(); // kept until the survivor serves alone
    expect(r.events.map((e) => `${e.regarding.kind} ${e.reason}`)).toContain("VaultCluster RecoveryFork");

    // 3. The survivor's pod is made with the init container that writes peers.json.
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    const pod = r.get(Pod, "demo-0", "ns") as PodObject;
    expect(pod.metadata.annotations?.[RECOVERY_POD_ANNOTATION]).toBe("dr");
    const init = pod.spec?.initContainers?.find((c) => c.name === RECOVERY_INIT_CONTAINER);
    expect(init?.image).toBe("busybox:1.37");
    expect(init?.command?.join(" ")).toContain(
      '[{"id":"demo-0","address":"demo-0.demo-internal.ns.svc:8201","non_voter":false}]',
    );
    // Vault comes back sealed on peers.json.
    nodes.set("demo-0", {
      initialized: true,
      sealed: true,
      standby: true,
      applied: 121,
      servers: [],
      peersJson: true,
    });

    // 4. Unsealed (Vault applies peers.json), 5. verified the only voter and leader.
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(calls).toContain("unseal demo-0");
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION]).toBe("rejoin");
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status?.stage).toBe("Rejoining");

    // 6. The old claims are deleted, one per reconcile, only now.
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(claimOf(r, "data-demo-1")).toBeUndefined();
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(claimOf(r, "data-demo-2")).toBeUndefined();
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status?.replacedClaims).toEqual([
      "data-demo-1",
      "data-demo-2",
    ]);

    // 7. Handed back: the cluster's own planner makes demo-1 again on a NEW claim; the recovery never deletes that one.
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(r.get(Pod, "demo-1", "ns")).toBeDefined();
    const fresh = claimOf(r, "data-demo-1");
    expect(fresh).toBeDefined();
    expect(fresh?.metadata.uid).not.toBe("claim-1");
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Running",
      stage: "Rejoining",
    });
    nodes.set("demo-1", { initialized: false, sealed: true, standby: true, applied: 0, servers: [] });
    r = await run(kubelet(r.objects, nodes), nodes, calls);
    expect(calls).toContain("join demo-1");
    expect(claimOf(r, "data-demo-1")?.metadata.uid).toBe(fresh?.metadata.uid);
  });

  it("chooses the survivor itself, from each server's own raft indexes, when the lost servers' claims are gone", async () => {
    const { objects, nodes } = lostQuorum();
    const gone = objects.filter(
      (o) => !(o.kind === "PersistentVolumeClaim" && o.metadata.name !== "data-demo-0"),
    );
    const calls: string[] = [];
    const r = await run([...gone, autoRequest()], nodes, calls);
    expect(calls).toContain("leader demo-0");
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Running",
      survivor: "demo-0",
      raftIndex: 120,
      candidates: [{ server: "demo-0", appliedIndex: 120, committedIndex: 120 }],
    });
  });

  it("refuses to choose alone while a lost server keeps its claim (its data may be newer): Failed, nothing changed", async () => {
    const { objects, nodes } = lostQuorum();
    const r = await run([...objects, autoRequest()], nodes);
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Failed",
      reason: "SurvivorUnclear",
    });
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status?.message).toContain(
      "demo-1, demo-2 keep their data claims but cannot be asked",
    );
    expect(
      r.writes.filter((w) => (w.kind === "PersistentVolumeClaim" || w.kind === "Pod") && w.verb !== "patch"),
    ).toEqual([]);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[SURVIVOR_ANNOTATION]).toBeUndefined();
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.metadata.finalizers).toBeUndefined();
  });

  it("succeeds once the cluster is in sync again with every server a voter, and releases its finalizer", async () => {
    const c = demo();
    const nodes = new Map<string, Node>(
      ["demo-0", "demo-1", "demo-2"].map((n, i) => [
        n,
        {
          initialized: true,
          sealed: false,
          standby: i !== 0,
          applied: 200,
          servers: ["demo-0", "demo-1", "demo-2"],
        },
      ]),
    );
    const objects = kubelet(
      [c, ...podObjects(c, 0), ...podObjects(c, 1), ...podObjects(c, 2), keysSecretWithToken()],
      nodes,
    );
    const pod0 = objects.find((o) => o.kind === "Pod" && o.metadata.name === "demo-0") as PodObject;
    pod0.metadata.annotations = { ...pod0.metadata.annotations, [RECOVERY_POD_ANNOTATION]: "dr" };
    const claim0 = objects.find(
      (o) => o.kind === "PersistentVolumeClaim" && o.metadata.name === "data-demo-0",
    ) as PersistentVolumeClaimObject;
    claim0.metadata.annotations = {
      [SURVIVOR_ANNOTATION]: "r-uid",
      [RECOVERY_PHASE_ANNOTATION]: "rejoin",
      "vault.capstan.dev/recovery-replaces": JSON.stringify([{ claim: "data-demo-1", uid: "old-1" }]),
    };
    const dr = { ...request(), metadata: { ...request().metadata, finalizers: [RECOVERY_FINALIZER] } };
    const r = await run([...objects, dr], nodes);
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Succeeded",
      reason: "Recovered",
    });
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.metadata.finalizers).toBeUndefined();
    expect(
      r.events
        .filter((e) => e.reason === "Recovered")
        .map((e) => e.regarding.kind)
        .sort(),
    ).toEqual(["VaultCluster", "VaultRecovery"]);
    // No claim or pod was touched (the cluster was already whole), but the pods' state labels.
    expect(
      r.writes.filter((w) => w.kind === "PersistentVolumeClaim" || (w.kind === "Pod" && w.verb !== "patch")),
    ).toEqual([]);
  });

  it("a second VaultRecovery of the same cluster waits (Pending) for the first, which alone acts", async () => {
    const { objects, nodes } = lostQuorum();
    const second: VaultRecovery = {
      ...request({ survivor: "demo-0" }),
      metadata: { name: "dr-2", namespace: "ns", uid: "r2-uid", creationTimestamp: "2026-12-06T00:05:00Z" },
    };
    const r = await run([...objects, request(), second], nodes);
    expect(r.get(VaultRecoveryKind, "dr-2", "ns")?.status).toMatchObject({
      phase: "Pending",
      reason: "AnotherRecovery",
      message: "waits for VaultRecovery dr of the same cluster to end",
    });
    expect(r.get(VaultRecoveryKind, "dr-2", "ns")?.metadata.finalizers).toBeUndefined();
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[SURVIVOR_ANNOTATION]).toBe("r-uid");
  });

  it("resumes from the marks on the survivor's claim when the request's status is wiped after the fork", async () => {
    const { objects, nodes } = lostQuorum();
    let r = await run([...objects, request()], nodes);
    r = await run(kubelet(r.objects, nodes), nodes);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION]).toBe("fork");
    // The status is lost (a restore of the object without it); the survivor's pod is gone after the fork.
    const wiped = r.objects.map((o) =>
      o.kind === "VaultRecovery" ? { ...o, status: undefined } : o,
    ) as KubeObject[];
    const calls: string[] = [];
    r = await run(kubelet(wiped, nodes), nodes, calls);
    // Not chosen again (no Vault is asked its indexes), not forked again: the survivor's recovery pod is made.
    expect(calls.filter((c) => c.startsWith("leader"))).toEqual([]);
    expect((r.get(Pod, "demo-0", "ns") as PodObject).metadata.annotations?.[RECOVERY_POD_ANNOTATION]).toBe(
      "dr",
    );
  });

  it("waits at the fence while another server's pod is Terminating, and the cluster's status names it", async () => {
    const { objects, nodes } = lostQuorum();
    let r = await run([...objects, request()], nodes);
    const [pod1] = podObjects(demo(), 1);
    (pod1 as PodObject).metadata.finalizers = ["example.com/hold"];
    (pod1 as PodObject).metadata.deletionTimestamp = "2026-12-06T01:00:00Z";
    (pod1 as PodObject).spec = { ...(pod1 as PodObject).spec!, nodeName: "node-2" };
    r = await run([...kubelet(r.objects, nodes), pod1!], nodes);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION]).toBeUndefined();
    expect(r.get(Pod, "demo-0", "ns")).toBeDefined();
    const progressing = r
      .get(VaultClusterKind, "demo", "ns")
      ?.status?.conditions?.find((c) => c.type === "Progressing");
    expect(progressing?.reason).toBe("WaitingForFence");
    expect(progressing?.message).toContain(
      "pod demo-1 is Terminating since 2026-12-06T01:00:00.000Z on node node-2",
    );
  });

  it("is refused while the cluster has a quorum: nothing but statuses and Events is written", async () => {
    const c = demo();
    const nodes = new Map<string, Node>(
      ["demo-0", "demo-1", "demo-2"].map((n, i) => [
        n,
        {
          initialized: true,
          sealed: false,
          standby: i !== 0,
          applied: 200,
          servers: ["demo-0", "demo-1", "demo-2"],
        },
      ]),
    );
    const objects = kubelet(
      [c, ...podObjects(c, 0), ...podObjects(c, 1), ...podObjects(c, 2), keysSecretWithToken()],
      nodes,
    );
    const r = await run([...objects, request()], nodes);
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Failed",
      reason: "QuorumHealthy",
    });
    // Nothing of the cluster's servers (the fixed objects are applied as in any reconcile), no finalizer.
    expect(
      r.writes.filter(
        (w) =>
          w.kind === "PersistentVolumeClaim" ||
          (w.kind === "Pod" && w.verb !== "patch") ||
          (w.kind === "VaultRecovery" && w.subresource !== "status"),
      ),
    ).toEqual([]);
    expect(
      r.events.filter((e) => e.type === "Warning").map((e) => `${e.regarding.kind} ${e.reason}`),
    ).toEqual(["VaultRecovery Refuse", "VaultCluster RecoveryRefuse"]);
  });

  it("deleted before the fork: the survivor mark is removed, the finalizer released, the servers start again", async () => {
    const { objects, nodes } = lostQuorum();
    let r = await run([...objects, request()], nodes);
    const deleting = r.objects.map((o) =>
      o.kind === "VaultRecovery"
        ? { ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-12-06T02:00:00Z" } }
        : o,
    );
    r = await run(kubelet(deleting, nodes), nodes);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[SURVIVOR_ANNOTATION]).toBeUndefined();
    r = await run(kubelet(r.objects, nodes), nodes);
    expect(r.get(VaultRecoveryKind, "dr", "ns")).toBeUndefined();
    // The cluster's own planner again: demo-1 starts on its own (kept) claim.
    r = await run(kubelet(r.objects, nodes), nodes);
    expect(r.get(Pod, "demo-1", "ns")).toBeDefined();
    expect(claimOf(r, "data-demo-1")?.metadata.uid).toBe("claim-1");
  });

  it("deleted after the fork: the deletion is held (Event DeletionHeld) and the recovery goes on", async () => {
    const { objects, nodes } = lostQuorum();
    let r = await run([...objects, request()], nodes);
    r = await run(kubelet(r.objects, nodes), nodes);
    const deleting = r.objects.map((o) =>
      o.kind === "VaultRecovery"
        ? { ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-12-06T02:00:00Z" } }
        : o,
    );
    r = await run(kubelet(deleting, nodes), nodes);
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.metadata.finalizers).toEqual([RECOVERY_FINALIZER]);
    expect(r.events.map((e) => e.reason)).toContain("DeletionHeld");
    expect((r.get(Pod, "demo-0", "ns") as PodObject).metadata.annotations?.[RECOVERY_POD_ANNOTATION]).toBe(
      "dr",
    );
  });

  it("a quorum answering again before the fork cancels it (the mark removed, then Cancelled)", async () => {
    const { objects, nodes } = lostQuorum();
    let r = await run([...objects, request()], nodes);
    // demo-1 and demo-2 come back by themselves (a zone outage heals) before the fork; demo-0 leads them.
    const c = demo();
    for (const n of ["demo-1", "demo-2"])
      nodes.set(n, { initialized: true, sealed: false, standby: true, applied: 130, servers: [] });
    nodes.set("demo-0", {
      initialized: true,
      sealed: false,
      standby: false,
      applied: 130,
      servers: ["demo-0", "demo-1", "demo-2"],
    });
    const back = [...r.objects, podObjects(c, 1)[0]!, podObjects(c, 2)[0]!];
    r = await run(kubelet(back, nodes), nodes);
    expect(claimOf(r, "data-demo-0")?.metadata.annotations?.[SURVIVOR_ANNOTATION]).toBeUndefined();
    r = await run(kubelet(r.objects, nodes), nodes);
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.status).toMatchObject({
      phase: "Cancelled",
      reason: "QuorumReturned",
    });
    expect(r.get(VaultRecoveryKind, "dr", "ns")?.metadata.finalizers).toBeUndefined();
    expect(r.get(Pod, "demo-1", "ns")).toBeDefined();
  });
});
