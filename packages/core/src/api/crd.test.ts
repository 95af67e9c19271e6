// Tests of customResourceDefinition: the exact object (and so key order, which capstan crd's YAML follows) with
// and without the optional parts, and that the CRD never shares the caller's schema or columns.

import * as Type from "typebox/type";
import { describe, expect, it } from "vitest";
import { canonicalSchema, customResourceDefinition, SCHEMA_KEY_ORDER } from "./crd.ts";
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

describe("canonicalSchema", () => {
  const rules = [{ rule: "self.a != ''", message: "a must not be empty" }];
  const built = Type.Object(
    {
      b: Type.Optional(Type.Integer({ description: "B.", minimum: 0, format: "int64" })),
      a: Type.String({ maxLength: 3, description: "A." }),
      list: Type.Array(Type.String(), { description: "L.", maxItems: 2 }),
    },
    { description: "Obj.", "x-kubernetes-validations": rules },
  );

  it("writes a TypeBox object's keys as a hand-written schema has them: what it is, its rules, then its fields", () => {
    // TypeBox puts `required` and `properties` before the options (description, rules) it is given.
    expect(Object.keys(built)).toEqual([
      "type",
      "required",
      "properties",
      "description",
      "x-kubernetes-validations",
    ]);
    const out = canonicalSchema(built);
    expect(JSON.stringify(out)).toBe(
      JSON.stringify({
        type: "object",
        description: "Obj.",
        required: ["a", "list"],
        "x-kubernetes-validations": rules,
        properties: {
          b: { type: "integer", description: "B.", format: "int64", minimum: 0 },
          a: { type: "string", description: "A.", maxLength: 3 },
          list: { type: "array", description: "L.", maxItems: 2, items: { type: "string" } },
        },
      }),
    );
  });

  it("is the same schema: every key and value kept, fields in their order, required in the fields' order", () => {
    const hand = {
      properties: { z: { type: "string" }, y: { anyOf: [{ type: "integer" }, { type: "string" }] } },
      required: ["y", "z"],
      type: "object",
      additionalProperties: false,
      "x-custom": 1,
    };
    const out = canonicalSchema(hand);
    expect(out).toEqual({ ...hand, required: ["z", "y"] });
    expect(Object.keys(out)).toEqual(["type", "required", "properties", "additionalProperties", "x-custom"]);
    expect(Object.keys(out.properties as object)).toEqual(["z", "y"]);
    expect(out.properties).not.toBe(hand.properties);
  });

  it("shares nothing with its input, and keeps TypeBox's hidden markers out", () => {
    const out = canonicalSchema(built);
    for (const rule of out["x-kubernetes-validations"] as { rule: string }[]) rule.rule = "changed";
    expect(rules).toEqual([{ rule: "self.a != ''", message: "a must not be empty" }]);
    const b = (out.properties as Record<string, object>).b as object;
    expect(Object.getOwnPropertyNames(b)).toEqual(Object.keys(b));
  });

  it("is what customResourceDefinition stores, and lists every key Kubernetes' structural schemas use once", () => {
    const crd = customResourceDefinition({ kind: Widget, singular: "widget", schema: built });
    expect(JSON.stringify(crd.spec.versions[0]?.schema?.openAPIV3Schema)).toBe(
      JSON.stringify(canonicalSchema(built)),
    );
    expect(new Set(SCHEMA_KEY_ORDER).size).toBe(SCHEMA_KEY_ORDER.length);
  });
});
