// The Vault operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { type ObjectCounter, type ObjectGauge, ObjectMetrics } from "@capstan/core";
import type { Registry } from "prom-client";
import type { VaultAutopilotStatus } from "../api/vault-cluster.ts";
import { POD_STATES, type PodState } from "../desired/names.ts";

/**
 * Metrics of the VaultCluster controller, registered on the manager's registry. Every series is a VaultCluster's
 * (object_namespace, object_name), made by core's ObjectMetrics, so that {@link forget} drops all of a deleted
 * cluster's.
 */
export class VaultOperatorMetrics {
  /** capstan_vault_cluster_pods{object_namespace,object_name,state}: pods by Vault state. */
  readonly pods: ObjectGauge<"state">;
  /** capstan_vault_raft_peers{object_namespace,object_name}: servers in the raft configuration. */
  readonly raftPeers: ObjectGauge<never>;
  /** capstan_vault_autopilot_failure_tolerance{object_namespace,object_name}: voters that may fail, per autopilot. */
  readonly failureTolerance: ObjectGauge<never>;
  /** capstan_vault_autopilot_voters{object_namespace,object_name}: raft voters, per autopilot. */
  readonly voters: ObjectGauge<never>;
  /** capstan_vault_unseal_total{object_namespace,object_name}: pods the operator unsealed. */
  readonly unseals: ObjectCounter<never>;
  /** capstan_vault_steps_total{object_namespace,object_name,step}: steps the operator took. */
  readonly steps: ObjectCounter<"step">;
  /** The VaultClusters' series, per cluster. */
  readonly #clusters: ObjectMetrics;

  constructor(registry: Registry) {
    const clusters = new ObjectMetrics(registry);
    this.#clusters = clusters;
    this.pods = clusters.gauge({
      name: "capstan_vault_cluster_pods",
      help: "Vault pods of a VaultCluster by state (active, standby, sealed, uninitialized).",
      labelNames: ["state"],
    });
    this.raftPeers = clusters.gauge({
      name: "capstan_vault_raft_peers",
      help: "Servers in the VaultCluster's raft configuration, as the active node reports it.",
    });
    this.failureTolerance = clusters.gauge({
      name: "capstan_vault_autopilot_failure_tolerance",
      help: "Raft voters of a VaultCluster that can fail with the cluster keeping its quorum, as autopilot reports it through the active node (absent while no node is active).",
    });
    this.voters = clusters.gauge({
      name: "capstan_vault_autopilot_voters",
      help: "Raft voters of a VaultCluster, as autopilot reports them through the active node (absent while no node is active).",
    });
    this.unseals = clusters.counter({
      name: "capstan_vault_unseal_total",
      help: "Vault pods the operator unsealed.",
    });
    this.steps = clusters.counter({
      name: "capstan_vault_steps_total",
      help: "Steps the operator took on VaultClusters (InitVault, Unseal, JoinRaft, RemovePeer, UpgradePod, ...).",
      labelNames: ["step"],
    });
  }

  /** Counts one step the operator took on cluster `namespace/name`. */
  countStep(namespace: string, name: string, step: string): void {
    this.steps.inc({ namespace, name }, { step });
  }

  /** Counts one pod the operator unsealed in cluster `namespace/name`. */
  countUnseal(namespace: string, name: string): void {
    this.unseals.inc({ namespace, name });
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
    const cluster = { namespace, name };
    for (const state of POD_STATES) this.pods.set(cluster, { state }, counts[state]);
    if (peers !== undefined) this.raftPeers.set(cluster, peers);
    if (autopilot === undefined) {
      this.failureTolerance.remove(cluster);
      this.voters.remove(cluster);
    } else {
      this.failureTolerance.set(cluster, autopilot.failureTolerance);
      this.voters.set(cluster, autopilot.voters?.length ?? 0);
    }
    this.unseals.inc(cluster, 0); // the series exists from the first observation
  }

  /** Drops every series of a deleted cluster, the steps taken on it included. */
  forget(namespace: string, name: string): void {
    this.#clusters.forget({ namespace, name });
  }
}
