// The planner's view of one observation of a reachable cluster, and what every rule needs from it: the
// recovery thresholds, quorum arithmetic, removals that keep a quorum (moving leadership away first), and who is
// well. The rules themselves live by concern: member-recovery.ts, membership.ts, rollout.ts.
import { quorum } from "@capstan/core";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { compareEtcdVersions, type EtcdVersion, parseEtcdVersion } from "./etcd-version.ts";
import type { Observed, ObservedMember, ObservedPod, PlanOptions, Step } from "./types.ts";

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

/** The rules after the gates, over one observation (see planNext). */
export class View {
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

  /** The lowest etcd version a member reports, if any reports one. */
  lowestVersion(): EtcdVersion | undefined {
    const versions = this.members
      .map((m) => (m.version === undefined ? undefined : parseEtcdVersion(m.version)))
      .filter((v) => v !== undefined)
      .sort(compareEtcdVersions);
    return versions[0];
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

/** Why a member is replaced. */
export type ReplaceReason = Extract<Step, { type: "ReplaceMember" }>["reason"];

/** A Wait step. */
export function wait(reason: string, message: string): Step {
  return { type: "Wait", reason, message };
}

/** A Degraded step on spec.version. */
export function degraded(reason: string, message: string): Step {
  return { type: "Degraded", reason, field: "spec.version", message };
}

/** Orders by name. */
export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Members' names, comma-separated. */
export function names(members: ObservedMember[]): string {
  return members.map((m) => m.name).join(", ");
}
