// The membership planner: from the spec and what the operator observed, the ONE next step to take. Pure: no I/O,
// no clock, no randomness; the reconciler performs the step and plans again from fresh observations next time.
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import {
  compareEtcdVersions,
  type EtcdVersion,
  formatEtcdVersion,
  parseEtcdVersion,
  unsupportedVersionChange,
} from "./etcd-version.ts";

/** One entry of etcd's member list, joined with the member's status endpoint. */
export interface ObservedMember {
  /** Member ID in hexadecimal. */
  id: string;
  /** The name the operator gave the member (read from its peer URL: etcd reports "" until the member starts). */
  name: string;
  peerURLs: string[];
  isLearner: boolean;
  /** The member has started at least once (etcd reports its name). */
  started: boolean;
  /** The member answers its status/health endpoint. */
  healthy: boolean;
  leader: boolean;
  /** Server version the member reports, e.g. "3.6.15". */
  version?: string;
  /** Raft index the member reports; compares a learner's progress with the leader's. */
  raftIndex?: number;
}

/** A member pod that exists and is not being deleted. */
export interface ObservedPod {
  /** Member name (the pod is named after its member). */
  name: string;
  ready: boolean;
  /** When the pod's Ready condition last became False (its lastTransitionTime). */
  notReadySince?: Date;
  /** The pod was built from another spec.podTemplate or spec.repository than the current one. */
  outdated?: boolean;
}

/** The etcd cluster as the etcd API showed it, or the error when no member answered. */
export type ObservedEtcd =
  | { reachable: true; members: ObservedMember[] }
  | { reachable: false; error: string };

/** Everything the planner reads. */
export interface Observed {
  etcd: ObservedEtcd;
  /** Member pods that exist. */
  pods: ObservedPod[];
  /** Member names whose data PersistentVolumeClaim exists. */
  volumes: string[];
  /** The cluster was bootstrapped once (status.clusterID is set). */
  bootstrapped: boolean;
  /** Names of the members the operator last saw (status.members): their pods are restarted even without quorum. */
  knownMembers?: string[];
}

/** Planner settings. */
export interface PlanOptions {
  /** A never-used member name, used if the step creates a member (the caller generates it, e.g. randomly). */
  freshName: string;
  /** How long a voting member's pod may stay not ready before it is replaced (default 5 minutes). */
  deadAfterMs?: number;
}

/** Default for {@link PlanOptions.deadAfterMs}. */
export const DEFAULT_DEAD_AFTER_MS = 5 * 60_000;

/** A learner may be promoted once its raft index reaches this fraction of the leader's (etcd's own rule). */
export const LEARNER_READY_FRACTION = 0.9;

/** The next step. Every step carries a user-facing message for events and logs. */
export type Step =
  /** Bootstrap: start the first member's pod with --initial-cluster-state=new and only itself in the cluster. */
  | { type: "CreateSeed"; name: string; message: string }
  /** MemberAdd(isLearner) with the new member's peer URL; its pod is started by a later StartMemberPod. */
  | { type: "AddLearner"; name: string; message: string }
  /** Create the pod of an existing member (--initial-cluster-state=existing). */
  | { type: "StartMemberPod"; name: string; reason: "NotStarted" | "PodMissing"; message: string }
  /** MemberPromote of a learner that has caught up. */
  | { type: "PromoteLearner"; id: string; name: string; message: string }
  /** Scale in: MemberRemove, then delete the member's pod and PVC. */
  | { type: "RemoveMember"; id: string; name: string; message: string }
  /** Recovery: MemberRemove of a dead member, then delete its pod and PVC; a fresh member is added later. */
  | { type: "ReplaceMember"; id: string; name: string; reason: "DataLost" | "Unhealthy"; message: string }
  /** MoveLeader to another healthy voter, before the current leader is removed or upgraded. */
  | { type: "MoveLeader"; from: string; to: string; toName: string; message: string }
  /** Recreate one member's pod with the image of spec.version (its data is kept). */
  | { type: "UpgradeMember"; id: string; name: string; from: string; to: string; message: string }
  /** Delete one member's outdated pod; it is started again from the current podTemplate, on its data. */
  | { type: "RestartMember"; id: string; name: string; message: string }
  /** Delete the pod and PVC of a name that is no longer a member (an interrupted removal). */
  | { type: "CleanupMember"; name: string; message: string }
  /** Nothing safe to do now; plan again later. */
  | { type: "Wait"; reason: string; message: string }
  /** The spec asks for something the operator refuses; nothing changes until the spec does. */
  | { type: "Degraded"; reason: string; field?: string; message: string }
  /** Fewer than a quorum of voters is healthy: report only, never remove or delete anything. */
  | { type: "QuorumLost"; message: string }
  /** The cluster matches the spec. */
  | { type: "InSync"; message: string };

/** Votes needed for a quorum among `voters` voting members. */
export function quorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/**
 * Plans the next step. The rules, in order (the first that applies wins):
 *  1. Paused: Wait.
 *  2. etcd unreachable: never bootstrapped and no pods -> CreateSeed; never bootstrapped with pods -> Wait for
 *     the seed; bootstrapped -> a known member whose pod is gone but whose data volume is kept -> StartMemberPod
 *     (restarting a member on its own data is always safe and is how a cluster whose pods all went away comes
 *     back), else QuorumLost (a cluster that existed and answers nothing has lost quorum).
 *  3. Fewer healthy voters than a quorum -> the same restart of a started member on its kept data, else
 *     QuorumLost: nothing is removed, added or deleted.
 *  4. spec.version malformed, or an unsupported change from the lowest running version (downgrade of a minor,
 *     skipping a minor, another major) -> Degraded naming spec.version; it blocks every later rule, so no member
 *     is ever started on a refused version.
 *  5. A pod or PVC without a member (a removal interrupted after MemberRemove) -> CleanupMember.
 *  6. A member without a pod: never started (MemberAdd done, pod not yet created: the operator was
 *     interrupted) -> StartMemberPod, never a second AddLearner; started with its data volume present ->
 *     StartMemberPod (restart in place); started with its data gone (ephemeral, or PVC deleted) ->
 *     ReplaceMember, because restarting a member identity on empty data is unsafe.
 *  7. A voter whose pod has been not ready for deadAfterMs -> ReplaceMember (a fresh name is added later; a
 *     removed member's name is never reused). A learner's pod is never ready (a learner cannot serve /readyz),
 *     so a learner is replaced only when it also does not answer: a learner that never comes up cannot block
 *     the cluster forever.
 *  8. More members than spec.replicas -> RemoveMember, one at a time: learners first, then unhealthy members,
 *     then followers (by name, last first); the leader only if nothing else is left.
 *  9. A learner: caught up (raft index >= 90% of the leader's) -> PromoteLearner; else Wait.
 * 10. Any member unhealthy or its pod not ready -> Wait (no scale-out or upgrade on a sick cluster).
 * 11. Members not on spec.version -> UpgradeMember, one at a time: followers first (by name), the leader last,
 *     after MoveLeader to an upgraded member when there is one.
 * 12. A member whose pod was built from an older spec.podTemplate or spec.repository -> RestartMember, one at a
 *     time, followers first, the leader last after MoveLeader (rule 6 starts the pod again on its data).
 * 13. Fewer members than spec.replicas -> AddLearner(freshName), one at a time.
 * 14. InSync.
 * Every removal (rules 6-8) keeps a quorum of healthy voters after it or waits, and moves leadership away
 * first when it would remove the leader while another healthy voter exists.
 */
export function planNext(spec: EtcdClusterSpec, observed: Observed, now: Date, options: PlanOptions): Step {
  if (spec.paused === true) {
    return wait(
      "Paused",
      "spec.paused is true: no membership change or pod update is made until it is unset",
    );
  }

  const { etcd } = observed;
  if (!etcd.reachable) {
    if (observed.bootstrapped) {
      return (
        restartOnData(spec, observed, observed.knownMembers ?? []) ?? {
          type: "QuorumLost",
          message: `no etcd member answers (${etcd.error}); nothing is removed until a quorum is back`,
        }
      );
    }
    if (observed.pods.length === 0) {
      return {
        type: "CreateSeed",
        name: options.freshName,
        message: `bootstrapping with seed member ${options.freshName}`,
      };
    }
    return wait(
      "SeedStarting",
      `waiting for seed member ${observed.pods.map((p) => p.name).join(", ")} to answer`,
    );
  }

  const members = [...etcd.members].sort(byName);
  if (members.length === 0) return wait("NoMembers", "etcd answered with an empty member list");
  const view = new View(spec, observed, members, now, options);

  const voters = members.filter((m) => !m.isLearner);
  const healthy = voters.filter((m) => m.healthy);
  if (healthy.length < quorum(voters.length)) {
    const started = members.filter((m) => m.started).map((m) => m.name);
    const restart = restartOnData(spec, observed, started);
    if (restart !== undefined) return restart;
    return {
      type: "QuorumLost",
      message: `${healthy.length} of ${voters.length} voting members are healthy, a quorum needs ${quorum(voters.length)}; unhealthy: ${names(voters.filter((m) => !m.healthy))}; nothing is removed until a quorum is back`,
    };
  }

  const target = parseEtcdVersion(spec.version);
  if (target === undefined) {
    return degraded("InvalidVersion", `spec.version "${spec.version}" is not MAJOR.MINOR.PATCH`);
  }
  const current = view.lowestVersion();
  const refused = current === undefined ? undefined : unsupportedVersionChange(current, target);
  if (refused !== undefined) return degraded("UnsupportedVersionChange", `spec.version: ${refused}`);

  return (
    view.cleanup() ??
    view.missingPods() ??
    view.deadMembers() ??
    view.scaleIn() ??
    view.learners() ??
    view.unhealthy() ??
    view.upgrade(target) ??
    view.roll() ??
    view.scaleOut() ?? {
      type: "InSync",
      message: `${members.length} members on ${spec.version}, all healthy`,
    }
  );
}

/** The rules after the gates, over one observation. Each returns a step, or undefined when it does not apply. */
class View {
  readonly spec: EtcdClusterSpec;
  readonly observed: Observed;
  readonly members: ObservedMember[];
  readonly now: Date;
  readonly options: PlanOptions;
  readonly pods: Map<string, ObservedPod>;

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
  }

  lowestVersion(): EtcdVersion | undefined {
    const versions = this.members
      .map((m) => (m.version === undefined ? undefined : parseEtcdVersion(m.version)))
      .filter((v) => v !== undefined)
      .sort(compareEtcdVersions);
    return versions[0];
  }

  /** Rule 5. */
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

  /** Rule 6. */
  missingPods(): Step | undefined {
    for (const m of this.members) {
      if (this.pods.has(m.name)) continue;
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

  /** Rule 7. */
  deadMembers(): Step | undefined {
    const deadAfter = this.options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS;
    for (const m of this.members) {
      if (m.isLearner && m.healthy) continue;
      const pod = this.pods.get(m.name);
      if (pod === undefined || pod.ready || pod.notReadySince === undefined) continue;
      const forMs = this.now.getTime() - pod.notReadySince.getTime();
      if (forMs < deadAfter) continue;
      return this.removal(m, {
        type: "ReplaceMember",
        id: m.id,
        name: m.name,
        reason: "Unhealthy",
        message: `member ${m.name} has not been ready for ${Math.round(forMs / 1000)}s; replacing it with a fresh member`,
      });
    }
    return undefined;
  }

  /** Rule 8. */
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

  /** Rule 9. */
  learners(): Step | undefined {
    const learner = this.members.find((m) => m.isLearner);
    if (learner === undefined) return undefined;
    const leader = this.members.find((m) => m.leader);
    const caughtUp =
      learner.started &&
      learner.healthy &&
      leader?.raftIndex !== undefined &&
      learner.raftIndex !== undefined &&
      learner.raftIndex >= leader.raftIndex * LEARNER_READY_FRACTION;
    if (!caughtUp) {
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

  /** Rule 10. */
  unhealthy(): Step | undefined {
    const sick = this.members.filter((m) => !this.isWell(m));
    if (sick.length === 0) return undefined;
    return wait("MemberUnhealthy", `waiting for ${names(sick)} to become healthy`);
  }

  /** Rule 11. */
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

  /** Rule 12. */
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
    const healthyDuring = voters.filter((v) => v.healthy && v !== next).length;
    if (healthyDuring < quorum(voters.length)) {
      return wait(
        "QuorumAtRisk",
        `not restarting ${next.name}: ${healthyDuring} of ${voters.length} voters would stay healthy, below a quorum`,
      );
    }
    return step;
  }

  /** Rule 13. */
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

  /** Healthy in etcd and, when it has a pod, ready. */
  isWell(m: ObservedMember): boolean {
    return m.healthy && this.pods.get(m.name)?.ready === true;
  }

  /** `step` if removing `m` keeps a quorum of healthy voters; MoveLeader first if `m` leads; else Wait. */
  removal(m: ObservedMember, step: Step): Step {
    if (!m.isLearner) {
      const voters = this.members.filter((v) => !v.isLearner);
      const votersAfter = voters.length - 1;
      const healthyAfter = voters.filter((v) => v.healthy && v !== m).length;
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
