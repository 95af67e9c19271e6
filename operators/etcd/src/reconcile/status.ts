// Pure: the EtcdCluster status (phase, conditions, members) a reconcile writes, from its observation and step.
import { type Condition, isSubset, setCondition } from "@capstan/core";
import type { EtcdCluster, EtcdClusterPhase, EtcdClusterStatus } from "../api/etcd-cluster.ts";
import { clientEndpoint, selectorString } from "../desired/names.ts";
import { compareEtcdVersions, formatEtcdVersion, parseEtcdVersion } from "../plan/etcd-version.ts";
import { quorum, type Step } from "../plan/plan.ts";
import { type Observation, podGone, podReady } from "./observe.ts";

/** The phase shown in `kubectl get etcd` for this step. */
export function phaseOf(cluster: EtcdCluster, obs: Observation, step: Step): EtcdClusterPhase {
  if (cluster.spec.paused === true) return "Paused";
  if (step.type === "QuorumLost") return "QuorumLost";
  if (step.type === "Degraded") return "Degraded";
  if (step.type === "InSync") return "Running";
  if (obs.clusterID === undefined && cluster.status?.clusterID === undefined) return "Creating";
  let phase: EtcdClusterPhase;
  switch (step.type) {
    case "CreateSeed":
      return "Creating";
    case "AddLearner":
    case "PromoteLearner":
    case "RemoveMember":
      phase = "Scaling";
      break;
    case "UpgradeMember":
      phase = "Upgrading";
      break;
    case "RestartMember":
      phase = "Updating";
      break;
    case "ReplaceMember":
    case "CleanupMember":
      phase = "Recovering";
      break;
    case "StartMemberPod":
      phase = step.reason === "NotStarted" ? "Scaling" : "Recovering";
      break;
    default: {
      // MoveLeader and Wait: say what the cluster is on its way to.
      const members = obs.observed.etcd.reachable ? obs.observed.etcd.members : [];
      const target = parseEtcdVersion(cluster.spec.version);
      const outdated = members.some((m) => {
        const v = m.version === undefined ? undefined : parseEtcdVersion(m.version);
        return v !== undefined && target !== undefined && compareEtcdVersions(v, target) !== 0;
      });
      if (step.type === "Wait" && step.reason === "LearnerCatchingUp") phase = "Scaling";
      else if (members.length !== cluster.spec.replicas) phase = "Scaling";
      else if (outdated) phase = "Upgrading";
      else if (obs.observed.pods.some((p) => p.outdated === true)) phase = "Updating";
      else phase = step.type === "MoveLeader" ? "Scaling" : "Recovering";
    }
  }
  // A cluster that has not yet reached its size for the first time is still being created.
  return phase === "Scaling" && (cluster.status?.phase ?? "Creating") === "Creating" ? "Creating" : phase;
}

/** Available, Progressing and Degraded for this step. */
export function conditionsOf(cluster: EtcdCluster, obs: Observation, step: Step, now: Date): Condition[] {
  const generation = cluster.metadata.generation ?? 0;
  const { etcd } = obs.observed;
  let conditions = cluster.status?.conditions ?? [];
  const set = (type: string, status: Condition["status"], reason: string, message: string) => {
    conditions = setCondition(
      conditions,
      { type, status, reason, message, observedGeneration: generation },
      now,
    );
  };

  if (!etcd.reachable) {
    const bootstrapped = obs.observed.bootstrapped;
    set(
      "Available",
      "False",
      bootstrapped ? "Unreachable" : "NotBootstrapped",
      bootstrapped ? `no etcd member answers: ${etcd.error}` : "the cluster is being bootstrapped",
    );
  } else {
    const voters = etcd.members.filter((m) => !m.isLearner);
    const healthy = voters.filter((m) => m.healthy).length;
    if (healthy >= quorum(voters.length)) {
      set("Available", "True", "QuorumHealthy", `${healthy} of ${voters.length} voting members are healthy`);
    } else {
      set(
        "Available",
        "False",
        "QuorumLost",
        `${healthy} of ${voters.length} voting members are healthy, a quorum needs ${quorum(voters.length)}`,
      );
    }
  }

  switch (step.type) {
    case "InSync":
      set("Progressing", "False", "InSync", step.message);
      set("Degraded", "False", "AsExpected", "");
      break;
    case "Degraded":
      set("Progressing", "False", step.reason, step.message);
      set("Degraded", "True", step.reason, step.message);
      break;
    case "QuorumLost":
      set("Progressing", "False", "QuorumLost", step.message);
      set("Degraded", "True", "QuorumLost", step.message);
      break;
    case "Wait":
      if (step.reason === "Paused") set("Progressing", "False", "Paused", step.message);
      else set("Progressing", "True", step.reason, step.message);
      set("Degraded", "False", "AsExpected", "");
      break;
    default:
      set("Progressing", "True", step.type, step.message);
      set("Degraded", "False", "AsExpected", "");
  }
  return conditions;
}

/** The whole status this reconcile would write. */
export function statusOf(cluster: EtcdCluster, obs: Observation, step: Step, now: Date): EtcdClusterStatus {
  const previous = cluster.status ?? {};
  const { etcd } = obs.observed;
  const live = [...obs.pods.values()].filter((p) => !podGone(p));
  const members = etcd.reachable
    ? obs.memberStatus
    : (previous.members ?? []).map((m) => ({ ...m, healthy: false, leader: false }));
  const versions = members
    .map((m) => (m.version === undefined ? undefined : parseEtcdVersion(m.version)))
    .filter((v) => v !== undefined)
    .sort(compareEtcdVersions);
  const lowest = versions[0];
  const leader = members.find((m) => m.leader)?.name;
  const clusterID = obs.clusterID ?? previous.clusterID;
  const currentVersion = lowest === undefined ? previous.currentVersion : formatEtcdVersion(lowest);
  return {
    observedGeneration: cluster.metadata.generation ?? 0,
    phase: phaseOf(cluster, obs, step),
    conditions: conditionsOf(cluster, obs, step, now),
    replicas: etcd.reachable ? members.length : live.length,
    readyReplicas: live.filter(podReady).length,
    members,
    ...(leader === undefined ? {} : { leader }),
    ...(currentVersion === undefined ? {} : { currentVersion }),
    ...(clusterID === undefined ? {} : { clusterID }),
    selector: selectorString(cluster),
    clientEndpoint: clientEndpoint(cluster),
  };
}

/**
 * The JSON merge patch turning `live` into `next` (fields `next` lacks are set to null), or undefined when they
 * are equal: a steady-state reconcile writes nothing.
 */
export function statusPatch(
  live: EtcdClusterStatus | undefined,
  next: EtcdClusterStatus,
): { status: Record<string, unknown> } | undefined {
  const old = (live ?? {}) as Record<string, unknown>;
  const now = next as Record<string, unknown>;
  if (isSubset(now, old) && isSubset(old, now)) return undefined;
  const patch: Record<string, unknown> = { ...now };
  for (const key of Object.keys(old)) if (!(key in now)) patch[key] = null;
  return { status: patch };
}
