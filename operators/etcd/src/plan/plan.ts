// The membership planner: from the spec and what the operator observed, the ONE next step to take. Pure: no I/O,
// no clock, no randomness; the reconciler performs the step and plans again from fresh observations next time.
import { type EtcdClusterSpec, flagEnvName, OPERATOR_OWNED_FLAGS } from "../api/etcd-cluster.ts";
import { authFailure, planAuth } from "./auth.ts";
import {
  compareEtcdVersions,
  type EtcdVersion,
  formatEtcdVersion,
  parseEtcdVersion,
  unsupportedVersionChange,
} from "./etcd-version.ts";
import { quorumLost } from "./quorum-evidence.ts";
import { planRestore } from "./restore.ts";
import type { Observed, ObservedMember, ObservedPod, PlanOptions, Step } from "./types.ts";

export type {
  Observed,
  ObservedAlarm,
  ObservedEtcd,
  ObservedMember,
  ObservedPod,
  PlanOptions,
  Step,
  TerminatingPod,
} from "./types.ts";

/** Default of spec.recovery.memberNotReadySeconds, in milliseconds. */
export const DEFAULT_DEAD_AFTER_MS = 5 * 60_000;
/** Default of spec.recovery.unschedulableSeconds, in milliseconds. */
export const DEFAULT_UNSCHEDULABLE_AFTER_MS = 5 * 60_000;
/** Default of spec.recovery.terminatingSeconds, in milliseconds. */
export const DEFAULT_TERMINATING_AFTER_MS = 5 * 60_000;
/** Default of spec.recovery.learnerStallSeconds, in milliseconds. */
export const DEFAULT_LEARNER_STALL_MS = 10 * 60_000;
/** Default of spec.maintenance.defragThresholdPercent. */
export const DEFAULT_DEFRAG_THRESHOLD_PERCENT = 50;
/** A database smaller than this is never defragmented (the disk it would return is not worth a pause). */
export const DEFRAG_MIN_DB_BYTES = 64 * 1024 * 1024;

/** A learner may be promoted once its raft index reaches this fraction of the leader's (etcd's own rule). */
export const LEARNER_READY_FRACTION = 0.9;

/** Votes needed for a quorum among `voters` voting members. */
export function quorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/**
 * Plans the next step. The rules, in order (the first that applies wins):
 *  1. Paused: Wait. spec.extraArgs/extraEnv overriding an operator-owned flag (an object older than the CEL rule
 *     that refuses it) -> Degraded naming the field. etcd refusing the operator's credentials (auth on and no
 *     root password, or a wrong one) -> Degraded naming spec.auth.rootSecretRef (plan/auth.ts).
 *  2. etcd unreachable: bootstrapped -> (after the version gate of rule 5, judged from the version the data was
 *     last seen on) a known member, or any member with a data claim (status.members may be wiped or stale),
 *     whose pod is gone but whose data volume is kept -> StartMemberPod (restarting a
 *     member on its own data is always safe and is how a cluster whose pods all went away comes back), else
 *     QuorumLost when the evidence confirms it (below). Never bootstrapped (no status.clusterID): data claims exist -> the same restart on them (a lost
 *     status must never lead to a second cluster: no seed while any owned data claim exists, except the seed's
 *     own claim when it is the only one and has no pod: CreateSeed again on it); pods exist -> Wait for the
 *     seed; nothing -> CreateSeed. With spec.bootstrap.restore, plan/restore.ts decides first (the seed's claim
 *     is restored before CreateSeed starts it), and only while no data but its own claim exists.
 *  3. A member answers with another cluster ID than the one recorded -> Degraded naming both; nothing is done.
 *  4. Fewer healthy voters than a quorum -> the same restart of a started member on its kept data (version
 *     gate first), else QuorumLost: nothing is removed, added or deleted.
 *     QuorumLost (rules 2 and 4) needs evidence that does not pass through the operator (plan/quorum-evidence.ts):
 *     a majority of the voters' pods NOT Ready by their kubelet, and the operator's failures not authentication
 *     or TLS errors. Else Degraded AuthFailed, TLSFailed, or OperatorCutOff (a majority Ready), naming both.
 *  5. spec.version malformed, or an unsupported change from the lowest running version (downgrade of a minor,
 *     skipping a minor, another major, 3.5 -> 3.6 from below 3.5.32) -> Degraded naming spec.version; it blocks
 *     every later rule, so no member is ever started on a refused version.
 *  6. A pod or PVC without a member (a removal interrupted after MemberRemove) -> CleanupMember (the reconciler
 *     confirms the absence in a linearizable member list first).
 *  7. A member without a pod: stuck terminating past spec.recovery.terminatingSeconds -> ReplaceMember; never
 *     started (MemberAdd done, pod not yet created) -> StartMemberPod, never a second AddLearner; started with
 *     its data volume present -> StartMemberPod (restart in place); started with its data gone (ephemeral, or
 *     PVC deleted) -> ReplaceMember, because restarting a member identity on empty data is unsafe.
 *  8. An alarm (NOSPACE, CORRUPT) -> Degraded naming it: no membership change until an operator clears it.
 *  9. A member pod whose image cannot be pulled: the image spec.version asks for -> Degraded naming the image
 *     (the member is never removed nor its claim deleted); an older image (spec.version was reverted) ->
 *     UpgradeMember back to spec.version.
 * 10. A member that cannot come back -> ReplaceMember, one at a time: etcd refused to start on an empty data
 *     directory (DataLost); its pod unschedulable past spec.recovery.unschedulableSeconds; a voter not ready
 *     past spec.recovery.memberNotReadySeconds; a learner whose raft index has not advanced for
 *     spec.recovery.learnerStallSeconds (a learner is judged by progress, never by a fixed time).
 * 11. More members than spec.replicas -> RemoveMember, one at a time: learners first, then unhealthy members,
 *     then followers (by name, last first); the leader only if nothing else is left.
 * 12. A learner: caught up (raft index >= 90% of the leader's) -> PromoteLearner; else Wait.
 * 13. Any member unhealthy or its pod not ready -> Wait (no scale-out or upgrade on a sick cluster).
 * 13a. etcd's authentication differs from spec.auth -> AddRootUser, GrantRootRole, EnableAuth, or DisableAuth, one
 *     at a time (plan/auth.ts).
 * 14. Members not on spec.version -> UpgradeMember, one at a time: followers first (by name), the leader last,
 *     after MoveLeader to an upgraded member when there is one.
 * 15. A member whose pod was built from an older spec.podTemplate or spec.repository -> RestartMember, one at a
 *     time, followers first, the leader last after MoveLeader (rule 7 starts the pod again on its data).
 * 16. Fewer members than spec.replicas -> AddLearner(freshName), one at a time.
 * 17. A database whose free pages exceed spec.maintenance.defragThresholdPercent -> Defragment, one member at a
 *     time, followers first, the leader last.
 * 18. InSync.
 * Every removal (rules 7, 10, 11) keeps a quorum of healthy voters after it or waits (a member whose pod is
 * terminating counts as lost), and moves leadership away first when it would remove the leader while another
 * healthy voter exists.
 */
export function planNext(spec: EtcdClusterSpec, observed: Observed, now: Date, options: PlanOptions): Step {
  if (spec.paused === true) {
    return wait(
      "Paused",
      "spec.paused is true: no membership change or pod update is made until it is unset",
    );
  }

  const owned = ownedFlagOverride(spec);
  if (owned !== undefined) return owned;
  const refusedCredentials = authFailure(observed);
  if (refusedCredentials !== undefined) return refusedCredentials;

  const { etcd } = observed;
  if (!etcd.reachable) {
    if (observed.bootstrapped) {
      const refused = versionGate(spec, observed.knownVersion);
      if (refused !== undefined) return refused;
      return (
        // The members last seen, and every member whose data claim exists: status.members can be empty or stale
        // (status wiped, then clusterID recovered before any member answered), and waiting for a quorum that only
        // these pods can bring back would wait for ever. Starting a pod on its own data never makes a new cluster.
        restartOnData(spec, observed, [
          ...new Set([...(observed.knownMembers ?? []), ...observed.volumes]),
        ]) ?? quorumLost(observed)
      );
    }
    const restoring = planRestore(spec, observed, options);
    if (restoring !== undefined) return restoring;
    const seed = observed.volumes.length === 1 ? observed.volumes[0] : undefined;
    if (
      seed !== undefined &&
      observed.pods.length === 0 &&
      (observed.terminating ?? []).length === 0 &&
      (observed.seedVolumes ?? []).includes(seed)
    ) {
      // The only claim is a seed's whose pod was never made (the operator stopped between the two), or a one-member
      // cluster's seed: starting it as a new cluster is safe either way, because etcd ignores the bootstrap flags
      // when the data directory holds a member and resumes that member.
      return {
        type: "CreateSeed",
        name: seed,
        message: `starting seed member ${seed} on its claim, made by an earlier CreateSeed`,
      };
    }
    if (observed.volumes.length > 0) {
      // status.clusterID is lost but the members' data is not: bring the same cluster back from its data
      // (a seed being created has its pod, so it is not restarted).
      const restart = restartOnData(spec, observed, observed.volumes);
      if (restart !== undefined) return restart;
    }
    if (observed.pods.length === 0 && observed.volumes.length === 0) {
      if ((observed.terminating ?? []).length > 0) {
        return wait(
          "PodTerminating",
          `waiting for ${observed.terminating?.map((p) => p.name).join(", ")} to go away`,
        );
      }
      return {
        type: "CreateSeed",
        name: options.freshName,
        message: `bootstrapping with seed member ${options.freshName}`,
      };
    }
    const lost = observed.pods.filter((p) => p.dataLost === true);
    if (lost.length > 0 && lost.length === observed.pods.length) {
      return {
        type: "Degraded",
        reason: "DataLost",
        message: `no status.clusterID is recorded and ${lost.map((p) => p.name).join(", ")} found an empty data directory: the data claims hold no cluster; delete the EtcdCluster's claims to bootstrap a new cluster (nothing is deleted automatically)`,
      };
    }
    return wait(
      "SeedStarting",
      `waiting for member ${observed.pods.map((p) => p.name).join(", ")} to answer`,
    );
  }

  const mismatch = clusterIDMismatch(observed);
  if (mismatch !== undefined) return mismatch;

  const members = [...etcd.members].sort(byName);
  if (members.length === 0) return wait("NoMembers", "etcd answered with an empty member list");
  const view = new View(spec, observed, members, now, options);

  const voters = members.filter((m) => !m.isLearner);
  const healthy = voters.filter((m) => m.healthy);
  if (healthy.length < quorum(voters.length)) {
    const refused = versionGate(spec, view.lowestVersion() ?? observed.knownVersion);
    if (refused !== undefined) return refused;
    const started = members.filter((m) => m.started).map((m) => m.name);
    const restart = restartOnData(spec, observed, started);
    if (restart !== undefined) return restart;
    return quorumLost(observed);
  }

  const refused = versionGate(spec, view.lowestVersion());
  if (refused !== undefined) return refused;
  const target = parseEtcdVersion(spec.version)!;

  return (
    view.cleanup() ??
    view.missingPods() ??
    view.alarms() ??
    view.imagePull() ??
    view.deadMembers() ??
    view.scaleIn() ??
    view.learners() ??
    view.unhealthy() ??
    planAuth(spec, observed.auth) ??
    view.upgrade(target) ??
    view.roll() ??
    view.scaleOut() ??
    view.defragment() ?? {
      type: "InSync",
      message: `${members.length} members on ${spec.version}, all healthy`,
    }
  );
}

/**
 * Degraded when spec.extraArgs or spec.extraEnv sets a flag the operator owns. The API server refuses these
 * (CEL); this catches objects stored before the rule existed, so no pod is ever built with them.
 */
function ownedFlagOverride(spec: EtcdClusterSpec): Step | undefined {
  const flag = Object.keys(spec.extraArgs ?? {}).find((k) => OPERATOR_OWNED_FLAGS.includes(k));
  if (flag !== undefined) {
    return {
      type: "Degraded",
      reason: "OperatorOwnedFlag",
      field: `spec.extraArgs.${flag}`,
      message: `spec.extraArgs.${flag}: --${flag} is set by the operator and cannot be overridden; remove it`,
    };
  }
  const env = (spec.extraEnv ?? []).find((e) => OPERATOR_OWNED_FLAGS.some((f) => flagEnvName(f) === e.name));
  if (env !== undefined) {
    return {
      type: "Degraded",
      reason: "OperatorOwnedFlag",
      field: "spec.extraEnv",
      message: `spec.extraEnv: ${env.name} sets a flag the operator owns and cannot be overridden; remove it`,
    };
  }
  return undefined;
}

/** Degraded when spec.version is malformed or an unsupported change from `current` (a version string or parsed). */
function versionGate(spec: EtcdClusterSpec, current: EtcdVersion | string | undefined): Step | undefined {
  const target = parseEtcdVersion(spec.version);
  if (target === undefined) {
    return degraded("InvalidVersion", `spec.version "${spec.version}" is not MAJOR.MINOR.PATCH`);
  }
  const from = typeof current === "string" ? parseEtcdVersion(current) : current;
  const refused = from === undefined ? undefined : unsupportedVersionChange(from, target);
  if (refused !== undefined) return degraded("UnsupportedVersionChange", `spec.version: ${refused}`);
  return undefined;
}

/** Degraded when the cluster or a member answers with another cluster ID than the one recorded. */
function clusterIDMismatch(observed: Observed): Step | undefined {
  const known = observed.knownClusterID;
  if (known === undefined || !observed.etcd.reachable) return undefined;
  const answers = [
    ...(observed.etcd.clusterID === undefined
      ? []
      : [{ who: "the member list", id: observed.etcd.clusterID }]),
    ...observed.etcd.members
      .filter((m) => m.clusterID !== undefined)
      .map((m) => ({ who: `member ${m.name}`, id: m.clusterID! })),
  ];
  const other = answers.find((a) => a.id !== known);
  if (other === undefined) return undefined;
  return {
    type: "Degraded",
    reason: "ClusterIDMismatch",
    field: "status.clusterID",
    message: `${other.who} answers with cluster ID ${other.id}, but this EtcdCluster is cluster ${known} (status.clusterID): another cluster's member (or a re-bootstrapped one) is behind these pods; nothing is done until an operator resolves it`,
  };
}

/** The rules after the gates, over one observation. Each returns a step, or undefined when it does not apply. */
class View {
  readonly spec: EtcdClusterSpec;
  readonly observed: Observed;
  readonly members: ObservedMember[];
  readonly now: Date;
  readonly options: PlanOptions;
  readonly pods: Map<string, ObservedPod>;
  /** Member pods being deleted, by name, with their deletionTimestamp. */
  readonly terminating: Map<string, Date>;

  constructor(
    spec: EtcdClusterSpec,
    observed: Observed,
    members: ObservedMember[],
    now: Date,
    options: PlanOptions,
  ) {
    this.spec = spec;
    this.observed = observed;
    this.members = members;
    this.now = now;
    this.options = options;
    this.pods = new Map(observed.pods.map((p) => [p.name, p]));
    this.terminating = new Map((observed.terminating ?? []).map((p) => [p.name, p.since]));
  }

  /** A threshold from spec.recovery (seconds), else the default (milliseconds). */
  threshold(seconds: number | undefined, fallbackMs: number): number {
    return seconds === undefined ? fallbackMs : seconds * 1000;
  }

  /** Healthy in etcd and its pod not being deleted: what quorum arithmetic counts on. */
  counts(m: ObservedMember): boolean {
    return m.healthy && !this.terminating.has(m.name);
  }

  lowestVersion(): EtcdVersion | undefined {
    const versions = this.members
      .map((m) => (m.version === undefined ? undefined : parseEtcdVersion(m.version)))
      .filter((v) => v !== undefined)
      .sort(compareEtcdVersions);
    return versions[0];
  }

  /** Rule 6. */
  cleanup(): Step | undefined {
    const memberNames = new Set(this.members.map((m) => m.name));
    const orphans = [...this.pods.keys(), ...this.observed.volumes].filter((n) => !memberNames.has(n)).sort();
    const name = orphans[0];
    if (name === undefined) return undefined;
    return {
      type: "CleanupMember",
      name,
      message: `deleting the pod and volume of ${name}, which is not a member`,
    };
  }

  /** Rule 7. */
  missingPods(): Step | undefined {
    const stuckAfter = this.threshold(this.spec.recovery?.terminatingSeconds, DEFAULT_TERMINATING_AFTER_MS);
    for (const m of this.members) {
      if (this.pods.has(m.name)) continue;
      const deleting = this.terminating.get(m.name);
      if (deleting !== undefined && this.now.getTime() - deleting.getTime() >= stuckAfter) {
        const forS = Math.round((this.now.getTime() - deleting.getTime()) / 1000);
        return this.removal(m, {
          type: "ReplaceMember",
          id: m.id,
          name: m.name,
          reason: "StuckTerminating",
          message: `the pod of member ${m.name} has been terminating for ${forS}s (its node may be unreachable); replacing the member with a fresh one`,
        });
      }
      if (!m.started) {
        return {
          type: "StartMemberPod",
          name: m.name,
          reason: "NotStarted",
          message: `member ${m.name} was added but has no pod yet; starting it`,
        };
      }
      const dataKept = this.spec.storage.ephemeral !== true && this.observed.volumes.includes(m.name);
      if (dataKept) {
        return {
          type: "StartMemberPod",
          name: m.name,
          reason: "PodMissing",
          message: `the pod of member ${m.name} is gone; restarting it on its data volume`,
        };
      }
      return this.removal(m, {
        type: "ReplaceMember",
        id: m.id,
        name: m.name,
        reason: "DataLost",
        message: `member ${m.name} lost its pod and its data; removing it to add a fresh member`,
      });
    }
    return undefined;
  }

  /** Rule 8. */
  alarms(): Step | undefined {
    const alarms = this.observed.etcd.reachable ? (this.observed.etcd.alarms ?? []) : [];
    const alarm = alarms.find((a) => a.alarm === "CORRUPT") ?? alarms[0];
    if (alarm === undefined) return undefined;
    const what =
      alarm.alarm === "NOSPACE"
        ? "the database reached its quota (--quota-backend-bytes) and the cluster accepts only reads and deletes: compact, defragment, then disarm the alarm (see the etcd operator docs)"
        : alarm.alarm === "CORRUPT"
          ? "a member's data differs from the others': restore that member from the healthy ones (see the etcd operator docs)"
          : "see etcd's documentation";
    return {
      type: "Degraded",
      reason: `Alarm${alarm.alarm.charAt(0)}${alarm.alarm.slice(1).toLowerCase()}`,
      message: `etcd alarm ${alarm.alarm} raised by ${alarm.member}: ${what}; no membership change is made until it is disarmed`,
    };
  }

  /** Rule 9. */
  imagePull(): Step | undefined {
    for (const m of this.members) {
      const failure = this.pods.get(m.name)?.imagePullError;
      if (failure === undefined) continue;
      if (failure.current) {
        return {
          type: "Degraded",
          reason: "ImagePullFailed",
          field: "spec.version",
          message: `member ${m.name} cannot pull image ${failure.image} (${failure.reason}); the member and its data are kept: fix spec.repository/spec.version (or the registry), or set spec.version back to recover`,
        };
      }
      const to = this.spec.version;
      return {
        type: "UpgradeMember",
        id: m.id,
        name: m.name,
        from: failure.image,
        to,
        message: `member ${m.name} cannot pull ${failure.image} (${failure.reason}), which spec no longer asks for; moving it to ${to}`,
      };
    }
    return undefined;
  }

  /** Rule 10. */
  deadMembers(): Step | undefined {
    const recovery = this.spec.recovery ?? {};
    const deadAfter =
      this.options.deadAfterMs ?? this.threshold(recovery.memberNotReadySeconds, DEFAULT_DEAD_AFTER_MS);
    const unschedulableAfter = this.threshold(recovery.unschedulableSeconds, DEFAULT_UNSCHEDULABLE_AFTER_MS);
    const stallAfter = this.threshold(recovery.learnerStallSeconds, DEFAULT_LEARNER_STALL_MS);
    const age = (since: Date) => this.now.getTime() - since.getTime();
    const replace = (m: ObservedMember, reason: ReplaceReason, message: string) =>
      this.removal(m, { type: "ReplaceMember", id: m.id, name: m.name, reason, message });
    for (const m of this.members) {
      const pod = this.pods.get(m.name);
      // Only a member that has run before can have lost data: a learner that never started and exited with
      // "cannot fetch cluster info" failed to join (e.g. its peers' names did not resolve yet); the kubelet
      // restarts it, and the learner stall rule below replaces it if it never gets in.
      if (pod?.dataLost === true && m.started) {
        return replace(
          m,
          "DataLost",
          `member ${m.name} found its data directory empty and refused to rejoin under its old identity; replacing it with a fresh member`,
        );
      }
      if (pod?.unschedulableSince !== undefined && age(pod.unschedulableSince) >= unschedulableAfter) {
        return replace(
          m,
          "Unschedulable",
          `the pod of member ${m.name} has found no node for ${Math.round(age(pod.unschedulableSince) / 1000)}s; replacing the member with a fresh one`,
        );
      }
      if (m.isLearner) {
        if (this.caughtUp(m)) continue;
        const since = this.observed.learnerProgress?.[m.name];
        if (since !== undefined && age(since) >= stallAfter) {
          return replace(
            m,
            "LearnerStalled",
            `learner ${m.name} has made no progress (raft index ${m.raftIndex ?? "unknown"}) for ${Math.round(age(since) / 1000)}s; replacing it with a fresh member`,
          );
        }
        continue;
      }
      if (pod === undefined || pod.ready || pod.notReadySince === undefined) continue;
      if (age(pod.notReadySince) < deadAfter) continue;
      return replace(
        m,
        "Unhealthy",
        `member ${m.name} has not been ready for ${Math.round(age(pod.notReadySince) / 1000)}s; replacing it with a fresh member`,
      );
    }
    return undefined;
  }

  /** A started, answering learner whose raft index reached 90% of the leader's. */
  caughtUp(learner: ObservedMember): boolean {
    const leader = this.members.find((m) => m.leader);
    return (
      learner.started &&
      learner.healthy &&
      leader?.raftIndex !== undefined &&
      learner.raftIndex !== undefined &&
      learner.raftIndex >= leader.raftIndex * LEARNER_READY_FRACTION
    );
  }

  /** Rule 11. */
  scaleIn(): Step | undefined {
    if (this.members.length <= this.spec.replicas) return undefined;
    const rank = (m: ObservedMember) => (m.isLearner ? 0 : !this.isWell(m) ? 1 : m.leader ? 3 : 2);
    const victim = [...this.members].sort((a, b) => rank(a) - rank(b) || byName(b, a))[0]!;
    return this.removal(victim, {
      type: "RemoveMember",
      id: victim.id,
      name: victim.name,
      message: `scaling in from ${this.members.length} to ${this.spec.replicas} members: removing ${victim.name}`,
    });
  }

  /** Rule 12. */
  learners(): Step | undefined {
    const learner = this.members.find((m) => m.isLearner);
    if (learner === undefined) return undefined;
    const leader = this.members.find((m) => m.leader);
    if (!this.caughtUp(learner)) {
      const progress =
        learner.raftIndex === undefined || leader?.raftIndex === undefined
          ? "its progress is unknown"
          : `raft index ${learner.raftIndex} of the leader's ${leader.raftIndex}`;
      return wait("LearnerCatchingUp", `learner ${learner.name} is catching up (${progress})`);
    }
    return {
      type: "PromoteLearner",
      id: learner.id,
      name: learner.name,
      message: `promoting learner ${learner.name}, which has caught up with the leader`,
    };
  }

  /** Rule 13. */
  unhealthy(): Step | undefined {
    const sick = this.members.filter((m) => !this.isWell(m));
    if (sick.length === 0) return undefined;
    return wait("MemberUnhealthy", `waiting for ${names(sick)} to become healthy`);
  }

  /** Rule 14. */
  upgrade(target: EtcdVersion): Step | undefined {
    const to = formatEtcdVersion(target);
    const unknown = this.members.filter((m) => m.version === undefined);
    const outdated = this.members.filter((m) => {
      const v = m.version === undefined ? undefined : parseEtcdVersion(m.version);
      return v !== undefined && compareEtcdVersions(v, target) !== 0;
    });
    if (outdated.length === 0) return undefined;
    if (unknown.length > 0)
      return wait("VersionUnknown", `waiting for ${names(unknown)} to report a version`);
    const next = outdated.find((m) => !m.leader) ?? outdated[0]!;
    if (next.leader) {
      const moved = this.moveLeaderFrom(next, `before upgrading leader ${next.name}`);
      if (moved !== undefined) return moved;
    }
    return {
      type: "UpgradeMember",
      id: next.id,
      name: next.name,
      from: next.version!,
      to,
      message: `upgrading member ${next.name} from ${next.version} to ${to}`,
    };
  }

  /** Rule 15. */
  roll(): Step | undefined {
    const outdated = this.members.filter((m) => this.pods.get(m.name)?.outdated === true);
    const next = outdated.find((m) => !m.leader) ?? outdated[0];
    if (next === undefined) return undefined;
    if (next.leader) {
      const moved = this.moveLeaderFrom(next, `before restarting leader ${next.name}`);
      if (moved !== undefined) return moved;
    }
    const step: Step = {
      type: "RestartMember",
      id: next.id,
      name: next.name,
      message: `restarting member ${next.name} on its data to apply the changed podTemplate`,
    };
    // Without a volume the restart replaces the member: it must be safe as a removal.
    if (this.spec.storage.ephemeral === true) return this.removal(next, step);
    const voters = this.members.filter((v) => !v.isLearner);
    if (voters.length === 1) return step; // one member: a short outage is the only way, and the data is kept
    const healthyDuring = voters.filter((v) => this.counts(v) && v !== next).length;
    if (healthyDuring < quorum(voters.length)) {
      return wait(
        "QuorumAtRisk",
        `not restarting ${next.name}: ${healthyDuring} of ${voters.length} voters would stay healthy, below a quorum`,
      );
    }
    return step;
  }

  /** Rule 16. */
  scaleOut(): Step | undefined {
    if (this.members.length >= this.spec.replicas) return undefined;
    const name = this.options.freshName;
    const used = [...this.members.map((m) => m.name), ...this.pods.keys(), ...this.observed.volumes];
    if (used.includes(name)) return wait("NameInUse", `the new member name ${name} is already in use`);
    return {
      type: "AddLearner",
      name,
      message: `scaling out from ${this.members.length} to ${this.spec.replicas} members: adding learner ${name}`,
    };
  }

  /** Rule 17. */
  defragment(): Step | undefined {
    const percent = this.spec.maintenance?.defragThresholdPercent ?? DEFAULT_DEFRAG_THRESHOLD_PERCENT;
    const fragmented = this.members.filter((m) => {
      if (m.dbSize === undefined || m.dbSizeInUse === undefined || m.dbSize < DEFRAG_MIN_DB_BYTES)
        return false;
      return ((m.dbSize - m.dbSizeInUse) / m.dbSize) * 100 >= percent;
    });
    const next = fragmented.find((m) => !m.leader) ?? fragmented[0];
    if (next === undefined) return undefined;
    const free = Math.round((((next.dbSize ?? 0) - (next.dbSizeInUse ?? 0)) / (next.dbSize ?? 1)) * 100);
    return {
      type: "Defragment",
      id: next.id,
      name: next.name,
      message: `defragmenting member ${next.name}: ${free}% of its ${next.dbSize} byte database is free pages (threshold ${percent}%)`,
    };
  }

  /** Healthy in etcd and, when it has a pod, ready. */
  isWell(m: ObservedMember): boolean {
    return m.healthy && this.pods.get(m.name)?.ready === true;
  }

  /** `step` if removing `m` keeps a quorum of healthy voters; MoveLeader first if `m` leads; else Wait. */
  removal(m: ObservedMember, step: Step): Step {
    if (!m.isLearner) {
      const voters = this.members.filter((v) => !v.isLearner);
      const votersAfter = voters.length - 1;
      // A member whose pod is being deleted is about to be lost: it does not count.
      const healthyAfter = voters.filter((v) => this.counts(v) && v !== m).length;
      if (votersAfter === 0) {
        return wait("LastMember", `not removing ${m.name}: it is the only voting member`);
      }
      if (healthyAfter < quorum(votersAfter)) {
        return wait(
          "QuorumAtRisk",
          `not removing ${m.name}: ${healthyAfter} healthy of ${votersAfter} voters would remain, below a quorum of ${quorum(votersAfter)}`,
        );
      }
    }
    if (m.leader) return this.moveLeaderFrom(m, `before removing ${m.name}`) ?? step;
    return step;
  }

  /** MoveLeader from `leader` to a healthy voter (one on spec.version first, then by name), if there is one. */
  moveLeaderFrom(leader: ObservedMember, why: string): Step | undefined {
    const target = parseEtcdVersion(this.spec.version);
    const onTarget = (m: ObservedMember) => {
      const v = m.version === undefined ? undefined : parseEtcdVersion(m.version);
      return v !== undefined && target !== undefined && compareEtcdVersions(v, target) === 0 ? 0 : 1;
    };
    const to = this.members
      .filter((m) => m !== leader && !m.isLearner && this.isWell(m))
      .sort((a, b) => onTarget(a) - onTarget(b) || byName(a, b))[0];
    if (to === undefined) return undefined;
    return {
      type: "MoveLeader",
      from: leader.id,
      to: to.id,
      toName: to.name,
      message: `moving leadership from ${leader.name} to ${to.name} ${why}`,
    };
  }
}

/** StartMemberPod for the first of `names` whose pod is gone and whose data volume is kept, if any. */
function restartOnData(spec: EtcdClusterSpec, observed: Observed, names: string[]): Step | undefined {
  if (spec.storage.ephemeral === true) return undefined;
  const withPod = new Set(observed.pods.map((p) => p.name));
  const name = [...names].sort().find((n) => !withPod.has(n) && observed.volumes.includes(n));
  if (name === undefined) return undefined;
  return {
    type: "StartMemberPod",
    name,
    reason: "PodMissing",
    message: `the pod of member ${name} is gone while the cluster has no quorum; restarting it on its data volume`,
  };
}

type ReplaceReason = Extract<Step, { type: "ReplaceMember" }>["reason"];

function wait(reason: string, message: string): Step {
  return { type: "Wait", reason, message };
}

function degraded(reason: string, message: string): Step {
  return { type: "Degraded", reason, field: "spec.version", message };
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function names(members: ObservedMember[]): string {
  return members.map((m) => m.name).join(", ");
}
