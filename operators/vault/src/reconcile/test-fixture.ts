// Fixtures of the VaultCluster controller's tests: a cluster, its pods as the kubelet reports them, a scripted
// Vault node, and the reconciler wired to them (run with core's reconcileOnce).
import type { Client, KubeObject } from "@capstan/core";
import type { FakeApiServer, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { dataClaim, vaultPod } from "../desired/objects.ts";
import type { VaultClient, VaultHealth } from "../vault/vault-client.ts";
import { reconcileVaultCluster } from "./controller.ts";
import { KeysKeeper, type KeysKeeperOptions } from "./keys-keeper.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import type { VaultTarget } from "./observe.ts";

export const cluster = (replicas = 1): VaultCluster => ({
  apiVersion: VaultClusterKind.apiVersion,
  kind: VaultClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: {
    replicas,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 3, threshold: 2, keepRootToken: false, retainKeysOnDelete: true },
  },
});

export const settings = { reloaderImage: "busybox:1.37" };

/** A running pod with an IP, and its claim. */
export function podObjects(
  c: VaultCluster,
  ordinal: number,
  labels: Record<string, string> = {},
): KubeObject[] {
  const pod = vaultPod(c, `demo-${ordinal}`, settings);
  pod.metadata.labels = { ...pod.metadata.labels, ...labels };
  pod.status = {
    phase: "Running",
    podIP: `10.0.0.${ordinal + 1}`,
    conditions: [{ type: "Ready", status: "False", lastTransitionTime: "2026-12-01T00:00:00Z" }],
  };
  return [pod, dataClaim(c, `demo-${ordinal}`)];
}

/** lookup-self's answer for the operator's token, well within its period. */
export const OPERATOR_TOKEN_INFO = {
  ttl: 2_000_000,
  period: 2_764_800,
  policies: [],
  accessor: "",
  orphan: true,
  renewable: true,
  display_name: "",
};

/** A scripted single Vault node (by IP): its health changes as calls are made; records the calls. */
export function fakeVault(
  calls: string[],
  state: { initialized: boolean; sealed: boolean },
  onInit?: () => void | Promise<void>,
  override: Partial<Record<keyof VaultClient, unknown>> = {},
) {
  return (t: VaultTarget) =>
    ({
      close: async () => undefined,
      health: async (): Promise<VaultHealth> => ({
        initialized: state.initialized,
        sealed: state.sealed,
        standby: false,
        version: "1.14.8",
        ...(state.initialized ? { cluster_id: "cid-1" } : {}),
      }),
      init: async (shares: number, threshold: number) => {
        calls.push(`init ${shares}/${threshold} on ${t.servername}`);
        await onInit?.();
        state.initialized = true;
        return { keys: ["a", "b", "c"], keys_base64: ["QQ==", "Qg==", "Qw=="], root_token: "hvs.root" };
      },
      sealStatus: async () => ({
        sealed: state.sealed,
        initialized: state.initialized,
        t: 2,
        n: 3,
        progress: 0,
      }),
      unsealWith: async (keys: string[]) => {
        calls.push(`unseal ${keys.length}`);
        state.sealed = false;
        return { sealed: false, t: 2, n: 3, progress: 0 };
      },
      raftConfiguration: async () => [
        { node_id: "demo-0", address: "demo-0:8201", leader: true, voter: true, protocol_version: "3" },
      ],
      autopilotState: async () => ({
        healthy: true,
        failure_tolerance: 0,
        leader: "demo-0",
        voters: ["demo-0"],
        servers: { "demo-0": { id: "demo-0", healthy: true, status: "leader" } },
      }),
      lookupSelf: async () => OPERATOR_TOKEN_INFO,
      ...override,
    }) as unknown as VaultClient;
}

/** A keeper for reconciles that never init: a write would fail the test. */
export const noKeys = () =>
  new KeysKeeper({
    client: {
      patch: () => Promise.reject(new Error("unexpected write of the keys")),
      create: () => Promise.reject(new Error("unexpected write of the keys")),
    },
  });

export const reconcile = (
  calls: string[],
  state: { initialized: boolean; sealed: boolean },
  onInit?: () => void | Promise<void>,
  keys: KeysKeeper = noKeys(),
  override: Partial<Record<keyof VaultClient, unknown>> = {},
) =>
  ((req, ctx) =>
    reconcileVaultCluster(req, ctx, {
      metrics: new VaultOperatorMetrics(new Registry()),
      keys,
      reloaderImage: settings.reloaderImage,
      vaultClient: fakeVault(calls, state, onInit, override),
    })) as Parameters<typeof reconcileOnce>[0];

/**
 * A keeper writing to whichever fake API server `bind` was last given (reconcileOnce makes one per run; pass
 * `setup: bind`), through a client of its own as main.ts's is: no reconcile's signal reaches it.
 */
export function serverKeeper(options: Omit<KeysKeeperOptions, "client"> = {}): {
  keys: KeysKeeper;
  bind: (server: FakeApiServer) => void;
} {
  let current: Client | undefined;
  const client = (): Client => {
    if (current === undefined) throw new Error("serverKeeper: no server bound (pass setup: bind)");
    return current;
  };
  const keys = new KeysKeeper({
    minDelayMs: 20,
    maxDelayMs: 200,
    ...options,
    client: {
      patch: ((...args: Parameters<Client["patch"]>) => client().patch(...args)) as Client["patch"],
      create: ((...args: Parameters<Client["create"]>) => client().create(...args)) as Client["create"],
    },
  });
  return {
    keys,
    bind: (server) => {
      current = server.client({ maxAttempts: 1 });
    },
  };
}

/** The keys Secret of an initialized cluster: two unseal keys and the operator's token (no root token). */
export function keysSecretWithToken(): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "demo-unseal-keys",
      namespace: "ns",
      labels: { "app.kubernetes.io/managed-by": "capstan-vault-operator" },
    },
    data: {
      "unseal-key-0": Buffer.from("QQ==").toString("base64"),
      "unseal-key-1": Buffer.from("Qg==").toString("base64"),
      "operator-token": Buffer.from("hvs.op").toString("base64"),
    },
  } as KubeObject;
}
