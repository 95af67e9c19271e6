// What the planners read and return: the observation of a cluster (its members, pods, claims, restore, auth) and
// the steps. Types only, in a leaf module, so plan.ts, restore.ts and quorum-evidence.ts share them without
// importing one another.
import type { AuthStep, ObservedAuth } from "./auth.ts";

/** What kind of failure the operator met talking to etcd. */
export type EtcdFailureKind =
  /** etcd answered and refused the operator's credentials (wrong password, permission denied, bad token). */
  | "auth"
  /** The TLS handshake failed (certificate verify, unknown CA, no or foreign client certificate). */
  | "tls"
  /** Nothing answered the operator: refused, unreachable, DNS, reset, timed out. */
  | "network"
  /** etcd answered with an error of its own (no leader, not ready). */
  | "etcd";

/** What the operator observed of a restore. */
export interface ObservedRestore {
  /**
   * The EtcdBackup spec.bootstrap.restore.backup names, when it exists: its phase and what its status recorded.
   * Undefined when the restore names none or it does not exist.
   */
  backup?: { phase?: string; etcdVersion?: string; sha256?: string; revision?: number };
  /**
   * The restore Job, when it exists, with the seed whose claim it writes into (read from its data volume; unset
   * when the Job does not say).
   */
  job?: { succeeded: boolean; failed?: { reason: string; message: string }; seed?: string };
  /** Claims made for the restore's seed, by member name, with the state their annotation records. */
  claims: { name: string; state: "pending" | "done" }[];
  /** Why the source cannot be turned into a location to read (e.g. a backup whose location is malformed). */
  sourceError?: string;
  /** The operator knows its own image (the Job's download and finish steps run it). */
  operatorImage: boolean;
}

/** The restore's steps, added to plan.ts's. */
export type RestoreStep =
  /** Create the seed's claim (annotated restore: pending) if missing, then the restore Job writing into it. */
  | { type: "StartRestore"; name: string; message: string }
  /** The Job succeeded: annotate the seed's claim restore: done; the seed is then started on it (CreateSeed). */
  | { type: "FinishRestore"; name: string; message: string };

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
  /** Cluster ID (hexadecimal) in the member's own status answer. */
  clusterID?: string;
  /** Size of the member's backend database file, in bytes. */
  dbSize?: number;
  /** Bytes of the database file in use (the rest is free pages a defragmentation returns to the disk). */
  dbSizeInUse?: number;
  /** Why its health check failed, when it did (the operator's view: plan/quorum-evidence.ts weighs it). */
  healthError?: string;
  /** The kind of that failure. */
  healthFailure?: EtcdFailureKind;
}

/** A member pod that exists and is not being deleted. */
export interface ObservedPod {
  /** Member name (the pod is named after its member). */
  name: string;
  /** The pod's Ready condition is True: the kubelet's /readyz probe passes (etcd serves with a quorum). */
  ready: boolean;
  /** The etcd container is running (undefined: the kubelet has not reported the container). */
  running?: boolean;
  /** When the pod's Ready condition last became False (its lastTransitionTime). */
  notReadySince?: Date;
  /** The pod was built from another spec.podTemplate or spec.repository than the current one. */
  outdated?: boolean;
  /** Since when the scheduler has found no node for the pod (PodScheduled False, reason Unschedulable). */
  unschedulableSince?: Date;
  /** The etcd container cannot pull its image; `current` when that image is the one spec.version asks for. */
  imagePullError?: { image: string; reason: string; current: boolean };
  /**
   * etcd refused to start because its data directory is empty while it was restarted as an existing member
   * (it would otherwise rejoin under its old identity without its log).
   */
  dataLost?: boolean;
}

/** A member pod being deleted (deletionTimestamp set) that has not gone yet. */
export interface TerminatingPod {
  name: string;
  /** Its deletionTimestamp. */
  since: Date;
}

/** An alarm raised in the cluster (etcd's Maintenance.Alarm), e.g. NOSPACE or CORRUPT. */
export interface ObservedAlarm {
  /** Name of the member that raised it (its ID when the name is unknown). */
  member: string;
  alarm: string;
}

/** The etcd cluster as the etcd API showed it, or the error when no member answered. */
export type ObservedEtcd =
  | {
      reachable: true;
      members: ObservedMember[];
      /** Cluster ID (hexadecimal) in the member list's answer. */
      clusterID?: string;
      /** Alarms raised in the cluster (none when the alarm list could not be read). */
      alarms?: ObservedAlarm[];
    }
  | {
      reachable: false;
      error: string;
      /** The kind of the operator's failure (plan/quorum-evidence.ts); classified from `error` when unset. */
      failure?: EtcdFailureKind;
    };

/** Everything the planner reads. */
export interface Observed {
  etcd: ObservedEtcd;
  /** Member pods that exist. */
  pods: ObservedPod[];
  /** Member names whose data PersistentVolumeClaim exists. */
  volumes: string[];
  /** Of those, the claims made for a seed member (annotated when CreateSeed made them). */
  seedVolumes?: string[];
  /** The cluster was bootstrapped once (status.clusterID is set). */
  bootstrapped: boolean;
  /**
   * Names of the members the operator last saw (status.members): their pods, and those of every member whose claim
   * exists, are restarted even without quorum.
   */
  knownMembers?: string[];
  /** Of those, the voting members (status.members without learners): a majority of their pods Ready is a quorum. */
  knownVoters?: string[];
  /** The cluster ID recorded once the cluster answered (status.clusterID); kept for ever after. */
  knownClusterID?: string;
  /** The lowest etcd version last seen (status.currentVersion): the version the members' data was written by. */
  knownVersion?: string;
  /** Member pods being deleted that have not gone yet. */
  terminating?: TerminatingPod[];
  /** For each learner, when its raft index was last seen to advance (or when it was first seen). */
  learnerProgress?: Record<string, Date>;
  /** What the operator observed of spec.bootstrap.restore (plan/restore.ts). */
  restore?: ObservedRestore;
  /** etcd's authentication as observed (plan/auth.ts). */
  auth?: ObservedAuth;
}

/** Planner settings. */
export interface PlanOptions {
  /** A never-used member name, used if the step creates a member (the caller generates it, e.g. randomly). */
  freshName: string;
  /**
   * How long a voting member's pod may stay not ready before it is replaced; overrides
   * spec.recovery.memberNotReadySeconds (tests).
   */
  deadAfterMs?: number;
}

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
  /**
   * Recovery: MemberRemove of a dead member (confirmed in a linearizable member list), then delete its pod
   * (at once when it is stuck terminating) and PVC; a fresh member is added later.
   */
  | {
      type: "ReplaceMember";
      id: string;
      name: string;
      reason: "DataLost" | "Unhealthy" | "Unschedulable" | "StuckTerminating" | "LearnerStalled";
      message: string;
    }
  /** Defragment one member's database (returns free pages to the disk; the member pauses while it runs). */
  | { type: "Defragment"; id: string; name: string; message: string }
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
  | { type: "InSync"; message: string }
  /** Restoring a new cluster's seed from a snapshot (plan/restore.ts). */
  | RestoreStep
  /** Turning etcd authentication on or off (plan/auth.ts). */
  | AuthStep;
