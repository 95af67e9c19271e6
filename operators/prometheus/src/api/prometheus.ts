// Prometheus (monitoring.capstan.dev/v1alpha1): a Prometheus server configured from the ServiceMonitors,
// PodMonitors and PrometheusRules it selects. The CRD schema, the single source of truth, and its TypeScript types.
import {
  type CustomResourceDefinitionObject,
  conditionsSchema,
  customResourceDefinition,
  type Defaulted,
  defineKind,
  type KubeObject,
  podPlacementProperties,
  resourcesSchema,
  STORAGE_SIZE_PATTERN,
  stringMapSchema,
} from "@capstan/core";
import * as Type from "typebox/type";
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

const scrapeDuration = (description: string, dflt?: string) =>
  Type.String({
    description,
    ...(dflt === undefined ? {} : { default: dflt }),
    minLength: 1,
    maxLength: 32,
    pattern: SCRAPE_DURATION_PATTERN,
  });

const storageSchema = Type.Object(
  {
    // Not with ephemeral.
    size: Type.Optional(
      Type.String({
        description: "Size of each pod's PersistentVolumeClaim, e.g. 10Gi.",
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
    ephemeral: Type.Optional(
      Type.Boolean({
        description: "Keep the data in an emptyDir, lost when the pod goes, instead of a claim. Immutable.",
      }),
    ),
  },
  {
    description:
      "The data volume of each pod: a PersistentVolumeClaim of `size` (default), or an emptyDir with `ephemeral: true`.",
    default: { size: DEFAULT_STORAGE_SIZE },
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
  },
);

/** The data volume of each pod. */
export type PrometheusStorage = Type.Static<typeof storageSchema>;

// Spread: core types podPlacementProperties() as an interface, which Type.Object's properties parameter refuses.
const podTemplateSchema = Type.Object(
  { ...podPlacementProperties() },
  {
    description: "Settings applied to every Prometheus pod.",
  },
);

/** What users may set on the Prometheus pods. */
export type PrometheusPodTemplate = Type.Static<typeof podTemplateSchema>;

const clusterMetricsSchema = Type.Object(
  {
    kubelet: Type.Optional(
      Type.Boolean({
        description:
          "Scrape the kubelets (/metrics, /metrics/cadvisor, /metrics/probes, /metrics/resource on port 10250): get on nodes/metrics, and get, list and watch on nodes (node discovery, attachMetadata.node). Not nodes/proxy.",
      }),
    ),
    apiServer: Type.Optional(
      Type.Boolean({
        description:
          "Scrape the API server: get on the non-resource URLs /metrics and /metrics/slis (also what other components that authorize /metrics through RBAC ask for).",
      }),
    ),
  },
  {
    description:
      "Cluster-wide reads the operator grants the pods' ServiceAccount (a ClusterRole and ClusterRoleBinding of this server's) for monitors of the kubelets and the API server, such as kube-prometheus-stack's. Default: none.",
  },
);

/**
 * Cluster-wide reads the operator grants the pods' ServiceAccount (a ClusterRole and ClusterRoleBinding of the
 * server's), for monitors of the kubelets and the control plane, such as kube-prometheus-stack's.
 */
export type PrometheusClusterMetrics = Type.Static<typeof clusterMetricsSchema>;

const arbitraryFSAccessSchema = Type.Object(
  {
    // Except the ServiceAccount's well-known files.
    deny: Type.Optional(
      Type.Boolean({
        default: true,
        description: "Refuse monitors naming files of the pods (default true).",
      }),
    ),
    // Capstan's field (prometheus-operator has no such exception).
    serviceAccountTokenNamespaceSelector: Type.Optional(
      labelSelectorSchema(
        "Labels of the namespaces whose monitors may also send the pods' ServiceAccount token (bearerTokenFile /var/run/secrets/kubernetes.io/serviceaccount/token), e.g. those of trusted operators' charts. Absent: only the server's own namespace; {}: every namespace.",
      ),
    ),
  },
  {
    description:
      "Whether ServiceMonitors and PodMonitors may name files of the Prometheus pods (bearerTokenFile, tlsConfig.caFile, certFile, keyFile): another team's credentials are mounted there. Denied by default: such a monitor is refused on its own status, except for the ServiceAccount's ca.crt (any monitor) and token (monitors in the server's namespace, and those serviceAccountTokenNamespaceSelector picks). deny: false allows any file (for cluster admins who write every monitor).",
  },
);

/**
 * Whether a ServiceMonitor or PodMonitor may point a `*File` field (bearerTokenFile, tlsConfig.caFile, certFile,
 * keyFile) at a file of the Prometheus pods; prometheus-operator's field of the same name, denying by default here.
 */
export type ArbitraryFSAccess = Type.Static<typeof arbitraryFSAccessSchema>;

/** `<key>Selector`: which objects of a kind (plural) the server loads. */
const selects = (key: string, plural: string) =>
  Type.Optional(
    labelSelectorSchema(
      `Labels of the ${plural} to load. Absent: none; {}: every one in the namespaces ${key}NamespaceSelector picks.`,
    ),
  );
/** `<key>NamespaceSelector`: the namespaces to take them from. */
const selectsNamespaces = (plural: string) =>
  Type.Optional(
    labelSelectorSchema(
      `Labels of the namespaces to take ${plural} from. Absent: the server's own namespace only; {}: every namespace.`,
    ),
  );

/** `spec` of Prometheus. */
export const prometheusSpecSchema = Type.Object(
  {
    replicas: Type.Optional(
      Type.Integer({
        format: "int32",
        description: "Number of identical Prometheus pods; each scrapes every target.",
        default: 1,
        minimum: 0,
        maximum: 10,
      }),
    ),
    version: Type.Optional(
      Type.String({
        description: "Prometheus release to run, MAJOR.MINOR.PATCH without a leading v (e.g. 3.16.0).",
        default: DEFAULT_PROMETHEUS_VERSION,
        maxLength: 32,
        "x-kubernetes-validations": [
          {
            rule: "self.matches('^([3-9]|[1-9][0-9]+)[.][0-9]+[.][0-9]+$')",
            message: `version must be a Prometheus release from 3.0.0 on, written MAJOR.MINOR.PATCH without a leading v, e.g. ${DEFAULT_PROMETHEUS_VERSION} (the generated configuration is Prometheus 3's)`,
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
    serviceMonitorSelector: selects("serviceMonitor", "ServiceMonitors"),
    serviceMonitorNamespaceSelector: selectsNamespaces("ServiceMonitors"),
    podMonitorSelector: selects("podMonitor", "PodMonitors"),
    podMonitorNamespaceSelector: selectsNamespaces("PodMonitors"),
    ruleSelector: selects("rule", "PrometheusRules"),
    ruleNamespaceSelector: selectsNamespaces("PrometheusRules"),
    scrapeInterval: Type.Optional(
      scrapeDuration(
        "How often targets are scraped unless a monitor endpoint says otherwise: h, m, s, ms (e.g. 30s).",
        DEFAULT_SCRAPE_INTERVAL,
      ),
    ),
    // At most scrapeInterval (the CEL rule above).
    scrapeTimeout: Type.Optional(
      scrapeDuration(
        "Scrape timeout unless a monitor endpoint says otherwise (default 10s, or scrapeInterval if shorter).",
      ),
    ),
    evaluationInterval: Type.Optional(
      scrapeDuration(
        "How often rule groups are evaluated unless a group says otherwise (e.g. 30s).",
        DEFAULT_EVALUATION_INTERVAL,
      ),
    ),
    externalLabels: Type.Optional(
      Type.Unsafe<Record<string, string>>({
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
      }),
    ),
    retention: Type.Optional(
      Type.String({
        description: "How long samples are kept: y, w, d, h, m, s, ms (e.g. 15d).",
        default: DEFAULT_RETENTION,
        minLength: 1,
        maxLength: 32,
        pattern: PROMETHEUS_DURATION_PATTERN,
      }),
    ),
    // How the default is computed: desired/retention.ts.
    retentionSize: Type.Optional(
      Type.String({
        description:
          "Most bytes kept on disk (blocks, WAL and head chunks), e.g. 8GB (B, KB, MB, GB, TB, PB, EB, powers of 2; or KiB...); the oldest blocks go first. Unset: 80% of the claim size, so the disk never fills; none with ephemeral storage.",
        maxLength: 32,
        pattern: BYTE_SIZE_PATTERN,
      }),
    ),
    storage: Type.Optional(storageSchema),
    resources: Type.Optional(resourcesSchema("Compute resources of the prometheus container.")),
    serviceAccountName: Type.Optional(
      Type.String({
        description:
          "ServiceAccount of the pods (default: one the operator makes for this server, with the discovery permissions the selected monitors need).",
        maxLength: 253,
      }),
    ),
    clusterMetrics: Type.Optional(clusterMetricsSchema),
    podTemplate: Type.Optional(podTemplateSchema),
    paused: Type.Optional(
      Type.Boolean({
        description:
          "Stop changing anything of this server (configuration, pods, status of monitors) until unset.",
      }),
    ),
    enableFeatures: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: FEATURE_FLAG_PATTERN }), {
        description:
          "Prometheus feature flags (--enable-feature), e.g. promql-experimental-functions; rules are checked with the ones that change PromQL. A flag the server's release does not know is passed on (Prometheus ignores it) and makes the server Degraded. Changing the list restarts the pods.",
        maxItems: 32,
        "x-kubernetes-list-type": "set",
        "x-kubernetes-validations": [
          {
            rule: "!('otlp-deltatocumulative' in self && 'otlp-native-delta-ingestion' in self)",
            message:
              "enableFeatures: otlp-deltatocumulative and otlp-native-delta-ingestion cannot be enabled together (Prometheus refuses to start)",
          },
        ],
      }),
    ),
    arbitraryFSAccessThroughSMs: Type.Optional(arbitraryFSAccessSchema),
  },
  {
    description: "The desired Prometheus server.",
    "x-kubernetes-validations": [
      {
        rule: "!has(self.scrapeTimeout) || duration(self.scrapeTimeout) <= duration(self.scrapeInterval)",
        message:
          "scrapeTimeout must not be longer than scrapeInterval (Prometheus refuses such a configuration)",
        fieldPath: ".scrapeTimeout",
      },
    ],
  },
);

/**
 * The spec fields whose schema has a `default`: the API server fills them in, so they are present on every object
 * read from it (prometheus.test.ts checks this list against the schema).
 */
type DefaultedSpecField =
  | "replicas"
  | "version"
  | "repository"
  | "scrapeInterval"
  | "evaluationInterval"
  | "retention"
  | "storage";

type Schemaspec = Type.Static<typeof prometheusSpecSchema>;

/** The desired Prometheus server; defaulted fields are always present on objects read from the API server. */
export type PrometheusSpec = Defaulted<Schemaspec, DefaultedSpecField>;

const nameList = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));

const selectedSchema = Type.Object(
  {
    serviceMonitors: nameList("ServiceMonitors in the configuration."),
    podMonitors: nameList("PodMonitors in the configuration."),
    rules: nameList("PrometheusRules whose groups are loaded."),
  },
  {
    description:
      "The monitors and rules in the configuration, as namespace/name; those selected but refused are reported in their own status.bindings.",
  },
);

/** The monitors and rules in a server's configuration, each as "namespace/name". */
export type PrometheusSelected = Type.Static<typeof selectedSchema>;

const statusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({
        format: "int64",
        description: "The metadata.generation this status was computed from.",
      }),
    ),
    conditions: Type.Optional(
      conditionsSchema(
        "Available (a pod serves queries), Progressing (a change is rolling out), Degraded (something needs a human), Reconciled (the configuration holds the current selection).",
      ),
    ),
    replicas: Type.Optional(Type.Integer({ format: "int32", description: "Number of Prometheus pods." })),
    readyReplicas: Type.Optional(Type.Integer({ format: "int32", description: "Number of ready pods." })),
    // For the scale subresource.
    selector: Type.Optional(Type.String({ description: "Label selector of the pods." })),
    selected: Type.Optional(selectedSchema),
    configHash: Type.Optional(
      Type.String({ description: "Hash of the configuration and rule files the pods should run." }),
    ),
  },
  { description: "The observed Prometheus server." },
);

/** The observed state of a Prometheus server. */
export type PrometheusStatus = Type.Static<typeof statusSchema>;

/** The openAPIV3Schema of Prometheus. */
export const prometheusSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: "object" })),
    spec: prometheusSpecSchema,
    status: Type.Optional(statusSchema),
  },
  {
    description:
      "A Prometheus server whose configuration follows the ServiceMonitors, PodMonitors and PrometheusRules it selects, reloaded without restarts.",
    "x-kubernetes-validations": [
      {
        // Pods are prometheus-<name>-<ordinal> with a controller-revision-hash label: keep names short.
        rule: "self.metadata.name.size() <= 45 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        message:
          "metadata.name must be at most 45 characters of lowercase letters, digits and '-', starting with a letter (it names the pods and Services)",
      },
    ],
  },
);

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
