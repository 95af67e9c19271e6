// The etcd operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { Counter, Gauge, type Registry } from "prom-client";

/** Member states counted by capstan_etcd_cluster_members. */
export const MEMBER_STATES = ["healthy", "unhealthy", "learner"] as const;
/** One of {@link MEMBER_STATES}. */
export type MemberState = (typeof MEMBER_STATES)[number];

/** Metrics of the EtcdCluster controller, registered on the manager's registry. */
export class EtcdOperatorMetrics {
  /** capstan_etcd_cluster_members{namespace,name,state}: members by state (learners counted apart). */
  readonly members: Gauge<"namespace" | "name" | "state">;
  /** capstan_etcd_cluster_quorum{namespace,name}: 1 while a quorum of voting members is healthy. */
  readonly quorum: Gauge<"namespace" | "name">;
  /** capstan_etcd_cluster_has_leader{namespace,name}: 1 while the cluster has a leader. */
  readonly hasLeader: Gauge<"namespace" | "name">;
  /** capstan_etcd_membership_changes_total{namespace,name,step}: membership and pod steps taken. */
  readonly steps: Counter<"namespace" | "name" | "step">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.members = new Gauge({
      name: "capstan_etcd_cluster_members",
      help: "etcd members of an EtcdCluster by state (healthy and unhealthy voters, learners).",
      labelNames: ["namespace", "name", "state"],
      registers,
    });
    this.quorum = new Gauge({
      name: "capstan_etcd_cluster_quorum",
      help: "1 while a quorum of the EtcdCluster's voting members is healthy, else 0.",
      labelNames: ["namespace", "name"],
      registers,
    });
    this.hasLeader = new Gauge({
      name: "capstan_etcd_cluster_has_leader",
      help: "1 while the EtcdCluster has an etcd leader, else 0.",
      labelNames: ["namespace", "name"],
      registers,
    });
    this.steps = new Counter({
      name: "capstan_etcd_membership_changes_total",
      help: "Steps the operator took on EtcdClusters (AddLearner, PromoteLearner, RemoveMember, UpgradeMember, ...).",
      labelNames: ["namespace", "name", "step"],
      registers,
    });
  }

  /** Records one observation of a cluster. */
  observe(
    namespace: string,
    name: string,
    counts: Record<MemberState, number>,
    quorum: boolean,
    hasLeader: boolean,
  ): void {
    for (const state of MEMBER_STATES) this.members.set({ namespace, name, state }, counts[state]);
    this.quorum.set({ namespace, name }, quorum ? 1 : 0);
    this.hasLeader.set({ namespace, name }, hasLeader ? 1 : 0);
  }

  /** Drops every series of a deleted cluster. */
  forget(namespace: string, name: string): void {
    for (const state of MEMBER_STATES) this.members.remove({ namespace, name, state });
    this.quorum.remove({ namespace, name });
    this.hasLeader.remove({ namespace, name });
  }
}
