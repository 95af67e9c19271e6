// VaultCluster (vault.capstan.dev/v1alpha1): the CRD schema, the single source of truth, and its TypeScript types.
import {
  type ClaimRetention,
  type Condition,
  type CustomResourceDefinitionObject,
  claimRetentionSchema,
  conditionsSchema,
  defineKind,
  GO_DURATION_PATTERN,
  goDurationSchema,
  type JSONSchemaProps,
  type KubeObject,
  type PodPlacement,
  podPlacementProperties,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  type Toleration,
} from "@capstan/core";
import { GROUP, VERSION } from "./group.ts";
import {
  RESTORE_RULES,
  restoreSchema,
  restoreStatusSchema,
  type VaultRestore,
  type VaultRestoreStatus,
} from "./vault-restore.ts";

export { GROUP, VERSION };

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

/** Default spec.podTemplate.antiAffinity: one voter per node, required. */
export const DEFAULT_ANTI_AFFINITY: "Required" | "Preferred" = "Required";
/** Default spec.podTemplate.topologyKey. */
export const DEFAULT_TOPOLOGY_KEY = "kubernetes.io/hostname";

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

/** A VaultCluster object. */
export interface VaultCluster extends KubeObject {
  spec: VaultClusterSpec;
  status?: VaultClusterStatus;
}

/** The VaultCluster kind descriptor for clients, informers and controllers. */
export const VaultClusterKind = defineKind<VaultCluster>({
  group: GROUP,
  version: VERSION,
  kind: "VaultCluster",
  plural: "vaultclusters",
  namespaced: true,
});

/** A Go duration as time.ParseDuration (and CEL's duration()) reads it (from @capstan/core). */
export { GO_DURATION_PATTERN };

const claimRetention = claimRetentionSchema("the claims data-<pod>");
const storageSchema: JSONSchemaProps = {
  type: "object",
  description: "The raft data volume: a PersistentVolumeClaim data-<pod> per pod.",
  default: { size: DEFAULT_STORAGE_SIZE, whenDeleted: "Retain" },
  properties: {
    size: {
      type: "string",
      description:
        "Size of each pod's PersistentVolumeClaim, e.g. 1Gi. It may grow, never shrink: new claims get it, and existing claims smaller than it are reported (Degraded StorageNotExpanded) until you expand them (their StorageClass must allow volume expansion).",
      default: DEFAULT_STORAGE_SIZE,
      pattern: STORAGE_SIZE_PATTERN,
      maxLength: 32,
    },
    storageClassName: {
      type: "string",
      description: "StorageClass of the claims (default: the cluster's default class). Immutable.",
      maxLength: 253,
    },
    whenDeleted: {
      ...claimRetention,
      description: `${claimRetention.description} Retained claims hold the raft data: a VaultCluster created again under the same name takes them back (with the keys Secret, kept too by default, it comes back unsealed with its data); delete them by hand to start afresh.`,
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",
      message:
        "storage.storageClassName is immutable: existing claims keep their class; create a new VaultCluster to move to another class",
      fieldPath: ".storageClassName",
    },
    {
      rule: "!has(oldSelf.size) || !has(self.size) || quantity(self.size).compareTo(quantity(oldSelf.size)) >= 0",
      message:
        "storage.size cannot shrink: a PersistentVolumeClaim can only grow; keep the size or make it larger",
      fieldPath: ".size",
    },
  ],
};

const tlsSchema: JSONSchemaProps = {
  type: "object",
  description:
    "The listener certificate: by default the operator keeps a CA in Secret <name>-ca and a server certificate in <name>-tls, renewed before expiry; or secretName names an existing Secret.",
  default: { duration: DEFAULT_TLS_DURATION, renewBefore: DEFAULT_TLS_RENEW_BEFORE },
  properties: {
    secretName: {
      type: "string",
      description:
        "An existing kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt (e.g. made by cert-manager); its certificate must name the pods' and Services' DNS names. Setting, changing or unsetting it restarts the pods onto the new certificate one at a time (the active one last); the operator trusts the old and the new CA until every pod serves the new one.",
      maxLength: 253,
    },
    duration: goDurationSchema(
      "Lifetime of the operator-managed server certificate, a Go duration (e.g. 2160h).",
      DEFAULT_TLS_DURATION,
    ),
    renewBefore: goDurationSchema(
      "The operator-managed server certificate is renewed when less than this is left; shorter than duration.",
      DEFAULT_TLS_RENEW_BEFORE,
    ),
  },
  "x-kubernetes-validations": [
    {
      rule: "duration(self.renewBefore) < duration(self.duration)",
      message: "tls.renewBefore must be shorter than tls.duration",
      fieldPath: ".renewBefore",
    },
    {
      rule: "duration(self.duration) >= duration('5m')",
      message: "tls.duration must be at least 5m",
      fieldPath: ".duration",
    },
  ],
};

const unsealSchema: JSONSchemaProps = {
  type: "object",
  description:
    "Shamir unseal: Vault is initialized with `shares` key shares, `threshold` of which unseal it; the keys are kept in Secret <name>-unseal-keys. Fixed at init.",
  default: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
  properties: {
    shares: {
      type: "integer",
      format: "int32",
      description: "Number of unseal key shares. Immutable.",
      default: 5,
      minimum: 1,
      maximum: 10,
    },
    threshold: {
      type: "integer",
      format: "int32",
      description: "Key shares needed to unseal (at most shares). Immutable.",
      default: 3,
      minimum: 1,
      maximum: 10,
    },
    keepRootToken: {
      type: "boolean",
      description:
        "Keep the initial root token in the keys Secret (root-token). Default false: it is revoked once the operator's own token exists.",
      default: false,
    },
    retainKeysOnDelete: {
      type: "boolean",
      description:
        "Keep the keys Secret when the VaultCluster is deleted (default true): the raft data cannot be unsealed without it.",
      default: true,
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "self.threshold <= self.shares",
      message: "unseal: threshold must not exceed shares",
      fieldPath: ".threshold",
    },
    {
      rule: "self.shares == 1 || self.threshold >= 2",
      message: "unseal: threshold must be at least 2 when there are several shares (Vault refuses 1)",
      fieldPath: ".threshold",
    },
    {
      rule: "self.shares == oldSelf.shares && self.threshold == oldSelf.threshold",
      message:
        "unseal.shares and unseal.threshold are immutable: they are fixed when Vault is initialized (rekey Vault by hand to change them)",
    },
  ],
};

const configSchema: JSONSchemaProps = {
  type: "object",
  description:
    "Extra Vault server configuration (JSON form of the HCL keys, e.g. ui, log_level, default_lease_ttl, telemetry), merged into the generated config. The keys the operator owns are refused.",
  maxProperties: 64,
  "x-kubernetes-preserve-unknown-fields": true,
  // CEL sees only the declared fields of a preserve-unknown-fields object: the owned keys are declared (with the
  // type Vault reads them as) so the rule can test them.
  properties: Object.fromEntries(
    OPERATOR_OWNED_CONFIG_KEYS.map((k) => [
      k,
      ["api_addr", "cluster_addr"].includes(k)
        ? { type: "string", description: "Set by the operator: refused here." }
        : k === "disable_mlock"
          ? { type: "boolean", description: "Set by the operator: refused here." }
          : {
              type: "object",
              "x-kubernetes-preserve-unknown-fields": true,
              description: "Set by the operator: refused here.",
            },
    ]),
  ),
  "x-kubernetes-validations": [
    {
      rule: OPERATOR_OWNED_CONFIG_KEYS.map((k) => `!has(self.${k})`).join(" && "),
      message: `config: these keys are set by the operator and cannot be overridden: ${OPERATOR_OWNED_CONFIG_KEYS.join(", ")}`,
    },
  ],
};

/** A duration of spec.autopilot: a Go duration, at least `min` (Vault reads whole seconds; 0 means "unchanged"). */
function autopilotDuration(description: string, dflt: string, min: string): JSONSchemaProps {
  return {
    ...goDurationSchema(description, dflt),
    "x-kubernetes-validations": [
      { rule: `duration(self) >= duration('${min}')`, message: `must be at least ${min}` },
    ],
  };
}

const autopilotSchema: JSONSchemaProps = {
  type: "object",
  description:
    "Raft autopilot's configuration (Vault's sys/storage/raft/autopilot/configuration): the operator writes it through the active node when it differs, and leaves it alone when this field is absent. Unset fields take Vault's defaults.",
  properties: {
    cleanupDeadServers: {
      type: "boolean",
      description:
        "Autopilot removes servers out of contact for deadServerLastContactThreshold from the raft configuration, never leaving fewer voters than minQuorum (required with it). The operator then replaces such a pod with a fresh one that joins again.",
      default: AUTOPILOT_DEFAULTS.cleanupDeadServers,
    },
    deadServerLastContactThreshold: autopilotDuration(
      "How long a server may go without contact from the leader before the cleanup counts it dead (a Go duration, at least 1m, as Vault requires).",
      AUTOPILOT_DEFAULTS.deadServerLastContactThreshold,
      "1m",
    ),
    minQuorum: {
      type: "integer",
      format: "int32",
      description:
        "The fewest voters the cleanup may leave. Required with cleanupDeadServers: at least 3 (Vault's rule) and at least a quorum of replicas (floor(replicas/2)+1), at most replicas.",
      minimum: 1,
      maximum: 5,
    },
    serverStabilizationTime: autopilotDuration(
      "How long a new server must stay healthy before autopilot makes it a voter (a Go duration, at least 1s).",
      AUTOPILOT_DEFAULTS.serverStabilizationTime,
      "1s",
    ),
    lastContactThreshold: autopilotDuration(
      "How long a server may go without contact from the leader before autopilot counts it unhealthy (a Go duration, at least 1s).",
      AUTOPILOT_DEFAULTS.lastContactThreshold,
      "1s",
    ),
    maxTrailingLogs: {
      type: "integer",
      format: "int64",
      description:
        "How many log entries a server may be behind the leader before autopilot counts it unhealthy.",
      default: AUTOPILOT_DEFAULTS.maxTrailingLogs,
      minimum: 1,
      maximum: 1_000_000_000,
    },
  },
};

/** spec-level rules on spec.autopilot.minQuorum (they read spec.replicas). */
export const AUTOPILOT_MIN_QUORUM_RULES = [
  {
    rule: `!has(self.autopilot) || !has(self.autopilot.cleanupDeadServers) || !self.autopilot.cleanupDeadServers || (has(self.autopilot.minQuorum) && self.autopilot.minQuorum >= ${AUTOPILOT_MIN_QUORUM_FLOOR} && self.autopilot.minQuorum >= self.replicas / 2 + 1)`,
    message: `autopilot.minQuorum is required with autopilot.cleanupDeadServers, at least ${AUTOPILOT_MIN_QUORUM_FLOOR} (Vault's rule) and at least a quorum of replicas (replicas/2+1): the cleanup must never leave fewer voters than a majority of the cluster`,
    fieldPath: ".autopilot.minQuorum",
  },
  {
    rule: "!has(self.autopilot) || !has(self.autopilot.minQuorum) || self.autopilot.minQuorum <= self.replicas",
    message:
      "autopilot.minQuorum must not exceed replicas: the cleanup could never run; lower it together with replicas",
    fieldPath: ".autopilot.minQuorum",
  },
];

const podTemplateSchema: JSONSchemaProps = {
  type: "object",
  description: "Settings applied to every Vault pod.",
  properties: {
    ...podPlacementProperties("pods", "one voter per node, as antiAffinity and topologyKey say"),
    resources: resourcesSchema("Compute resources of the vault container."),
    antiAffinity: {
      type: "string",
      enum: ["Required", "Preferred"],
      default: DEFAULT_ANTI_AFFINITY,
      description:
        "One voter per node (per domain of topologyKey), so that one node never holds a quorum: Required (a pod stays Pending rather than share a node; the status names it) or Preferred (pods share a node when no other fits: single-node clusters such as kind or the local cluster). Ignored when affinity is set.",
    },
    topologyKey: {
      type: "string",
      default: DEFAULT_TOPOLOGY_KEY,
      minLength: 1,
      maxLength: 317,
      description:
        "The node label voters are spread over by antiAffinity: kubernetes.io/hostname (one per node) or e.g. topology.kubernetes.io/zone (one per zone).",
    },
  },
};

const specSchema: JSONSchemaProps = {
  type: "object",
  description: "The desired Vault cluster.",
  properties: {
    replicas: {
      type: "integer",
      format: "int32",
      description: "Number of Vault pods, all raft voters: 1, 3 or 5.",
      default: 3,
      minimum: 1,
      maximum: 5,
      "x-kubernetes-validations": [
        {
          rule: "self % 2 == 1",
          message:
            "replicas must be odd (1, 3 or 5): an even number of raft voters tolerates no more failures than one less",
        },
      ],
    },
    version: {
      type: "string",
      description: "Vault release to run, MAJOR.MINOR.PATCH without a leading v (e.g. 1.14.8).",
      default: DEFAULT_VAULT_VERSION,
      maxLength: 32,
      "x-kubernetes-validations": [
        {
          rule: "self.matches('^[0-9]+[.][0-9]+[.][0-9]+$')",
          message: `version must be a Vault release written MAJOR.MINOR.PATCH without a leading v, e.g. ${DEFAULT_VAULT_VERSION}`,
        },
      ],
    },
    repository: {
      type: "string",
      description: "Image repository; the image is <repository>:<version>.",
      default: DEFAULT_REPOSITORY,
      minLength: 1,
      maxLength: 512,
    },
    storage: storageSchema,
    tls: tlsSchema,
    unseal: unsealSchema,
    config: configSchema,
    podTemplate: podTemplateSchema,
    paused: {
      type: "boolean",
      description: "Stop every action on the cluster (init, unseal, membership, pod updates) until unset.",
    },
    autopilot: autopilotSchema,
    restore: restoreSchema,
  },
  "x-kubernetes-validations": [...AUTOPILOT_MIN_QUORUM_RULES, ...RESTORE_RULES],
};

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

const statusSchema: JSONSchemaProps = {
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

/** The openAPIV3Schema of VaultCluster. */
export const vaultClusterSchema: JSONSchemaProps = {
  type: "object",
  description:
    "A Vault (or OpenBao) cluster on raft storage that the operator initializes, unseals, scales and upgrades.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      // Pods are <name>-<ordinal>, reachable as <pod>.<name>-internal.<ns>.svc (DNS labels: 63 at most).
      rule: "self.metadata.name.size() <= 45 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
      message:
        "metadata.name must be at most 45 characters of lowercase letters, digits and '-', starting with a letter (it names the pods and Services)",
    },
  ],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: specSchema,
    status: statusSchema,
  },
};

/** The VaultCluster CustomResourceDefinition; `crds/vaultclusters.vault.capstan.dev.yaml` is generated from it. */
export function vaultClusterCrd(): CustomResourceDefinitionObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${VaultClusterKind.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: {
        kind: VaultClusterKind.kind,
        plural: VaultClusterKind.plural,
        singular: "vaultcluster",
        listKind: "VaultClusterList",
        shortNames: ["vault"],
        categories: ["capstan"],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: structuredClone(vaultClusterSchema) },
          subresources: {
            status: {},
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.selector",
            },
          },
          additionalPrinterColumns: [
            { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
            { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
            { name: "Active", type: "string", jsonPath: ".status.active" },
            { name: "Sealed", type: "integer", jsonPath: ".status.sealedReplicas" },
            { name: "Version", type: "string", jsonPath: ".status.currentVersion" },
            { name: "Phase", type: "string", jsonPath: ".status.phase" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
        },
      ],
    },
  };
}
