// Pure: the VaultCluster status (phase, conditions, pods, raft peers) a reconcile writes, from its observation
// and step.
import { type Condition, setCondition, stepConditions } from "@capstan/core";
import type {
  VaultCluster,
  VaultClusterPhase,
  VaultClusterStatus,
  VaultRaftPeer,
} from "../api/vault-cluster.ts";
import { clientEndpoint, type PodState, selectorString } from "../desired/names.ts";
import { type ObservedPod, runsImage, type Step, vaultImage } from "../plan/plan.ts";
import { compareVersions } from "../plan/versions.ts";
import type { Observation } from "./observe.ts";

/** A pod's state label value from what /v1/sys/health said, or undefined when it did not answer. */
export function podState(p: ObservedPod): PodState | undefined {
  if (!p.vault.reachable) return undefined;
  if (!p.vault.initialized) return "uninitialized";
  if (p.vault.sealed) return "sealed";
  return p.vault.standby ? "standby" : "active";
}

/** The phase shown in `kubectl get vault`. */
export function phaseOf(cluster: VaultCluster, obs: Observation, step: Step): VaultClusterPhase {
  if (cluster.spec.paused === true) return "Paused";
  if (step.type === "Degraded") return "Degraded";
  // A restore's step (spec.restore), as the restore reconcile shows it (reconcile/restore.ts).
  if (step.type === "Wait" && step.reason.startsWith("Restore")) return "Restoring";
  // A VaultRecovery's step, as the recovery reconcile shows it (reconcile/recovery.ts).
  if (step.type === "Wait" && (step.reason.startsWith("Recovery") || step.reason === "WaitingForFence")) {
    return "Recovering";
  }
  const initialized = (obs.observed.keys?.unsealKeys ?? 0) > 0;
  if (!initialized) return obs.observed.pods.some((p) => p.vault.reachable) ? "Initializing" : "Pending";
  if (step.type === "BootstrapToken" || step.type === "RevokeRootToken") return "Initializing";
  if (obs.active === undefined && cluster.status?.active === undefined) return "Initializing";
  const image = vaultImage(cluster.spec);
  const live = obs.observed.pods.filter((p) => p.terminatingSince === undefined);
  if (step.type === "UpgradePod" || live.some((p) => p.image !== image || !runsImage(p, image))) {
    return "Upgrading";
  }
  if (
    ["CreatePod", "JoinRaft", "RemovePeer", "DeletePod"].includes(step.type) ||
    live.length !== cluster.spec.replicas
  ) {
    // A cluster growing to its size for the first time is still initializing.
    return (cluster.status?.phase ?? "Initializing") === "Initializing" && step.type !== "RemovePeer"
      ? "Initializing"
      : "Scaling";
  }
  if (step.type === "InSync") return "Running";
  return cluster.status?.phase === "Running" || cluster.status?.phase === undefined
    ? "Running"
    : cluster.status.phase;
}

/** The six conditions for this step. */
export function conditionsOf(
  cluster: VaultCluster,
  obs: Observation,
  step: Step,
  tls: { ready: boolean; message: string; reason?: string },
  now: Date,
): Condition[] {
  const generation = cluster.metadata.generation ?? 0;
  let conditions = cluster.status?.conditions ?? [];
  const set = (type: string, status: Condition["status"], reason: string, message: string) => {
    conditions = setCondition(
      conditions,
      { type, status, reason, message, observedGeneration: generation },
      now,
    );
  };
  const pods = obs.observed.pods.filter((p) => p.terminatingSince === undefined);
  const sealed = pods.filter((p) => podState(p) === "sealed" || podState(p) === "uninitialized");
  const unsealed = pods.filter((p) => podState(p) === "active" || podState(p) === "standby");

  if (step.type === "Degraded" && step.reason === "QuorumLost") {
    // A node answering as active without a quorum of voters cannot commit a write: not available.
    set("Available", "False", "QuorumLost", step.message);
  } else if (obs.active !== undefined) {
    set(
      "Available",
      "True",
      "ActiveNode",
      `${obs.active} is active; ${unsealed.length} of ${pods.length} pods unsealed`,
    );
  } else {
    set("Available", "False", "NoActiveNode", "no pod is unsealed and active");
  }
  const keys = obs.observed.keys;
  if ((keys?.unsealKeys ?? 0) > 0) {
    set("Initialized", "True", "Initialized", "Vault is initialized; its keys are in the keys Secret");
  } else if (
    step.type === "Degraded" &&
    (step.reason === "InitResponseLost" || step.reason === "KeysMissing")
  ) {
    set("Initialized", "Unknown", step.reason, step.message);
  } else {
    set("Initialized", "False", "NotInitialized", "Vault has not been initialized yet");
  }
  if (sealed.length > 0) {
    set("Sealed", "True", "PodsSealed", `${sealed.map((p) => p.name).join(", ")} sealed or not yet joined`);
  } else {
    set("Sealed", "False", "AllUnsealed", `${unsealed.length} pods unsealed`);
  }
  if (tls.ready) set("TLSReady", "True", tls.reason ?? "CertificateReady", tls.message);
  else set("TLSReady", "False", "CertificateNotReady", tls.message);

  const { progressing, degraded } = stepConditions(step, generation);
  conditions = setCondition(conditions, progressing, now);
  conditions = setCondition(conditions, degraded, now);
  return conditions;
}

/** The whole status this reconcile would write. */
export function statusOf(
  cluster: VaultCluster,
  obs: Observation,
  step: Step,
  tls: { ready: boolean; message: string; reason?: string; notAfter?: Date },
  now: Date,
): VaultClusterStatus {
  const previous = cluster.status ?? {};
  const pods = obs.observed.pods.filter((p) => p.terminatingSince === undefined);
  const byState = (s: PodState) => pods.filter((p) => podState(p) === s).map((p) => p.name);
  const sealed = [...byState("sealed"), ...byState("uninitialized")].sort();
  const raftPeers: VaultRaftPeer[] | undefined =
    "servers" in obs.observed.raft
      ? obs.observed.raft.servers
          .map((s) => ({ nodeID: s.nodeID, address: s.address, voter: s.voter, leader: s.leader }))
          .sort((a, b) => (a.nodeID < b.nodeID ? -1 : a.nodeID > b.nodeID ? 1 : 0))
      : previous.raftPeers;
  // The lowest version any pod runs: what Vault answers, else the tag of the image its container runs (a pod
  // restarting or not answering must not let the status claim a version it does not run yet). A container the
  // kubelet cannot run (crash loop, image pull) runs no version: a single pod crash-looping on a new release
  // leaves the recorded version as it was, so reverting spec.version is a rollback, not a refused downgrade.
  const versions = pods
    .filter((p) => p.containerFailure === undefined && p.imagePullError === undefined)
    .map((p) => {
      const answered = obs.health.get(p.name)?.version;
      const tag = (p.runningImage ?? p.image).split(":").pop() ?? "";
      return runsImage(p, p.image) ? (answered ?? tag) : tag;
    })
    .filter((v) => /^[0-9]+\.[0-9]+/.test(v))
    .sort(compareVersions);
  const currentVersion = versions[0] ?? previous.currentVersion;
  // Kept once known: a pod answering with another ID is refused (Degraded), never adopted.
  const clusterID = previous.clusterID ?? obs.observed.keys?.clusterID ?? obs.clusterID;
  const notAfter = tls.notAfter?.toISOString() ?? previous.tls?.notAfter;
  return {
    observedGeneration: cluster.metadata.generation ?? 0,
    phase: phaseOf(cluster, obs, step),
    conditions: conditionsOf(cluster, obs, step, tls, now),
    replicas: pods.length,
    readyReplicas: pods.filter((p) => p.ready).length,
    sealedReplicas: sealed.length,
    selector: selectorString(cluster),
    ...(obs.active === undefined ? {} : { active: obs.active }),
    standbys: byState("standby").sort(),
    sealed,
    ...(raftPeers === undefined ? {} : { raftPeers }),
    ...(currentVersion === undefined ? {} : { currentVersion }),
    ...(clusterID === undefined ? {} : { clusterID }),
    ...(notAfter === undefined ? {} : { tls: { notAfter } }),
    endpoint: clientEndpoint(cluster),
    // Only what the active node answered now: an outage must not leave a healthy verdict standing.
    ...(obs.autopilot === undefined ? {} : { autopilot: obs.autopilot }),
    // What spec.restore did: written by the restore reconcile, kept.
    ...(previous.restore === undefined ? {} : { restore: previous.restore }),
  };
}
