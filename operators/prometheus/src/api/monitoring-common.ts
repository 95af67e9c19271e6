// The parts ServiceMonitor, PodMonitor and PrometheusRule (monitoring.coreos.com/v1) share: label and namespace
// selectors, relabelings, TLS, authorization, Secret references and the per-server status (`status.bindings[]`),
// as TypeScript types and CRD schema fragments. Field names are prometheus-operator's, so a chart's monitor works
// unchanged with either operator.
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  type JSONSchemaProps,
  type LabelSelector,
} from "@capstan/core";

/** The API group of the monitor kinds, shared with prometheus-operator. */
export const MONITORING_GROUP = "monitoring.coreos.com";
/** Their served and stored version. */
export const MONITORING_VERSION = "v1";
/**
 * Annotation on the monitoring.coreos.com CRDs we generate: the chart installs such a CRD only where the cluster
 * has none, and never changes an existing one (prometheus-operator's, or an older copy of ours).
 */
export const INSTALL_IF_ABSENT_ANNOTATION = "capstan.dev/install-if-absent";

/** A Prometheus duration (model.ParseDuration): units y, w, d, h, m, s, ms in that order, e.g. "30s", "1h30m", "15d". */
export const PROMETHEUS_DURATION_PATTERN =
  "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";

/** A reference to one key of a Secret in the monitor's namespace (core/v1 SecretKeySelector). */
export interface SecretKeySelector {
  name: string;
  key: string;
  optional?: boolean;
}

/** A reference to one key of a ConfigMap in the monitor's namespace (core/v1 ConfigMapKeySelector). */
export interface ConfigMapKeySelector {
  name: string;
  key: string;
  optional?: boolean;
}

/** A value read from a Secret or a ConfigMap (one of the two). */
export interface SecretOrConfigMap {
  secret?: SecretKeySelector;
  configMap?: ConfigMapKeySelector;
}

/** Where a monitor looks for its Services or Pods: every namespace, a list, or (neither) its own namespace. */
export interface NamespaceSelector {
  /** Every namespace; wins over matchNames. */
  any?: boolean;
  matchNames?: string[];
}

/** One Prometheus relabel_config, in prometheus-operator's camelCase. */
export interface RelabelConfig {
  sourceLabels?: string[];
  separator?: string;
  targetLabel?: string;
  /** An RE2 regular expression (Prometheus anchors it at both ends). */
  regex?: string;
  modulus?: number;
  replacement?: string;
  action?: string;
}

/** TLS settings of a scrape (files come from the Secrets/ConfigMaps named here). */
export interface SafeTLSConfig {
  ca?: SecretOrConfigMap;
  cert?: SecretOrConfigMap;
  keySecret?: SecretKeySelector;
  serverName?: string;
  insecureSkipVerify?: boolean;
  minVersion?: string;
  maxVersion?: string;
}

/** SafeTLSConfig plus files already in the Prometheus container (ServiceMonitor endpoints only). */
export interface TLSConfig extends SafeTLSConfig {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** The Authorization header of a scrape: `<type> <credentials>`. */
export interface SafeAuthorization {
  /** Default "Bearer"; "Basic" is refused (use basicAuth). */
  type?: string;
  credentials?: SecretKeySelector;
}

/** HTTP basic authentication from a Secret. */
export interface BasicAuth {
  username?: SecretKeySelector;
  password?: SecretKeySelector;
}

/** What ServiceMonitor endpoints and PodMonitor endpoints share. */
export interface ScrapeEndpointCommon {
  /** HTTP path (default /metrics). */
  path?: string;
  /** "http" or "https" (either case). */
  scheme?: string;
  params?: Record<string, string[]>;
  /** Scrape interval, a Prometheus duration (default: the server's scrapeInterval). */
  interval?: string;
  /** Scrape timeout, a Prometheus duration, not longer than the interval. */
  scrapeTimeout?: string;
  honorLabels?: boolean;
  honorTimestamps?: boolean;
  metricRelabelings?: RelabelConfig[];
  relabelings?: RelabelConfig[];
  /** Drop targets whose pod is not running (default true). */
  filterRunning?: boolean;
  tlsConfig?: SafeTLSConfig;
  authorization?: SafeAuthorization;
  basicAuth?: BasicAuth;
  /** Deprecated in prometheus-operator in favour of authorization; still honoured. */
  bearerTokenSecret?: SecretKeySelector;
  followRedirects?: boolean;
  enableHttp2?: boolean;
  /** Mark the series of exposed timestamps stale when they disappear (only with honorTimestamps). */
  trackTimestampsStaleness?: boolean;
}

/** One condition of a binding: type Accepted, as prometheus-operator writes it. */
export interface ConfigResourceCondition {
  type: "Accepted";
  status: "True" | "False" | "Unknown";
  lastTransitionTime: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/** A server that selects the monitor, and whether it accepted it. */
export interface WorkloadBinding {
  /** The server's API group: monitoring.capstan.dev for ours. */
  group: string;
  /** The server's plural, "prometheuses". */
  resource: string;
  name: string;
  namespace: string;
  conditions?: ConfigResourceCondition[];
}

/** `status` of a ServiceMonitor, PodMonitor or PrometheusRule. */
export interface ConfigResourceStatus {
  bindings?: WorkloadBinding[];
}

/**
 * What Prometheus assumes a target speaks when its response has no (or an unknown) Content-Type: Prometheus 3
 * refuses such a scrape unless the monitor names one (`fallback_scrape_protocol`).
 */
export const SCRAPE_PROTOCOLS = [
  "PrometheusProto",
  "OpenMetricsText0.0.1",
  "OpenMetricsText1.0.0",
  "PrometheusText0.0.4",
  "PrometheusText1.0.0",
] as const;
export type ScrapeProtocol = (typeof SCRAPE_PROTOCOLS)[number];

// ---- schema fragments ----

const str = (description: string, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: "string",
  description,
  ...extra,
});
const bool = (description: string): JSONSchemaProps => ({ type: "boolean", description });

/** A metav1.LabelSelector. */
export function labelSelectorSchema(description: string): JSONSchemaProps {
  return {
    type: "object",
    description,
    "x-kubernetes-map-type": "atomic",
    properties: {
      matchLabels: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Labels that must all be present with these values.",
      },
      matchExpressions: {
        type: "array",
        description: "Requirements that must all hold.",
        items: {
          type: "object",
          required: ["key", "operator"],
          properties: {
            key: str("The label key."),
            operator: str("How key and values relate.", {
              enum: ["In", "NotIn", "Exists", "DoesNotExist"],
            }),
            values: {
              type: "array",
              items: { type: "string" },
              description: "Values for In and NotIn; empty for Exists and DoesNotExist.",
            },
          },
        },
      },
    },
  };
}

/** The type of a LabelSelector, re-exported for the monitor types. */
export type { LabelSelector };

function keySelectorSchema(what: string): JSONSchemaProps {
  return {
    type: "object",
    description: `A key of a ${what} in the monitor's namespace.`,
    required: ["key"],
    "x-kubernetes-map-type": "atomic",
    properties: {
      name: str(`Name of the ${what}.`),
      key: str(`The key of the ${what} to read.`),
      optional: bool(`Whether the ${what} or its key may be missing.`),
    },
  };
}

/** A SecretKeySelector. */
export const secretKeySelectorSchema: JSONSchemaProps = keySelectorSchema("Secret");

const secretOrConfigMapSchema = (description: string): JSONSchemaProps => ({
  type: "object",
  description: `${description} (from a Secret or a ConfigMap, not both).`,
  properties: {
    secret: secretKeySelectorSchema,
    configMap: keySelectorSchema("ConfigMap"),
  },
});

/** monitoring.coreos.com NamespaceSelector. */
export const namespaceSelectorSchema: JSONSchemaProps = {
  type: "object",
  description:
    "Where to look: any: true for every namespace, matchNames for a list; neither means the monitor's own namespace.",
  properties: {
    any: bool("Select every namespace (wins over matchNames)."),
    matchNames: { type: "array", items: { type: "string" }, description: "Namespaces to select." },
  },
};

/** The relabel actions prometheus-operator accepts, lower-case and CamelCase. */
export const RELABEL_ACTIONS: readonly string[] = [
  "replace",
  "Replace",
  "keep",
  "Keep",
  "drop",
  "Drop",
  "hashmod",
  "HashMod",
  "labelmap",
  "LabelMap",
  "labeldrop",
  "LabelDrop",
  "labelkeep",
  "LabelKeep",
  "lowercase",
  "Lowercase",
  "uppercase",
  "Uppercase",
  "keepequal",
  "KeepEqual",
  "dropequal",
  "DropEqual",
];

/** One RelabelConfig, as prometheus-operator spells it (actions in either case). */
export const relabelConfigSchema: JSONSchemaProps = {
  type: "object",
  description: "A Prometheus relabel_config.",
  properties: {
    sourceLabels: {
      type: "array",
      items: { type: "string" },
      description: "Labels whose values are joined with separator and matched against regex.",
    },
    separator: str("Separator between the source label values (default ;)."),
    targetLabel: str("The label written by replace, hashmod, lowercase, uppercase, keepequal, dropequal."),
    regex: str("RE2 regular expression matched against the joined value (default (.*))."),
    modulus: { type: "integer", format: "int64", minimum: 0, description: "Modulus for hashmod." },
    replacement: str("Replacement for replace (default $1)."),
    action: str("The relabel action (default replace).", { enum: [...RELABEL_ACTIONS] }),
  },
};

const relabelingsSchema = (description: string): JSONSchemaProps => ({
  type: "array",
  description,
  items: relabelConfigSchema,
});

/** SafeTLSConfig. */
export const tlsConfigSchema: JSONSchemaProps = {
  type: "object",
  description: "TLS settings of the scrape.",
  properties: {
    ca: secretOrConfigMapSchema("The CA certificate that verifies the target"),
    cert: secretOrConfigMapSchema("The client certificate"),
    keySecret: { ...secretKeySelectorSchema, description: "The client key, from a Secret." },
    serverName: str("Server name the target's certificate must carry."),
    insecureSkipVerify: bool("Skip verifying the target's certificate."),
    minVersion: str("Lowest TLS version.", { enum: ["TLS10", "TLS11", "TLS12", "TLS13"] }),
    maxVersion: str("Highest TLS version.", { enum: ["TLS10", "TLS11", "TLS12", "TLS13"] }),
  },
};

/** The endpoint fields ServiceMonitor and PodMonitor share. */
export function scrapeEndpointProperties(): Record<string, JSONSchemaProps> {
  return {
    path: str("HTTP path of the metrics (default /metrics)."),
    scheme: str("HTTP scheme of the scrape (default http).", { enum: ["http", "https", "HTTP", "HTTPS"] }),
    params: {
      type: "object",
      additionalProperties: { type: "array", items: { type: "string" } },
      description: "URL parameters of the scrape.",
    },
    interval: str("Scrape interval, a Prometheus duration (default: the server's scrapeInterval).", {
      pattern: PROMETHEUS_DURATION_PATTERN,
    }),
    scrapeTimeout: str("Scrape timeout, a Prometheus duration not longer than the interval.", {
      pattern: PROMETHEUS_DURATION_PATTERN,
    }),
    honorLabels: bool("Keep the scraped labels when they clash with the target's labels."),
    honorTimestamps: bool("Keep the timestamps the target exposes."),
    metricRelabelings: relabelingsSchema("Relabelings applied to the samples before they are stored."),
    relabelings: relabelingsSchema(
      "Relabelings applied to the target's labels, after those the operator generates.",
    ),
    filterRunning: bool("Drop targets whose pod is not running (default true)."),
    tlsConfig: tlsConfigSchema,
    authorization: {
      type: "object",
      description: "The Authorization header of the scrape.",
      properties: {
        type: str('Authentication type (default "Bearer"); "Basic" is refused: use basicAuth.'),
        credentials: { ...secretKeySelectorSchema, description: "The credentials, from a Secret." },
      },
    },
    basicAuth: {
      type: "object",
      description: "HTTP basic authentication.",
      properties: {
        username: { ...secretKeySelectorSchema, description: "The user name, from a Secret." },
        password: { ...secretKeySelectorSchema, description: "The password, from a Secret." },
      },
    },
    bearerTokenSecret: {
      ...secretKeySelectorSchema,
      description: "A bearer token from a Secret (deprecated: use authorization).",
    },
    followRedirects: bool("Follow HTTP 3xx redirects."),
    enableHttp2: bool("Allow HTTP/2."),
    trackTimestampsStaleness: bool(
      "Mark the series whose samples carry their own timestamp stale when they disappear (no effect unless honorTimestamps).",
    ),
  };
}

const bindingConditionSchema: JSONSchemaProps = {
  type: "object",
  required: ["type", "status", "lastTransitionTime"],
  properties: {
    type: str("Accepted: whether the server took the resource into its configuration.", {
      enum: ["Accepted"],
    }),
    status: str("True, False or Unknown.", { minLength: 1 }),
    lastTransitionTime: { type: "string", format: "date-time" },
    reason: str("Why, in one CamelCase word."),
    message: str("What is wrong and what to do about it."),
    observedGeneration: { type: "integer", format: "int64" },
  },
};

/** `status` of the three monitor kinds: one binding per server that selects the object. */
export const configResourceStatusSchema: JSONSchemaProps = {
  type: "object",
  description: "Feedback from each server that selects this resource.",
  properties: {
    bindings: {
      type: "array",
      description:
        "One entry per Prometheus server that selects this resource, with an Accepted condition saying whether it is in that server's configuration and, if not, why.",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["group", "resource", "name", "namespace"],
      items: {
        type: "object",
        required: ["group", "resource", "name", "namespace"],
        properties: {
          group: str("API group of the server (monitoring.capstan.dev for Capstan's Prometheus)."),
          resource: str("Plural of the server's kind (prometheuses)."),
          name: str("Name of the server.", { minLength: 1 }),
          namespace: str("Namespace of the server.", { minLength: 1 }),
          conditions: {
            type: "array",
            items: bindingConditionSchema,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
          },
        },
      },
    },
  },
};

/**
 * Marks every object node of `schema` that declares properties with `x-kubernetes-preserve-unknown-fields`, so the
 * API server keeps the fields of prometheus-operator's API we do not model, at any depth (pruning stops only at the
 * nodes that carry the flag). Returns a new schema.
 */
export function keepUnknownFields(schema: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = { ...schema };
  if (out.type === "object" && out.properties !== undefined) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
  }
  if (out.properties !== undefined) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, JSONSchemaProps>).map(([k, v]) => [
        k,
        keepUnknownFields(v),
      ]),
    );
  }
  if (out.items !== undefined) out.items = keepUnknownFields(out.items as JSONSchemaProps);
  return out;
}

/** What differs between the three monitor CRDs. */
export interface MonitorCrdSpec {
  kind: string;
  plural: string;
  singular: string;
  shortName: string;
  description: string;
  spec: JSONSchemaProps;
}

/**
 * A monitoring.coreos.com/v1 CRD: status subresource, the prometheus-operator category and short name, every
 * modelled object open to unknown fields, and the install-if-absent annotation.
 */
export function monitorCrd(s: MonitorCrdSpec): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: {
      group: MONITORING_GROUP,
      version: MONITORING_VERSION,
      kind: s.kind,
      plural: s.plural,
      namespaced: true,
    },
    singular: s.singular,
    shortNames: [s.shortName],
    categories: ["prometheus-operator"],
    schema: {
      type: "object",
      description: s.description,
      required: ["spec"],
      properties: {
        apiVersion: { type: "string" },
        kind: { type: "string" },
        metadata: { type: "object" },
        spec: keepUnknownFields(s.spec),
        status: configResourceStatusSchema,
      },
    },
    annotations: { [INSTALL_IF_ABSENT_ANNOTATION]: "true" },
  });
}

/** `spec.fallbackScrapeProtocol` of ServiceMonitor and PodMonitor. */
export const fallbackScrapeProtocolSchema: JSONSchemaProps = {
  type: "string",
  enum: [...SCRAPE_PROTOCOLS],
  description:
    "The protocol to assume when a target answers without a Content-Type (Prometheus 3 refuses such a scrape otherwise), e.g. PrometheusText0.0.4.",
};
