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
  type JSONSchemaProps,
  type KubeObject,
} from "@capstan/core";
import { GROUP, VERSION } from "./vault-cluster.ts";

/**
 * Finalizer on a VaultRecovery, added before its first write to the cluster and released once it has ended (or its
 * VaultCluster is gone): deleting the request before the fork gives back what it took first; after the fork the
 * deletion waits until the survivor serves alone and the others' old claims are gone.
 */
export const RECOVERY_FINALIZER = "vault.capstan.dev/recovery";

/** The desired recovery; immutable. */
export interface VaultRecoverySpec {
  /** The VaultCluster, in the same namespace, that lost its quorum. */
  clusterName: string;
  /**
   * The server (pod name, `<clusterName>-<ordinal>`) to recover from. Unset: the operator chooses the server with the
   * newest data (the highest raft applied index each server reports of itself).
   */
  survivor?: string;
}

/** The life cycle of one recovery; Cancelled: called off by a quorum answering again before the fork. */
export type VaultRecoveryPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Cancelled";

/** Where a running recovery is (status.step). */
export type VaultRecoveryStage = "Fencing" | "Forking" | "StartingSurvivor" | "Rejoining";

/** A recovery in this phase has ended: it changes nothing any more and its finalizer is released. */
export function recoveryEnded(phase: VaultRecoveryPhase | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed" || phase === "Cancelled";
}

/** What one server reported of its own data when the survivor was chosen. */
export interface VaultRecoveryCandidate {
  server: string;
  /** raft_applied_index of sys/leader, asked of the server itself. */
  appliedIndex?: number;
  /** raft_committed_index of sys/leader. */
  committedIndex?: number;
  /** Why it was not a candidate (another cluster, no claim, no answer), when it was not. */
  excluded?: string;
}

/** The observed recovery. */
export interface VaultRecoveryStatus {
  phase?: VaultRecoveryPhase;
  /** Where a running recovery is. */
  stage?: VaultRecoveryStage;
  /** Why it failed or was cancelled, or what it does or waits for. */
  message?: string;
  /** Machine-readable reason of the last step or refusal (e.g. QuorumHealthy, WaitingForFence, Recovered). */
  reason?: string;
  conditions?: Condition[];
  /** The server recovered from. */
  survivor?: string;
  /** The survivor's raft applied index when it was chosen. */
  raftIndex?: number;
  /** What each server reported when the survivor was chosen. */
  candidates?: VaultRecoveryCandidate[];
  /** The other servers' data claims, deleted once the survivor served alone (their servers join fresh). */
  replacedClaims?: string[];
  startTime?: string;
  completionTime?: string;
}

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
export const vaultRecoverySchema: JSONSchemaProps = {
  type: "object",
  description:
    "A one-shot recovery of a VaultCluster that lost its raft quorum, by Vault's peers.json recovery from the surviving server with the newest data. Deleting it before the survivor is restarted on peers.json calls the recovery off (the survivor mark is removed and the stopped servers start again on their own data); after that the deletion waits until the survivor serves alone (finalizer vault.capstan.dev/recovery).",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      description: "The recovery asked for; immutable.",
      required: ["clusterName"],
      properties: {
        clusterName: {
          type: "string",
          description: "The VaultCluster, in the same namespace, that lost its quorum.",
          minLength: 1,
          maxLength: 45,
          pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?$",
        },
        survivor: {
          type: "string",
          description:
            "The server (pod name, <clusterName>-<ordinal>) to recover from. Unset: the server with the newest data, by the raft applied index each server reports of itself (sys/leader); the request is refused when the operator cannot judge (no server answers, or a server with data does not).",
          maxLength: 48,
          pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?-[0-9]+$",
        },
      },
      "x-kubernetes-validations": [
        { rule: "self == oldSelf", message: "spec is immutable: create another VaultRecovery" },
        {
          rule: "!has(self.survivor) || self.survivor.startsWith(self.clusterName + '-')",
          message: "spec.survivor must be a server of spec.clusterName: <clusterName>-<ordinal>",
          fieldPath: ".survivor",
        },
      ],
    },
    status: {
      type: "object",
      properties: {
        phase: {
          type: "string",
          enum: ["Pending", "Running", "Succeeded", "Failed", "Cancelled"],
          description:
            "Running until it ends: Succeeded (the survivor serves as leader and the others rejoined), Failed (refused: nothing was changed), or Cancelled (called off before the fork: everything was given back).",
        },
        stage: {
          type: "string",
          enum: ["Fencing", "Forking", "StartingSurvivor", "Rejoining"],
          description:
            "Where a running recovery is: Fencing (stopping the other servers and waiting for their pods to be gone), Forking (the survivor's pod replaced), StartingSurvivor (on peers.json, unsealed, until it leads alone), Rejoining (the others given new claims and joined by the cluster's own reconcile).",
        },
        reason: { type: "string", description: "Machine-readable reason of the last step or refusal." },
        message: {
          type: "string",
          description:
            "Why it failed or was cancelled, or what it does or waits for (a deletion held after the fork says so).",
        },
        conditions: {
          type: "array",
          items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
        survivor: { type: "string", description: "The server recovered from." },
        raftIndex: {
          type: "integer",
          format: "int64",
          description: "The survivor's raft applied index when chosen.",
        },
        candidates: {
          type: "array",
          description: "What each server reported when the survivor was chosen.",
          items: {
            type: "object",
            required: ["server"],
            properties: {
              server: { type: "string" },
              appliedIndex: { type: "integer", format: "int64" },
              committedIndex: { type: "integer", format: "int64" },
              excluded: { type: "string", description: "Why it was not a candidate." },
            },
          },
        },
        replacedClaims: {
          type: "array",
          items: { type: "string" },
          description:
            "The other servers' data claims, deleted once the survivor served alone as leader (their old data is a divergent copy; they join again fresh on new claims).",
        },
        startTime: { type: "string", format: "date-time" },
        completionTime: { type: "string", format: "date-time" },
      },
    },
  },
};

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
