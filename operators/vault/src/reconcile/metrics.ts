// The Vault operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { Counter, Gauge, type Registry } from "prom-client";
import type { VaultAutopilotStatus } from "../api/vault-cluster.ts";
import { POD_STATES, type PodState } from "../desired/names.ts";

/** Metrics of the VaultCluster controller, registered on the manager's registry. */
export class VaultOperatorMetrics {
  /** capstan_vault_cluster_pods{object_namespace,object_name,state}: pods by Vault state. */
  readonly pods: Gauge<"object_namespace" | "object_name" | "state">;
  /** capstan_vault_raft_peers{object_namespace,object_name}: servers in the raft configuration. */
  readonly raftPeers: Gauge<"object_namespace" | "object_name">;
  /** capstan_vault_autopilot_failure_tolerance{object_namespace,object_name}: voters that may fail, per autopilot. */
  readonly failureTolerance: Gauge<"object_namespace" | "object_name">;
  /** capstan_vault_autopilot_voters{object_namespace,object_name}: raft voters, per autopilot. */
  readonly voters: Gauge<"object_namespace" | "object_name">;
  /** capstan_vault_unseal_total{object_namespace,object_name}: pods the operator unsealed. */
  readonly unseals: Counter<"object_namespace" | "object_name">;
  /** capstan_vault_steps_total{object_namespace,object_name,step}: steps the operator took. */
  readonly steps: Counter<"object_namespace" | "object_name" | "step">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.pods = new Gauge({
      name: "capstan_vault_cluster_pods",
      help: "Vault pods of a VaultCluster by state (active, standby, sealed, uninitialized).",
      labelNames: ["object_namespace", "object_name", "state"],
      registers,
    });
    this.raftPeers = new Gauge({
      name: "capstan_vault_raft_peers",
      help: "Servers in the VaultCluster's raft configuration, as the active node reports it.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.failureTolerance = new Gauge({
      name: "capstan_vault_autopilot_failure_tolerance",
      help: "Raft voters of a VaultCluster that can fail with the cluster keeping its quorum, as autopilot reports it through the active node (absent while no node is active).",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.voters = new Gauge({
      name: "capstan_vault_autopilot_voters",
      help: "Raft voters of a VaultCluster, as autopilot reports them through the active node (absent while no node is active).",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.unseals = new Counter({
      name: "capstan_vault_unseal_total",
      help: "Vault pods the operator unsealed.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.steps = new Counter({
      name: "capstan_vault_steps_total",
      help: "Steps the operator took on VaultClusters (InitVault, Unseal, JoinRaft, RemovePeer, UpgradePod, ...).",
      labelNames: ["object_namespace", "object_name", "step"],
      registers,
    });
  }

  /** Counts one step the operator took on cluster `namespace/name`. */
  countStep(namespace: string, name: string, step: string): void {
    this.steps.inc({ object_namespace: namespace, object_name: name, step });
  }

  /** Counts one pod the operator unsealed in cluster `namespace/name`. */
  countUnseal(namespace: string, name: string): void {
    this.unseals.inc({ object_namespace: namespace, object_name: name });
  }

  /**
   * Records one observation of a cluster; `peers` undefined when the raft configuration was not read, `autopilot`
   * when autopilot's state was not (its series are then dropped: no stale tolerance).
   */
  observe(
    namespace: string,
    name: string,
    counts: Record<PodState, number>,
    peers: number | undefined,
    autopilot?: VaultAutopilotStatus,
  ): void {
    const labels = { object_namespace: namespace, object_name: name };
    for (const state of POD_STATES)
      this.pods.set({ object_namespace: namespace, object_name: name, state }, counts[state]);
    if (peers !== undefined) this.raftPeers.set(labels, peers);
    if (autopilot === undefined) {
      this.failureTolerance.remove(labels);
      this.voters.remove(labels);
    } else {
      this.failureTolerance.set(labels, autopilot.failureTolerance);
      this.voters.set(labels, autopilot.voters.length);
    }
    this.unseals.inc({ object_namespace: namespace, object_name: name }, 0); // the series exists from the first observation
  }

  /** Drops every series of a deleted cluster. */
  forget(namespace: string, name: string): void {
    for (const state of POD_STATES)
      this.pods.remove({ object_namespace: namespace, object_name: name, state });
    this.raftPeers.remove({ object_namespace: namespace, object_name: name });
    this.failureTolerance.remove({ object_namespace: namespace, object_name: name });
    this.voters.remove({ object_namespace: namespace, object_name: name });
    this.unseals.remove({ object_namespace: namespace, object_name: name });
  }
}
