// EtcdCluster (etcd.capstan.dev/v1alpha1): the CRD schema, the single source of truth, and its TypeScript types.
import {
  type CustomResourceDefinitionObject,
  claimRetentionSchema,
  conditionsSchema,
  customResourceDefinition,
  type Defaulted,
  defineKind,
  type KubeObject,
  podPlacementProperties,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  type Toleration,
} from "@capstan/core";
import * as Type from "typebox/type";
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

const storageSchema = Type.Object(
  {
    size: Type.Optional(
      Type.String({
        description: "Size of each member's PersistentVolumeClaim, e.g. 8Gi.",
        pattern: STORAGE_SIZE_PATTERN,
        maxLength: 32,
      }),
    ),
    storageClassName: Type.Optional(
      Type.String({
        description: "StorageClass of the members' claims (default: the cluster's default class). Immutable.",
        maxLength: 253,
      }),
    ),
    // A member whose pod is lost is replaced, never restarted.
    ephemeral: Type.Optional(
      Type.Boolean({
        description: "Keep data in an emptyDir; a member whose pod is lost is replaced by a new member.",
      }),
    ),
    whenDeleted: Type.Optional(
      claimRetentionSchema(
        "the members' claims data-<member>",
        "A kept claim is never taken over by another EtcdCluster, even one of the same name (a new cluster starts with new members): it stays for you to recover its data from or delete by hand. No effect with ephemeral storage.",
      ),
    ),
  },
  {
    description:
      "Member data: a PersistentVolumeClaim of `size` per member, or `ephemeral: true` for an emptyDir.",
    default: { size: DEFAULT_STORAGE_SIZE },
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
  },
);

/**
 * Where members keep their data: a PersistentVolumeClaim of `size` (a quantity such as "8Gi"), or an emptyDir when
 * `ephemeral`; `whenDeleted` says what deleting the EtcdCluster does to the claims (default Retain).
 */
export type EtcdStorage = Type.Static<typeof storageSchema>;

/** A toleration, as in a Pod spec. */
export type EtcdToleration = Toleration;

/** Compute resources of the etcd container (quantities). */
export type EtcdResources = ResourceQuantities;

const podTemplateSchema = Type.Object(
  {
    ...podPlacementProperties("member pods"),
    resources: Type.Optional(resourcesSchema("Compute resources of the etcd container.")),
    priorityClassName: Type.Optional(
      Type.String({ description: "PriorityClass of the member pods.", maxLength: 253 }),
    ),
    antiAffinity: Type.Optional(
      Type.Enum(["Preferred", "Required"], {
        type: "string",
        default: "Preferred",
        description:
          "One member per node: Preferred (co-located only when no other node fits) or Required (a member stays Pending rather than share a node). Ignored when affinity is set.",
      }),
    ),
    topologySpreadConstraints: Type.Optional(
      Type.Unsafe<Record<string, unknown>[]>({
        type: "array",
        description:
          "core/v1 TopologySpreadConstraints of the member pods; default: spread across nodes and zones with maxSkew 1, ScheduleAnyway.",
        maxItems: 8,
        items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      }),
    ),
  },
  { description: "Settings applied to every member pod." },
);

/** What users may set on member pods: core's placement fields, resources, priority class, anti-affinity, spread. */
export type EtcdPodTemplate = Type.Static<typeof podTemplateSchema>;

const ownedFlagList = OPERATOR_OWNED_FLAGS.map((f) => `'${f}'`).join(", ");
const ownedEnvList = OPERATOR_OWNED_FLAGS.map((f) => `'${flagEnvName(f)}'`).join(", ");

const extraArgsSchema = Type.Unsafe<Record<string, string>>({
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
});

const envVarSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256 }),
  value: Type.String({ maxLength: 4096 }),
});

/** An environment variable of the etcd container. */
export type EtcdEnvVar = Type.Static<typeof envVarSchema>;

const extraEnvSchema = Type.Array(envVarSchema, {
  description: "Extra environment variables of the etcd container (name and value).",
  maxItems: 64,
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["name"],
  "x-kubernetes-validations": [
    {
      rule: `self.all(e, !(e.name in [${ownedEnvList}]))`,
      message:
        "extraEnv: ETCD_* variables of the flags the operator sets (see extraArgs) cannot be overridden",
    },
  ],
});

const specSchema = Type.Object(
  {
    replicas: Type.Optional(
      Type.Integer({
        format: "int32",
        description: "Number of voting members (odd numbers tolerate the same failures with fewer members).",
        default: 3,
        minimum: 1,
        maximum: 9,
      }),
    ),
    version: Type.Optional(
      Type.String({
        description: "etcd release to run, MAJOR.MINOR.PATCH without a leading v (3.5.x or 3.6.x).",
        default: DEFAULT_ETCD_VERSION,
        maxLength: 32,
        "x-kubernetes-validations": [
          {
            rule: "self.matches('^3[.](5|6)[.][0-9]+$')",
            message: `version must be an etcd 3.5 or 3.6 release written MAJOR.MINOR.PATCH without a leading v, e.g. ${DEFAULT_ETCD_VERSION}`,
          },
        ],
      }),
    ),
    repository: Type.Optional(
      Type.String({
        description: "Image repository; the image is <repository>:v<version>.",
        default: DEFAULT_REPOSITORY,
        minLength: 1,
        maxLength: 512,
      }),
    ),
    storage: Type.Optional(storageSchema),
    podTemplate: Type.Optional(podTemplateSchema),
    paused: Type.Optional(
      Type.Boolean({ description: "Stop all membership changes and pod updates until unset." }),
    ),
    recovery: Type.Optional(recoverySchema),
    maintenance: Type.Optional(maintenanceSchema),
    extraArgs: Type.Optional(extraArgsSchema),
    extraEnv: Type.Optional(extraEnvSchema),
    bootstrap: Type.Optional(bootstrapSchema),
    tls: Type.Optional(tlsSchema),
    network: Type.Optional(networkSchema),
    auth: Type.Optional(authSchema),
  },
  {
    description: "The desired etcd cluster.",
    "x-kubernetes-validations": [
      ...RESTORE_BOOTSTRAP_RULES,
      {
        rule: "has(self.tls) == has(oldSelf.tls) && (!has(self.tls) || (has(self.tls.peer) == has(oldSelf.tls.peer) && has(self.tls.client) == has(oldSelf.tls.client)))",
        message:
          "tls: peer and client TLS are set when the cluster is created and cannot be turned on or off later (not supported yet)",
      },
    ],
  },
);

/** The spec fields the schema defaults: the API server fills them in, so an object read from it always has them. */
type DefaultedSpecField = "replicas" | "version" | "repository" | "storage";
type SchemaSpec = Type.Static<typeof specSchema>;

/**
 * The desired state of an etcd cluster, as read from the API server: the defaulted fields (replicas 1 to 9, version
 * e.g. "3.6.15", repository of the image `<repository>:v<version>`, storage) are always present.
 */
export type EtcdClusterSpec = Defaulted<SchemaSpec, DefaultedSpecField>;

/** All phases, in the order the schema lists them. */
export const PHASES = [
  "Creating",
  "Running",
  "Scaling",
  "Upgrading",
  "Updating",
  "Recovering",
  "Degraded",
  "QuorumLost",
  "Paused",
] as const;

const memberSchema = Type.Object({
  name: Type.String({ description: "Member name, also the name of its pod and (with -data) its claim." }),
  // etcd IDs are 64-bit, beyond JavaScript's safe integers.
  id: Type.String({ description: "Member ID in hexadecimal." }),
  peerURL: Type.Optional(Type.String({ description: "URL other members reach it at." })),
  clientURLs: Type.Optional(
    Type.Array(Type.String(), { description: "URLs it serves clients at (empty until it has started)." }),
  ),
  version: Type.Optional(Type.String({ description: "etcd version the member runs." })),
  healthy: Type.Optional(Type.Boolean({ description: "It answers /readyz (a learner: its status)." })),
  learner: Type.Optional(Type.Boolean({ description: "A non-voting member catching up before promotion." })),
  leader: Type.Optional(Type.Boolean({ description: "The member is the raft leader." })),
  raftIndex: Type.Optional(
    Type.Integer({ format: "int64", description: "A learner's raft index when last seen to advance." }),
  ),
  // Or when it was first seen.
  progressTime: Type.Optional(
    Type.String({
      format: "date-time",
      description: "When a learner's raft index was last seen to advance.",
    }),
  ),
});

type SchemaMember = Type.Static<typeof memberSchema>;
/** The member fields the operator always writes (the schema requires only name and id). */
type WrittenMemberField = "peerURL" | "clientURLs" | "healthy" | "learner" | "leader";

/** One etcd member as the operator last observed it (it always writes peerURL, clientURLs, healthy, learner, leader). */
export type EtcdMemberStatus = Omit<SchemaMember, WrittenMemberField> &
  Required<Pick<SchemaMember, WrittenMemberField>>;

const statusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({
        format: "int64",
        description: "The metadata.generation this status was computed from.",
      }),
    ),
    phase: Type.Optional(
      Type.Enum([...PHASES], { type: "string", description: "What the operator is doing with the cluster." }),
    ),
    conditions: Type.Optional(
      conditionsSchema(
        "Available (a quorum is healthy), Progressing (a step is under way), Degraded (refused spec or quorum lost).",
      ),
    ),
    replicas: Type.Optional(
      Type.Integer({ format: "int32", description: "Number of members, voters and learners." }),
    ),
    readyReplicas: Type.Optional(
      Type.Integer({ format: "int32", description: "Number of member pods that are ready." }),
    ),
    members: Type.Optional(
      Type.Unsafe<EtcdMemberStatus[]>(
        Type.Array(memberSchema, { description: "The members as last observed." }),
      ),
    ),
    leader: Type.Optional(Type.String({ description: "Name of the leader member." })),
    currentVersion: Type.Optional(Type.String({ description: "Lowest etcd version among the members." })),
    // Set once the cluster has been bootstrapped.
    clusterID: Type.Optional(Type.String({ description: "Cluster ID in hexadecimal." })),
    // For the scale subresource.
    selector: Type.Optional(Type.String({ description: "Label selector of the member pods." })),
    // e.g. "http://demo-client.ns.svc:2379".
    clientEndpoint: Type.Optional(Type.String({ description: "URL clients use to reach the cluster." })),
    restore: Type.Optional(restoreStatusSchema),
    // Absent until known.
    auth: Type.Optional(
      Type.Enum(["Enabled", "Disabled"], {
        type: "string",
        description: "Whether etcd authentication is on, as etcd last answered.",
      }),
    ),
    quorumLostSince: Type.Optional(
      Type.String({
        format: "date-time",
        description:
          "Since when no quorum answers; unset while one does (spec.recovery.automatic counts from it).",
      }),
    ),
  },
  { description: "The observed etcd cluster." },
);

/** The observed state of an etcd cluster. */
export type EtcdClusterStatus = Type.Static<typeof statusSchema>;

/** The life-cycle phase shown in `kubectl get etcd`. */
export type EtcdClusterPhase = NonNullable<EtcdClusterStatus["phase"]>;

/** The openAPIV3Schema of EtcdCluster. */
export const etcdClusterSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: "object" })),
    spec: specSchema,
    status: Type.Optional(statusSchema),
  },
  {
    description: "An etcd cluster whose members the operator creates, scales, recovers and upgrades.",
    "x-kubernetes-validations": [
      {
        // Members are named <name>-<5 characters> (pod hostnames: 63 at most) and Services <name>-client.
        rule: "self.metadata.name.size() <= 50 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        message:
          "metadata.name must be at most 50 characters of lowercase letters, digits and '-', starting with a letter (it names the member pods and Services)",
      },
    ],
  },
);

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
