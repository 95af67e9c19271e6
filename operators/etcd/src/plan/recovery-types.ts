// What the recovery planners (recovery.ts, recovery-calloff.ts) read and return: types only, in a leaf module, so
// the two planners share them without importing one another.
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import type { ObservedRestore, RestoreStep } from "./types.ts";

/** Why a recovery is called off: its EtcdRestore is being deleted, or a quorum answers again (positive evidence). */
export type CallOffReason = "Deleted" | "QuorumReturned";

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
  /**
   * Its pod still exists but is being deleted (deletionTimestamp since `since`, on `node`): not gone, its etcd may
   * still run behind a partition (plan/fence.ts).
   */
  terminating?: { since: Date; node?: string };
  /** Its pod exists, is not being deleted, but ended (Failed or Succeeded): deleted before a fence passes. */
  podEnded?: boolean;
  /** Its own etcd says it is a learner (never a survivor: etcd panics forcing a learner, "removed all voters"). */
  learner?: boolean;
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
  /**
   * The learners among them. Releases with etcd-io/etcd#20893 keep a learner in the list after
   * --force-new-cluster: it is not a second voter, and the recovery removes it before it ends.
   */
  learnersListed?: { id: string; name: string }[];
  /** It answers /readyz (it serves as a cluster). */
  healthy?: boolean;
}

/** What a recovery from a backup reads besides the members (the seed is one of them once its claim exists). */
export interface RecoveryFromBackup {
  /** The cluster's spec with spec.bootstrap.restore set to the EtcdRestore's spec.source (plan/restore.ts reads it). */
  spec: EtcdClusterSpec;
  /** The new seed member: derived from the EtcdRestore's uid, so every leader picks the same one. */
  seed: string;
  /** The snapshot as one string (backup/<name>, s3://..., pvc://...). */
  source: string;
  /** What plan/restore.ts reads: the EtcdBackup, this request's restore Job, and the seed's claim with its mark. */
  restore: ObservedRestore;
}

/** Everything the recovery planner reads. */
export interface RecoveryObserved {
  /** The EtcdRestore's name (the value of the marks it writes). */
  request: string;
  from: "Survivor" | "Backup";
  /** A quorum of healthy voters answers now. */
  quorum: boolean;
  /**
   * No quorum answers the operator, but independent evidence does not confirm a loss (plan/quorum-evidence.ts): a
   * majority of the voters' pods Ready by their kubelet, or the operator's own authentication or TLS failing.
   */
  unconfirmed?: { reason: string; message: string };
  members: RecoveryMember[];
  /** With from: Backup. */
  backup?: RecoveryFromBackup;
  /** The EtcdRestore is being deleted (metadata.deletionTimestamp): called off before the fork, held after it. */
  deleting?: boolean;
  /**
   * The EtcdRestore carries the recovery finalizer, added before its first write: it may have changed the cluster,
   * so a quorum answering again calls it off (Cancelled) rather than refusing it (QuorumHealthy).
   */
  finalizer?: boolean;
}

/** The next recovery step. */
export type RecoveryStep =
  /** Nothing was started and nothing will be: the request is refused (its status says why). */
  | {
      type: "Refuse";
      reason:
        | "QuorumHealthy"
        | "QuorumLossUnconfirmed"
        | "NoSurvivor"
        | "OnlyLearnersSurvive"
        | "SurvivorIsLearner"
        | "SurvivorLost"
        | "BackupUnusable"
        | "NeedsStorage"
        | "SeedNameInUse";
      /** The field the refusal is about, when one is. */
      field?: string;
      message: string;
    }
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
  /** Remove a learner --force-new-cluster left in the survivor's member list (etcd-io/etcd#20893), through it. */
  | { type: "RemoveLearner"; name: string; learner: string; memberId: string; message: string }
  /** From a backup, every old member stopped and kept: the seed's claim and restore Job, then its claim marked done. */
  | RestoreStep
  /** From a backup, the seed's claim restored: start the seed as a new one-member cluster on it. */
  | { type: "StartSeed"; name: string; message: string }
  | { type: "Wait"; reason: string; message: string; pods?: string[] }
  /** Called off before the fork (plan/recovery-calloff.ts): a kept claim is the cluster's again, never deleted. */
  | { type: "GiveBackClaim"; name: string; message: string }
  /** Called off before the fork: the survivor mark removed from its claim. */
  | { type: "RemoveSurvivorMark"; name: string; message: string }
  /** Called off, everything given back: deleted -> the finalizer released; a quorum back -> Cancelled. */
  | { type: "CallOff"; reason: CallOffReason; message: string }
  /** Done: the recovered revision and cluster ID go into status and an Event; the cluster re-grows. */
  | {
      type: "Recovered";
      /** From a survivor: the member recovered from. */
      survivor?: string;
      /** From a backup: the new seed, its snapshot and the snapshot's revision (when known). */
      seed?: string;
      source?: string;
      snapshotRevision?: number;
      revision: number;
      clusterID: string;
      message: string;
    };
