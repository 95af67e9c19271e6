// A paused VaultCluster: no action on Vault or its pods, but the operator keeps observing (status, the gauges
// the chart's alerts read) and keeps the listener certificate valid.
import { type KubeObject, type PodObject, Secret } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { reconcileVaultCluster } from "./controller.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { cluster, fakeVault, keysSecretWithToken, noKeys, podObjects, reconcile } from "./test-fixture.ts";

/** The objects of an initialized one-pod cluster whose pod is ready (keys with an operator token). */
async function runningCluster(): Promise<KubeObject[]> {
  const first = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
    kinds: [VaultClusterKind],
    objects: [cluster()],
    request: cluster(),
  });
  const [pod, claim] = podObjects(cluster(), 0);
  (pod as PodObject).status = {
    ...(pod as PodObject).status,
    conditions: [{ type: "Ready", status: "True" }],
  };
  const keys = keysSecretWithToken();
  return [
    ...first.objects.filter((o) => o.kind !== "Pod" && o.kind !== "PersistentVolumeClaim"),
    pod!,
    claim!,
    keys,
  ];
}

const paused = (): VaultCluster => ({ ...cluster(), spec: { ...cluster().spec, paused: true } });

describe("a paused VaultCluster", () => {
  it("keeps reporting what it observes: the active pod in status and the gauges, with no write but status", async () => {
    const objects = (await runningCluster()).map((o) => (o.kind === "VaultCluster" ? paused() : o));
    const registry = new Registry();
    const metrics = new VaultOperatorMetrics(registry);
    const calls: string[] = [];
    const run = await reconcileOnce(
      (req, ctx) =>
        reconcileVaultCluster(req, ctx, {
          metrics,
          keys: noKeys(),
          reloaderImage: "busybox:1.37",
          vaultClient: fakeVault(calls, { initialized: true, sealed: false }),
        }),
      { kinds: [VaultClusterKind], objects, request: paused() },
    );
    run.expectNoError();
    expect(calls).toEqual([]);
    expect(run.writes.filter((w) => w.subresource !== "status")).toEqual([]);
    const status = run.get(VaultClusterKind, "demo", "ns")?.status;
    expect(status).toMatchObject({ phase: "Paused", active: "demo-0", readyReplicas: 1 });
    expect(status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
    // Observed again as often as a cluster in sync (Vault's state is in no Kubernetes object).
    expect(run.result?.requeueAfter).toBe(15_000);
    const gauge = await registry.getSingleMetric("capstan_vault_cluster_pods")?.get();
    expect(gauge?.values.find((v) => v.labels.state === "active")?.value).toBe(1);
  });

  it("keeps the listener certificate valid: a missing server certificate is issued again", async () => {
    const objects = (await runningCluster())
      .filter((o) => !(o.kind === "Secret" && o.metadata.name === "demo-tls"))
      .map((o) => (o.kind === "VaultCluster" ? paused() : o));
    const calls: string[] = [];
    const run = await reconcileOnce(reconcile(calls, { initialized: true, sealed: false }), {
      kinds: [VaultClusterKind],
      objects,
      request: paused(),
    });
    run.expectNoError();
    expect(run.get(Secret, "demo-tls", "ns")?.type).toBe("kubernetes.io/tls");
    expect(run.writes.filter((w) => w.kind === "Pod")).toEqual([]);
  });
});
