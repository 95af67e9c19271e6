// __Kind__ (__group__/v1alpha1): the CRD schema, the single source of truth, and its TypeScript types. Change both
// together; `npm run gen:crd` writes the CRD YAML, the chart's copy and the docs reference from the schema.
import {
  type Condition,
  type CustomResourceDefinitionObject,
  conditionsSchema,
  customResourceDefinition,
  defineKind,
  type JSONSchemaProps,
  type KubeObject,
  stringMapSchema,
} from "@capstan/core";

/** The API group of the operator's resources. */
export const GROUP = "__group__";
/** The served and stored version. */
export const VERSION = "v1alpha1";

/** What a __Kind__ asks for. */
export interface __Kind__Spec {
  /** The data of the ConfigMap the operator keeps: key -> value. */
  data: Record<string, string>;
  /** Stop reconciling (the ConfigMap is left as it is). */
  paused?: boolean;
}

/** What the operator observed and did. */
export interface __Kind__Status {
  observedGeneration?: number;
  conditions?: Condition[];
  /** The ConfigMap the operator keeps for this __Kind__. */
  configMap?: string;
}

/** A __Kind__ object. */
export interface __Kind__ extends KubeObject {
  spec: __Kind__Spec;
  status?: __Kind__Status;
}

/** The __Kind__ kind descriptor for clients, informers and controllers. */
export const __Kind__Kind = defineKind<__Kind__>({
  group: GROUP,
  version: VERSION,
  kind: "__Kind__",
  plural: "__kinds__",
  namespaced: true,
});

/** The openAPIV3Schema of __Kind__: the API server validates every write against it. */
export const __kind__Schema: JSONSchemaProps = {
  type: "object",
  description: "A __Kind__: the operator keeps the ConfigMap <name>-__kind__ holding spec.data.",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      description: "What the __Kind__ asks for.",
      required: ["data"],
      properties: {
        data: {
          ...stringMapSchema(
            "The ConfigMap's data: keys as ConfigMap keys (letters, digits, '-', '_', '.').",
          ),
          maxProperties: 64,
          "x-kubernetes-validations": [
            {
              rule: "self.all(k, k.matches('^[-._a-zA-Z0-9]+$'))",
              message: "spec.data keys must be valid ConfigMap keys: letters, digits, '-', '_' and '.'",
            },
          ],
        },
        paused: {
          type: "boolean",
          description: "Stop reconciling; the ConfigMap is left as it is.",
          default: false,
        },
      },
    },
    status: {
      type: "object",
      description: "What the operator observed and did.",
      properties: {
        observedGeneration: { type: "integer", format: "int64" },
        conditions: conditionsSchema("Available (the ConfigMap holds spec.data), Progressing and Degraded."),
        configMap: { type: "string", description: "The ConfigMap the operator keeps." },
      },
    },
  },
};

/** The __Kind__ CustomResourceDefinition. */
export function __kind__Crd(): CustomResourceDefinitionObject {
  return customResourceDefinition({
    kind: __Kind__Kind,
    singular: "__kind__",
    schema: __kind__Schema,
    printerColumns: [
      { name: "ConfigMap", type: "string", jsonPath: ".status.configMap" },
      {
        name: "Available",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Available")].status',
      },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
