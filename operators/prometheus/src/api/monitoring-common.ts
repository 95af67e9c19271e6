// The parts ServiceMonitor, PodMonitor and PrometheusRule (monitoring.coreos.com/v1) share: label and namespace
// selectors, relabelings, TLS, authorization, Secret references and the per-server status (`status.bindings[]`),
// as CRD schema fragments (TypeBox) and the TypeScript types derived from them. Field names are prometheus-operator's, so a chart's monitor works
// unchanged with either operator.
import {
  type CustomResourceDefinitionObject,
  customResourceDefinition,
  type JSONSchemaProps,
  stringMapSchema,
} from "@capstan/core";
import * as Type from "typebox/type";

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

// ---- schema fragments, and the types derived from them ----

const str = (description: string, extra: Type.TSchemaOptions = {}) => Type.String({ description, ...extra });
const bool = (description: string) => Type.Boolean({ description });
const strings = (description: string) => Type.Array(Type.String(), { description });

/** A metav1.LabelSelector. */
export function labelSelectorSchema(description: string) {
  return Type.Object(
    {
      matchLabels: Type.Optional(stringMapSchema("Labels that must all be present with these values.")),
      matchExpressions: Type.Optional(
        Type.Array(
          Type.Object({
            key: str("The label key."),
            operator: Type.Enum(["In", "NotIn", "Exists", "DoesNotExist"], {
              type: "string",
              description: "How key and values relate.",
            }),
            values: Type.Optional(strings("Values for In and NotIn; empty for Exists and DoesNotExist.")),
          }),
          { description: "Requirements that must all hold." },
        ),
      ),
    },
    { description, "x-kubernetes-map-type": "atomic" },
  );
}

/** A metav1.LabelSelector (the same shape as @capstan/core's LabelSelector). */
export type LabelSelector = Type.Static<ReturnType<typeof labelSelectorSchema>>;

function keySelectorSchema(what: string, description = `A key of a ${what} in the monitor's namespace.`) {
  return Type.Object(
    {
      name: Type.Optional(str(`Name of the ${what}.`)),
      key: str(`The key of the ${what} to read.`),
      optional: Type.Optional(bool(`Whether the ${what} or its key may be missing.`)),
    },
    { description, "x-kubernetes-map-type": "atomic" },
  );
}

/** A SecretKeySelector; `description` replaces the generic one where the field says what the key holds. */
export function secretKeySelectorSchema(description?: string) {
  return keySelectorSchema("Secret", description);
}

/** A reference to one key of a Secret in the monitor's namespace (core/v1 SecretKeySelector). */
export type SecretKeySelector = Type.Static<ReturnType<typeof secretKeySelectorSchema>>;

const configMapKeySelectorSchema = keySelectorSchema("ConfigMap");

/** A reference to one key of a ConfigMap in the monitor's namespace (core/v1 ConfigMapKeySelector). */
export type ConfigMapKeySelector = Type.Static<typeof configMapKeySelectorSchema>;

const secretOrConfigMapSchema = (description: string) =>
  Type.Object(
    {
      secret: Type.Optional(secretKeySelectorSchema()),
      configMap: Type.Optional(configMapKeySelectorSchema),
    },
    { description: `${description} (from a Secret or a ConfigMap, not both).` },
  );

/** A value read from a Secret or a ConfigMap (one of the two). */
export type SecretOrConfigMap = Type.Static<ReturnType<typeof secretOrConfigMapSchema>>;

/** monitoring.coreos.com NamespaceSelector. */
export const namespaceSelectorSchema = Type.Object(
  {
    any: Type.Optional(bool("Select every namespace (wins over matchNames).")),
    matchNames: Type.Optional(strings("Namespaces to select.")),
  },
  {
    description:
      "Where to look: any: true for every namespace, matchNames for a list; neither means the monitor's own namespace.",
  },
);

/** Where a monitor looks for its Services or Pods: every namespace, a list, or (neither) its own namespace. */
export type NamespaceSelector = Type.Static<typeof namespaceSelectorSchema>;

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
export const relabelConfigSchema = Type.Object(
  {
    sourceLabels: Type.Optional(
      strings("Labels whose values are joined with separator and matched against regex."),
    ),
    separator: Type.Optional(str("Separator between the source label values (default ;).")),
    targetLabel: Type.Optional(
      str("The label written by replace, hashmod, lowercase, uppercase, keepequal, dropequal."),
    ),
    // An RE2 regular expression (Prometheus anchors it at both ends).
    regex: Type.Optional(str("RE2 regular expression matched against the joined value (default (.*)).")),
    modulus: Type.Optional(
      Type.Integer({ format: "int64", minimum: 0, description: "Modulus for hashmod." }),
    ),
    replacement: Type.Optional(str("Replacement for replace (default $1).")),
    action: Type.Optional(
      Type.Enum([...RELABEL_ACTIONS], {
        type: "string",
        description: "The relabel action (default replace).",
      }),
    ),
  },
  { description: "A Prometheus relabel_config." },
);

/** One Prometheus relabel_config, in prometheus-operator's camelCase. */
export type RelabelConfig = Type.Static<typeof relabelConfigSchema>;

const relabelingsSchema = (description: string) => Type.Array(relabelConfigSchema, { description });

const TLS_CONFIG_DESCRIPTION = "TLS settings of the scrape.";
const TLS_VERSIONS = ["TLS10", "TLS11", "TLS12", "TLS13"] as const;

/** SafeTLSConfig. */
export const tlsConfigSchema = Type.Object(
  {
    ca: Type.Optional(secretOrConfigMapSchema("The CA certificate that verifies the target")),
    cert: Type.Optional(secretOrConfigMapSchema("The client certificate")),
    keySecret: Type.Optional(secretKeySelectorSchema("The client key, from a Secret.")),
    serverName: Type.Optional(str("Server name the target's certificate must carry.")),
    insecureSkipVerify: Type.Optional(bool("Skip verifying the target's certificate.")),
    minVersion: Type.Optional(
      Type.Enum([...TLS_VERSIONS], { type: "string", description: "Lowest TLS version." }),
    ),
    maxVersion: Type.Optional(
      Type.Enum([...TLS_VERSIONS], { type: "string", description: "Highest TLS version." }),
    ),
  },
  { description: TLS_CONFIG_DESCRIPTION },
);

/** TLS settings of a scrape (files come from the Secrets/ConfigMaps named here). */
export type SafeTLSConfig = Type.Static<typeof tlsConfigSchema>;

/** ServiceMonitor endpoints' tlsConfig: SafeTLSConfig plus files already in the Prometheus container. */
export const tlsConfigWithFilesSchema = Type.Object(
  {
    ...tlsConfigSchema.properties,
    caFile: Type.Optional(Type.String({ description: "A CA file in the Prometheus container." })),
    certFile: Type.Optional(
      Type.String({ description: "A client certificate file in the Prometheus container." }),
    ),
    keyFile: Type.Optional(Type.String({ description: "A client key file in the Prometheus container." })),
  },
  { description: TLS_CONFIG_DESCRIPTION },
);

/** SafeTLSConfig plus files already in the Prometheus container (ServiceMonitor endpoints only). */
export type TLSConfig = Type.Static<typeof tlsConfigWithFilesSchema>;

const authorizationSchema = Type.Object(
  {
    type: Type.Optional(str('Authentication type (default "Bearer"); "Basic" is refused: use basicAuth.')),
    credentials: Type.Optional(secretKeySelectorSchema("The credentials, from a Secret.")),
  },
  { description: "The Authorization header of the scrape." },
);

/** The Authorization header of a scrape: `<type> <credentials>`. */
export type SafeAuthorization = Type.Static<typeof authorizationSchema>;

const basicAuthSchema = Type.Object(
  {
    username: Type.Optional(secretKeySelectorSchema("The user name, from a Secret.")),
    password: Type.Optional(secretKeySelectorSchema("The password, from a Secret.")),
  },
  { description: "HTTP basic authentication." },
);

/** HTTP basic authentication from a Secret. */
export type BasicAuth = Type.Static<typeof basicAuthSchema>;

/** The endpoint fields ServiceMonitor and PodMonitor share. */
export function scrapeEndpointProperties() {
  return {
    path: Type.Optional(str("HTTP path of the metrics (default /metrics).")),
    // "http" or "https" (either case).
    scheme: Type.Optional(
      Type.Enum(["http", "https", "HTTP", "HTTPS"], {
        type: "string",
        description: "HTTP scheme of the scrape (default http).",
      }),
    ),
    params: Type.Optional(
      Type.Unsafe<Record<string, string[]>>({
        type: "object",
        additionalProperties: { type: "array", items: { type: "string" } },
        description: "URL parameters of the scrape.",
      }),
    ),
    interval: Type.Optional(
      str("Scrape interval, a Prometheus duration (default: the server's scrapeInterval).", {
        pattern: PROMETHEUS_DURATION_PATTERN,
      }),
    ),
    scrapeTimeout: Type.Optional(
      str("Scrape timeout, a Prometheus duration not longer than the interval.", {
        pattern: PROMETHEUS_DURATION_PATTERN,
      }),
    ),
    honorLabels: Type.Optional(bool("Keep the scraped labels when they clash with the target's labels.")),
    honorTimestamps: Type.Optional(bool("Keep the timestamps the target exposes.")),
    metricRelabelings: Type.Optional(
      relabelingsSchema("Relabelings applied to the samples before they are stored."),
    ),
    relabelings: Type.Optional(
      relabelingsSchema("Relabelings applied to the target's labels, after those the operator generates."),
    ),
    filterRunning: Type.Optional(bool("Drop targets whose pod is not running (default true).")),
    tlsConfig: Type.Optional(tlsConfigSchema),
    authorization: Type.Optional(authorizationSchema),
    basicAuth: Type.Optional(basicAuthSchema),
    // Deprecated in prometheus-operator in favour of authorization; still honoured.
    bearerTokenSecret: Type.Optional(
      secretKeySelectorSchema("A bearer token from a Secret (deprecated: use authorization)."),
    ),
    followRedirects: Type.Optional(bool("Follow HTTP 3xx redirects.")),
    enableHttp2: Type.Optional(bool("Allow HTTP/2.")),
    trackTimestampsStaleness: Type.Optional(
      bool(
        "Mark the series whose samples carry their own timestamp stale when they disappear (no effect unless honorTimestamps).",
      ),
    ),
  };
}

const scrapeEndpointCommonSchema = Type.Object(scrapeEndpointProperties());

/** What ServiceMonitor endpoints and PodMonitor endpoints share. */
export type ScrapeEndpointCommon = Type.Static<typeof scrapeEndpointCommonSchema>;

const bindingConditionSchema = Type.Object({
  type: Type.Enum(["Accepted"], {
    type: "string",
    description: "Accepted: whether the server took the resource into its configuration.",
  }),
  status: str("True, False or Unknown.", { minLength: 1 }),
  lastTransitionTime: Type.String({ format: "date-time" }),
  reason: Type.Optional(str("Why, in one CamelCase word.")),
  message: Type.Optional(str("What is wrong and what to do about it.")),
  observedGeneration: Type.Optional(Type.Integer({ format: "int64" })),
});

/** One condition of a binding: type Accepted, as prometheus-operator writes it. */
export type ConfigResourceCondition = Type.Static<typeof bindingConditionSchema>;

const workloadBindingSchema = Type.Object({
  group: str("API group of the server (monitoring.capstan.dev for Capstan's Prometheus)."),
  resource: str("Plural of the server's kind (prometheuses)."),
  name: str("Name of the server.", { minLength: 1 }),
  namespace: str("Namespace of the server.", { minLength: 1 }),
  conditions: Type.Optional(
    Type.Array(bindingConditionSchema, {
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
    }),
  ),
});

/** A server that selects the monitor, and whether it accepted it. */
export type WorkloadBinding = Type.Static<typeof workloadBindingSchema>;

/** `status` of the three monitor kinds: one binding per server that selects the object. */
export const configResourceStatusSchema = Type.Object(
  {
    bindings: Type.Optional(
      Type.Array(workloadBindingSchema, {
        description:
          "One entry per Prometheus server that selects this resource, with an Accepted condition saying whether it is in that server's configuration and, if not, why.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["group", "resource", "name", "namespace"],
      }),
    ),
  },
  { description: "Feedback from each server that selects this resource." },
);

/** `status` of a ServiceMonitor, PodMonitor or PrometheusRule. */
export type ConfigResourceStatus = Type.Static<typeof configResourceStatusSchema>;

/**
 * Marks every object node of `schema` that declares properties with `x-kubernetes-preserve-unknown-fields`, so the
 * API server keeps the fields of prometheus-operator's API we do not model, at any depth (pruning stops only at the
 * nodes that carry the flag). Returns a new schema.
 */
export function keepUnknownFields(schema: JSONSchemaProps | Type.TSchema): JSONSchemaProps {
  const out: JSONSchemaProps = { ...(schema as JSONSchemaProps) };
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
  spec: Type.TSchema;
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
export const fallbackScrapeProtocolSchema = Type.Enum([...SCRAPE_PROTOCOLS], {
  type: "string",
  description:
    "The protocol to assume when a target answers without a Content-Type (Prometheus 3 refuses such a scrape otherwise), e.g. PrometheusText0.0.4.",
});
