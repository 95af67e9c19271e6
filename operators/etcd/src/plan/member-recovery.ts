// Member recovery (planNext rules 6 to 10): pods and claims left without a member, members without a pod (restart
// on their data, or replace when the data is gone or the pod is stuck terminating), alarms, images that cannot be
// pulled, and members that cannot come back (data lost, unschedulable, not ready, a stalled learner).
import type { ObservedMember, Step } from "./types.ts";
import {
  DEFAULT_DEAD_AFTER_MS,
  DEFAULT_LEARNER_STALL_MS,
  DEFAULT_TERMINATING_AFTER_MS,
  DEFAULT_UNSCHEDULABLE_AFTER_MS,
  type ReplaceReason,
  type View,
} from "./view.ts";

/** Rule 6. */
export function cleanup(view: View): Step | undefined {
  const memberNames = new Set(view.members.map((m) => m.name));
  const orphans = [...view.pods.keys(), ...view.observed.volumes].filter((n) => !memberNames.has(n)).sort();
  const name = orphans[0];
  if (name === undefined) return undefined;
  return {
    type: "CleanupMember",
    name,
    message: `deleting the pod and volume of ${name}, which is not a member`,
  };
}

/** Rule 7. */
export function missingPods(view: View): Step | undefined {
  const stuckAfter = view.threshold(view.spec.recovery?.terminatingSeconds, DEFAULT_TERMINATING_AFTER_MS);
  for (const m of view.members) {
    if (view.pods.has(m.name)) continue;
    const deleting = view.terminating.get(m.name);
    if (deleting !== undefined && view.now.getTime() - deleting.getTime() >= stuckAfter) {
      const forS = Math.round((view.now.getTime() - deleting.getTime()) / 1000);
      return view.removal(m, {
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
    const dataKept = view.spec.storage.ephemeral !== true && view.observed.volumes.includes(m.name);
    if (dataKept) {
      return {
        type: "StartMemberPod",
        name: m.name,
        reason: "PodMissing",
        message: `the pod of member ${m.name} is gone; restarting it on its data volume`,
      };
    }
    return view.removal(m, {
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
export function alarms(view: View): Step | undefined {
  const alarms = view.observed.etcd.reachable ? (view.observed.etcd.alarms ?? []) : [];
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
export function imagePull(view: View): Step | undefined {
  for (const m of view.members) {
    const failure = view.pods.get(m.name)?.imagePullError;
    if (failure === undefined) continue;
    if (failure.current) {
      return {
        type: "Degraded",
        reason: "ImagePullFailed",
        field: "spec.version",
        message: `member ${m.name} cannot pull image ${failure.image} (${failure.reason}); the member and its data are kept: fix spec.repository/spec.version (or the registry), or set spec.version back to recover`,
      };
    }
    const to = view.spec.version;
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
export function deadMembers(view: View): Step | undefined {
  const recovery = view.spec.recovery ?? {};
  const deadAfter =
    view.options.deadAfterMs ?? view.threshold(recovery.memberNotReadySeconds, DEFAULT_DEAD_AFTER_MS);
  const unschedulableAfter = view.threshold(recovery.unschedulableSeconds, DEFAULT_UNSCHEDULABLE_AFTER_MS);
  const stallAfter = view.threshold(recovery.learnerStallSeconds, DEFAULT_LEARNER_STALL_MS);
  const age = (since: Date) => view.now.getTime() - since.getTime();
  const replace = (m: ObservedMember, reason: ReplaceReason, message: string) =>
    view.removal(m, { type: "ReplaceMember", id: m.id, name: m.name, reason, message });
  for (const m of view.members) {
    const pod = view.pods.get(m.name);
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
      if (view.caughtUp(m)) continue;
      const since = view.observed.learnerProgress?.[m.name];
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
