// VaultCluster.spec: the TypeScript types of what users ask for (the schema in vault-cluster-spec-schema.ts is the
// source of truth; vault-cluster.test.ts checks the two name the same fields).
import type { ClaimRetention, PodPlacement, ResourceQuantities, Toleration } from "@capstan/core";
import type { VaultRestore } from "./vault-restore.ts";

/** The raft data volume of each pod. */
export interface VaultStorage {
  /** Size of each pod's PersistentVolumeClaim, a quantity such as "1Gi"; it may grow, never shrink (CEL). */
  size?: string;
  /** StorageClass of the claims; immutable once set. */
  storageClassName?: string;
  /**
   * What deleting the VaultCluster does to the claims (default Retain: they stay, with no owner reference, and a
   * VaultCluster created again under the same name takes them back; Delete: garbage-collected with it).
   */
  whenDeleted?: ClaimRetention;
}

/** The listener certificate: operator-managed (CA + server certificate) or an existing Secret. */
export interface VaultTLS {
  /**
   * An existing kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt (e.g. cert-manager's). A change restarts
   * the pods onto it one at a time, the operator trusting the old and the new CA meanwhile.
   */
  secretName?: string;
  /** Lifetime of the operator-managed server certificate, a Go duration (default 2160h). */
  duration?: string;
  /** Renew the server certificate when less than this is left (default 720h; shorter than duration). */
  renewBefore?: string;
}

/** Shamir unseal settings, fixed at init. */
export interface VaultUnseal {
  /** Number of key shares (1..10, default 5). */
  shares: number;
  /** Shares needed to unseal (1..shares, default 3). */
  threshold: number;
  /** Keep the initial root token in the keys Secret (default false: revoked once bootstrap is done). */
  keepRootToken: boolean;
  /** Keep the keys Secret when the VaultCluster is deleted (default true: no owner reference). */
  retainKeysOnDelete: boolean;
}

/**
 * Raft autopilot (sys/storage/raft/autopilot/configuration), kept as written here by the operator. Every field but
 * minQuorum defaults to Vault's own default; durations are Go durations, applied in whole seconds.
 */
export interface VaultAutopilot {
  /** Autopilot removes servers it judges dead from the raft configuration (default false). Needs minQuorum. */
  cleanupDeadServers?: boolean;
  /** A server out of contact with the leader this long is dead, for the cleanup (default 24h; at least 1m). */
  deadServerLastContactThreshold?: string;
  /**
   * The cleanup never leaves fewer voters than this: required with cleanupDeadServers, at least 3 and at least a
   * quorum of replicas (floor(replicas/2)+1), at most replicas.
   */
  minQuorum?: number;
  /** A new server must stay healthy this long before autopilot makes it a voter (default 10s). */
  serverStabilizationTime?: string;
  /** A server out of contact with the leader this long is unhealthy (default 10s). */
  lastContactThreshold?: string;
  /** A server this many log entries behind the leader is unhealthy (default 1000). */
  maxTrailingLogs?: number;
}

/** A toleration, as in a Pod spec. */
export type VaultToleration = Toleration;

/** Compute resources of the vault container (quantities). */
export type VaultResources = ResourceQuantities;

/** What users may set on the Vault pods. */
export interface VaultPodTemplate extends PodPlacement {
  resources?: VaultResources;
  /**
   * One voter per node (per domain of topologyKey), so one node never holds a quorum: Required (the default: a pod
   * stays Pending rather than share a node) or Preferred (co-located when no other node fits: single-node clusters).
   * Ignored when affinity is set.
   */
  antiAffinity?: "Required" | "Preferred";
  /** The node label voters are spread over (default kubernetes.io/hostname; e.g. topology.kubernetes.io/zone). */
  topologyKey?: string;
}

/** The desired Vault cluster; defaulted fields are always present on objects read from the API server. */
export interface VaultClusterSpec {
  /** Number of raft voters: 1, 3 or 5. */
  replicas: number;
  /** Vault release, e.g. "1.14.8". */
  version: string;
  /** Image repository; the image is `<repository>:<version>`. */
  repository: string;
  storage: VaultStorage;
  tls: VaultTLS;
  unseal: VaultUnseal;
  /** Merged into Vault's JSON server configuration; the keys the operator owns are refused. */
  config?: Record<string, unknown>;
  podTemplate?: VaultPodTemplate;
  /** Stop every action on the cluster (init, unseal, membership, pod updates) until unset. */
  paused?: boolean;
  /** Raft autopilot's configuration, kept by the operator; absent: left as it is in Vault. */
  autopilot?: VaultAutopilot;
  /** Start from a raft snapshot (api/vault-restore.ts); immutable. */
  restore?: VaultRestore;
}
