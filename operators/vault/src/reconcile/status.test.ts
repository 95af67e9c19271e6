// The status a reconcile writes: phase and conditions per situation, the pod lists, and no patch when nothing
// changed.
import { statusMergePatch } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { VaultCluster, VaultClusterStatus } from "../api/vault-cluster.ts";
import type { Observed, ObservedPod, Step } from "../plan/plan.ts";
import type { Observation } from "./observe.ts";
import { phaseOf, podState, statusOf } from "./status.ts";

const NOW = new Date("2026-12-01T12:00:00Z");
const IMAGE = "hashicorp/vault:1.14.8";

const cluster = (status?: VaultClusterStatus, replicas = 3): VaultCluster => ({
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultCluster",
  metadata: { name: "demo", namespace: "ns", generation: 4 },
  spec: {
    replicas,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
  },
  ...(status === undefined ? {} : { status }),
});

type S = "active" | "standby" | "sealed" | "uninit" | "down";
const pod = (i: number, s: S, image = IMAGE): ObservedPod => ({
  name: `demo-${i}`,
  ordinal: i,
  ready: s === "active" || s === "standby",
  image,
  vault:
    s === "down"
      ? { reachable: false, error: "x" }
      : {
          reachable: true,
          initialized: s !== "uninit",
          sealed: s === "sealed" || s === "uninit",
          standby: s === "standby",
          version: image.split(":")[1] ?? "",
          clusterID: "cid",
        },
});

function obs(pods: ObservedPod[], o: Partial<Observed> = {}, initialized = true): Observation {
  const active = pods.find((p) => podState(p) === "active")?.name;
  return {
    pods: new Map(),
    claims: new Map(),
    health: new Map(
      pods
        .filter((p) => p.vault.reachable)
        .map((p) => [
          p.name,
          { initialized: true, sealed: false, standby: false, version: p.image.split(":")[1] ?? "" },
        ]),
    ),
    keys: { unsealKeys: [] },
    ...(active === undefined ? {} : { active }),
    clusterID: "cid",
    observed: {
      pods,
      claims: [],
      ...(initialized ? { keys: { unsealKeys: 5, rootToken: false, operatorToken: true } } : {}),
      raft: {
        servers: pods
          .filter((p) => p.vault.reachable && p.vault.initialized)
          .map((p) => ({
            nodeID: p.name,
            address: `${p.name}:8201`,
            voter: true,
            leader: p.name === active,
          })),
      },
      tls: { ready: true },
      ...o,
    },
  };
}

const inSync: Step = { type: "InSync", message: "ok" };
const healthy = [pod(0, "active"), pod(1, "standby"), pod(2, "standby")];
const running: VaultClusterStatus = { phase: "Running", active: "demo-0" };

describe("phaseOf", () => {
  it.each<[string, VaultCluster, Observation, Step, string]>([
    [
      "paused wins",
      { ...cluster(), spec: { ...cluster().spec, paused: true } },
      obs(healthy),
      inSync,
      "Paused",
    ],
    ["nothing answers before init", cluster(), obs([pod(0, "down")], {}, false), inSync, "Pending"],
    [
      "a pod answers before init",
      cluster(),
      obs([pod(0, "uninit")], {}, false),
      { type: "InitVault", pod: "demo-0", message: "" },
      "Initializing",
    ],
    ["in sync", cluster(running), obs(healthy), inSync, "Running"],
    ["degraded", cluster(running), obs(healthy), { type: "Degraded", reason: "X", message: "" }, "Degraded"],
    [
      "an old image",
      cluster(running),
      obs([pod(0, "active", "hashicorp/vault:1.14.6"), pod(1, "standby"), pod(2, "standby")]),
      { type: "Wait", reason: "PodNotReady", message: "" },
      "Upgrading",
    ],
    [
      "scaling out",
      cluster(running, 5),
      obs(healthy),
      { type: "CreatePod", pod: "demo-3", reason: "ScaleOut", message: "" },
      "Scaling",
    ],
    [
      "first growth is still initializing",
      cluster({ phase: "Initializing", active: "demo-0" }),
      obs([pod(0, "active")]),
      { type: "CreatePod", pod: "demo-1", reason: "ScaleOut", message: "" },
      "Initializing",
    ],
  ])("%s", (_n, c, o, step, phase) => expect(phaseOf(c, o, step)).toBe(phase));
});

describe("statusOf", () => {
  it("lists active, standbys and sealed pods, raft peers, the lowest version and the endpoint", () => {
    const pods = [pod(0, "active"), pod(1, "sealed"), pod(2, "standby", "hashicorp/vault:1.14.6")];
    const s = statusOf(
      cluster(running),
      obs(pods),
      inSync,
      { ready: true, message: "ok", notAfter: NOW },
      NOW,
    );
    expect(s).toMatchObject({
      observedGeneration: 4,
      replicas: 3,
      readyReplicas: 2,
      sealedReplicas: 1,
      active: "demo-0",
      standbys: ["demo-2"],
      sealed: ["demo-1"],
      currentVersion: "1.14.6",
      clusterID: "cid",
      endpoint: "https://demo.ns.svc:8200",
      selector: "app.kubernetes.io/name=vault,app.kubernetes.io/instance=demo",
      tls: { notAfter: NOW.toISOString() },
    });
    expect(s.raftPeers?.map((p) => p.nodeID)).toEqual(["demo-0", "demo-1", "demo-2"]);
    const cond = Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c.status]));
    expect(cond).toEqual({
      Available: "True",
      Initialized: "True",
      Sealed: "True",
      TLSReady: "True",
      Progressing: "False",
      Degraded: "False",
    });
  });

  it("the version is the lowest any container runs: a pod changed in place but not restarted keeps the old", () => {
    const changed = { ...pod(2, "standby"), runningImage: "docker.io/hashicorp/vault:1.14.6" };
    const s = statusOf(
      cluster(running),
      obs([pod(0, "active"), pod(1, "standby"), changed]),
      inSync,
      { ready: true, message: "" },
      NOW,
    );
    expect(s.currentVersion).toBe("1.14.6");
    expect(phaseOf(cluster(running), obs([pod(0, "active"), pod(1, "standby"), changed]), inSync)).toBe(
      "Upgrading",
    );
  });

  it("a container that crash-loops or cannot pull runs no version: the recorded one stays", () => {
    const crashing: ObservedPod = {
      ...pod(0, "down", "hashicorp/vault:1.15.0"),
      runningImage: "hashicorp/vault:1.15.0",
      containerFailure: { reason: "CrashLoopBackOff", restarts: 4 },
    };
    const prev: VaultClusterStatus = { ...running, currentVersion: "1.14.8" };
    const s = statusOf(cluster(prev, 1), obs([crashing]), inSync, { ready: true, message: "" }, NOW);
    expect(s.currentVersion).toBe("1.14.8");
    const pulling: ObservedPod = {
      ...pod(0, "down", "hashicorp/vault:1.15.0"),
      imagePullError: { image: "hashicorp/vault:1.15.0", reason: "ImagePullBackOff" },
    };
    expect(
      statusOf(cluster(prev, 1), obs([pulling]), inSync, { ready: true, message: "" }, NOW).currentVersion,
    ).toBe("1.14.8");
  });

  it("a node answering as active without a quorum of voters is not Available: QuorumLost, Degraded", () => {
    const pods = [pod(0, "active"), pod(2, "standby")];
    const lost: Step = {
      type: "Degraded",
      reason: "QuorumLost",
      message: "only 1 of 2 raft voters are unsealed",
    };
    const s = statusOf(cluster(running), obs(pods), lost, { ready: true, message: "ok" }, NOW);
    const byType = Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.Available).toMatchObject({ status: "False", reason: "QuorumLost" });
    expect(byType.Degraded).toMatchObject({ status: "True", reason: "QuorumLost" });
  });

  it("keeps a recorded cluster_id and the last raft peers when no active node answers", () => {
    const prev = {
      clusterID: "first",
      raftPeers: [{ nodeID: "demo-0", address: "a", voter: true, leader: true }],
    };
    const s = statusOf(
      cluster(prev),
      obs([pod(0, "sealed")], { raft: { error: "no active" } }),
      inSync,
      { ready: true, message: "" },
      NOW,
    );
    expect(s.clusterID).toBe("first");
    expect(s.raftPeers).toEqual(prev.raftPeers);
    expect(s.active).toBeUndefined();
  });

  it("a lost init answer leaves Initialized Unknown with its reason", () => {
    const step: Step = { type: "Degraded", reason: "InitResponseLost", message: "lost" };
    const s = statusOf(
      cluster(),
      obs([pod(0, "sealed")], {}, false),
      step,
      { ready: true, message: "" },
      NOW,
    );
    expect(s.conditions?.find((c) => c.type === "Initialized")).toMatchObject({
      status: "Unknown",
      reason: "InitResponseLost",
    });
    expect(s.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "InitResponseLost",
    });
  });
});

describe("statusPatch", () => {
  it("is undefined when nothing changed, and nulls a field that went away", () => {
    const s = statusOf(cluster(running), obs(healthy), inSync, { ready: true, message: "" }, NOW);
    expect(statusMergePatch(s, structuredClone(s))).toBeUndefined();
    const { active: _, ...without } = s;
    expect(statusMergePatch(s, without)?.status.active).toBeNull();
  });
});
