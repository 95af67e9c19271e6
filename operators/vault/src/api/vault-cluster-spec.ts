// VaultCluster.spec: the TypeScript types of what users ask for, derived from the schema in
// vault-cluster-spec-schema.ts (the one source); vault-cluster.test.ts checks they are what the code expects.
import type { Defaulted, ResourceQuantities, Toleration } from "@capstan/core";
import type * as Type from "typebox/type";
import type {
  vaultAutopilotSchema,
  vaultClusterSpecSchema,
  vaultPodTemplateSchema,
  vaultStorageSchema,
  vaultTLSSchema,
  vaultUnsealSchema,
} from "./vault-cluster-spec-schema.ts";

/** An object type's properties, flattened into one type literal (readable in errors and hovers). */

/**
 * The raft data volume of each pod: `size` may grow, never shrink (CEL); `storageClassName` is immutable once set;
 * `whenDeleted` (default Retain) keeps the claims, with no owner reference, for a VaultCluster created again under
 * the same name, or (Delete) lets them be garbage-collected with it.
 */
export type VaultStorage = Type.Static<typeof vaultStorageSchema>;

/**
 * The listener certificate: operator-managed (CA + server certificate; `duration` default 2160h, `renewBefore`
 * default 720h) or an existing kubernetes.io/tls Secret (`secretName`), onto which a change restarts the pods one
 * at a time, the operator trusting the old and the new CA meanwhile.
 */
export type VaultTLS = Type.Static<typeof vaultTLSSchema>;

/**
 * Shamir unseal settings, fixed at init: `shares` (1..10, default 5), `threshold` (1..shares, default 3),
 * `keepRootToken` (default false: revoked once bootstrap is done), `retainKeysOnDelete` (default true: no owner
 * reference). All defaulted, so always present.
 */
export type VaultUnseal = Defaulted<
  Type.Static<typeof vaultUnsealSchema>,
  "shares" | "threshold" | "keepRootToken" | "retainKeysOnDelete"
>;

/**
 * Raft autopilot (sys/storage/raft/autopilot/configuration), kept as written here by the operator. Every field but
 * minQuorum defaults to Vault's own default; durations are Go durations, applied in whole seconds. minQuorum is
 * required with cleanupDeadServers, at least 3 and at least a quorum of replicas (floor(replicas/2)+1), at most
 * replicas.
 */
export type VaultAutopilot = Type.Static<typeof vaultAutopilotSchema>;

/** A toleration, as in a Pod spec. */
export type VaultToleration = Toleration;

/** Compute resources of the vault container (quantities). */
export type VaultResources = ResourceQuantities;

/**
 * What users may set on the Vault pods: placement and labels (core's PodPlacement), resources, and one voter per
 * node (per domain of topologyKey): antiAffinity Required (the default: a pod stays Pending rather than share a
 * node) or Preferred (co-located when no other node fits), ignored when affinity is set.
 */
export type VaultPodTemplate = Type.Static<typeof vaultPodTemplateSchema>;

/**
 * The desired Vault cluster; defaulted fields (replicas, version, repository, storage, tls, unseal) are always
 * present on objects read from the API server. `config` is merged into Vault's JSON server configuration; `restore`
 * (api/vault-restore.ts) is immutable.
 */
export type VaultClusterSpec = Defaulted<
  Omit<Type.Static<typeof vaultClusterSpecSchema>, "unseal"> & { unseal?: VaultUnseal },
  "replicas" | "version" | "repository" | "storage" | "tls" | "unseal"
>;
