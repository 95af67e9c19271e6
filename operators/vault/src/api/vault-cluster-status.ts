// VaultCluster.status: what the operator observed (pods, raft peers, autopilot's health, the restore), its schema
// and the types derived from it.
import { conditionsSchema } from "@capstan/core";
import * as Type from "typebox/type";
import { restoreStatusSchema } from "./vault-restore.ts";

const stringList = (description: string) => Type.Array(Type.String(), { description });

const autopilotStatusSchema = Type.Object(
  {
    healthy: Type.Boolean({ description: "Every server is healthy, as autopilot judges it." }),
    failureTolerance: Type.Integer({
      format: "int32",
      description: "Voters that can fail with the cluster keeping its quorum.",
    }),
    // Enterprise only (redundancy zones).
    optimisticFailureTolerance: Type.Optional(
      Type.Integer({
        format: "int32",
        description:
          "Failures tolerated counting the non-voters autopilot would promote (Vault Enterprise reports it).",
      }),
    ),
    // Sorted.
    voters: Type.Optional(stringList("The raft voters' node IDs (the pod names).")),
    leader: Type.Optional(Type.String({ description: "The leader's node ID." })),
  },
  { description: "Autopilot's health as the active node reports it (sys/storage/raft/autopilot/state)." },
);

/** Autopilot's view of the cluster (sys/storage/raft/autopilot/state through the active node). */
export type VaultAutopilotStatus = Type.Static<typeof autopilotStatusSchema>;

const phaseSchema = Type.Enum(
  [
    "Pending",
    "Initializing",
    "Running",
    "Scaling",
    "Upgrading",
    "Degraded",
    "Paused",
    // A VaultRecovery is under way (its reconcile plans instead of the membership planner).
    "Recovering",
    // spec.restore is being performed (its reconcile plans instead of the membership planner).
    "Restoring",
  ],
  { type: "string", description: "What the operator is doing with the cluster." },
);

/** The life-cycle phase shown in `kubectl get vault`. */
export type VaultClusterPhase = Type.Static<typeof phaseSchema>;

/** All phases, in the order the schema lists them. */
export const PHASES: readonly VaultClusterPhase[] = phaseSchema.enum;

const raftPeerSchema = Type.Object({
  nodeID: Type.String({ description: "Raft node ID (the pod name)." }),
  address: Type.String({ description: "Raft cluster address (host:8201)." }),
  voter: Type.Optional(Type.Boolean({ description: "The server votes in raft elections." })),
  leader: Type.Optional(Type.Boolean({ description: "The server is the raft leader (the active node)." })),
});

/** One raft server as the active node reports it. */
export type VaultRaftPeer = Type.Static<typeof raftPeerSchema>;

/** The schema of VaultCluster.status. */
export const vaultClusterStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({
        format: "int64",
        description: "The metadata.generation this status was computed from.",
      }),
    ),
    phase: Type.Optional(phaseSchema),
    conditions: Type.Optional(
      conditionsSchema(
        "Available (an active node serves), Progressing (a step is under way), Degraded (something needs a human), Initialized, Sealed (some pod is sealed), TLSReady.",
      ),
    ),
    replicas: Type.Optional(Type.Integer({ format: "int32", description: "Number of Vault pods." })),
    readyReplicas: Type.Optional(
      Type.Integer({ format: "int32", description: "Number of ready (unsealed) pods." }),
    ),
    sealedReplicas: Type.Optional(
      Type.Integer({ format: "int32", description: "Number of sealed or uninitialized pods." }),
    ),
    // For the scale subresource.
    selector: Type.Optional(Type.String({ description: "Label selector of the pods." })),
    active: Type.Optional(Type.String({ description: "Name of the active pod." })),
    standbys: Type.Optional(stringList("Names of the unsealed standby pods.")),
    sealed: Type.Optional(stringList("Names of the sealed pods.")),
    raftPeers: Type.Optional(Type.Array(raftPeerSchema, { description: "The raft configuration." })),
    currentVersion: Type.Optional(Type.String({ description: "Lowest Vault version among the pods." })),
    // Recorded once the cluster answered.
    clusterID: Type.Optional(Type.String({ description: "Vault's cluster_id." })),
    tls: Type.Optional(
      Type.Object(
        {
          notAfter: Type.Optional(Type.String({ format: "date-time", description: "When it expires." })),
        },
        { description: "The served certificate." },
      ),
    ),
    // e.g. "https://demo.ns.svc:8200"
    endpoint: Type.Optional(Type.String({ description: "URL clients use to reach the cluster." })),
    // When the active node answered it.
    autopilot: Type.Optional(autopilotStatusSchema),
    restore: Type.Optional(restoreStatusSchema),
  },
  { description: "The observed Vault cluster." },
);

/** The observed state of a Vault cluster. */
export type VaultClusterStatus = Type.Static<typeof vaultClusterStatusSchema>;
