// EtcdCluster (etcd.capstan.dev/v1alpha1): the CRD schema, the single source of truth, and its TypeScript types.
import {
  type ClaimRetention,
  type Condition,
  type CustomResourceDefinitionObject,
  claimRetentionSchema,
  conditionsSchema,
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
  type PodPlacement,
  podPlacementProperties,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  type Toleration,
} from "@capstan/core";
import {
  authSchema,
  type EtcdAuth,
  type EtcdClientSelector,
  type EtcdNetwork,
  type LabelSelectorSpec,
  networkSchema,
  ROOT_PASSWORD_KEY,
  ROOT_USER,
} from "./etcd-cluster-access.ts";
import {
  CERT_MANAGER_MIN_DURATION,
  CERT_MANAGER_MIN_RENEW_BEFORE,
  type EtcdCertManagerIssuerRef,
  type EtcdCertManagerTLS,
  type EtcdOperatorManagedTLS,
  type EtcdTLS,
  type EtcdTLSEndpoint,
  tlsSchema,
} from "./etcd-cluster-tls.ts";
import {
  type EtcdAutomaticRecovery,
  type EtcdMaintenance,
  type EtcdRecovery,
  maintenanceSchema,
  recoverySchema,
} from "./etcd-cluster-upkeep.ts";
import { GROUP, VERSION } from "./group.ts";
import {
  bootstrapSchema,
  type EtcdBootstrap,
  type EtcdClusterRestoreStatus,
  RESTORE_BOOTSTRAP_RULES,
  restoreStatusSchema,
} from "./restore-source.ts";

// The spec's sections live in modules of their own (access: network and auth; tls; upkeep: recovery and
// maintenance); their types and constants are exported from here too, as before.
export type {
  EtcdAuth,
  EtcdAutomaticRecovery,
  EtcdBootstrap,
  EtcdCertManagerIssuerRef,
  EtcdCertManagerTLS,
  EtcdClientSelector,
  EtcdClusterRestoreStatus,
  EtcdMaintenance,
  EtcdNetwork,
  EtcdOperatorManagedTLS,
  EtcdRecovery,
  EtcdTLS,
  EtcdTLSEndpoint,
  LabelSelectorSpec,
};
export {
  CERT_MANAGER_MIN_DURATION,
  CERT_MANAGER_MIN_RENEW_BEFORE,
  GROUP,
  ROOT_PASSWORD_KEY,
  ROOT_USER,
  VERSION,
};
/** The etcd release a new EtcdCluster runs unless `spec.version` says otherwise. */
export const DEFAULT_ETCD_VERSION = "3.6.15";
/** The image repository used unless `spec.repository` says otherwise; the tag is `v<version>`. */
export const DEFAULT_REPOSITORY = "gcr.io/etcd-development/etcd";
/** The data volume size used when `spec.storage` is omitted. */
export const DEFAULT_STORAGE_SIZE = "8Gi";
/** The smallest data volume accepted: etcd needs room for its database, a copy of it and its WAL. */
export const MIN_STORAGE_SIZE = "1Gi";

/**
 * etcd flags the operator sets itself (identity, URLs, bootstrap, data location, quota, compaction): refused in
 * spec.extraArgs, and in spec.extraEnv as ETCD_<FLAG> (etcd reads every flag from such a variable too).
 * Compaction is set through spec.maintenance.
 */
export const OPERATOR_OWNED_FLAGS: readonly string[] = [
  "name",
  "data-dir",
  "wal-dir",
  "listen-peer-urls",
  "listen-client-urls",
  "listen-metrics-urls",
  "initial-advertise-peer-urls",
  "advertise-client-urls",
  "initial-cluster",
  "initial-cluster-state",
  "initial-cluster-token",
  "quota-backend-bytes",
  "auto-compaction-mode",
  "auto-compaction-retention",
  "config-file",
  "discovery",
  "discovery-srv",
  "force-new-cluster",
  "enable-v2",
];

/** The environment variable etcd reads a flag from: ETCD_ and the flag in upper case with "_" for "-". */
export function flagEnvName(flag: string): string {
  return `ETCD_${flag.toUpperCase().replaceAll("-", "_")}`;
}

/** Where members keep their data: a PersistentVolumeClaim of `size`, or an emptyDir when `ephemeral`. */
export interface EtcdStorage {
  /** Size of each member's PersistentVolumeClaim, a quantity such as "8Gi". */
  size?: string;
  /** StorageClass of the members' claims; immutable once set. */
  storageClassName?: string;
  /** Keep data in an emptyDir: a member whose pod is lost is replaced, never restarted. */
  ephemeral?: boolean;
  /**
   * What deleting the EtcdCluster does to the members' claims (default Retain: they stay, with no owner reference;
   * Delete: garbage-collected with it).
   */
  whenDeleted?: ClaimRetention;
}

/** A toleration, as in a Pod spec. */
export type EtcdToleration = Toleration;

/** Compute resources of the etcd container (quantities). */
export type EtcdResources = ResourceQuantities;

/** What users may set on member pods. */
export interface EtcdPodTemplate extends PodPlacement {
  resources?: EtcdResources;
  priorityClassName?: string;
  /**
   * One member per node: "Preferred" (default, the scheduler may co-locate when it must) or "Required" (a
   * member stays Pending rather than share a node). Ignored when `affinity` is set.
   */
  antiAffinity?: "Preferred" | "Required";
  /** core/v1 TopologySpreadConstraints; default: spread members across nodes and zones (ScheduleAnyway). */
  topologySpreadConstraints?: Record<string, unknown>[];
}

/** An environment variable of the etcd container. */
export interface EtcdEnvVar {
  name: string;
  value: string;
}

/** The desired state of an etcd cluster; defaulted fields are always present on objects read from the API server. */
export interface EtcdClusterSpec {
  /** Number of voting members, 1 to 9. */
  replicas: number;
  /** etcd release, e.g. "3.6.15" (3.5.x or 3.6.x). */
  version: string;
  /** Image repository; the image is `<repository>:v<version>`. */
  repository: string;
  storage: EtcdStorage;
  podTemplate?: EtcdPodTemplate;
  /** Stop all membership changes and pod updates until unset. */
  paused?: boolean;
  recovery?: EtcdRecovery;
  maintenance?: EtcdMaintenance;
  /** Extra etcd flags, name (without "--") to value; the flags the operator sets are refused. */
  extraArgs?: Record<string, string>;
  /** Extra environment variables of the etcd container; ETCD_* forms of the operator's flags are refused. */
  extraEnv?: EtcdEnvVar[];
  /** How a new cluster starts (e.g. restored from a snapshot); immutable. */
  bootstrap?: EtcdBootstrap;
  tls?: EtcdTLS;
  network?: EtcdNetwork;
  auth?: EtcdAuth;
}

/** The life-cycle phase shown in `kubectl get etcd`. */
export type EtcdClusterPhase =
  | "Creating"
  | "Running"
  | "Scaling"
  | "Upgrading"
  | "Updating"
  | "Recovering"
  | "Degraded"
  | "QuorumLost"
  | "Paused";

/** All phases, in the order the schema lists them. */
export const PHASES: readonly EtcdClusterPhase[] = [
  "Creating",
  "Running",
  "Scaling",
  "Upgrading",
  "Updating",
  "Recovering",
  "Degraded",
  "QuorumLost",
  "Paused",
];

/** One etcd member as the operator last observed it. */
export interface EtcdMemberStatus {
  name: string;
  /** Member ID in hexadecimal (etcd IDs are 64-bit, beyond JavaScript's safe integers). */
  id: string;
  peerURL: string;
  clientURLs: string[];
  version?: string;
  healthy: boolean;
  learner: boolean;
  leader: boolean;
  /** A learner's raft index when last seen to advance. */
  raftIndex?: number;
  /** When a learner's raft index was last seen to advance (or when it was first seen). */
  progressTime?: string;
}

/** The observed state of an etcd cluster. */
export interface EtcdClusterStatus {
  observedGeneration?: number;
  phase?: EtcdClusterPhase;
  /** Available, Progressing and Degraded. */
  conditions?: Condition[];
  /** Number of members (voters and learners). */
  replicas?: number;
  /** Number of members whose pod is ready. */
  readyReplicas?: number;
  members?: EtcdMemberStatus[];
  /** Name of the leader member. */
  leader?: string;
  /** Lowest etcd version among the members. */
  currentVersion?: string;
  /** Cluster ID in hexadecimal; set once the cluster has been bootstrapped. */
  clusterID?: string;
  /** Label selector of the member pods (for the scale subresource). */
  selector?: string;
  /** URL clients use to reach the cluster, e.g. "http://demo-client.ns.svc:2379". */
  clientEndpoint?: string;
  /** What the restore from spec.bootstrap.restore (or the last recovery from a backup) did. */
  restore?: EtcdClusterRestoreStatus;
  /** Whether etcd authentication is on, as etcd last answered (absent until known). */
  auth?: "Enabled" | "Disabled";
  /** Since when no quorum answers (RFC 3339); unset while one does. Read by spec.recovery.automatic. */
  quorumLostSince?: string;
}

/** An EtcdCluster object. */
export interface EtcdCluster extends KubeObject {
  spec: EtcdClusterSpec;
  status?: EtcdClusterStatus;
}

/** The EtcdCluster kind descriptor for clients, informers and controllers. */
export const EtcdClusterKind = defineKind<EtcdCluster>({
  group: GROUP,
  version: VERSION,
  kind: "EtcdCluster",
  plural: "etcdclusters",
  namespaced: true,
});

const claimRetention = claimRetentionSchema("the members' claims data-<member>");
const storageSchema: JSONSchemaProps = {
  type: "object",
  description:
    "Member data: a PersistentVolumeClaim of `size` per member, or `ephemeral: true` for an emptyDir.",
  default: { size: DEFAULT_STORAGE_SIZE },
  properties: {
    size: {
      type: "string",
      description: "Size of each member's PersistentVolumeClaim, e.g. 8Gi.",
      pattern: STORAGE_SIZE_PATTERN,
      maxLength: 32,
    },
    storageClassName: {
      type: "string",
      description: "StorageClass of the members' claims (default: the cluster's default class). Immutable.",
      maxLength: 253,
    },
    ephemeral: {
      type: "boolean",
      description: "Keep data in an emptyDir; a member whose pod is lost is replaced by a new member.",
    },
    whenDeleted: {
      ...claimRetention,
      description: `${claimRetention.description} A kept claim is never taken over by another EtcdCluster, even one of the same name (a new cluster starts with new members): it stays for you to recover its data from or delete by hand. No effect with ephemeral storage.`,
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "has(self.size) != (has(self.ephemeral) && self.ephemeral)",
      message: "storage: set exactly one of size (a PersistentVolumeClaim per member) or ephemeral: true",
    },
    {
      rule: `!has(self.size) || quantity(self.size).compareTo(quantity('${MIN_STORAGE_SIZE}')) >= 0`,
      message: `storage.size must be at least ${MIN_STORAGE_SIZE}: etcd needs room for its database (the quota is derived from the size), a copy of it and its WAL`,
      fieldPath: ".size",
    },
    {
      rule: "!(has(self.ephemeral) && self.ephemeral) || !has(self.storageClassName)",
      message: "storage.storageClassName applies only to persistent storage (storage.size), not ephemeral",
      fieldPath: ".storageClassName",
    },
    {
      rule: "has(self.size) == has(oldSelf.size) && (!has(self.size) || self.size == oldSelf.size)",
      message:
        "storage.size is immutable: existing claims are not resized and etcd's quota (--quota-backend-bytes) is derived from it",
      fieldPath: ".size",
    },
    {
      rule: "has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",
      message: "storage.storageClassName is immutable: create a new EtcdCluster to move to another class",
      fieldPath: ".storageClassName",
    },
    {
      rule: "(has(self.ephemeral) && self.ephemeral) == (has(oldSelf.ephemeral) && oldSelf.ephemeral)",
      message:
        "storage.ephemeral is immutable: create a new EtcdCluster to switch between persistent and ephemeral storage",
      fieldPath: ".ephemeral",
    },
  ],
};

const podTemplateSchema: JSONSchemaProps = {
  type: "object",
  description: "Settings applied to every member pod.",
  properties: {
    ...podPlacementProperties("member pods"),
    resources: resourcesSchema("Compute resources of the etcd container."),
    priorityClassName: { type: "string", description: "PriorityClass of the member pods.", maxLength: 253 },
    antiAffinity: {
      type: "string",
      enum: ["Preferred", "Required"],
      default: "Preferred",
      description:
        "One member per node: Preferred (co-located only when no other node fits) or Required (a member stays Pending rather than share a node). Ignored when affinity is set.",
    },
    topologySpreadConstraints: {
      type: "array",
      description:
        "core/v1 TopologySpreadConstraints of the member pods; default: spread across nodes and zones with maxSkew 1, ScheduleAnyway.",
      maxItems: 8,
      items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
  },
};

const ownedFlagList = OPERATOR_OWNED_FLAGS.map((f) => `'${f}'`).join(", ");
const ownedEnvList = OPERATOR_OWNED_FLAGS.map((f) => `'${flagEnvName(f)}'`).join(", ");

const extraArgsSchema: JSONSchemaProps = {
  type: "object",
  description:
    'Extra etcd flags, name without the leading -- to value (e.g. snapshot-count: "10000"). The flags the operator sets are refused.',
  additionalProperties: { type: "string", maxLength: 4096 },
  maxProperties: 64,
  "x-kubernetes-validations": [
    {
      rule: "self.all(k, k.matches('^[a-z][a-z0-9-]*$'))",
      message: "extraArgs: flag names are lowercase words joined by '-', without the leading --",
    },
    {
      rule: `self.all(k, !(k in [${ownedFlagList}]))`,
      message: `extraArgs: these flags are set by the operator and cannot be overridden: ${OPERATOR_OWNED_FLAGS.join(", ")} (compaction: use spec.maintenance)`,
    },
  ],
};

const extraEnvSchema: JSONSchemaProps = {
  type: "array",
  description: "Extra environment variables of the etcd container (name and value).",
  maxItems: 64,
  items: {
    type: "object",
    required: ["name", "value"],
    properties: {
      name: { type: "string", minLength: 1, maxLength: 256 },
      value: { type: "string", maxLength: 4096 },
    },
  },
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["name"],
  "x-kubernetes-validations": [
    {
      rule: `self.all(e, !(e.name in [${ownedEnvList}]))`,
      message:
        "extraEnv: ETCD_* variables of the flags the operator sets (see extraArgs) cannot be overridden",
    },
  ],
};

const specSchema: JSONSchemaProps = {
  type: "object",
  description: "The desired etcd cluster.",
  properties: {
    replicas: {
      type: "integer",
      format: "int32",
      description: "Number of voting members (odd numbers tolerate the same failures with fewer members).",
      default: 3,
      minimum: 1,
      maximum: 9,
    },
    version: {
      type: "string",
      description: "etcd release to run, MAJOR.MINOR.PATCH without a leading v (3.5.x or 3.6.x).",
      default: DEFAULT_ETCD_VERSION,
      maxLength: 32,
      "x-kubernetes-validations": [
        {
          rule: "self.matches('^3[.](5|6)[.][0-9]+$')",
          message: `version must be an etcd 3.5 or 3.6 release written MAJOR.MINOR.PATCH without a leading v, e.g. ${DEFAULT_ETCD_VERSION}`,
        },
      ],
    },
    repository: {
      type: "string",
      description: "Image repository; the image is <repository>:v<version>.",
      default: DEFAULT_REPOSITORY,
      minLength: 1,
      maxLength: 512,
    },
    storage: storageSchema,
    podTemplate: podTemplateSchema,
    paused: { type: "boolean", description: "Stop all membership changes and pod updates until unset." },
    recovery: recoverySchema,
    maintenance: maintenanceSchema,
    extraArgs: extraArgsSchema,
    extraEnv: extraEnvSchema,
    bootstrap: bootstrapSchema,
    tls: tlsSchema,
    network: networkSchema,
    auth: authSchema,
  },
  "x-kubernetes-validations": [
    ...RESTORE_BOOTSTRAP_RULES,
    {
      rule: "has(self.tls) == has(oldSelf.tls) && (!has(self.tls) || (has(self.tls.peer) == has(oldSelf.tls.peer) && has(self.tls.client) == has(oldSelf.tls.client)))",
      message:
        "tls: peer and client TLS are set when the cluster is created and cannot be turned on or off later (not supported yet)",
    },
  ],
};

const memberSchema: JSONSchemaProps = {
  type: "object",
  required: ["name", "id"],
  properties: {
    name: {
      type: "string",
      description: "Member name, also the name of its pod and (with -data) its claim.",
    },
    id: { type: "string", description: "Member ID in hexadecimal." },
    peerURL: { type: "string", description: "URL other members reach it at." },
    clientURLs: {
      type: "array",
      items: { type: "string" },
      description: "URLs it serves clients at (empty until it has started).",
    },
    version: { type: "string", description: "etcd version the member runs." },
    healthy: { type: "boolean", description: "It answers /readyz (a learner: its status)." },
    learner: { type: "boolean", description: "A non-voting member catching up before promotion." },
    leader: { type: "boolean", description: "The member is the raft leader." },
    raftIndex: {
      type: "integer",
      format: "int64",
      description: "A learner's raft index when last seen to advance.",
    },
    progressTime: {
      type: "string",
      format: "date-time",
      description: "When a learner's raft index was last seen to advance.",
    },
  },
};

const statusSchema: JSONSchemaProps = {
  type: "object",
  description: "The observed etcd cluster.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from.",
    },
    phase: { type: "string", enum: [...PHASES], description: "What the operator is doing with the cluster." },
    conditions: conditionsSchema(
      "Available (a quorum is healthy), Progressing (a step is under way), Degraded (refused spec or quorum lost).",
    ),
    replicas: { type: "integer", format: "int32", description: "Number of members, voters and learners." },
    readyReplicas: { type: "integer", format: "int32", description: "Number of member pods that are ready." },
    members: { type: "array", items: memberSchema, description: "The members as last observed." },
    leader: { type: "string", description: "Name of the leader member." },
    currentVersion: { type: "string", description: "Lowest etcd version among the members." },
    clusterID: { type: "string", description: "Cluster ID in hexadecimal." },
    selector: { type: "string", description: "Label selector of the member pods." },
    clientEndpoint: { type: "string", description: "URL clients use to reach the cluster." },
    restore: restoreStatusSchema,
    auth: {
      type: "string",
      enum: ["Enabled", "Disabled"],
      description: "Whether etcd authentication is on, as etcd last answered.",
    },
    quorumLostSince: {
      type: "string",
      format: "date-time",
      description:
        "Since when no quorum answers; unset while one does (spec.recovery.automatic counts from it).",
    },
  },
};

/** The openAPIV3Schema of EtcdCluster. */
export const etcdClusterSchema: JSONSchemaProps = {
  type: "object",
  description: "An etcd cluster whose members the operator creates, scales, recovers and upgrades.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      // Members are named <name>-<5 characters> (pod hostnames: 63 at most) and Services <name>-client.
      rule: "self.metadata.name.size() <= 50 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
      message:
        "metadata.name must be at most 50 characters of lowercase letters, digits and '-', starting with a letter (it names the member pods and Services)",
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

/** The EtcdCluster CustomResourceDefinition; `crds/etcdclusters.etcd.capstan.dev.yaml` is generated from it. */
export function etcdClusterCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: EtcdClusterKind,
    singular: "etcdcluster",
    shortNames: ["etcd"],
    schema: etcdClusterSchema,
    scale: true,
    printerColumns: [
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
      { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
      { name: "Version", type: "string", jsonPath: ".status.currentVersion" },
      { name: "Leader", type: "string", jsonPath: ".status.leader" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      {
        name: "Available",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Available")].status',
        priority: 1,
      },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
