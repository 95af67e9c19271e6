// VaultRecovery (vault.capstan.dev/v1alpha1): a one-shot request to recover a VaultCluster that lost its raft quorum
// for good (a majority of its voters gone with their data), by Vault's documented peers.json recovery from the
// surviving server with the newest data: every other server's pod is stopped first (fence before fork), the survivor
// is restarted on a peers.json naming only itself, unsealed, checked to be the leader and only voter, and then the
// others are given new claims and join fresh. A request object, not a spec field: recovery is an action taken once,
// with its own outcome (the survivor, its raft index, the claims replaced), which a field re-applied by GitOps would
// ask for again. The same shape as the etcd operator's EtcdRestore. The CRD schema and its TypeScript types.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  defineKind,
  type KubeObject,
  type ObjectMeta,
} from "@capstan/core";
import * as Type from "typebox/type";
import { GROUP, VERSION } from "./vault-cluster.ts";

/**
 * Finalizer on a VaultRecovery, added before its first write to the cluster and released once it has ended (or its
 * VaultCluster is gone): deleting the request before the fork gives back what it took first; after the fork the
 * deletion waits until the survivor serves alone and the others' old claims are gone.
 */
export const RECOVERY_FINALIZER = "vault.capstan.dev/recovery";

const NAME = "^[a-z]([-a-z0-9]*[a-z0-9])?$";

/** The schema of VaultRecovery.spec. */
export const vaultRecoverySpecSchema = Type.Object(
  {
    clusterName: Type.String({
      description: "The VaultCluster, in the same namespace, that lost its quorum.",
      minLength: 1,
      maxLength: 45,
      pattern: NAME,
    }),
    survivor: Type.Optional(
      Type.String({
        description:
          "The server (pod name, <clusterName>-<ordinal>) to recover from. Unset: the server with the newest data, by the raft applied index each server reports of itself (sys/leader); the request is refused when the operator cannot judge (no server answers, or a server with data does not).",
        maxLength: 48,
        pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?-[0-9]+$",
      }),
    ),
  },
  {
    description: "The recovery asked for; immutable.",
    "x-kubernetes-validations": [
      { rule: "self == oldSelf", message: "spec is immutable: create another VaultRecovery" },
      {
        rule: "!has(self.survivor) || self.survivor.startsWith(self.clusterName + '-')",
        message: "spec.survivor must be a server of spec.clusterName: <clusterName>-<ordinal>",
        fieldPath: ".survivor",
      },
    ],
  },
);

/** The desired recovery; immutable. */
export type VaultRecoverySpec = Type.Static<typeof vaultRecoverySpecSchema>;

const phaseSchema = Type.Enum(["Pending", "Running", "Succeeded", "Failed", "Cancelled"], {
  type: "string",
  description:
    "Running until it ends: Succeeded (the survivor serves as leader and the others rejoined), Failed (refused: nothing was changed), or Cancelled (called off before the fork: everything was given back).",
});

/** The life cycle of one recovery; Cancelled: called off by a quorum answering again before the fork. */
export type VaultRecoveryPhase = Type.Static<typeof phaseSchema>;

const stageSchema = Type.Enum(["Fencing", "Forking", "StartingSurvivor", "Rejoining"], {
  type: "string",
  description:
    "Where a running recovery is: Fencing (stopping the other servers and waiting for their pods to be gone), Forking (the survivor's pod replaced), StartingSurvivor (on peers.json, unsealed, until it leads alone), Rejoining (the others given new claims and joined by the cluster's own reconcile).",
});

/** Where a running recovery is (status.step). */
export type VaultRecoveryStage = Type.Static<typeof stageSchema>;

/** A recovery in this phase has ended: it changes nothing any more and its finalizer is released. */
export function recoveryEnded(phase: VaultRecoveryPhase | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed" || phase === "Cancelled";
}

const candidateSchema = Type.Object({
  server: Type.String(),
  // raft_applied_index of sys/leader, asked of the server itself.
  appliedIndex: Type.Optional(Type.Integer({ format: "int64" })),
  // raft_committed_index of sys/leader.
  committedIndex: Type.Optional(Type.Integer({ format: "int64" })),
  // (another cluster, no claim, no answer)
  excluded: Type.Optional(Type.String({ description: "Why it was not a candidate." })),
});

/** What one server reported of its own data when the survivor was chosen. */
export type VaultRecoveryCandidate = Type.Static<typeof candidateSchema>;

/** The schema of VaultRecovery.status. */
export const vaultRecoveryStatusSchema = Type.Object({
  phase: Type.Optional(phaseSchema),
  stage: Type.Optional(stageSchema),
  // e.g. QuorumHealthy, WaitingForFence, Recovered
  reason: Type.Optional(Type.String({ description: "Machine-readable reason of the last step or refusal." })),
  message: Type.Optional(
    Type.String({
      description:
        "Why it failed or was cancelled, or what it does or waits for (a deletion held after the fork says so).",
    }),
  ),
  conditions: Type.Optional(
    Type.Unsafe<Condition[]>({
      type: "array",
      items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    }),
  ),
  survivor: Type.Optional(Type.String({ description: "The server recovered from." })),
  raftIndex: Type.Optional(
    Type.Integer({ format: "int64", description: "The survivor's raft applied index when chosen." }),
  ),
  candidates: Type.Optional(
    Type.Array(candidateSchema, { description: "What each server reported when the survivor was chosen." }),
  ),
  replacedClaims: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "The other servers' data claims, deleted once the survivor served alone as leader (their old data is a divergent copy; they join again fresh on new claims).",
    }),
  ),
  startTime: Type.Optional(Type.String({ format: "date-time" })),
  completionTime: Type.Optional(Type.String({ format: "date-time" })),
});

/** The observed recovery. */
export type VaultRecoveryStatus = Type.Static<typeof vaultRecoveryStatusSchema>;

/** A VaultRecovery object. */
export interface VaultRecovery extends KubeObject {
  spec: VaultRecoverySpec;
  status?: VaultRecoveryStatus;
}

/** The VaultRecovery kind descriptor. */
export const VaultRecoveryKind = defineKind<VaultRecovery>({
  group: GROUP,
  version: VERSION,
  kind: "VaultRecovery",
  plural: "vaultrecoveries",
  namespaced: true,
});

/** The openAPIV3Schema of VaultRecovery. */
export const vaultRecoverySchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: "object" })),
    spec: vaultRecoverySpecSchema,
    status: Type.Optional(vaultRecoveryStatusSchema),
  },
  {
    description:
      "A one-shot recovery of a VaultCluster that lost its raft quorum, by Vault's peers.json recovery from the surviving server with the newest data. Deleting it before the survivor is restarted on peers.json calls the recovery off (the survivor mark is removed and the stopped servers start again on their own data); after that the deletion waits until the survivor serves alone (finalizer vault.capstan.dev/recovery).",
  },
);

/** The VaultRecovery CustomResourceDefinition. */
export function vaultRecoveryCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: VaultRecoveryKind,
    singular: "vaultrecovery",
    schema: vaultRecoverySchema,
    printerColumns: [
      { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Stage", type: "string", jsonPath: ".status.stage" },
      { name: "Survivor", type: "string", jsonPath: ".status.survivor" },
      { name: "Index", type: "integer", jsonPath: ".status.raftIndex", priority: 1 },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
