// What the VaultRecovery planner (recovery.ts) reads and returns: types only.
import type { VaultRecoveryCandidate } from "../api/vault-recovery.ts";
import type { ObservedPeer, PodVault } from "./types.ts";

/** A server's own raft indexes (sys/leader, asked of it alone), or why it could not say them. */
export type RecoveryIndex = { applied: number; committed: number } | { error: string };

/** One server of the cluster (a pod or a data claim of an ordinal), as the recovery sees it. */
export interface RecoveryServer {
  /** `<cluster>-<ordinal>`: the pod, and the raft node ID. */
  name: string;
  ordinal: number;
  /** Its data claim exists and is not being deleted. */
  claim: boolean;
  /** Its data claim is being deleted. */
  claimTerminating?: boolean;
  /** The uid of its data claim (not being deleted), to tell the claim the recovery replaces from a new one. */
  claimUID?: string;
  /**
   * Its pod: none; live (not being deleted, not ended); ended (Failed or Succeeded: deleted before a fence passes);
   * terminating (being deleted: not gone, Vault may still run behind a partition).
   */
  pod: "none" | "live" | "ended" | "terminating";
  /** Its pod's deletionTimestamp. */
  terminatingSince?: Date;
  /** The node its pod was scheduled to. */
  node?: string;
  /** Its pod is Ready by its kubelet (readiness: unsealed and serving). */
  ready?: boolean;
  /** Its live pod was made by this recovery (with the peers.json init container). */
  recoveryPod?: boolean;
  /** The peers.json init container failed (its last termination message or waiting reason). */
  initFailure?: string;
  /** What its Vault answered about itself (sys/health), when its live pod was asked. */
  vault?: PodVault;
  /** Its own raft indexes, when it was asked (unsealed servers, before the survivor is chosen). */
  index?: RecoveryIndex;
}

/** A claim the recovery replaces once the survivor serves alone: recorded at the fork, by uid. */
export interface ReplacedClaim {
  claim: string;
  uid: string;
}

/** Everything the recovery planner reads. */
export interface RecoveryObserved {
  /** The VaultRecovery's name (the value of the marks it writes). */
  request: string;
  /** The VaultCluster's name. */
  cluster: string;
  /** spec.survivor. */
  named?: string;
  /** The cluster_id recorded for this VaultCluster (status, or beside the keys). */
  knownClusterID?: string;
  /** An active node answers with a majority of the raft voters it reports unsealed. */
  quorum: boolean;
  /** The active node's name, when one answers. */
  active?: string;
  /** The raft voters last known (status.raftPeers, or the configuration an active node reports). */
  voters: string[];
  servers: RecoveryServer[];
  /** The server whose claim carries this request's survivor mark. */
  survivorMark?: string;
  /** The phase written on the survivor's claim: "fork" (the point of no return), then "rejoin" once verified. */
  phase?: "fork" | "rejoin";
  /** The claims recorded at the fork, replaced once the survivor serves alone. */
  replaced: ReplacedClaim[];
  /** The raft configuration as the active node reports it. */
  raft?: { servers: ObservedPeer[] } | { error: string };
  /** The VaultRecovery is being deleted. */
  deleting?: boolean;
  /** It carries the recovery finalizer (added before its first write). */
  finalizer?: boolean;
}

/** The next recovery step. */
export type RecoveryStep =
  /** Nothing was started and nothing will be: the request fails (its status and an Event say why). */
  | {
      type: "Refuse";
      reason:
        | "QuorumHealthy"
        | "QuorumLossUnconfirmed"
        | "NoSurvivor"
        | "SurvivorUnclear"
        | "SurvivorHasNoData"
        | "SurvivorOtherCluster"
        | "SurvivorLost";
      field?: string;
      message: string;
    }
  /** Submit the unseal keys to a sealed server (a candidate, so it reports its indexes; or the survivor). */
  | { type: "Unseal"; server: string; message: string }
  /** Annotate the survivor's claim with this request: the durable choice every later step reads. */
  | {
      type: "MarkSurvivor";
      server: string;
      appliedIndex?: number;
      candidates: VaultRecoveryCandidate[];
      message: string;
    }
  /** Delete another server's pod; its claim is kept. */
  | { type: "StopServer"; server: string; message: string }
  /** Mark the survivor's claim "fork" with the claims to replace, then delete its pod (its data kept). */
  | { type: "Fork"; server: string; replaced: ReplacedClaim[]; message: string }
  /** Create the survivor's pod with the init container that writes peers.json naming only itself. */
  | { type: "StartSurvivor"; server: string; message: string }
  /** The survivor is the active node and only voter: its claim is marked "rejoin". */
  | { type: "Verified"; server: string; message: string }
  /** Delete a replaced claim (its server has no pod): the server is made again on a new claim and joins fresh. */
  | { type: "WipeServer"; server: string; claim: string; message: string }
  /** Every replaced claim is gone: the VaultCluster's own planner makes the others again and joins them. */
  | { type: "Rejoin"; message: string }
  /** Called off before the fork: the survivor mark is removed from its claim. */
  | { type: "RemoveSurvivorMark"; server: string; message: string }
  /** Called off, everything given back: deleted -> the finalizer released; a quorum back -> Cancelled. */
  | { type: "CallOff"; reason: "Deleted" | "QuorumReturned"; message: string }
  | { type: "Wait"; reason: string; message: string; pods?: string[] };
