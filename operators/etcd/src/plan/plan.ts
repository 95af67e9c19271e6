// The membership planner: from the spec and what the operator observed, the ONE next step to take. Pure: no I/O,
// no clock, no randomness; the reconciler performs the step and plans again from fresh observations next time.
import { quorum } from "@capstan/core";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { authFailure, planAuth } from "./auth.ts";
import { planUnreachable, restartOnData } from "./bootstrap.ts";
import { parseEtcdVersion } from "./etcd-version.ts";
import { clusterIDMismatch, ownedFlagOverride, versionGate } from "./gates.ts";
import { alarms, cleanup, deadMembers, imagePull, missingPods } from "./member-recovery.ts";
import { learners, scaleIn, scaleOut, unhealthy } from "./membership.ts";
import { quorumLost } from "./quorum-evidence.ts";
import { defragment, roll, upgrade } from "./rollout.ts";
import type { Observed, PlanOptions, Step } from "./types.ts";
import { byName, View, wait } from "./view.ts";

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

export {
  DEFAULT_DEAD_AFTER_MS,
  DEFAULT_DEFRAG_THRESHOLD_PERCENT,
  DEFAULT_LEARNER_STALL_MS,
  DEFAULT_TERMINATING_AFTER_MS,
  DEFAULT_UNSCHEDULABLE_AFTER_MS,
  DEFRAG_MIN_DB_BYTES,
  LEARNER_READY_FRACTION,
} from "./view.ts";

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
  if (!etcd.reachable) return planUnreachable(spec, observed, options);

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
    cleanup(view) ??
    missingPods(view) ??
    alarms(view) ??
    imagePull(view) ??
    deadMembers(view) ??
    scaleIn(view) ??
    learners(view) ??
    unhealthy(view) ??
    planAuth(spec, observed.auth) ??
    upgrade(view, target) ??
    roll(view) ??
    scaleOut(view) ??
    defragment(view) ?? {
      type: "InSync",
      message: `${members.length} members on ${spec.version}, all healthy`,
    }
  );
}
