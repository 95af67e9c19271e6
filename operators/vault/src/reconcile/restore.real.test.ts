// spec.restore performed by the controller against REAL Vault servers (the "real" test project: core's in-memory API
// server, local Vault processes for the pods, real-fixture.ts). A cluster bootstrapped by the operator (its policy
// lets it make snapshot tokens against the role bootstrap wrote), a secret written, a snapshot taken with such a
// token; the cluster deleted with its claims, its keys Secret kept; a new VaultCluster of the same name with
// spec.restore: the operator makes the temporary Vault, its token and the restore Job (whose steps this test runs
// as the kubelet would, with the Job's own arguments' token and file), unseals the restored server with the kept
// keys, confirms, and grows to three servers that join and unseal with those keys, each serving the secret.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject, SecretObject } from "@capstan/core";
import { secretData } from "@capstan/core";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { restoreSnapshot, saveSnapshot } from "../snapshot/commands.ts";
import { LocalVault } from "../vault/local-vault.ts";
import { SNAPSHOT_ROLE } from "../vault/policy.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { readKeys } from "./observe.ts";
import { convergeReal, Pods, type RealCluster, reconcileReal } from "./real-fixture.ts";
import { serverKeeper } from "./test-fixture.ts";

vi.setConfig({ testTimeout: 420_000 });

const spec: VaultCluster["spec"] = {
  replicas: 1,
  version: "1.14.8",
  repository: "hashicorp/vault",
  storage: { size: "1Gi" },
  tls: { duration: "2160h", renewBefore: "720h" },
  unseal: { shares: 3, threshold: 2, keepRootToken: true, retainKeysOnDelete: true },
};
const original: VaultCluster = {
  apiVersion: VaultClusterKind.apiVersion,
  kind: VaultClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u-original", generation: 1 },
  spec,
};
const restored: VaultCluster = {
  ...original,
  metadata: { ...original.metadata, uid: "u-restored" },
  spec: { ...spec, replicas: 3, restore: { pvc: { claimName: "snapshots", path: "ns/demo/s1.snap" } } },
};

describe("spec.restore against real Vault servers", () => {
  let real: RealCluster | undefined;
  const dir = mkdtempSync(join(tmpdir(), "capstan-vault-restore-"));
  afterAll(async () => {
    await real?.pods.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("restores a snapshot into a new VaultCluster, unsealed with the kept keys, three servers serving the secret", async () => {
    const pods = new Pods(await LocalVault.create());
    const caFile = join(dir, "ca.crt");
    writeFileSync(caFile, pods.vault.ca.cert);
    real = {
      base: original,
      pods,
      metrics: new VaultOperatorMetrics(new Registry()),
      keeper: serverKeeper(),
    };
    let { objects } = await convergeReal(real, [], {});
    const keysObject = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys");
    const keys = readKeys(keysObject as SecretObject).material;
    const node = () => pods.nodes.get("demo-0")!;
    const clusterBefore = (objects.find((o) => o.kind === "VaultCluster") as VaultCluster).status?.clusterID;
    await pods.vault.client(node(), keys.rootToken).call("POST", "/v1/sys/mounts/kv", { type: "kv" });
    await pods.vault.client(node(), keys.rootToken).call("PUT", "/v1/kv/app", { password: "before" });

    // A snapshot, with a token the operator's own token makes against the role its bootstrap wrote.
    const token = await pods.vault.client(node(), keys.operatorToken).createLimitedToken({
      role: SNAPSHOT_ROLE,
      ttl: "600s",
      numUses: 1,
      displayName: "vault-snapshot-test",
    });
    writeFileSync(join(dir, "snapshot-token"), token);
    const file = join(dir, "s1.snap");
    await saveSnapshot({ address: node().apiAddr, caFile, tokenFile: join(dir, "snapshot-token"), to: file });

    // The cluster deleted with its claims (the processes stop, their data goes); the keys Secret kept.
    objects = objects.filter((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys");
    await pods.sync(objects);
    expect(pods.nodes.size).toBe(0);

    real = { ...real, base: restored };
    objects = [...objects, restored];
    let ran = false;
    let status: VaultCluster["status"];
    const steps: string[] = [];
    for (let i = 0; i < 120 && status?.restore?.completionTime === undefined; i++) {
      const r = await reconcileReal(real, objects);
      objects = r.objects;
      status = r.get(VaultClusterKind, "demo", "ns")?.status;
      steps.push(...r.events.filter((e) => e.reason.startsWith("Restore")).map((e) => e.reason));
      const job = objects.find((o) => o.kind === "Job" && o.metadata.name === "demo-restore") as
        | (KubeObject & { status?: unknown })
        | undefined;
      if (job !== undefined && !ran) {
        // The Job's restore step, as the kubelet would run it: its token (the Secret it mounts), the fetched file.
        const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-restore-token");
        writeFileSync(join(dir, "restore-token"), secretData(secret as SecretObject).token ?? "");
        await restoreSnapshot({
          address: node().apiAddr,
          caFile,
          tokenFile: join(dir, "restore-token"),
          file,
        });
        job.status = { conditions: [{ type: "Complete", status: "True" }] };
        ran = true;
      }
      if (r.writes.length === 0) await new Promise((res) => setTimeout(res, 1_000));
    }
    expect(status?.restore, JSON.stringify(status?.conditions)).toMatchObject({
      source: "pvc://snapshots/ns/demo/s1.snap",
      clusterID: clusterBefore,
    });
    expect(steps).toEqual(
      expect.arrayContaining([
        "RestoreCreateFirstPod",
        "RestoreInitTemporary",
        "RestoreMakeToken",
        "RestoreCreateJob",
      ]),
    );
    for (const gone of ["demo-restore-keys", "demo-restore-token"]) {
      expect(
        objects.some((o) => o.kind === "Secret" && o.metadata.name === gone),
        gone,
      ).toBe(false);
    }

    // The cluster's own steps: two more servers join and unseal with the kept keys.
    ({ objects } = await convergeReal(real, objects, { replicas: 3 }));
    const final = objects.find((o) => o.kind === "VaultCluster") as VaultCluster;
    expect(final.status?.clusterID).toBe(clusterBefore);
    for (const pod of ["demo-0", "demo-1", "demo-2"]) {
      const got = await pods.vault
        .client(pods.nodes.get(pod)!, keys.rootToken)
        .call<{ data: Record<string, string> }>("GET", "/v1/kv/app");
      expect(got.data, pod).toEqual({ password: "before" });
    }
  });
});
