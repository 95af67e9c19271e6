// The controller driven against REAL Vault servers (one local process per pod the operator creates) and core's
// in-memory API server: bootstrap with one init, the operator's own token, raft joins, unseal after a restart,
// scale 3 -> 5 -> 3 with peers removed before pods and claims. Only the network is faked: each pod's Vault is a
// process on 127.0.0.1, and a raft join towards a pod's DNS name is pointed at that process (the "real"
// test project).
import type { KubeObject, PodObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type VaultCluster, VaultClusterKind, type VaultClusterSpec } from "../api/vault-cluster.ts";
import { STATE_LABEL } from "../desired/names.ts";
import { LocalVault } from "../vault/local-vault.ts";
import { reconcileVaultCluster } from "./controller.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { convergeReal, Pods } from "./real-fixture.ts";
import { serverKeeper } from "./test-fixture.ts";

vi.setConfig({ testTimeout: 300_000 });

const base: VaultCluster = {
  apiVersion: VaultClusterKind.apiVersion,
  kind: VaultClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u-real", generation: 1 },
  spec: {
    replicas: 3,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 3, threshold: 2, keepRootToken: false, retainKeysOnDelete: true },
  },
};

describe("the controller against real Vault servers", () => {
  let pods: Pods;
  let objects: KubeObject[] = [];
  const steps: string[] = [];
  const metrics = new VaultOperatorMetrics(new Registry());
  const keeper = serverKeeper();

  afterAll(async () => {
    await pods?.stop();
  });

  /** Reconciles until the status reports InSync; returns the steps taken. */
  async function converge(spec: Partial<VaultClusterSpec>, max = 120): Promise<string[]> {
    const real = { base, pods, metrics, keeper, plan: { initGraceMs: 5_000 } };
    const r = await convergeReal(real, objects, spec, { max });
    objects = r.objects;
    steps.push(...r.taken);
    return r.taken;
  }

  const statusOf = () => (objects.find((o) => o.kind === "VaultCluster") as VaultCluster).status;
  const names = (kind: string) =>
    objects
      .filter((o) => o.kind === kind)
      .map((o) => o.metadata.name)
      .sort();

  it("bootstraps 3 pods: one init, the operator token, joins, all unsealed, one active", async () => {
    pods = new Pods(await LocalVault.create());
    const taken = await converge({});
    expect(taken.filter((s) => s.startsWith("InitVault"))).toEqual(["InitVault demo-0"]);
    expect(taken).toContain("BootstrapToken");
    expect(taken).toContain("RevokeRootToken");
    expect(taken.filter((s) => s.startsWith("JoinRaft")).sort()).toEqual([
      "JoinRaft demo-1",
      "JoinRaft demo-2",
    ]);
    const status = statusOf()!;
    expect(status).toMatchObject({ phase: "Running", replicas: 3, readyReplicas: 3, sealedReplicas: 0 });
    expect(status.raftPeers?.map((p) => p.nodeID)).toEqual(["demo-0", "demo-1", "demo-2"]);
    expect(status.raftPeers?.every((p) => p.voter)).toBe(true);
    expect(status.clusterID).toMatch(/^[0-9a-f-]{36}$/);
    const keys = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys") as {
      data?: Record<string, string>;
    } & KubeObject;
    expect(Object.keys(keys.data ?? {}).sort()).toEqual([
      "operator-token",
      "unseal-key-0",
      "unseal-key-1",
      "unseal-key-2",
    ]);
    const labels = objects
      .filter((o) => o.kind === "Pod")
      .map((o) => o.metadata.labels?.[STATE_LABEL])
      .sort();
    expect(labels).toEqual(["active", "standby", "standby"]);
    // The steady state against a real cluster writes nothing to the API server.
    const steady = await reconcileOnce(
      (req, ctx) =>
        reconcileVaultCluster(req, ctx, {
          metrics,
          keys: keeper.keys,
          reloaderImage: "busybox:1.37",
          vaultClient: pods.factory,
        }),
      {
        kinds: [VaultClusterKind],
        objects: await pods.sync(objects),
        request: base,
        timeoutMs: 60_000,
        setup: keeper.bind,
      },
    );
    steady.expectNoError();
    steady.expectNoWrites();
  });

  it("unseals a pod whose Vault restarted (sealed again), within one reconcile", async () => {
    const standby = objects.find((o) => o.kind === "Pod" && o.metadata.labels?.[STATE_LABEL] === "standby")!;
    const name = standby.metadata.name ?? "";
    const node = pods.nodes.get(name)!;
    await pods.vault.kill(node);
    pods.nodes.set(
      name,
      Object.assign(await pods.vault.start(name), { image: (node as { image?: string }).image }),
    );
    const taken = await converge({});
    expect(taken).toContain(`Unseal ${name}`);
    expect(taken.filter((s) => s.startsWith("InitVault") || s.startsWith("JoinRaft"))).toEqual([]);
  });

  it("scales 3 -> 5 -> 3: raft peers equal the pods after each, no dead peer, claims of removed pods gone", async () => {
    await converge({ replicas: 5 });
    expect(statusOf()?.raftPeers?.map((p) => p.nodeID)).toEqual(names("Pod"));
    expect(names("Pod")).toHaveLength(5);
    const taken = await converge({ replicas: 3 });
    expect(taken.filter((s) => /RemovePeer|DeletePod/.test(s))).toEqual([
      "RemovePeer demo-4",
      "DeletePod demo-4",
      "RemovePeer demo-3",
      "DeletePod demo-3",
    ]);
    expect(statusOf()?.raftPeers?.map((p) => p.nodeID)).toEqual(["demo-0", "demo-1", "demo-2"]);
    expect(names("PersistentVolumeClaim")).toEqual(["data-demo-0", "data-demo-1", "data-demo-2"]);
    expect(steps.filter((s) => s.startsWith("InitVault"))).toHaveLength(1);
  });

  it("a pod whose claim was lost with it rejoins after its old peer is removed", async () => {
    const victim = objects.find((o) => o.kind === "Pod" && o.metadata.labels?.[STATE_LABEL] === "standby")!;
    const name = victim.metadata.name ?? "";
    objects = objects.filter(
      (o) =>
        !(o.kind === "Pod" && o.metadata.name === name) &&
        !(o.kind === "PersistentVolumeClaim" && o.metadata.name === `data-${name}`),
    );
    const taken = await converge({ replicas: 3 });
    expect(taken.filter((s) => /CreatePod|RemovePeer|JoinRaft|InitVault/.test(s))).toEqual([
      `CreatePod ${name}`,
      `RemovePeer ${name}`,
      `JoinRaft ${name}`,
    ]);
    expect(statusOf()?.raftPeers?.map((p) => p.nodeID)).toEqual(["demo-0", "demo-1", "demo-2"]);
    expect(objects.some((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys")).toBe(true);
  });

  it("rolls a version change: standbys one at a time, then a step-down, the old active last", async () => {
    const before = statusOf()?.active;
    expect(before).toBeDefined();
    // The same binary under another image name: each pod's process restarts on its data, as the kubelet would.
    const taken = await converge({ replicas: 3, version: "1.14.9" });
    const rolled = taken.filter((s) => /UpgradePod|StepDown/.test(s));
    expect(rolled).toHaveLength(4);
    expect(rolled[2]).toBe(`StepDown ${before}`);
    expect(rolled[3]).toBe(`UpgradePod ${before}`);
    expect(rolled.slice(0, 2).every((s) => s.startsWith("UpgradePod") && !s.endsWith(before ?? ""))).toBe(
      true,
    );
    const images = objects
      .filter((o) => o.kind === "Pod")
      .map((o) => (o as PodObject).spec?.containers.find((c) => c.name === "vault")?.image);
    expect(images).toEqual(["hashicorp/vault:1.14.9", "hashicorp/vault:1.14.9", "hashicorp/vault:1.14.9"]);
    expect(statusOf()).toMatchObject({ phase: "Running", readyReplicas: 3, sealedReplicas: 0 });
    expect(steps.filter((s) => s.startsWith("InitVault"))).toHaveLength(1);
  });
});
