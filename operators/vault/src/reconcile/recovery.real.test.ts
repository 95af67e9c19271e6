// A VaultRecovery performed by the controller against REAL Vault servers (the "real" test project; the API server is
// core's in-memory one, the pods are local Vault processes, real-fixture.ts): three servers and a secret; two lost
// with their claims; the cluster QuorumLost; a VaultRecovery: the operator asks the survivor its own raft indexes
// (no quorum), marks it, forks, starts it with the init container's script (run with sh on its data directory, the
// raft address of this test's process in place of the pod's DNS name), unseals it, checks it leads alone, hands the
// cluster back, and the two others join fresh. The secret is read from all three voters; the request Succeeded.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { KubeObject, SecretObject } from "@capstan/core";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { type VaultRecovery, VaultRecoveryKind } from "../api/vault-recovery.ts";
import { DATA_DIR } from "../desired/objects.ts";
import { RECOVERY_INIT_CONTAINER } from "../desired/recovery-pod.ts";
import { LocalVault } from "../vault/local-vault.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { readKeys } from "./observe.ts";
import { convergeReal, Pods, type RealCluster, reconcileReal } from "./real-fixture.ts";
import { serverKeeper } from "./test-fixture.ts";

const run = promisify(execFile);
vi.setConfig({ testTimeout: 420_000 });

const base: VaultCluster = {
  apiVersion: VaultClusterKind.apiVersion,
  kind: VaultClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u-recovery", generation: 1 },
  spec: {
    replicas: 3,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 1, threshold: 1, keepRootToken: true, retainKeysOnDelete: true },
  },
};

describe("a VaultRecovery against real Vault servers", () => {
  let real: RealCluster;
  afterAll(async () => {
    await real?.pods.stop();
  });

  it("recovers three servers from the survivor of a lost quorum, with the data written before", async () => {
    const pods = new Pods(await LocalVault.create());
    const inits: string[] = [];
    // The init container, as the kubelet would run it: its script on the pod's data directory.
    pods.beforeStart = async (pod, ports) => {
      const init = pod.spec?.initContainers?.find((c) => c.name === RECOVERY_INIT_CONTAINER);
      const script = init?.command?.[2];
      if (script === undefined) return;
      const name = pod.metadata.name ?? "";
      const local = script
        .replaceAll(DATA_DIR, pods.vault.dataDir(name))
        .replaceAll(`${name}.demo-internal.ns.svc:8201`, `127.0.0.1:${ports?.cluster}`);
      const out = await run("sh", ["-c", local]);
      inits.push(`${name}: ${out.stdout.trim()}`);
    };
    real = {
      base,
      pods,
      metrics: new VaultOperatorMetrics(new Registry()),
      keeper: serverKeeper(),
      kinds: [VaultClusterKind, VaultRecoveryKind],
    };
    let { objects } = await convergeReal(real, [], {});
    const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys");
    const root = readKeys(secret as SecretObject).material.rootToken ?? "";
    const vault = (pod: string) => pods.vault.client(pods.nodes.get(pod)!, root);
    const active = (objects.find((o) => o.kind === "VaultCluster") as VaultCluster).status?.active ?? "";
    await vault(active).call("POST", "/v1/sys/mounts/kv", { type: "kv" });
    await vault(active).call("PUT", "/v1/kv/before", { written: "before the loss" });

    // demo-1 and demo-2 lost with their data: their pods and claims gone (the sync stops their processes).
    const lost = (o: KubeObject) =>
      ["demo-1", "demo-2", "data-demo-1", "data-demo-2"].includes(o.metadata.name ?? "") &&
      (o.kind === "Pod" || o.kind === "PersistentVolumeClaim");
    ({ objects } = await convergeReal(
      real,
      objects.filter((o) => !lost(o)),
      {},
      {
        done: (st) => st?.conditions?.find((c) => c.type === "Degraded")?.reason === "QuorumLost",
      },
    ));

    const request: VaultRecovery = {
      apiVersion: VaultRecoveryKind.apiVersion,
      kind: VaultRecoveryKind.kind,
      metadata: { name: "dr", namespace: "ns", uid: "r-real", creationTimestamp: new Date().toISOString() },
      spec: { clusterName: "demo" },
    };
    objects = [...objects, request];
    let status: VaultRecovery["status"];
    const steps: string[] = [];
    for (let i = 0; i < 150 && status?.phase !== "Succeeded"; i++) {
      const r = await reconcileReal(real, objects);
      objects = r.objects;
      status = r.get(VaultRecoveryKind, "dr", "ns")?.status;
      steps.push(...r.events.filter((e) => e.regarding.kind === "VaultRecovery").map((e) => e.reason));
      if (status?.phase === "Failed" || status?.phase === "Cancelled") break;
      if (r.writes.length === 0) await new Promise((res) => setTimeout(res, 1_000));
    }
    expect(status, JSON.stringify(status)).toMatchObject({ phase: "Succeeded", survivor: "demo-0" });
    expect(status?.raftIndex).toBeGreaterThan(0);
    expect(steps).toEqual(
      expect.arrayContaining(["MarkSurvivor", "Fork", "StartSurvivor", "Unseal", "Verified", "Recovered"]),
    );
    expect(inits).toHaveLength(1);
    expect(inits[0]).toContain("wrote");

    // Three voters again, the survivor leading, the data of before the loss on each.
    const servers = await vault("demo-0").raftConfiguration();
    expect(servers.map((s) => s.node_id).sort()).toEqual(["demo-0", "demo-1", "demo-2"]);
    expect(servers.every((s) => s.voter)).toBe(true);
    for (const pod of ["demo-0", "demo-1", "demo-2"]) {
      const got = await vault(pod).call<{ data: Record<string, string> }>("GET", "/v1/kv/before");
      expect(got.data, pod).toEqual({ written: "before the loss" });
    }
  });
});
