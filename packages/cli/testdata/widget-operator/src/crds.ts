// A small operator's CRDs for the capstan crd tests: two kinds, one with a scale subresource, printer columns
// and CEL rules.
const widgetSchema = {
  type: "object",
  description: "A Widget: a <thing> that turns.",
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      required: ["size"],
      "x-kubernetes-validations": [
        { rule: "self.size <= 5 || has(self.color)", message: "big widgets need a color" },
      ],
      properties: {
        size: {
          type: "integer",
          format: "int32",
          minimum: 1,
          maximum: 9,
          default: 1,
          description: "How big.",
        },
        color: { type: "string", enum: ["red", "blue"], description: "Its color." },
        labels: { type: "object", additionalProperties: { type: "string", maxLength: 63 } },
        parts: {
          type: "array",
          maxItems: 4,
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string", minLength: 1 } },
          },
        },
      },
    },
    status: {
      type: "object",
      properties: { replicas: { type: "integer" }, selector: { type: "string" } },
    },
  },
};

export const crds = [
  {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.dev" },
    spec: {
      group: "example.dev",
      scope: "Namespaced",
      names: {
        kind: "Widget",
        plural: "widgets",
        singular: "widget",
        shortNames: ["wd"],
        categories: ["capstan"],
      },
      versions: [
        {
          name: "v1alpha1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: widgetSchema },
          subresources: {
            status: {},
            scale: { specReplicasPath: ".spec.size", statusReplicasPath: ".status.replicas" },
          },
          additionalPrinterColumns: [
            { name: "Size", type: "integer", jsonPath: ".spec.size" },
            { name: "Color", type: "string", jsonPath: ".spec.color", priority: 1 },
          ],
        },
      ],
    },
  },
  {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.example.dev" },
    spec: {
      group: "example.dev",
      scope: "Cluster",
      names: { kind: "Gadget", plural: "gadgets" },
      versions: [
        {
          name: "v1alpha1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { widget: { type: "string", description: "The Widget's name." } },
                },
              },
            },
          },
        },
      ],
    },
  },
];
