// Tests of customResourceDefinition: the exact object (and so key order, which capstan crd's YAML follows) with
// and without the optional parts, and that the CRD never shares the caller's schema or columns.
import { describe, expect, it } from "vitest";
import { customResourceDefinition } from "./crd.ts";
import { defineKind } from "./kinds.ts";

const Widget = defineKind({
  group: "example.capstan.dev",
  version: "v1alpha1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});
const schema = { type: "object", properties: { spec: { type: "object" } } };

describe("customResourceDefinition", () => {
  it("writes the least CRD: status subresource, category capstan, no scale, columns or short names", () => {
    const crd = customResourceDefinition({ kind: Widget, singular: "widget", schema });
    expect(JSON.stringify(crd)).toBe(
      JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "widgets.example.capstan.dev" },
        spec: {
          group: "example.capstan.dev",
          scope: "Namespaced",
          names: {
            kind: "Widget",
            plural: "widgets",
            singular: "widget",
            listKind: "WidgetList",
            categories: ["capstan"],
          },
          versions: [
            {
              name: "v1alpha1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: schema },
              subresources: { status: {} },
            },
          ],
        },
      }),
    );
  });

  it("adds the scale subresource, printer columns, short names, categories and annotations in that order", () => {
    const columns = [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }];
    const crd = customResourceDefinition({
      kind: { ...Widget, namespaced: false },
      singular: "widget",
      shortNames: ["wd"],
      categories: ["all-widgets"],
      schema,
      scale: true,
      printerColumns: columns,
      annotations: { "capstan.dev/install-if-absent": "true" },
    });
    expect(JSON.stringify(crd)).toBe(
      JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: {
          name: "widgets.example.capstan.dev",
          annotations: { "capstan.dev/install-if-absent": "true" },
        },
        spec: {
          group: "example.capstan.dev",
          scope: "Cluster",
          names: {
            kind: "Widget",
            plural: "widgets",
            singular: "widget",
            listKind: "WidgetList",
            shortNames: ["wd"],
            categories: ["all-widgets"],
          },
          versions: [
            {
              name: "v1alpha1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: schema },
              subresources: {
                status: {},
                scale: {
                  specReplicasPath: ".spec.replicas",
                  statusReplicasPath: ".status.replicas",
                  labelSelectorPath: ".status.selector",
                },
              },
              additionalPrinterColumns: columns,
            },
          ],
        },
      }),
    );
  });

  it("copies the schema and the columns, so editing the CRD never edits the module's constants", () => {
    const columns = [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }];
    const crd = customResourceDefinition({
      kind: Widget,
      singular: "widget",
      schema,
      printerColumns: columns,
    });
    const version = crd.spec.versions[0];
    expect(version?.schema?.openAPIV3Schema).not.toBe(schema);
    (version?.schema?.openAPIV3Schema as { type: string }).type = "string";
    version?.additionalPrinterColumns?.pop();
    expect(schema.type).toBe("object");
    expect(columns).toHaveLength(1);
  });
});
