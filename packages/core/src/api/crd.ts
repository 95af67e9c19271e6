// The CustomResourceDefinition of one custom kind, as every Capstan operator writes it: one served and stored
// version, a status subresource, a scale subresource where the kind has a replica count, printer columns, short
// names and categories. `capstan crd` renders it to YAML in this object's key order; the schema's keys are put in one
// canonical order first (SCHEMA_KEY_ORDER), so a schema reads the same in YAML however it was built: by hand, or
// with TypeBox, which puts an object's `required` and `properties` before the options it is given.
import type * as Type from "typebox/type";
import type { CustomResourceDefinitionObject, JSONSchemaProps, KindSpec } from "./kinds.ts";

/** One `additionalPrinterColumns` entry: a column of `kubectl get`. */
export type PrinterColumn = NonNullable<
  CustomResourceDefinitionObject["spec"]["versions"][number]["additionalPrinterColumns"]
>[number];

/** What {@link customResourceDefinition} needs to know about a custom kind. */
export interface CustomResourceOptions {
  /** The kind the CRD serves: its group, version, kind, plural and scope (a `defineKind` descriptor will do). */
  kind: KindSpec;
  /** Lower-case singular name, e.g. "etcdcluster". */
  singular: string;
  /** Short names for kubectl, e.g. ["etcd"]; none by default. */
  shortNames?: string[];
  /** Categories `kubectl get <category>` lists it under; default ["capstan"]. */
  categories?: string[];
  /**
   * The OpenAPI v3 schema of the whole object, e.g. a TypeBox `Type.Object(...)` (copied with its keys in canonical
   * order, so the CRD never shares it).
   */
  schema: JSONSchemaProps | Type.TSchema;
  /**
   * A scale subresource (`kubectl scale`, HorizontalPodAutoscaler) over `.spec.replicas`, `.status.replicas` and
   * the label selector string in `.status.selector`; off by default.
   */
  scale?: boolean;
  /** The columns of `kubectl get`, in order; none by default. */
  printerColumns?: PrinterColumn[];
  /** Annotations of the CRD itself (e.g. capstan.dev/install-if-absent). */
  annotations?: Record<string, string>;
}

/**
 * The apiextensions.k8s.io/v1 CustomResourceDefinition of a custom kind, named `<plural>.<group>`: one version,
 * served and stored, with the status subresource, and the scale subresource, printer columns, short names and
 * annotations `options` asks for.
 *
 * @example
 * ```ts
 * export const etcdClusterCrd = () =>
 *   customResourceDefinition({
 *     kind: EtcdClusterKind,
 *     singular: "etcdcluster",
 *     shortNames: ["etcd"],
 *     schema: etcdClusterSchema,
 *     scale: true,
 *     printerColumns: [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }],
 *   });
 * ```
 */
export function customResourceDefinition(options: CustomResourceOptions): CustomResourceDefinitionObject {
  const { kind } = options;
  const version: CustomResourceDefinitionObject["spec"]["versions"][number] = {
    name: kind.version,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: canonicalSchema(options.schema) },
    subresources: {
      status: {},
      ...(options.scale === true
        ? {
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.selector",
            },
          }
        : {}),
    },
    ...(options.printerColumns === undefined
      ? {}
      : { additionalPrinterColumns: structuredClone(options.printerColumns) }),
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${kind.plural}.${kind.group}`,
      ...(options.annotations === undefined ? {} : { annotations: { ...options.annotations } }),
    },
    spec: {
      group: kind.group,
      scope: kind.namespaced ? "Namespaced" : "Cluster",
      names: {
        kind: kind.kind,
        plural: kind.plural,
        singular: options.singular,
        listKind: `${kind.kind}List`,
        ...(options.shortNames === undefined ? {} : { shortNames: [...options.shortNames] }),
        categories: [...(options.categories ?? ["capstan"])],
      },
      versions: [version],
    },
  };
}

/**
 * The order of a schema's keys in a CRD: what the value is (type, description, format, enum, default), its bounds,
 * what is required of it, Kubernetes' extensions (the CEL rules last of them), then what it contains. Keys not
 * listed follow, in the order they were given.
 */
export const SCHEMA_KEY_ORDER: readonly string[] = [
  "type",
  "description",
  "format",
  "enum",
  "default",
  "nullable",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "required",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "properties",
  "additionalProperties",
  "items",
];

const KEY_RANK = new Map(SCHEMA_KEY_ORDER.map((key, i) => [key, i]));

/**
 * A deep copy of `schema` with every (sub)schema's keys in {@link SCHEMA_KEY_ORDER} and each `required` list in the
 * order of `properties`: the same schema to the API server, one layout in YAML. Values that are data (`default`,
 * `enum`, CEL rules) are copied as they are; only JSON's own keys are kept (TypeBox's hidden markers are not).
 */
export function canonicalSchema(given: JSONSchemaProps | Type.TSchema): JSONSchemaProps {
  const schema = given as JSONSchemaProps;
  const keys = Object.keys(schema).sort(
    (a, b) => (KEY_RANK.get(a) ?? SCHEMA_KEY_ORDER.length) - (KEY_RANK.get(b) ?? SCHEMA_KEY_ORDER.length),
  );
  const out: JSONSchemaProps = {};
  for (const key of keys) {
    const value = schema[key];
    if (key === "properties" && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, subschema(sub)]));
    } else if ((key === "items" || key === "additionalProperties" || key === "not") && isRecord(value)) {
      out[key] = canonicalSchema(value);
    } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
      out[key] = value.map(subschema);
    } else if (key === "required" && Array.isArray(value) && isRecord(schema.properties)) {
      const order = Object.keys(schema.properties);
      const rank = (name: unknown) => {
        const i = order.indexOf(String(name));
        return i === -1 ? order.length : i;
      };
      out[key] = [...value].sort((a, b) => rank(a) - rank(b));
    } else {
      out[key] = structuredClone(value);
    }
  }
  return out;
}

function subschema(value: unknown): unknown {
  return isRecord(value) ? canonicalSchema(value) : structuredClone(value);
}

function isRecord(value: unknown): value is JSONSchemaProps {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
