// The disaster-recovery planner (issue 14, EtcdRestore): for a cluster that lost quorum, the ONE next step of a
// recovery from the surviving member with the most recent data (force-new-cluster once, then without the flag;
// the ordinary planner then re-grows the cluster with learners), or the first steps of one from a backup. Pure,
// and planned only from what is on the API server and what etcd answers: every choice is written on an object
// (the survivor's claim is annotated before anything else changes), so a new leader resumes where the last one
// stopped. A claim holding member data is never deleted: replaced members' claims are kept (labelled for the
// user, no longer owned by the cluster, so neither the garbage collector nor the planner touches them).
// Not wired into a controller yet: this is the planner and its table tests.

/** What the recovery observed of one member that has (or had) a data claim. */
export interface RecoveryMember {
  name: string;
  /** Its data claim exists and is owned by the cluster. */
  claimOwned: boolean;
  /** Its claim carries this recovery's survivor mark. */
  survivorMark?: boolean;
  /** Its claim was kept by this recovery (labelled, ownership removed). */
  claimKept?: boolean;
  /** Its pod exists and is not being deleted. */
  pod: boolean;
  /** Its pod was built with --force-new-cluster by this recovery. */
  forceNewCluster?: boolean;
  /**
   * The survivor's phase, written on its claim before its pod is deleted: "force" (to be, or being, run with
   * --force-new-cluster), "unforce" (to be, or being, run without it again).
   */
  recoveryPhase?: "force" | "unforce";
  /** What its etcd answered about itself (Maintenance.Status answers without a quorum). */
  status?: { raftIndex: number; revision: number; clusterID: string };
  /** How many members the member list it answered holds (1 once force-new-cluster took effect). */
  membersListed?: number;
  /** It answers /readyz (it serves as a cluster). */
  healthy?: boolean;
}

/** Everything the recovery planner reads. */
export interface RecoveryObserved {
  /** The EtcdRestore's name (the value of the marks it writes). */
  request: string;
  from: "Survivor" | "Backup";
  /** A quorum of healthy voters answers now. */
  quorum: boolean;
  members: RecoveryMember[];
}

/** The next recovery step. */
export type RecoveryStep =
  /** Nothing was started and nothing will be: the request is refused (its status says why). */
  | { type: "Refuse"; reason: "QuorumHealthy" | "NoSurvivor" | "SurvivorLost"; message: string }
  /** Annotate the survivor's claim: the durable choice every later step (and a new leader) reads. */
  | { type: "MarkSurvivor"; name: string; raftIndex: number; revision: number; message: string }
  /** Label a replaced member's claim for the user and remove the cluster's ownership; never delete it. */
  | { type: "KeepClaim"; name: string; message: string }
  /** Delete the pod of a member whose claim was kept, so it cannot rejoin the recovered cluster. */
  | { type: "StopMember"; name: string; message: string }
  /** Mark the survivor's claim "force", then delete its pod (its data kept). */
  | { type: "ForceNewCluster"; name: string; message: string }
  /** Create the survivor's pod on its data, with --force-new-cluster or without it. */
  | { type: "StartSurvivor"; name: string; forceNewCluster: boolean; message: string }
  /** Mark the survivor's claim "unforce", then delete its pod, once it answers as a one-member cluster. */
  | { type: "RemoveForceFlag"; name: string; message: string }
  /** Every old member is stopped and kept: restore a new seed from the backup (plan/restore.ts's steps). */
  | { type: "RestoreFromBackup"; message: string }
  | { type: "Wait"; reason: string; message: string }
  /** Done: the recovered revision and cluster ID go into status and an Event; the cluster re-grows. */
  | { type: "Recovered"; survivor: string; revision: number; clusterID: string; message: string };

/** The member with the most recent data: highest raft index, then revision, then name (a stable order). */
export function chooseSurvivor(members: RecoveryMember[]): RecoveryMember | undefined {
  return members
    .filter((m) => m.claimOwned && m.status !== undefined)
    .sort(
      (a, b) =>
        b.status!.raftIndex - a.status!.raftIndex ||
        b.status!.revision - a.status!.revision ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    )[0];
}

/**
 * The next step. In order:
 *  1. Not started (no survivor mark, no kept claim): a quorum answers -> Refuse QuorumHealthy. From a survivor:
 *     none answers its status -> Refuse NoSurvivor (recover from a backup); else MarkSurvivor(the most recent).
 *  2. From a survivor, started: the marked claim is the survivor (never chosen again); no marked, owned claim
 *     -> Refuse SurvivorLost.
 *  3. Every other owned claim -> KeepClaim, one at a time; then every kept member's pod -> StopMember.
 *  4. From a backup: RestoreFromBackup. From a survivor, by the phase on its claim: none (or "force" with a pod
 *     without the flag) -> ForceNewCluster; its pod missing -> StartSurvivor with the flag ("force") or without
 *     ("unforce"); "force" and not yet a healthy one-member cluster -> Wait; "force" and alone -> RemoveForceFlag
 *     (also "unforce" with a pod still flagged); "unforce", alone and healthy -> Recovered.
 */
export function planRecovery(o: RecoveryObserved): RecoveryStep {
  const byName = [...o.members].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const started = byName.some((m) => m.survivorMark === true || m.claimKept === true);
  let survivor: RecoveryMember | undefined;
  if (!started) {
    if (o.quorum) {
      return {
        type: "Refuse",
        reason: "QuorumHealthy",
        message: "a quorum of members answers: there is nothing to recover (nothing was changed)",
      };
    }
    if (o.from === "Survivor") {
      survivor = chooseSurvivor(byName);
      if (survivor === undefined) {
        return {
          type: "Refuse",
          reason: "NoSurvivor",
          message:
            "no member with its data answers: recovery from a survivor is impossible; recover from a backup (spec.backup)",
        };
      }
      const s = survivor.status!;
      return {
        type: "MarkSurvivor",
        name: survivor.name,
        raftIndex: s.raftIndex,
        revision: s.revision,
        message: `recovering from ${survivor.name}, the member with the most recent data (raft index ${s.raftIndex}, revision ${s.revision})`,
      };
    }
  } else if (o.from === "Survivor") {
    survivor = byName.find((m) => m.survivorMark === true && m.claimOwned);
    if (survivor === undefined) {
      return {
        type: "Refuse",
        reason: "SurvivorLost",
        message:
          "the survivor's claim this recovery chose is gone: recover from a backup; the other members' claims are kept",
      };
    }
  }

  const keep = byName.find((m) => m !== survivor && m.claimOwned);
  if (keep !== undefined) {
    return {
      type: "KeepClaim",
      name: keep.name,
      message: `keeping the claim of ${keep.name} for you (labelled, no longer owned by the cluster); it is not deleted`,
    };
  }
  const stop = byName.find((m) => m !== survivor && m.claimKept === true && m.pod);
  if (stop !== undefined) {
    return {
      type: "StopMember",
      name: stop.name,
      message: `stopping ${stop.name}, replaced by the recovery (its claim is kept)`,
    };
  }
  if (survivor === undefined) {
    return {
      type: "RestoreFromBackup",
      message: "every old member is stopped and kept: restoring from the backup",
    };
  }

  const alone = survivor.membersListed === 1 && survivor.healthy === true;
  const start = (force: boolean): RecoveryStep => ({
    type: "StartSurvivor",
    name: survivor.name,
    forceNewCluster: force,
    message: `starting ${survivor.name} on its data ${force ? "with" : "without"} --force-new-cluster`,
  });
  const phase = survivor.recoveryPhase;
  if (phase === undefined || (phase === "force" && survivor.pod && survivor.forceNewCluster !== true)) {
    return {
      type: "ForceNewCluster",
      name: survivor.name,
      message: `restarting ${survivor.name} with --force-new-cluster on its data`,
    };
  }
  if (!survivor.pod) return start(phase === "force");
  if (phase === "force" || survivor.forceNewCluster === true) {
    if (!alone && phase === "force") {
      return {
        type: "Wait",
        reason: "ForceNewCluster",
        message: `waiting for ${survivor.name} to start as a one-member cluster`,
      };
    }
    return {
      type: "RemoveForceFlag",
      name: survivor.name,
      message: `${survivor.name} answers as a one-member cluster: restarting it without --force-new-cluster`,
    };
  }
  if (!alone || survivor.status === undefined) {
    return { type: "Wait", reason: "SurvivorStarting", message: `waiting for ${survivor.name} to serve` };
  }
  return {
    type: "Recovered",
    survivor: survivor.name,
    revision: survivor.status.revision,
    clusterID: survivor.status.clusterID,
    message: `recovered from ${survivor.name} at revision ${survivor.status.revision}, cluster ID ${survivor.status.clusterID}; the cluster re-grows with learners`,
  };
}
