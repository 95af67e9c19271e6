// The Vault operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { Counter, Gauge, type Registry } from "prom-client";
import { POD_STATES, type PodState } from "../desired/names.ts";

/** Metrics of the VaultCluster controller, registered on the manager's registry. */
export class VaultOperatorMetrics {
  /** capstan_vault_cluster_pods{namespace,name,state}: pods by Vault state. */
  readonly pods: Gauge<"namespace" | "name" | "state">;
  /** capstan_vault_raft_peers{namespace,name}: servers in the raft configuration. */
  readonly raftPeers: Gauge<"namespace" | "name">;
  /** capstan_vault_unseal_total{namespace,name}: pods the operator unsealed. */
  readonly unseals: Counter<"namespace" | "name">;
  /** capstan_vault_steps_total{namespace,name,step}: steps the operator took. */
  readonly steps: Counter<"namespace" | "name" | "step">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.pods = new Gauge({
      name: "capstan_vault_cluster_pods",
      help: "Vault pods of a VaultCluster by state (active, standby, sealed, uninitialized).",
      labelNames: ["namespace", "name", "state"],
      registers,
    });
    this.raftPeers = new Gauge({
      name: "capstan_vault_raft_peers",
      help: "Servers in the VaultCluster's raft configuration, as the active node reports it.",
      labelNames: ["namespace", "name"],
      registers,
    });
    this.unseals = new Counter({
      name: "capstan_vault_unseal_total",
      help: "Vault pods the operator unsealed.",
      labelNames: ["namespace", "name"],
      registers,
    });
    this.steps = new Counter({
      name: "capstan_vault_steps_total",
      help: "Steps the operator took on VaultClusters (InitVault, Unseal, JoinRaft, RemovePeer, UpgradePod, ...).",
      labelNames: ["namespace", "name", "step"],
      registers,
    });
  }

  /** Records one observation of a cluster; `peers` undefined when the raft configuration was not read. */
  observe(
    namespace: string,
    name: string,
    counts: Record<PodState, number>,
    peers: number | undefined,
  ): void {
    for (const state of POD_STATES) this.pods.set({ namespace, name, state }, counts[state]);
    if (peers !== undefined) this.raftPeers.set({ namespace, name }, peers);
    this.unseals.inc({ namespace, name }, 0); // the series exists from the first observation
  }

  /** Drops every series of a deleted cluster. */
  forget(namespace: string, name: string): void {
    for (const state of POD_STATES) this.pods.remove({ namespace, name, state });
    this.raftPeers.remove({ namespace, name });
    this.unseals.remove({ namespace, name });
  }
}
