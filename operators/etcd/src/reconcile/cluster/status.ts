// Pure: the EtcdCluster status (phase, conditions, members) a reconcile writes, from its observation and step.
import { type Condition, quorum, setCondition, stepConditions } from "@capstan/core";
import type { EtcdCluster, EtcdClusterPhase, EtcdClusterStatus } from "../../api/etcd-cluster.ts";
import { clientEndpoint, selectorString } from "../../desired/names.ts";
import { compareEtcdVersions, formatEtcdVersion, parseEtcdVersion } from "../../plan/etcd-version.ts";
import type { Step } from "../../plan/plan.ts";
import { type Observation, podGone, podReady } from "./observe.ts";

/**
 * Why the cluster cannot serve, whatever step runs (a restart on data, a wait): no member answers, or fewer
 * healthy voters than a quorum. Undefined when it serves or was never bootstrapped.
 */
export function outageOf(obs: Observation, step: Step): string | undefined {
  const { etcd, bootstrapped } = obs.observed;
  // A cluster whose status was lost but whose members are being restarted on their data did exist.
  const existed = bootstrapped || (step.type === "StartMemberPod" && step.reason === "PodMissing");
  if (!existed) return undefined;
  if (!etcd.reachable) return `no etcd member answers: ${etcd.error}`;
  const voters = etcd.members.filter((m) => !m.isLearner);
  const healthy = voters.filter((m) => m.healthy).length;
  if (healthy >= quorum(voters.length)) return undefined;
  return `${healthy} of ${voters.length} voting members are healthy, a quorum needs ${quorum(voters.length)}`;
}

/** The phase shown in `kubectl get etcd` for this step. */
export function phaseOf(cluster: EtcdCluster, obs: Observation, step: Step): EtcdClusterPhase {
  if (cluster.spec.paused === true) return "Paused";
  if (step.type === "QuorumLost") return "QuorumLost";
  if (step.type === "Degraded") return "Degraded";
  // Restarting members on their data during an outage is still an outage: say so.
  if (outageOf(obs, step) !== undefined) return "QuorumLost";
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
    case "AddRootUser":
    case "GrantRootRole":
    case "EnableAuth":
    case "DisableAuth":
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
      else if (step.type === "Wait" && step.reason.startsWith("CARotation")) phase = "Updating";
      else if (members.length !== cluster.spec.replicas) phase = "Scaling";
      else if (outdated) phase = "Upgrading";
      else if (obs.observed.pods.some((p) => p.outdated === true)) phase = "Updating";
      else phase = step.type === "MoveLeader" ? "Scaling" : "Recovering";
    }
  }
  // A cluster that has not yet reached its size for the first time is still being created (auth is turned on
  // as soon as the seed serves, so its steps belong to the creation too).
  const creating = (cluster.status?.phase ?? "Creating") === "Creating";
  const authStep = ["AddRootUser", "GrantRootRole", "EnableAuth"].includes(step.type);
  return (phase === "Scaling" || authStep) && creating ? "Creating" : phase;
}

/** Degraded reasons of a loss of quorum the evidence does not confirm (plan/quorum-evidence.ts). */
const UNCONFIRMED_REASONS = new Set(["OperatorCutOff", "AuthFailed", "TLSFailed"]);

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

  const alarms = etcd.reachable ? (etcd.alarms ?? []) : [];
  // The operator cannot tell (plan/quorum-evidence.ts): cut off, or refused by etcd's auth or TLS, while the
  // kubelet's readiness does not confirm a loss. Whether clients are served is unknown to it, not false.
  const unconfirmed =
    step.type === "Degraded" && UNCONFIRMED_REASONS.has(step.reason) && outageOf(obs, step) !== undefined;
  if (unconfirmed) {
    set("Available", "Unknown", step.reason, step.message);
  } else if (alarms.length > 0) {
    const raised = alarms.map((a) => `${a.alarm} (${a.member})`).join(", ");
    set(
      "Available",
      "False",
      "Alarm",
      `etcd alarm raised: ${raised}; writes may be refused until it is disarmed`,
    );
  } else if (!etcd.reachable) {
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

  // During an outage Degraded stays True with the reason, whatever step runs (a restart, a wait).
  const outage = outageOf(obs, step);
  const { progressing, degraded } = stepConditions(
    step.type === "QuorumLost" ? { type: "Degraded", reason: "QuorumLost", message: step.message } : step,
    generation,
  );
  conditions = setCondition(conditions, progressing, now);
  const moving = !["InSync", "Degraded", "QuorumLost"].includes(step.type);
  if (moving && outage !== undefined) {
    set("Degraded", "True", "QuorumLost", `${outage}; nothing is removed until a quorum is back`);
  } else {
    conditions = setCondition(conditions, degraded, now);
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
  // Kept once known: a member answering with another ID is refused (Degraded), never adopted.
  const clusterID = previous.clusterID ?? obs.clusterID;
  const currentVersion = lowest === undefined ? previous.currentVersion : formatEtcdVersion(lowest);
  // etcd's auth as last answered; kept while etcd does not say (spec.auth unset, or no answer).
  const authEnabled = obs.observed.auth?.enabled;
  const auth =
    authEnabled === undefined ? previous.auth : authEnabled ? ("Enabled" as const) : ("Disabled" as const);
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
    ...(auth === undefined ? {} : { auth }),
    selector: selectorString(cluster),
    clientEndpoint: clientEndpoint(cluster),
  };
}
