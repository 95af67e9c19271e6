// VaultCluster's defaults: what a field is when the spec leaves it out (the schema carries them; the API server
// writes them into new objects), Vault's own autopilot defaults, and the server-configuration keys the operator
// sets itself.

/** The Vault release a new VaultCluster runs unless `spec.version` says otherwise. */
export const DEFAULT_VAULT_VERSION = "1.14.8";
/** The image repository used unless `spec.repository` says otherwise; the image is `<repository>:<version>`. */
export const DEFAULT_REPOSITORY = "hashicorp/vault";
/** The raft data volume size used when `spec.storage.size` is omitted. */
export const DEFAULT_STORAGE_SIZE = "1Gi";
/** Lifetime of the operator-managed server certificate (a Go duration). */
export const DEFAULT_TLS_DURATION = "2160h";
/** The server certificate is renewed when less than this is left (a Go duration). */
export const DEFAULT_TLS_RENEW_BEFORE = "720h";

/** Vault's own autopilot defaults (GET sys/storage/raft/autopilot/configuration on a new 1.14 cluster). */
export const AUTOPILOT_DEFAULTS = {
  cleanupDeadServers: false,
  deadServerLastContactThreshold: "24h",
  lastContactThreshold: "10s",
  maxTrailingLogs: 1000,
  serverStabilizationTime: "10s",
} as const;

/** The least spec.autopilot.minQuorum Vault accepts with dead-server cleanup on. */
export const AUTOPILOT_MIN_QUORUM_FLOOR = 3;

/**
 * Top-level keys of Vault's server configuration the operator sets itself: refused in spec.config (CEL), and
 * reported as Degraded if an object older than the rule carries one.
 */
export const OPERATOR_OWNED_CONFIG_KEYS: readonly string[] = [
  "listener",
  "storage",
  "ha_storage",
  "api_addr",
  "cluster_addr",
  "disable_mlock",
  "seal",
  "service_registration",
];

/** Default spec.podTemplate.antiAffinity: one voter per node, required. */
export const DEFAULT_ANTI_AFFINITY: "Required" | "Preferred" = "Required";
/** Default spec.podTemplate.topologyKey. */
export const DEFAULT_TOPOLOGY_KEY = "kubernetes.io/hostname";
