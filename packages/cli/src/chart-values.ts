// The values.schema.json of an operator chart built on the capstan-operator library chart: one definition of the
// values every such chart has (those the library's templates read), plus the operator's own. `capstan crd` writes
// it into the chart and `--check` reports drift, so the three charts' schemas cannot drift apart.

/** A JSON Schema (draft-07) node, as written into values.schema.json. */
export type JsonSchema = { [key: string]: unknown };

/** What an operator adds to its chart's values (the `chartValues` export of its `capstan.crds` module). */
export interface ChartValuesSpec {
  /**
   * The operator's own top-level values, e.g. { reloaderImage: { $ref: IMAGE_VALUE_REF } }. A property (at any depth)
   * that is `{ $ref: IMAGE_VALUE_REF }` names another image the chart runs: it becomes {@link imageValueSchema}.
   */
  properties?: Record<string, JsonSchema>;
}

const DNS_LABEL = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$";
const DNS_SUBDOMAIN = "^([a-z0-9]([-.a-z0-9]*[a-z0-9])?)?$";
const DURATION = "^([0-9]+(ms|s|m|h))+$";
const DIGEST = "^([a-z0-9]+:[a-f0-9]{32,})?$";
const NO_SPACE = "^[^\\s]*$";

/**
 * How an operator's chartValues names a value that is an image the chart runs besides the operator's (a sidecar's,
 * a Job's): `{ $ref: IMAGE_VALUE_REF }`, which operatorValuesSchema replaces with {@link imageValueSchema}. The
 * chart's templates turn it into a reference with the library's `capstan-operator.imageRef`.
 */
export const IMAGE_VALUE_REF = "#/definitions/image";

/**
 * The schema of an image value besides the operator's: registry, repository, tag and digest like `image` (so
 * global.imageRegistry and digests apply to it), or one string taken as it is (the form these values had first,
 * still accepted). Emptiness is the template's to judge: an empty one may mean a default (etcd's backup.image).
 */
export function imageValueSchema(description?: string): JsonSchema {
  return {
    ...(description === undefined ? {} : { description }),
    type: ["object", "string"],
    // The string form: one image reference.
    pattern: NO_SPACE,
    // The map form.
    additionalProperties: false,
    properties: {
      registry: {
        description: "Prefixed to the repository; global.imageRegistry replaces it when set.",
        type: "string",
        pattern: NO_SPACE,
      },
      repository: { type: "string", pattern: NO_SPACE },
      tag: { type: "string", pattern: NO_SPACE },
      digest: { description: "Used instead of the tag when set.", type: "string", pattern: DIGEST },
    },
  };
}

/** `properties` with every `{ $ref: IMAGE_VALUE_REF }` among them (at any depth) replaced by imageValueSchema. */
function withImageValues(properties: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const expand = (node: JsonSchema): JsonSchema => {
    if (node.$ref === IMAGE_VALUE_REF) {
      const { $ref: _, description, ...rest } = node;
      return { ...imageValueSchema(typeof description === "string" ? description : undefined), ...rest };
    }
    const nested = node.properties as Record<string, JsonSchema> | undefined;
    return nested === undefined ? node : { ...node, properties: withImageValues(nested) };
  };
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, expand(v)]));
}

const object = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  ...extra,
  type: "object",
  additionalProperties: false,
  properties,
});
const ref = (name: string, description?: string): JsonSchema => ({
  ...(description === undefined ? {} : { description }),
  $ref: `#/definitions/${name}`,
});
const bool = (description?: string): JsonSchema => ({
  ...(description === undefined ? {} : { description }),
  type: "boolean",
});
const secretName: JsonSchema = { type: "string", maxLength: 253, pattern: DNS_SUBDOMAIN };
/** A list of Kubernetes objects the API server validates (volumes, env, constraints): objects, not checked here. */
const objects = (description: string): JsonSchema => ({
  description,
  type: "array",
  items: { type: "object" },
});
const pullSecrets: JsonSchema = {
  type: "array",
  items: object({ name: { type: "string", minLength: 1 } }, { required: ["name"] }),
};

/**
 * The values.schema.json of the chart `chart` whose operator reconciles `kinds`: every value the library chart's
 * templates read, unknown keys rejected, then `spec.properties`.
 */
export function operatorValuesSchema(
  chart: string,
  kinds: readonly string[],
  spec: ChartValuesSpec = {},
): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    global: {
      description: "Helm's global values, shared with a parent chart.",
      type: "object",
      properties: {
        imageRegistry: { type: "string" },
        imagePullSecrets: pullSecrets,
        priorityClassName: { type: "string", maxLength: 253 },
        commonLabels: ref("stringMap"),
      },
    },
    "capstan-operator": { description: "The library chart's (unused) values.", type: "object" },
    replicas: {
      description: "Number of operator pods; more than 1 needs leaderElection.enabled.",
      type: "integer",
      minimum: 1,
      maximum: 10,
    },
    image: object({
      repository: { type: "string", minLength: 1 },
      tag: { type: "string" },
      registry: {
        description: "Prefixed to the repository; global.imageRegistry replaces it when set.",
        type: "string",
      },
      digest: {
        description: "Used instead of the tag when set.",
        type: "string",
        pattern: DIGEST,
      },
      pullPolicy: { type: "string", enum: ["Always", "IfNotPresent", "Never"] },
    }),
    imagePullSecrets: pullSecrets,
    nameOverride: ref("name"),
    fullnameOverride: ref("name"),
    crds: object({ enabled: bool() }),
    watchNamespace: ref(
      "name",
      `Reconcile ${kinds.join(", ")} objects in this namespace only (Role + RoleBinding there); empty: every namespace.`,
    ),
    leaderElection: object({ enabled: bool() }),
    terminationGracePeriodSeconds: {
      description:
        "Seconds the operator gets to stop: more than its own shutdown (30 s, the manager's whole grace period).",
      type: "integer",
      minimum: 36,
      maximum: 3600,
    },
    logLevel: { type: "string", enum: ["trace", "debug", "info", "warn", "error", "fatal"] },
    maxConcurrentReconciles: { type: "integer", minimum: 1, maximum: 64 },
    serviceAccount: object({
      create: bool(),
      name: secretName,
      annotations: ref("stringMap"),
    }),
    rbac: object({ create: bool() }),
    resources: object({ requests: ref("quantities"), limits: ref("quantities") }),
    podAnnotations: ref("stringMap"),
    podLabels: ref("stringMap"),
    priorityClassName: {
      description:
        "PriorityClass of the operator pods; empty: global.priorityClassName, else the cluster's default.",
      type: "string",
      maxLength: 253,
    },
    podDisruptionBudget: object(
      {
        enabled: bool(),
        minAvailable: { type: ["integer", "string"] },
        maxUnavailable: { type: ["integer", "string"] },
      },
      { description: "An optional PodDisruptionBudget for the operator pods." },
    ),
    nodeSelector: ref("stringMap"),
    tolerations: {
      type: "array",
      items: object({
        key: { type: "string" },
        operator: { type: "string", enum: ["Exists", "Equal"] },
        value: { type: "string" },
        effect: { type: "string", enum: ["", "NoSchedule", "PreferNoSchedule", "NoExecute"] },
        tolerationSeconds: { type: "integer" },
      }),
    },
    affinity: object(
      {
        nodeAffinity: { type: "object" },
        podAffinity: { type: "object" },
        podAntiAffinity: { type: "object" },
      },
      { description: "A core/v1 Affinity; the API server validates the terms." },
    ),
    topologySpreadConstraints: objects("core/v1 TopologySpreadConstraints of the operator pods."),
    podSecurityContext: {
      description: "The operator pods' securityContext (a core/v1 PodSecurityContext).",
      type: "object",
    },
    containerSecurityContext: {
      description: "The operator container's securityContext (a core/v1 SecurityContext).",
      type: "object",
    },
    extraArgs: {
      description: "Extra command-line flags of the operator, e.g. --log-level=debug.",
      type: "array",
      items: { type: "string", pattern: "^--[a-z]" },
    },
    extraEnv: {
      description: "Extra environment variables of the operator container (core/v1 EnvVar).",
      type: "array",
      items: { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 1 } } },
    },
    extraVolumes: objects("Extra volumes of the operator pods (core/v1 Volume)."),
    extraVolumeMounts: objects("Where the operator container mounts extraVolumes (core/v1 VolumeMount)."),
    metrics: object({
      secure: bool(
        "HTTPS with authentication (TokenReview) and authorization (SubjectAccessReview) by the API server; false: plain HTTP.",
      ),
      certSecret: {
        description:
          "A kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt for the metrics server; empty: self-signed.",
        ...secretName,
      },
    }),
    serviceMonitor: object({
      enabled: bool(),
      interval: { type: "string", pattern: DURATION },
      labels: ref("stringMap"),
      bearerTokenSecret: object(
        { name: secretName, key: { type: "string", minLength: 1, pattern: "^[-._a-zA-Z0-9]+$" } },
        {
          description:
            "With metrics.secure: the Secret key holding the scrape's bearer token; empty name: Prometheus' own token file.",
        },
      ),
    }),
    prometheusRule: object({
      enabled: bool(),
      labels: ref("stringMap"),
      for: {
        description: "How long a condition holds before its alert fires.",
        type: "string",
        pattern: DURATION,
      },
      alertLabels: ref("stringMap"),
    }),
    dashboard: object(
      { enabled: bool(), labels: ref("stringMap"), annotations: ref("stringMap") },
      { description: 'The Grafana dashboard ConfigMap (label grafana_dashboard: "1").' },
    ),
  };
  for (const [key, schema] of Object.entries(withImageValues(spec.properties ?? {}))) {
    if (key in properties)
      throw new Error(`chartValues.properties.${key}: every operator chart has "${key}" already`);
    properties[key] = schema;
  }
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: `${chart} chart values`,
    type: "object",
    additionalProperties: false,
    definitions: {
      stringMap: { type: "object", additionalProperties: { type: "string" } },
      name: { type: "string", maxLength: 63, pattern: DNS_LABEL },
      quantities: { type: "object", additionalProperties: { type: ["string", "number"] } },
    },
    properties,
  };
}

/**
 * JSON as Biome formats it (2 spaces; an array of scalars on one line when it fits in 110 columns), so the
 * generated file passes the repository's lint unchanged.
 */
export function formatJson(value: unknown): string {
  const render = (v: unknown, indent: string): string => {
    if (Array.isArray(v)) {
      if (v.every((x) => x === null || typeof x !== "object")) {
        const inline = `[${v.map((x) => JSON.stringify(x)).join(", ")}]`;
        if (indent.length + inline.length <= 100) return inline;
      }
      const inner = `${indent}  `;
      return `[\n${v.map((x) => inner + render(x, inner)).join(",\n")}\n${indent}]`;
    }
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      if (entries.length === 0) return "{}";
      const inner = `${indent}  `;
      return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${render(x, inner)}`).join(",\n")}\n${indent}}`;
    }
    return JSON.stringify(v);
  };
  return `${render(value, "")}\n`;
}
