// Reconciles with spec.autopilot against core's in-memory API server and a scripted Vault: the configuration is
// written once through the active pod and never in the steady state; a 403 (the policy of an older operator) is
// Degraded AutopilotForbidden with the command, holding nothing else back; status.autopilot and the gauges follow
// autopilot's state.
import type { KubeObject, PodObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type VaultAutopilot, type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { VaultError } from "../vault/vault-client.ts";
import { reconcileVaultCluster } from "./controller.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import { cluster, fakeVault, keysSecretWithToken, noKeys, podObjects, settings } from "./test-fixture.ts";

/** What a new Vault 1.14 cluster answers. */
const DEFAULTS = {
  cleanup_dead_servers: false,
  dead_server_last_contact_threshold: "24h0m0s",
  disable_upgrade_migration: false,
  last_contact_threshold: "10s",
  max_trailing_logs: 1000,
  min_quorum: 0,
  server_stabilization_time: "10s",
};
const FORBIDDEN = () => {
  throw new VaultError("/v1/sys/storage/raft/autopilot/configuration", 403, [
    "1 error occurred:",
    "permission denied",
  ]);
};

/** A cluster whose pods run, ready and unsealed, with its keys and a scripted autopilot. */
function scripted(
  replicas: number,
  pods: number,
  autopilot: VaultAutopilot | undefined,
  vault: Record<string, unknown>,
) {
  const c: VaultCluster = {
    ...cluster(replicas),
    spec: { ...cluster(replicas).spec, ...(autopilot ? { autopilot } : {}) },
  };
  const objects: KubeObject[] = [c, keysSecretWithToken()];
  for (let i = 0; i < pods; i++) {
    for (const o of podObjects(c, i)) {
      if (o.kind === "Pod") (o as PodObject).status!.conditions = [{ type: "Ready", status: "True" }];
      objects.push(o);
    }
  }
  const calls: string[] = [];
  const metrics = new VaultOperatorMetrics(new Registry());
  const run = (objs: KubeObject[]) =>
    reconcileOnce(
      (req, ctx) =>
        reconcileVaultCluster(req, ctx, {
          metrics,
          keys: noKeys(),
          reloaderImage: settings.reloaderImage,
          vaultClient: fakeVault(calls, { initialized: true, sealed: false }, undefined, vault),
        }),
      { kinds: [VaultClusterKind], objects: objs, request: c },
    );
  return { objects, calls, metrics, run };
}

const status = (objs: readonly KubeObject[]) =>
  (objs.find((o) => o.kind === "VaultCluster") as VaultCluster).status;

describe("spec.autopilot in a reconcile", () => {
  it("written once through the active pod, then the steady state writes nothing (neither Vault nor status)", async () => {
    let live = { ...DEFAULTS };
    const posts: unknown[] = [];
    const { objects, run } = scripted(
      1,
      1,
      { lastContactThreshold: "5s", maxTrailingLogs: 500 },
      {
        autopilotConfiguration: async () => live,
        setAutopilotConfiguration: async (body: Partial<typeof DEFAULTS>) => {
          posts.push(body);
          live = { ...live, ...body };
        },
      },
    );
    const first = await run(objects);
    first.expectNoError();
    expect(first.events.map((e) => e.reason)).toContain("ConfigureAutopilot");
    expect(posts).toEqual([
      {
        cleanup_dead_servers: false,
        dead_server_last_contact_threshold: "24h",
        last_contact_threshold: "5s",
        max_trailing_logs: 500,
        server_stabilization_time: "10s",
      },
    ]);
    const second = await run(first.objects);
    second.expectNoError();
    expect(status(second.objects)?.conditions?.find((c) => c.type === "Progressing")?.reason).toBe("InSync");
    const steady = await run(second.objects);
    steady.expectNoError();
    steady.expectNoWrites();
    expect(posts).toHaveLength(1);
  });

  it("a 403 on the configuration: Degraded AutopilotForbidden with the command, one Warning, no write", async () => {
    const posts: unknown[] = [];
    const { objects, run } = scripted(
      1,
      1,
      { cleanupDeadServers: false },
      {
        autopilotConfiguration: FORBIDDEN,
        setAutopilotConfiguration: async (b: unknown) => posts.push(b),
      },
    );
    const first = await run(objects);
    first.expectNoError();
    const degraded = status(first.objects)?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "AutopilotForbidden" });
    expect(degraded?.message).toContain("| vault policy write capstan-vault-operator -");
    expect(first.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual([
      "AutopilotForbidden",
    ]);
    expect(first.result).toEqual({ requeueAfter: 30_000 });
    // The cluster is still served: Available stays True.
    expect(status(first.objects)?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
    const again = await run(first.objects);
    again.expectNoError();
    again.expectNoWrites();
    expect(posts).toEqual([]);
  });

  it("a 403 holds no other step back: the scale-out goes on", async () => {
    const { objects, run } = scripted(
      3,
      1,
      { cleanupDeadServers: false },
      { autopilotConfiguration: FORBIDDEN },
    );
    const first = await run(objects);
    first.expectNoError();
    expect(first.events.map((e) => e.reason)).toContain("CreatePod");
    expect(status(first.objects)?.conditions?.find((c) => c.type === "Degraded")?.status).toBe("False");
  });

  it("a policy that reads but may not write: the refused write is Degraded AutopilotForbidden, retried at the Degraded pace", async () => {
    const { objects, run } = scripted(
      1,
      1,
      { maxTrailingLogs: 10 },
      {
        autopilotConfiguration: async () => DEFAULTS,
        setAutopilotConfiguration: FORBIDDEN,
      },
    );
    const first = await run(objects);
    first.expectNoError();
    expect(status(first.objects)?.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "AutopilotForbidden",
    });
    expect(first.result).toEqual({ requeueAfter: 30_000 });
  });

  it("status.autopilot and the gauges follow autopilot's state; not asked for the configuration without spec.autopilot", async () => {
    const asked: string[] = [];
    const { objects, metrics, run } = scripted(1, 1, undefined, {
      autopilotConfiguration: async () => {
        asked.push("configuration");
        return DEFAULTS;
      },
      autopilotState: async () => ({
        healthy: false,
        failure_tolerance: 0,
        optimistic_failure_tolerance: 1,
        leader: "demo-0",
        servers: {
          "demo-0": { id: "demo-0", healthy: true, status: "leader" },
          "demo-2": { id: "demo-2", healthy: false, status: "voter" },
          "demo-1": { id: "demo-1", healthy: true, status: "non-voter" },
        },
      }),
    });
    const first = await run(objects);
    first.expectNoError();
    expect(status(first.objects)?.autopilot).toEqual({
      healthy: false,
      failureTolerance: 0,
      optimisticFailureTolerance: 1,
      voters: ["demo-0", "demo-2"],
      leader: "demo-0",
    });
    expect(asked).toEqual([]);
    const text = await metrics.failureTolerance.get();
    expect(text.values).toEqual([{ labels: { object_namespace: "ns", object_name: "demo" }, value: 0 }]);
    expect((await metrics.voters.get()).values[0]?.value).toBe(2);
    const steady = await run(first.objects);
    steady.expectNoError();
    steady.expectNoWrites();
  });
});
