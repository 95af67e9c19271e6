// VaultCluster.spec's schema: the OpenAPI properties with their defaults and bounds, and the CEL rules
// (x-kubernetes-validations) that refuse bad input at the API server: immutable and grow-only fields, the unseal
// threshold, operator-owned config keys, autopilot's minQuorum against replicas.
import {
  claimRetentionSchema,
  goDurationSchema,
  podPlacementProperties,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
} from "@capstan/core";
import * as Type from "typebox/type";
import {
  AUTOPILOT_DEFAULTS,
  AUTOPILOT_MIN_QUORUM_FLOOR,
  DEFAULT_ANTI_AFFINITY,
  DEFAULT_REPOSITORY,
  DEFAULT_STORAGE_SIZE,
  DEFAULT_TLS_DURATION,
  DEFAULT_TLS_RENEW_BEFORE,
  DEFAULT_TOPOLOGY_KEY,
  DEFAULT_VAULT_VERSION,
  OPERATOR_OWNED_CONFIG_KEYS,
} from "./vault-cluster-defaults.ts";
import { RESTORE_RULES, restoreSchema } from "./vault-restore.ts";

/** The schema of spec.storage. */
export const vaultStorageSchema = Type.Object(
  {
    // It may grow, never shrink (CEL).
    size: Type.Optional(
      Type.String({
        description:
          "Size of each pod's PersistentVolumeClaim, e.g. 1Gi. It may grow, never shrink: new claims get it, and existing claims smaller than it are reported (Degraded StorageNotExpanded) until you expand them (their StorageClass must allow volume expansion).",
        default: DEFAULT_STORAGE_SIZE,
        pattern: STORAGE_SIZE_PATTERN,
        maxLength: 32,
      }),
    ),
    storageClassName: Type.Optional(
      Type.String({
        description: "StorageClass of the claims (default: the cluster's default class). Immutable.",
        maxLength: 253,
      }),
    ),
    // Retain: the claims stay, with no owner reference; Delete: garbage-collected with the VaultCluster.
    whenDeleted: Type.Optional(
      claimRetentionSchema(
        "the claims data-<pod>",
        "Retained claims hold the raft data: a VaultCluster created again under the same name takes them back (with the keys Secret, kept too by default, it comes back unsealed with its data); delete them by hand to start afresh.",
      ),
    ),
  },
  {
    description: "The raft data volume: a PersistentVolumeClaim data-<pod> per pod.",
    default: { size: DEFAULT_STORAGE_SIZE, whenDeleted: "Retain" },
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
  },
);

/** The schema of spec.tls. */
export const vaultTLSSchema = Type.Object(
  {
    secretName: Type.Optional(
      Type.String({
        description:
          "An existing kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt (e.g. made by cert-manager); its certificate must name the pods' and Services' DNS names. Setting, changing or unsetting it restarts the pods onto the new certificate one at a time (the active one last); the operator trusts the old and the new CA until every pod serves the new one.",
        maxLength: 253,
      }),
    ),
    duration: Type.Optional(
      goDurationSchema(
        "Lifetime of the operator-managed server certificate, a Go duration (e.g. 2160h).",
        DEFAULT_TLS_DURATION,
      ),
    ),
    renewBefore: Type.Optional(
      goDurationSchema(
        "The operator-managed server certificate is renewed when less than this is left; shorter than duration.",
        DEFAULT_TLS_RENEW_BEFORE,
      ),
    ),
  },
  {
    description:
      "The listener certificate: by default the operator keeps a CA in Secret <name>-ca and a server certificate in <name>-tls, renewed before expiry; or secretName names an existing Secret.",
    default: { duration: DEFAULT_TLS_DURATION, renewBefore: DEFAULT_TLS_RENEW_BEFORE },
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
  },
);

/** The schema of spec.unseal (every field defaulted, so none listed as required). */
export const vaultUnsealSchema = Type.Object(
  {
    shares: Type.Optional(
      Type.Integer({
        format: "int32",
        description: "Number of unseal key shares. Immutable.",
        default: 5,
        minimum: 1,
        maximum: 10,
      }),
    ),
    threshold: Type.Optional(
      Type.Integer({
        format: "int32",
        description: "Key shares needed to unseal (at most shares). Immutable.",
        default: 3,
        minimum: 1,
        maximum: 10,
      }),
    ),
    keepRootToken: Type.Optional(
      Type.Boolean({
        description:
          "Keep the initial root token in the keys Secret (root-token). Default false: it is revoked once the operator's own token exists.",
        default: false,
      }),
    ),
    retainKeysOnDelete: Type.Optional(
      Type.Boolean({
        description:
          "Keep the keys Secret when the VaultCluster is deleted (default true): the raft data cannot be unsealed without it.",
        default: true,
      }),
    ),
  },
  {
    description:
      "Shamir unseal: Vault is initialized with `shares` key shares, `threshold` of which unseal it; the keys are kept in Secret <name>-unseal-keys. Fixed at init.",
    default: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
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
  },
);

const configSchema = Type.Unsafe<Record<string, unknown>>({
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
});

/** A duration of spec.autopilot: a Go duration, at least `min` (Vault reads whole seconds; 0 means "unchanged"). */
function autopilotDuration(description: string, dflt: string, min: string) {
  return Type.Optional(
    Type.String({
      ...goDurationSchema(description, dflt),
      "x-kubernetes-validations": [
        { rule: `duration(self) >= duration('${min}')`, message: `must be at least ${min}` },
      ],
    }),
  );
}

/** The schema of spec.autopilot. */
export const vaultAutopilotSchema = Type.Object(
  {
    cleanupDeadServers: Type.Optional(
      Type.Boolean({
        description:
          "Autopilot removes servers out of contact for deadServerLastContactThreshold from the raft configuration, never leaving fewer voters than minQuorum (required with it). The operator then replaces such a pod with a fresh one that joins again.",
        default: AUTOPILOT_DEFAULTS.cleanupDeadServers,
      }),
    ),
    deadServerLastContactThreshold: autopilotDuration(
      "How long a server may go without contact from the leader before the cleanup counts it dead (a Go duration, at least 1m, as Vault requires).",
      AUTOPILOT_DEFAULTS.deadServerLastContactThreshold,
      "1m",
    ),
    minQuorum: Type.Optional(
      Type.Integer({
        format: "int32",
        description:
          "The fewest voters the cleanup may leave. Required with cleanupDeadServers: at least 3 (Vault's rule) and at least a quorum of replicas (floor(replicas/2)+1), at most replicas.",
        minimum: 1,
        maximum: 5,
      }),
    ),
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
    maxTrailingLogs: Type.Optional(
      Type.Integer({
        format: "int64",
        description:
          "How many log entries a server may be behind the leader before autopilot counts it unhealthy.",
        default: AUTOPILOT_DEFAULTS.maxTrailingLogs,
        minimum: 1,
        maximum: 1_000_000_000,
      }),
    ),
  },
  {
    description:
      "Raft autopilot's configuration (Vault's sys/storage/raft/autopilot/configuration): the operator writes it through the active node when it differs, and leaves it alone when this field is absent. Unset fields take Vault's defaults.",
  },
);

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

/** The schema of spec.podTemplate. */
export const vaultPodTemplateSchema = Type.Object(
  {
    ...podPlacementProperties("pods", "one voter per node, as antiAffinity and topologyKey say"),
    resources: Type.Optional(resourcesSchema("Compute resources of the vault container.")),
    antiAffinity: Type.Optional(
      Type.Enum(["Required", "Preferred"], {
        type: "string",
        default: DEFAULT_ANTI_AFFINITY,
        description:
          "One voter per node (per domain of topologyKey), so that one node never holds a quorum: Required (a pod stays Pending rather than share a node; the status names it) or Preferred (pods share a node when no other fits: single-node clusters such as kind or the local cluster). Ignored when affinity is set.",
      }),
    ),
    topologyKey: Type.Optional(
      Type.String({
        default: DEFAULT_TOPOLOGY_KEY,
        minLength: 1,
        maxLength: 317,
        description:
          "The node label voters are spread over by antiAffinity: kubernetes.io/hostname (one per node) or e.g. topology.kubernetes.io/zone (one per zone).",
      }),
    ),
  },
  { description: "Settings applied to every Vault pod." },
);

/**
 * The schema of VaultCluster.spec. Every field is optional to the API server; those with a default (replicas,
 * version, repository, storage, tls, unseal) are always present on objects read back (VaultClusterSpec says so).
 */
export const vaultClusterSpecSchema = Type.Object(
  {
    replicas: Type.Optional(
      Type.Integer({
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
      }),
    ),
    version: Type.Optional(
      Type.String({
        description: "Vault release to run, MAJOR.MINOR.PATCH without a leading v (e.g. 1.14.8).",
        default: DEFAULT_VAULT_VERSION,
        maxLength: 32,
        "x-kubernetes-validations": [
          {
            rule: "self.matches('^[0-9]+[.][0-9]+[.][0-9]+$')",
            message: `version must be a Vault release written MAJOR.MINOR.PATCH without a leading v, e.g. ${DEFAULT_VAULT_VERSION}`,
          },
        ],
      }),
    ),
    repository: Type.Optional(
      Type.String({
        description: "Image repository; the image is <repository>:<version>.",
        default: DEFAULT_REPOSITORY,
        minLength: 1,
        maxLength: 512,
      }),
    ),
    storage: Type.Optional(vaultStorageSchema),
    tls: Type.Optional(vaultTLSSchema),
    unseal: Type.Optional(vaultUnsealSchema),
    config: Type.Optional(configSchema),
    podTemplate: Type.Optional(vaultPodTemplateSchema),
    paused: Type.Optional(
      Type.Boolean({
        description: "Stop every action on the cluster (init, unseal, membership, pod updates) until unset.",
      }),
    ),
    autopilot: Type.Optional(vaultAutopilotSchema),
    restore: Type.Optional(restoreSchema),
  },
  {
    description: "The desired Vault cluster.",
    "x-kubernetes-validations": [...AUTOPILOT_MIN_QUORUM_RULES, ...RESTORE_RULES],
  },
);
