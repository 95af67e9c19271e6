// Fixtures of the controller's tests against REAL Vault servers (the "real" test project): a local Vault process per
// pod the operator creates (only the network is faked: a raft join towards a pod's DNS name is pointed at that
// process), and reconciles run with core's in-memory API server until the cluster converges.
import { rm } from "node:fs/promises";
import type { Kind, KubeObject, PodObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { type VaultCluster, VaultClusterKind, type VaultClusterSpec } from "../api/vault-cluster.ts";
import type { PlanOptions } from "../plan/plan.ts";
import { type LocalVault, type LocalVaultNode, portsOf } from "../vault/local-vault.ts";
import type { VaultClient } from "../vault/vault-client.ts";
import { reconcileVaultCluster } from "./controller.ts";
import type { VaultOperatorMetrics } from "./metrics.ts";
import type { VaultTarget } from "./observe.ts";
import type { serverKeeper } from "./test-fixture.ts";

/** Pods' Vault processes, by pod name. */
export class Pods {
  readonly nodes = new Map<string, LocalVaultNode>();
  readonly clients: VaultClient[] = [];
  readonly vault: LocalVault;
  constructor(vault: LocalVault) {
    this.vault = vault;
  }

  /** The operator's client for a pod: to its local process; a join's leader is the leader pod's process. */
  factory = (t: VaultTarget): VaultClient => {
    const pod = t.servername.split(".")[0] ?? "";
    const node = this.nodes.get(pod);
    if (node === undefined) throw new Error(`no Vault process for ${pod}`);
    const c = this.vault.client(node, t.token);
    this.clients.push(c);
    const join = c.raftJoin.bind(c);
    c.raftJoin = (leader, options) => {
      const leaderNode = this.nodes.get(new URL(leader.apiAddr).hostname.split(".")[0] ?? "");
      if (leaderNode === undefined) throw new Error(`no Vault process for the leader ${leader.apiAddr}`);
      return join(
        { apiAddr: leaderNode.apiAddr, caCert: this.vault.ca.cert, tlsServerName: leaderNode.servername },
        options,
      );
    };
    return c;
  };

  /** A pod's ports (its DNS name, hence its raft address, stays the same across restarts, as in Kubernetes). */
  readonly ports = new Map<string, { api: number; cluster: number }>();

  /** Runs before a new pod's process starts (what its init containers would do); its ports when it had some. */
  beforeStart?: (pod: PodObject, ports: { api: number; cluster: number } | undefined) => Promise<void>;

  /** Starts a process for each new pod, stops those of deleted pods (wiping data whose claim went), sets status. */
  async sync(objects: KubeObject[]): Promise<KubeObject[]> {
    const pods = objects.filter((o): o is PodObject => o.kind === "Pod");
    const claims = new Set(
      objects.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name),
    );
    for (const [name, node] of this.nodes) {
      const pod = pods.find((p) => p.metadata.name === name);
      const image = pod?.spec?.containers.find((c) => c.name === "vault")?.image;
      if (pod !== undefined && image === (node as LocalVaultNode & { image?: string }).image) continue;
      await this.vault.kill(node);
      this.nodes.delete(name);
      if (!claims.has(`data-${name}`)) await rm(this.vault.dataDir(name), { recursive: true, force: true });
      else this.ports.set(name, portsOf(node));
    }
    const out: KubeObject[] = [];
    for (const o of objects) {
      if (o.kind !== "Pod") {
        out.push(o);
        continue;
      }
      const pod = structuredClone(o) as PodObject;
      const name = pod.metadata.name ?? "";
      let node = this.nodes.get(name);
      if (node === undefined) {
        await this.beforeStart?.(pod, this.ports.get(name));
        node = Object.assign(await this.vault.start(name, this.ports.get(name)), {
          image: pod.spec?.containers.find((c) => c.name === "vault")?.image,
        });
        this.nodes.set(name, node);
      }
      const probe = this.vault.client(node);
      const h = await probe.health().catch(() => undefined);
      await probe.close();
      const ready = h?.initialized === true && !h.sealed;
      pod.status = {
        phase: "Running",
        podIP: `10.0.0.${Number(name.split("-")[1]) + 1}`,
        conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
      };
      out.push(pod);
    }
    return out;
  }

  async stop(): Promise<void> {
    // The controller closes the clients it made; closing one twice throws.
    await Promise.all(this.clients.map((c) => c.close().catch(() => undefined)));
    await this.vault.stop();
  }
}

/** What the reconciles of one real cluster share. */
export interface RealCluster {
  base: VaultCluster;
  pods: Pods;
  metrics: VaultOperatorMetrics;
  keeper: ReturnType<typeof serverKeeper>;
  plan?: PlanOptions;
  /** Custom kinds among the objects (default: VaultCluster alone). */
  kinds?: Kind[];
}

/** One reconcile of `objects` (the processes synced first); the objects it left are in the result. */
export async function reconcileReal(
  real: RealCluster,
  objects: KubeObject[],
): ReturnType<typeof reconcileOnce> {
  const run = await reconcileOnce(
    (req, ctx) =>
      reconcileVaultCluster(req, ctx, {
        metrics: real.metrics,
        keys: real.keeper.keys,
        reloaderImage: "busybox:1.37",
        vaultClient: real.pods.factory,
        ...(real.plan === undefined ? {} : { plan: real.plan }),
      }),
    {
      kinds: real.kinds ?? [VaultClusterKind],
      objects: await real.pods.sync(objects),
      request: real.base,
      timeoutMs: 60_000,
      setup: real.keeper.bind,
    },
  );
  run.expectNoError();
  return run;
}

/**
 * Sets the cluster's spec to base's with `spec` over it, then reconciles (syncing the processes between runs) until
 * `done` says so of the status (default: Progressing InSync); returns the objects and the steps taken (Normal events
 * but certificates', as "<reason> <pod>").
 */
export async function convergeReal(
  real: RealCluster,
  objects: KubeObject[],
  spec: Partial<VaultClusterSpec>,
  options: { max?: number; done?: (status: VaultCluster["status"]) => boolean } = {},
): Promise<{ objects: KubeObject[]; taken: string[] }> {
  const inSync = (st: VaultCluster["status"]) =>
    st?.conditions?.find((c) => c.type === "Progressing")?.reason === "InSync";
  const done = options.done ?? inSync;
  const cluster = objects.find((o) => o.kind === "VaultCluster") as VaultCluster | undefined;
  const next = { ...(cluster ?? real.base), spec: { ...real.base.spec, ...spec } };
  let current = [...objects.filter((o) => o.kind !== "VaultCluster"), next];
  const taken: string[] = [];
  let status: VaultCluster["status"];
  for (let i = 0; i < (options.max ?? 120); i++) {
    const run = await reconcileReal(real, current);
    current = run.objects;
    const acted = run.events
      .filter((e) => e.type === "Normal" && !e.reason.startsWith("Certificate"))
      .map((e) => `${e.reason} ${/(demo-\d)/.exec(e.note)?.[1] ?? ""}`.trim());
    taken.push(...acted);
    status = (
      run.get(VaultClusterKind, real.base.metadata.name ?? "", real.base.metadata.namespace) as VaultCluster
    ).status;
    if (done(status)) return { objects: current, taken };
    if (acted.length === 0) await new Promise((r) => setTimeout(r, 1_000));
  }
  const last = status?.conditions?.find((c) => c.type === "Progressing");
  throw new Error(
    `no convergence; last steps: ${taken.slice(-8).join(", ")}; ${last?.reason}: ${last?.message}`,
  );
}
