// VaultCluster.status: what the operator observed (pods, raft peers, autopilot's health, the restore), its types
// and its schema.
import { type Condition, conditionsSchema, type JSONSchemaProps } from "@capstan/core";
import { restoreStatusSchema, type VaultRestoreStatus } from "./vault-restore.ts";

/** Autopilot's view of the cluster (sys/storage/raft/autopilot/state through the active node). */
export interface VaultAutopilotStatus {
  /** Every server is healthy, as autopilot judges it. */
  healthy: boolean;
  /** Voters that can fail with the cluster keeping its quorum. */
  failureTolerance: number;
  /** Enterprise only (redundancy zones): failures tolerated counting the non-voters that would be promoted. */
  optimisticFailureTolerance?: number;
  /** The raft voters' node IDs (the pod names), sorted. */
  voters: string[];
  /** The leader's node ID. */
  leader?: string;
}

/** The life-cycle phase shown in `kubectl get vault`. */
export type VaultClusterPhase =
  | "Pending"
  | "Initializing"
  | "Running"
  | "Scaling"
  | "Upgrading"
  | "Degraded"
  | "Paused"
  /** A VaultRecovery is under way (its reconcile plans instead of the membership planner). */
  | "Recovering"
  /** spec.restore is being performed (its reconcile plans instead of the membership planner). */
  | "Restoring";

/** All phases, in the order the schema lists them. */
export const PHASES: readonly VaultClusterPhase[] = [
  "Pending",
  "Initializing",
  "Running",
  "Scaling",
  "Upgrading",
  "Degraded",
  "Paused",
  "Recovering",
  "Restoring",
];

/** One raft server as the active node reports it. */
export interface VaultRaftPeer {
  nodeID: string;
  address: string;
  voter: boolean;
  leader: boolean;
}

/** The observed state of a Vault cluster. */
export interface VaultClusterStatus {
  observedGeneration?: number;
  phase?: VaultClusterPhase;
  /** Available, Progressing, Degraded, Initialized, Sealed, TLSReady. */
  conditions?: Condition[];
  /** Number of Vault pods. */
  replicas?: number;
  /** Number of pods that are ready (unsealed). */
  readyReplicas?: number;
  /** Number of pods that are sealed or uninitialized. */
  sealedReplicas?: number;
  /** Label selector of the pods (for the scale subresource). */
  selector?: string;
  /** Name of the active pod. */
  active?: string;
  /** Names of the unsealed standby pods. */
  standbys?: string[];
  /** Names of the sealed pods. */
  sealed?: string[];
  raftPeers?: VaultRaftPeer[];
  /** Lowest Vault version among the pods. */
  currentVersion?: string;
  /** Vault's cluster_id, recorded once the cluster answered. */
  clusterID?: string;
  tls?: { notAfter?: string };
  /** URL clients use, e.g. "https://demo.ns.svc:8200". */
  endpoint?: string;
  /** Autopilot's health, when the active node answered it. */
  autopilot?: VaultAutopilotStatus;
  /** What spec.restore did, once the restored data served. */
  restore?: VaultRestoreStatus;
}

const raftPeerSchema: JSONSchemaProps = {
  type: "object",
  required: ["nodeID", "address"],
  properties: {
    nodeID: { type: "string", description: "Raft node ID (the pod name)." },
    address: { type: "string", description: "Raft cluster address (host:8201)." },
    voter: { type: "boolean", description: "The server votes in raft elections." },
    leader: { type: "boolean", description: "The server is the raft leader (the active node)." },
  },
};

const stringList = (description: string): JSONSchemaProps => ({
  type: "array",
  items: { type: "string" },
  description,
});

/** The schema of VaultCluster.status. */
export const vaultClusterStatusSchema: JSONSchemaProps = {
  type: "object",
  description: "The observed Vault cluster.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from.",
    },
    phase: { type: "string", enum: [...PHASES], description: "What the operator is doing with the cluster." },
    conditions: conditionsSchema(
      "Available (an active node serves), Progressing (a step is under way), Degraded (something needs a human), Initialized, Sealed (some pod is sealed), TLSReady.",
    ),
    replicas: { type: "integer", format: "int32", description: "Number of Vault pods." },
    readyReplicas: { type: "integer", format: "int32", description: "Number of ready (unsealed) pods." },
    sealedReplicas: {
      type: "integer",
      format: "int32",
      description: "Number of sealed or uninitialized pods.",
    },
    selector: { type: "string", description: "Label selector of the pods." },
    active: { type: "string", description: "Name of the active pod." },
    standbys: stringList("Names of the unsealed standby pods."),
    sealed: stringList("Names of the sealed pods."),
    raftPeers: { type: "array", items: raftPeerSchema, description: "The raft configuration." },
    currentVersion: { type: "string", description: "Lowest Vault version among the pods." },
    clusterID: { type: "string", description: "Vault's cluster_id." },
    tls: {
      type: "object",
      description: "The served certificate.",
      properties: {
        notAfter: { type: "string", format: "date-time", description: "When it expires." },
      },
    },
    endpoint: { type: "string", description: "URL clients use to reach the cluster." },
    autopilot: {
      type: "object",
      description: "Autopilot's health as the active node reports it (sys/storage/raft/autopilot/state).",
      required: ["healthy", "failureTolerance"],
      properties: {
        healthy: { type: "boolean", description: "Every server is healthy, as autopilot judges it." },
        failureTolerance: {
          type: "integer",
          format: "int32",
          description: "Voters that can fail with the cluster keeping its quorum.",
        },
        optimisticFailureTolerance: {
          type: "integer",
          format: "int32",
          description:
            "Failures tolerated counting the non-voters autopilot would promote (Vault Enterprise reports it).",
        },
        voters: stringList("The raft voters' node IDs (the pod names)."),
        leader: { type: "string", description: "The leader's node ID." },
      },
    },
    restore: restoreStatusSchema,
  },
};
