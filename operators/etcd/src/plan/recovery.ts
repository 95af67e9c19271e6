import { type FencedPod, fence } from "./fence.ts";
import type { Observed } from "./plan.ts";
import { planCallOff } from "./recovery-calloff.ts";
import type { RecoveryFromBackup, RecoveryMember, RecoveryObserved, RecoveryStep } from "./recovery-types.ts";
import { planRestore } from "./restore.ts";

export type { RecoveryFromBackup, RecoveryMember, RecoveryObserved, RecoveryStep } from "./recovery-types.ts";

/**
 * The voting member with the most recent data: highest raft index, then revision, then name (a stable order).
 * Never a learner: etcd refuses to force a new cluster on one (it panics, "removed all voters").
 */
export function chooseSurvivor(members: RecoveryMember[]): RecoveryMember | undefined {
  return members
    .filter((m) => m.claimOwned && m.status !== undefined && m.learner !== true)
    .sort(
      (a, b) =>
        b.status!.raftIndex - a.status!.raftIndex ||
        b.status!.revision - a.status!.revision ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    )[0];
}

/** A recovery asked of a cluster a quorum of whose members answers: refused, and nothing is changed. */
function quorumHealthy(): RecoveryStep {
  return {
    type: "Refuse",
    reason: "QuorumHealthy",
    message: "a quorum of members answers: there is nothing to recover (nothing was changed)",
  };
}

/** A recovery asked while the loss of quorum is not confirmed by independent evidence: refused, nothing changed. */
function lossUnconfirmed(unconfirmed: { reason: string; message: string }): RecoveryStep {
  return {
    type: "Refuse",
    reason: "QuorumLossUnconfirmed",
    message: `the loss of quorum is not confirmed (${unconfirmed.reason}: ${unconfirmed.message}); nothing was changed: fix what cuts the operator off, then create another EtcdRestore if a quorum is still lost`,
  };
}

/** The members by name: every choice among them is made in this order, so every leader makes the same one. */
function sortedByName(members: readonly RecoveryMember[]): RecoveryMember[] {
  return [...members].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The next step. First, deleted or a quorum back before the fork: called off (plan/recovery-calloff.ts). From a
 * backup: see planFromBackup. From a survivor, in order:
 *  1. Not started (no survivor mark, no kept claim): a quorum answers -> Refuse QuorumHealthy; no quorum answers the
 *     operator but the loss is not confirmed (a majority of the voters' pods Ready, or the operator's own
 *     authentication or TLS failing) -> Refuse QuorumLossUnconfirmed naming the evidence. From a survivor:
 *     only learners answer their status -> Refuse OnlyLearnersSurvive; none answers -> Refuse NoSurvivor
 *     (recover from a backup); else MarkSurvivor(the voter with the most recent data).
 *  2. From a survivor, started: the marked claim is the survivor (never chosen again); no marked, owned claim
 *     -> Refuse SurvivorLost.
 *  3. Every other owned claim -> KeepClaim, one at a time; then every other member's pod -> StopMember (an ended
 *     pod, or the pod of a member whose claim is gone, too).
 *  4. No phase yet (nothing forked): the marked survivor answers as a learner -> Refuse SurvivorIsLearner; any
 *     other member's pod still exists (a Terminating one is not gone: its etcd may run behind a partition) ->
 *     Wait WaitingForFence naming each pod (plan/fence.ts). Once "force" is written this is never judged again.
 *  5. By the phase on the survivor's claim: none (or "force" with a pod
 *     without the flag) -> ForceNewCluster; its pod missing -> StartSurvivor with the flag ("force") or without
 *     ("unforce"); "force" and not yet a healthy one-member cluster -> Wait; "force" and alone -> RemoveForceFlag
 *     (also "unforce" with a pod still flagged); "unforce", alone and healthy: a learner still listed
 *     (etcd-io/etcd#20893) -> RemoveLearner, one at a time; else Recovered. "Alone" counts voters only: a learner
 *     --force-new-cluster left behind is no second member, on every release the CRD accepts.
 */
export function planRecovery(o: RecoveryObserved): RecoveryStep {
  const calledOff = planCallOff(o);
  if (calledOff !== undefined) return calledOff;
  if (o.from === "Backup") return planFromBackup(o);
  const byName = sortedByName(o.members);
  const started = byName.some((m) => m.survivorMark === true || m.claimKept === true);
  let survivor: RecoveryMember | undefined;
  if (!started) {
    if (o.quorum) {
      return quorumHealthy();
    }
    if (o.unconfirmed !== undefined) return lossUnconfirmed(o.unconfirmed);
    if (o.from === "Survivor") {
      survivor = chooseSurvivor(byName);
      const learners = byName.filter((m) => m.claimOwned && m.status !== undefined && m.learner === true);
      if (survivor === undefined && learners.length > 0) {
        return {
          type: "Refuse",
          reason: "OnlyLearnersSurvive",
          message: `only learners answer (${learners.map((m) => m.name).join(", ")}): a learner never holds the cluster's committed data for sure and etcd refuses to force a new cluster on one ("removed all voters"); recover from a backup (another EtcdRestore with from: Backup and spec.source); nothing was changed`,
        };
      }
      if (survivor === undefined) {
        return {
          type: "Refuse",
          reason: "NoSurvivor",
          message:
            "no member with its data answers: recovery from a survivor is impossible; recover from a backup (another EtcdRestore with from: Backup and spec.source)",
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
  // Every other member's pod, kept claim or none (a claim deleted under a running pod): the fence waits for them.
  const stop = byName.find((m) => m !== survivor && (m.pod || m.podEnded === true));
  if (stop !== undefined) {
    return {
      type: "StopMember",
      name: stop.name,
      message: `stopping ${stop.name}, replaced by the recovery (its claim is kept)`,
    };
  }
  if (survivor === undefined) {
    return {
      type: "Refuse",
      reason: "NoSurvivor",
      message: "no survivor is chosen (a bug: please report it)",
    };
  }

  // Learners left in the list by --force-new-cluster (etcd-io/etcd#20893) are no second member.
  const learnersLeft = survivor.learnersListed ?? [];
  const alone =
    survivor.membersListed !== undefined &&
    survivor.membersListed - learnersLeft.length === 1 &&
    survivor.healthy === true;
  const start = (force: boolean): RecoveryStep => ({
    type: "StartSurvivor",
    name: survivor.name,
    forceNewCluster: force,
    message: `starting ${survivor.name} on its data ${force ? "with" : "without"} --force-new-cluster`,
  });
  const phase = survivor.recoveryPhase;
  if (phase === undefined) {
    // Before the fork, never after: once "force" is written the fence has passed and is not judged again.
    if (survivor.learner === true) {
      return {
        type: "Refuse",
        reason: "SurvivorIsLearner",
        message: `${survivor.name}, the survivor this recovery chose, answers as a learner: etcd refuses to force a new cluster on one ("removed all voters"); recover from a backup; the other members' claims are kept`,
      };
    }
    const fenced = fence(
      othersPresent(byName, survivor.name),
      `restarting ${survivor.name} with --force-new-cluster`,
    );
    if (fenced !== undefined) return fenced;
  }
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
  const learner = learnersLeft[0];
  if (learner !== undefined) {
    return {
      type: "RemoveLearner",
      name: survivor.name,
      learner: learner.name,
      memberId: learner.id,
      message: `removing learner ${learner.name || learner.id}, left in the member list of ${survivor.name} by --force-new-cluster (etcd-io/etcd#20893)`,
    };
  }
  return {
    type: "Recovered",
    survivor: survivor.name,
    revision: survivor.status.revision,
    clusterID: survivor.status.clusterID,
    message: `recovered from ${survivor.name} at revision ${survivor.status.revision}, cluster ID ${survivor.status.clusterID}; the cluster re-grows with learners`,
  };
}

/** Reasons of plan/restore.ts for a backup that is not there yet: the request waits for it. */
const BACKUP_NOT_YET = new Set(["RestoreBackupMissing", "RestoreBackupNotSucceeded"]);

/**
 * From a backup, in order:
 *  1. Not started (no old claim kept by this request, no seed claim): a quorum answers -> Refuse QuorumHealthy;
 *     the loss not confirmed -> Refuse QuorumLossUnconfirmed;
 *     ephemeral storage -> Refuse NeedsStorage; the seed's name used by an old member -> Refuse SeedNameInUse; the
 *     source checked by plan/restore.ts (the EtcdBackup exists and Succeeded, sha256, etcd version against
 *     spec.version, a readable location, the operator's image): not there or not finished yet -> Wait; Failed,
 *     or anything else wrong -> Refuse BackupUnusable naming the field. Nothing of the cluster is changed before.
 *  2. Every old member's owned claim -> KeepClaim, one at a time; then every old member's pod -> StopMember.
 *     Until the seed's claim is restored, any old member's pod that still exists -> Wait WaitingForFence (the
 *     fence of a survivor's recovery, plan/fence.ts).
 *  3. A restore Job of this request but no seed claim (the claim was deleted after the restore) -> Wait: a new Job
 *     must be made by a human deleting the old one, never a finished Job trusted for an empty claim.
 *  4. plan/restore.ts on the seed's claim: StartRestore, Wait, FinishRestore; a problem now (the old members are
 *     stopped: nothing to go back to) -> Wait with its message, so a fixed backup or a deleted Job resumes it.
 *  5. The seed's claim restored: no seed pod -> StartSeed (a new cluster); not yet a healthy one-member cluster
 *     -> Wait; else Recovered with its revision and new cluster ID.
 */
function planFromBackup(o: RecoveryObserved): RecoveryStep {
  const b = o.backup;
  if (b === undefined) {
    return {
      type: "Refuse",
      reason: "BackupUnusable",
      field: "spec.source",
      message:
        "spec.source is required with from: Backup: name an EtcdBackup, an S3 object or a file on a PVC",
    };
  }
  const byName = sortedByName(o.members);
  const old = byName.filter((m) => m.name !== b.seed);
  const seed = byName.find((m) => m.name === b.seed);
  const seedClaim = b.restore.claims.find((c) => c.name === b.seed);
  const started = old.some((m) => m.claimKept === true) || seedClaim !== undefined;
  if (!started) {
    if (o.quorum) {
      return quorumHealthy();
    }
    if (o.unconfirmed !== undefined) return lossUnconfirmed(o.unconfirmed);
    if (b.spec.storage.ephemeral === true) {
      return {
        type: "Refuse",
        reason: "NeedsStorage",
        field: "spec.storage",
        message:
          "recovery from a backup needs persistent storage (the EtcdCluster's spec.storage.size): the snapshot is restored into the seed's claim (nothing was changed)",
      };
    }
    if (seed !== undefined) {
      return {
        type: "Refuse",
        reason: "SeedNameInUse",
        message: `the seed name ${b.seed} derived from this EtcdRestore is used by a member already: create another EtcdRestore (nothing was changed)`,
      };
    }
    const check = planRestore(b.spec, restoreView(b), { freshName: b.seed });
    if (check?.type === "Degraded") {
      const failed = b.restore.backup?.phase === "Failed";
      if (BACKUP_NOT_YET.has(check.reason) && !failed) {
        return {
          type: "Wait",
          reason: "BackupNotReady",
          message: `${sourceField(check.message)}; nothing of the cluster is changed until then`,
        };
      }
      return {
        type: "Refuse",
        reason: "BackupUnusable",
        field: sourceField(check.field ?? "spec.source"),
        message: `${sourceField(check.message)} (nothing of the cluster was changed)`,
      };
    }
    if (check?.type === "Wait") return check;
  }

  const keep = old.find((m) => m.claimOwned);
  if (keep !== undefined) {
    return {
      type: "KeepClaim",
      name: keep.name,
      message: `keeping the claim of ${keep.name} for you (labelled, no longer owned by the cluster); it is not deleted`,
    };
  }
  const stop = old.find((m) => m.pod || m.podEnded === true);
  if (stop !== undefined) {
    return {
      type: "StopMember",
      name: stop.name,
      message: `stopping ${stop.name}, replaced by the recovery from ${b.source} (its claim is kept)`,
    };
  }
  if (seedClaim === undefined && b.restore.job !== undefined) {
    return {
      type: "Wait",
      reason: "SeedClaimLost",
      message: `the claim of seed ${b.seed} is gone but its restore Job exists: delete the Job to restore ${b.source} again`,
    };
  }
  if (seedClaim?.state !== "done") {
    // The same fence as a survivor's, at the point the restore waited for terminating pods before.
    const fenced = fence(othersPresent(byName, b.seed), `restoring ${b.source} into seed ${b.seed}`);
    if (fenced !== undefined) return fenced;
  }
  const restoring = planRestore(b.spec, restoreView(b), { freshName: b.seed });
  if (restoring !== undefined) {
    if (restoring.type === "Degraded") {
      return {
        type: "Wait",
        reason: restoring.reason,
        message: `${sourceField(restoring.message)} (the old members are stopped and their claims kept)`,
      };
    }
    if (
      restoring.type === "StartRestore" ||
      restoring.type === "FinishRestore" ||
      restoring.type === "Wait"
    ) {
      return restoring;
    }
    return { type: "Wait", reason: "Restoring", message: restoring.message };
  }
  if (seedClaim?.state !== "done") {
    return { type: "Wait", reason: "Restoring", message: `restoring ${b.source} into seed ${b.seed}` };
  }
  if (seed?.pod !== true) {
    return {
      type: "StartSeed",
      name: b.seed,
      message: `restored ${b.source} into ${b.seed}: starting it as a new cluster`,
    };
  }
  if (seed.healthy !== true || seed.membersListed !== 1 || seed.status === undefined) {
    return { type: "Wait", reason: "SeedStarting", message: `waiting for seed ${b.seed} to serve` };
  }
  const snapshotRevision = b.restore.backup?.revision;
  return {
    type: "Recovered",
    seed: b.seed,
    source: b.source,
    ...(snapshotRevision === undefined ? {} : { snapshotRevision }),
    revision: seed.status.revision,
    clusterID: seed.status.clusterID,
    message: `recovered from ${b.source}${snapshotRevision === undefined ? "" : ` (snapshot revision ${snapshotRevision})`} into ${b.seed}: revision ${seed.status.revision}, new cluster ID ${seed.status.clusterID}; the cluster re-grows with learners`,
  };
}

/** The pods of members other than `keep` that still exist (being deleted, or ended): what the fence waits for. */
function othersPresent(members: readonly RecoveryMember[], keep: string): FencedPod[] {
  return members
    .filter((m) => m.name !== keep && (m.pod || m.podEnded === true || m.terminating !== undefined))
    .map((m) => ({
      name: m.name,
      ...(m.terminating === undefined ? {} : { terminatingSince: m.terminating.since }),
      ...(m.terminating?.node === undefined ? {} : { node: m.terminating.node }),
    }));
}

/** plan/restore.ts's view: only the seed's claim (with its mark), no pods (the fence ran before). */
function restoreView(b: RecoveryFromBackup): Observed {
  const claims = b.restore.claims.filter((c) => c.name === b.seed);
  return {
    etcd: { reachable: false, error: "recovering from a backup" },
    pods: [],
    volumes: claims.map((c) => c.name),
    bootstrapped: false,
    terminating: [],
    restore: { ...b.restore, claims },
  };
}

/** plan/restore.ts names spec.bootstrap.restore; for an EtcdRestore the same source is spec.source. */
function sourceField(text: string): string {
  return text.replaceAll("spec.bootstrap.restore", "spec.source");
}
