// Prometheus (monitoring.capstan.dev/v1alpha1): a Prometheus server configured from the ServiceMonitors,
// PodMonitors and PrometheusRules it selects. The CRD schema, the single source of truth, and its TypeScript types.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  conditionsSchema,
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
  type LabelSelector,
  type PodPlacement,
  podPlacementProperties,
  type ResourceQuantities,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  stringMapSchema,
} from "@capstan/core";
import { labelSelectorSchema, PROMETHEUS_DURATION_PATTERN } from "./monitoring-common.ts";

/** The API group of the Prometheus operator's own resources. */
export const GROUP = "monitoring.capstan.dev";
/** The served and stored version. */
export const VERSION = "v1alpha1";
/** The Prometheus release a new server runs unless `spec.version` says otherwise. */
export const DEFAULT_PROMETHEUS_VERSION = "3.16.0";
/** The image repository used unless `spec.repository` says otherwise; the image is `<repository>:v<version>`. */
export const DEFAULT_REPOSITORY = "quay.io/prometheus/prometheus";
/** Global scrape interval unless `spec.scrapeInterval` says otherwise. */
export const DEFAULT_SCRAPE_INTERVAL = "30s";
/** Rule evaluation interval unless `spec.evaluationInterval` says otherwise. */
export const DEFAULT_EVALUATION_INTERVAL = "30s";
/** How long samples are kept unless `spec.retention` says otherwise. */
export const DEFAULT_RETENTION = "15d";
/** Size of each pod's data volume when `spec.storage` is omitted. */
export const DEFAULT_STORAGE_SIZE = "10Gi";
/**
 * External labels the operator sets itself on every server (`prometheus`: namespace/name; `prometheus_replica`:
 * the pod name): refused in spec.externalLabels.
 */
export const OPERATOR_EXTERNAL_LABELS: readonly string[] = ["prometheus", "prometheus_replica"];

/**
 * A duration both Go (CEL's duration(), time.ParseDuration) and Prometheus read the same way: h, m, s, ms in that
 * order, whole numbers, e.g. "30s", "1m30s" (with minLength 1: the pattern alone accepts "").
 */
export const SCRAPE_DURATION_PATTERN = "^([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$";
/** A byte size as Prometheus reads `--storage.tsdb.retention.size`, e.g. "512MB", "10GiB". */
export const BYTE_SIZE_PATTERN = "^(0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$";
/** A `--enable-feature` flag name: lowercase words joined by '-' (the pods get them joined by ','). */
export const FEATURE_FLAG_PATTERN = "^[a-z0-9]+(-[a-z0-9]+)*$";

/** The data volume of each pod. */
export interface PrometheusStorage {
  /** Size of each pod's PersistentVolumeClaim, e.g. "10Gi"; not with ephemeral. */
  size?: string;
  /** StorageClass of the claims; immutable once set. */
  storageClassName?: string;
  /** Keep the data in an emptyDir (lost with the pod) instead of a claim; immutable. */
  ephemeral?: boolean;
}

/** What users may set on the Prometheus pods. */
export type PrometheusPodTemplate = PodPlacement;

/**
 * Cluster-wide reads the operator grants the pods' ServiceAccount (a ClusterRole and ClusterRoleBinding of the
 * server's), for monitors of the kubelets and the control plane, such as kube-prometheus-stack's.
 */
export interface PrometheusClusterMetrics {
  /** The kubelets' /metrics, /metrics/cadvisor, /metrics/probes and /metrics/resource: nodes/metrics, and nodes. */
  kubelet?: boolean;
  /** The API server's /metrics and /metrics/slis (non-resource URLs). */
  apiServer?: boolean;
}

/** The desired Prometheus server; defaulted fields are always present on objects read from the API server. */
export interface PrometheusSpec {
  /** Number of identical Prometheus pods, each scraping every target. */
  replicas: number;
  /** Prometheus release, e.g. "3.16.0". */
  version: string;
  /** Image repository; the image is `<repository>:v<version>`. */
  repository: string;
  /** ServiceMonitors to use; absent: none, `{}`: all (in the namespaces serviceMonitorNamespaceSelector picks). */
  serviceMonitorSelector?: LabelSelector;
  /** Namespaces to take ServiceMonitors from; absent: the server's own namespace, `{}`: all. */
  serviceMonitorNamespaceSelector?: LabelSelector;
  podMonitorSelector?: LabelSelector;
  podMonitorNamespaceSelector?: LabelSelector;
  ruleSelector?: LabelSelector;
  ruleNamespaceSelector?: LabelSelector;
  /** Global scrape interval (default 30s). */
  scrapeInterval: string;
  /** Global scrape timeout (default: Prometheus's, 10s, or scrapeInterval if shorter); at most scrapeInterval. */
  scrapeTimeout?: string;
  /** Rule evaluation interval (default 30s). */
  evaluationInterval: string;
  /** Labels added to every series and alert leaving this server. */
  externalLabels?: Record<string, string>;
  /** How long samples are kept, a Prometheus duration (default 15d). */
  retention: string;
  /**
   * Most bytes kept on disk, e.g. "8GB"; the oldest blocks go first. Unset: 80% of the claim (storage.size), none with
   * ephemeral storage (desired/retention.ts).
   */
  retentionSize?: string;
  storage: PrometheusStorage;
  /** Compute resources of the prometheus container. */
  resources?: ResourceQuantities;
  /** ServiceAccount of the pods (default: one the operator makes, with the discovery permissions it needs). */
  serviceAccountName?: string;
  /** Cluster-wide reads granted to the pods' ServiceAccount for kubelet and API server monitors (default none). */
  clusterMetrics?: PrometheusClusterMetrics;
  podTemplate?: PrometheusPodTemplate;
  /** Stop changing anything of this server until unset. */
  paused?: boolean;
  /** Prometheus `--enable-feature` flags, e.g. ["promql-experimental-functions"]; rules are checked with them. */
  enableFeatures?: string[];
  /** Whether monitors may name files of the Prometheus pods (bearerTokenFile, tlsConfig.caFile...); default: deny. */
  arbitraryFSAccessThroughSMs?: ArbitraryFSAccess;
}

/**
 * Whether a ServiceMonitor or PodMonitor may point a `*File` field (bearerTokenFile, tlsConfig.caFile, certFile,
 * keyFile) at a file of the Prometheus pods; prometheus-operator's field of the same name, denying by default here.
 */
export interface ArbitraryFSAccess {
  /** Refuse monitors naming files of the pods (default true), except the ServiceAccount's well-known files. */
  deny?: boolean;
  /**
   * Namespaces whose monitors may send the pods' ServiceAccount token (bearerTokenFile) besides the server's own;
   * absent: none, `{}`: every namespace. Capstan's field (prometheus-operator has no such exception).
   */
  serviceAccountTokenNamespaceSelector?: LabelSelector;
}

/** The monitors and rules in a server's configuration, each as "namespace/name". */
export interface PrometheusSelected {
  serviceMonitors?: string[];
  podMonitors?: string[];
  rules?: string[];
}

/** The observed state of a Prometheus server. */
export interface PrometheusStatus {
  observedGeneration?: number;
  /** Available, Progressing, Degraded, Reconciled. */
  conditions?: Condition[];
  replicas?: number;
  readyReplicas?: number;
  /** Label selector of the pods (for the scale subresource). */
  selector?: string;
  /** What the configuration holds (monitors and rules that were selected and accepted). */
  selected?: PrometheusSelected;
  /** Hash of the configuration and rule files the pods should run. */
  configHash?: string;
}

/** A Prometheus object. */
export interface Prometheus extends KubeObject {
  spec: PrometheusSpec;
  status?: PrometheusStatus;
}

/** The Prometheus kind descriptor for clients, informers and controllers. */
export const PrometheusKind = defineKind<Prometheus>({
  group: GROUP,
  version: VERSION,
  kind: "Prometheus",
  plural: "prometheuses",
  namespaced: true,
});

const scrapeDuration = (description: string, dflt?: string): JSONSchemaProps => ({
  type: "string",
  description,
  ...(dflt === undefined ? {} : { default: dflt }),
  minLength: 1,
  maxLength: 32,
  pattern: SCRAPE_DURATION_PATTERN,
});

const storageSchema: JSONSchemaProps = {
  type: "object",
  description:
    "The data volume of each pod: a PersistentVolumeClaim of `size` (default), or an emptyDir with `ephemeral: true`.",
  default: { size: DEFAULT_STORAGE_SIZE },
  properties: {
    size: {
      type: "string",
      description: "Size of each pod's PersistentVolumeClaim, e.g. 10Gi.",
      pattern: STORAGE_SIZE_PATTERN,
      maxLength: 32,
    },
    storageClassName: {
      type: "string",
      description: "StorageClass of the claims (default: the cluster's default class). Immutable.",
      maxLength: 253,
    },
    ephemeral: {
      type: "boolean",
      description: "Keep the data in an emptyDir, lost when the pod goes, instead of a claim. Immutable.",
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "has(self.ephemeral) && self.ephemeral ? !has(self.size) && !has(self.storageClassName) : has(self.size)",
      message:
        "storage: set either size (a PersistentVolumeClaim per pod, optionally with storageClassName) or ephemeral: true (an emptyDir), not both",
    },
    {
      rule: "has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",
      message:
        "storage.storageClassName is immutable: existing claims keep their class; create a new Prometheus to move to another class",
      fieldPath: ".storageClassName",
    },
    {
      rule: "(has(self.ephemeral) && self.ephemeral) == (has(oldSelf.ephemeral) && oldSelf.ephemeral)",
      message:
        "storage.ephemeral is immutable: a server keeps its data on claims or in emptyDirs for its whole life; create a new Prometheus to switch",
      fieldPath: ".ephemeral",
    },
  ],
};

const podTemplateSchema: JSONSchemaProps = {
  type: "object",
  description: "Settings applied to every Prometheus pod.",
  properties: podPlacementProperties(),
};

const selectorPair = (what: string): Record<string, unknown> => {
  const key = what === "Rule" ? "rule" : `${what.charAt(0).toLowerCase()}${what.slice(1)}`;
  const plural = what === "Rule" ? "PrometheusRules" : `${what}s`;
  return {
    [`${key}Selector`]: labelSelectorSchema(
      `Labels of the ${plural} to load. Absent: none; {}: every one in the namespaces ${key}NamespaceSelector picks.`,
    ),
    [`${key}NamespaceSelector`]: labelSelectorSchema(
      `Labels of the namespaces to take ${plural} from. Absent: the server's own namespace only; {}: every namespace.`,
    ),
  };
};

const specSchema: JSONSchemaProps = {
  type: "object",
  description: "The desired Prometheus server.",
  "x-kubernetes-validations": [
    {
      rule: "!has(self.scrapeTimeout) || duration(self.scrapeTimeout) <= duration(self.scrapeInterval)",
      message:
        "scrapeTimeout must not be longer than scrapeInterval (Prometheus refuses such a configuration)",
      fieldPath: ".scrapeTimeout",
    },
  ],
  properties: {
    replicas: {
      type: "integer",
      format: "int32",
      description: "Number of identical Prometheus pods; each scrapes every target.",
      default: 1,
      minimum: 0,
      maximum: 10,
    },
    version: {
      type: "string",
      description: "Prometheus release to run, MAJOR.MINOR.PATCH without a leading v (e.g. 3.16.0).",
      default: DEFAULT_PROMETHEUS_VERSION,
      maxLength: 32,
      "x-kubernetes-validations": [
        {
          rule: "self.matches('^([3-9]|[1-9][0-9]+)[.][0-9]+[.][0-9]+$')",
          message: `version must be a Prometheus release from 3.0.0 on, written MAJOR.MINOR.PATCH without a leading v, e.g. ${DEFAULT_PROMETHEUS_VERSION} (the generated configuration is Prometheus 3's)`,
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
    ...selectorPair("ServiceMonitor"),
    ...selectorPair("PodMonitor"),
    ...selectorPair("Rule"),
    scrapeInterval: scrapeDuration(
      "How often targets are scraped unless a monitor endpoint says otherwise: h, m, s, ms (e.g. 30s).",
      DEFAULT_SCRAPE_INTERVAL,
    ),
    scrapeTimeout: scrapeDuration(
      "Scrape timeout unless a monitor endpoint says otherwise (default 10s, or scrapeInterval if shorter).",
    ),
    evaluationInterval: scrapeDuration(
      "How often rule groups are evaluated unless a group says otherwise (e.g. 30s).",
      DEFAULT_EVALUATION_INTERVAL,
    ),
    externalLabels: {
      ...stringMapSchema(
        "Labels added to every series and alert that leaves this server (federation, remote write).",
      ),
      maxProperties: 64,
      "x-kubernetes-validations": [
        {
          rule: OPERATOR_EXTERNAL_LABELS.map((k) => `!('${k}' in self)`).join(" && "),
          message: `externalLabels: ${OPERATOR_EXTERNAL_LABELS.join(" and ")} are set by the operator (namespace/name of the server, and the pod name)`,
        },
      ],
    },
    retention: {
      type: "string",
      description: "How long samples are kept: y, w, d, h, m, s, ms (e.g. 15d).",
      default: DEFAULT_RETENTION,
      minLength: 1,
      maxLength: 32,
      pattern: PROMETHEUS_DURATION_PATTERN,
    },
    retentionSize: {
      type: "string",
      description:
        "Most bytes kept on disk (blocks, WAL and head chunks), e.g. 8GB (B, KB, MB, GB, TB, PB, EB, powers of 2; or KiB...); the oldest blocks go first. Unset: 80% of the claim size, so the disk never fills; none with ephemeral storage.",
      maxLength: 32,
      pattern: BYTE_SIZE_PATTERN,
    },
    storage: storageSchema,
    resources: resourcesSchema("Compute resources of the prometheus container."),
    serviceAccountName: {
      type: "string",
      description:
        "ServiceAccount of the pods (default: one the operator makes for this server, with the discovery permissions the selected monitors need).",
      maxLength: 253,
    },
    clusterMetrics: {
      type: "object",
      description:
        "Cluster-wide reads the operator grants the pods' ServiceAccount (a ClusterRole and ClusterRoleBinding of this server's) for monitors of the kubelets and the API server, such as kube-prometheus-stack's. Default: none.",
      properties: {
        kubelet: {
          type: "boolean",
          description:
            "Scrape the kubelets (/metrics, /metrics/cadvisor, /metrics/probes, /metrics/resource on port 10250): get on nodes/metrics, and get, list and watch on nodes (node discovery, attachMetadata.node). Not nodes/proxy.",
        },
        apiServer: {
          type: "boolean",
          description:
            "Scrape the API server: get on the non-resource URLs /metrics and /metrics/slis (also what other components that authorize /metrics through RBAC ask for).",
        },
      },
    },
    podTemplate: podTemplateSchema,
    paused: {
      type: "boolean",
      description:
        "Stop changing anything of this server (configuration, pods, status of monitors) until unset.",
    },
    enableFeatures: {
      type: "array",
      description:
        "Prometheus feature flags (--enable-feature), e.g. promql-experimental-functions; rules are checked with the ones that change PromQL. A flag the server's release does not know is passed on (Prometheus ignores it) and makes the server Degraded. Changing the list restarts the pods.",
      maxItems: 32,
      "x-kubernetes-list-type": "set",
      items: { type: "string", minLength: 1, maxLength: 64, pattern: FEATURE_FLAG_PATTERN },
      "x-kubernetes-validations": [
        {
          rule: "!('otlp-deltatocumulative' in self && 'otlp-native-delta-ingestion' in self)",
          message:
            "enableFeatures: otlp-deltatocumulative and otlp-native-delta-ingestion cannot be enabled together (Prometheus refuses to start)",
        },
      ],
    },
    arbitraryFSAccessThroughSMs: {
      type: "object",
      description:
        "Whether ServiceMonitors and PodMonitors may name files of the Prometheus pods (bearerTokenFile, tlsConfig.caFile, certFile, keyFile): another team's credentials are mounted there. Denied by default: such a monitor is refused on its own status, except for the ServiceAccount's ca.crt (any monitor) and token (monitors in the server's namespace, and those serviceAccountTokenNamespaceSelector picks). deny: false allows any file (for cluster admins who write every monitor).",
      properties: {
        deny: {
          type: "boolean",
          default: true,
          description: "Refuse monitors naming files of the pods (default true).",
        },
        serviceAccountTokenNamespaceSelector: labelSelectorSchema(
          "Labels of the namespaces whose monitors may also send the pods' ServiceAccount token (bearerTokenFile /var/run/secrets/kubernetes.io/serviceaccount/token), e.g. those of trusted operators' charts. Absent: only the server's own namespace; {}: every namespace.",
        ),
      },
    },
  },
};

const nameList = (description: string): JSONSchemaProps => ({
  type: "array",
  items: { type: "string" },
  description,
});

const statusSchema: JSONSchemaProps = {
  type: "object",
  description: "The observed Prometheus server.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from.",
    },
    conditions: conditionsSchema(
      "Available (a pod serves queries), Progressing (a change is rolling out), Degraded (something needs a human), Reconciled (the configuration holds the current selection).",
    ),
    replicas: { type: "integer", format: "int32", description: "Number of Prometheus pods." },
    readyReplicas: { type: "integer", format: "int32", description: "Number of ready pods." },
    selector: { type: "string", description: "Label selector of the pods." },
    selected: {
      type: "object",
      description:
        "The monitors and rules in the configuration, as namespace/name; those selected but refused are reported in their own status.bindings.",
      properties: {
        serviceMonitors: nameList("ServiceMonitors in the configuration."),
        podMonitors: nameList("PodMonitors in the configuration."),
        rules: nameList("PrometheusRules whose groups are loaded."),
      },
    },
    configHash: {
      type: "string",
      description: "Hash of the configuration and rule files the pods should run.",
    },
  },
};

/** The openAPIV3Schema of Prometheus. */
export const prometheusSchema: JSONSchemaProps = {
  type: "object",
  description:
    "A Prometheus server whose configuration follows the ServiceMonitors, PodMonitors and PrometheusRules it selects, reloaded without restarts.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      // Pods are prometheus-<name>-<ordinal> with a controller-revision-hash label: keep names short.
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

const conditionColumn = (type: string) => ({
  name: type,
  type: "string",
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
});

/** The Prometheus CustomResourceDefinition; `crds/prometheuses.monitoring.capstan.dev.yaml` is generated from it. */
export function prometheusCrd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: PrometheusKind,
    singular: "prometheus",
    shortNames: ["prom"],
    schema: prometheusSchema,
    scale: true,
    printerColumns: [
      { name: "Version", type: "string", jsonPath: ".spec.version" },
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
      { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
      conditionColumn("Reconciled"),
      conditionColumn("Available"),
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
