// __Kind__ (__group__/v1alpha1): the CRD schema, the single source of truth, and the TypeScript types derived from
// it with TypeBox (`Type.Static`): a field added to the schema is in the type, and code that reads a field the
// schema lacks does not compile. `npm run gen:crd` writes the CRD YAML, the chart's copy and the docs reference.
import {
  type CustomResourceDefinitionObject,
  conditionsSchema,
  customResourceDefinition,
  defineKind,
  type KubeObject,
  stringMapSchema,
} from "@capstan/core";
import * as Type from "typebox/type";

/** The API group of the operator's resources. */
export const GROUP = "__group__";
/** The served and stored version. */
export const VERSION = "v1alpha1";

/** The schema of spec: what a __Kind__ asks for. */
export const __kind__SpecSchema = Type.Object(
  {
    data: Type.Unsafe<Record<string, string>>({
      ...stringMapSchema("The ConfigMap's data: keys as ConfigMap keys (letters, digits, '-', '_', '.')."),
      maxProperties: 64,
      "x-kubernetes-validations": [
        {
          rule: "self.all(k, k.matches('^[-._a-zA-Z0-9]+$'))",
          message: "spec.data keys must be valid ConfigMap keys: letters, digits, '-', '_' and '.'",
        },
      ],
    }),
    paused: Type.Optional(
      Type.Boolean({ description: "Stop reconciling; the ConfigMap is left as it is.", default: false }),
    ),
  },
  { description: "What the __Kind__ asks for." },
);

/** What a __Kind__ asks for. */
export type __Kind__Spec = Type.Static<typeof __kind__SpecSchema>;

/** The schema of status: what the operator observed and did. */
export const __kind__StatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ format: "int64" })),
    conditions: Type.Optional(
      conditionsSchema("Available (the ConfigMap holds spec.data), Progressing and Degraded."),
    ),
    configMap: Type.Optional(Type.String({ description: "The ConfigMap the operator keeps." })),
  },
  { description: "What the operator observed and did." },
);

/** What the operator observed and did. */
export type __Kind__Status = Type.Static<typeof __kind__StatusSchema>;

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
export const __kind__Schema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Object({})),
    spec: __kind__SpecSchema,
    status: Type.Optional(__kind__StatusSchema),
  },
  { description: "A __Kind__: the operator keeps the ConfigMap <name>-__kind__ holding spec.data." },
);

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
