// Tests of the CRD reference renderer on small schemas, and of the generated block's markers.
import type { CustomResourceDefinitionObject, JSONSchemaProps } from "@capstan/core";
import { describe, expect, it } from "vitest";
import {
  beginMarker,
  endMarker,
  extractGeneratedBlock,
  renderCrdReference,
  spliceGeneratedBlock,
} from "./crd-reference.ts";

const SOURCE = "src/api/crds.ts in @example/widget-operator";

/** A CRD around `spec`, with only what the renderer reads. */
function crdWith(spec: JSONSchemaProps, extra: Partial<CustomResourceDefinitionObject["spec"]> = {}) {
  const crd: CustomResourceDefinitionObject = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.dev" },
    spec: {
      group: "example.dev",
      scope: "Namespaced",
      names: { kind: "Widget", plural: "widgets" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { apiVersion: { type: "string" }, metadata: { type: "object" }, spec },
            },
          },
        },
      ],
      ...extra,
    },
  };
  return crd;
}

/** The table row whose first cell is `path` in backticks. */
function row(markdown: string, path: string): string[] {
  const line = markdown.split("\n").find((l) => l.startsWith(`| \`${path}\` `));
  expect(line, `a table row for ${path}`).toBeDefined();
  return line!
    .slice(2, -2)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

describe("renderCrdReference on small schemas", () => {
  it("names its source in a first comment line", () => {
    const md = renderCrdReference(crdWith({ type: "object" }), SOURCE);
    expect(md.split("\n")[0]).toBe(
      "<!-- Generated from src/api/crds.ts in @example/widget-operator by capstan crd; do not edit. -->",
    );
  });

  it("shows a field's default and bounds", () => {
    const md = renderCrdReference(
      crdWith({
        type: "object",
        properties: { size: { type: "integer", default: 2, minimum: 1, description: "How many." } },
      }),
      SOURCE,
    );
    expect(row(md, "spec.size")).toEqual(["`spec.size`", "integer", "`2`", "minimum 1", "How many."]);
  });

  it("shows a CEL rule's message with the field it is on and where the error is reported", () => {
    const md = renderCrdReference(
      crdWith({
        type: "object",
        properties: { a: { type: "string" }, b: { type: "string" } },
        "x-kubernetes-validations": [
          { rule: "has(self.a) || has(self.b)", message: "set a or b", fieldPath: ".a" },
          {
            rule: "self.a == oldSelf.a",
            messageExpression: "'a is ' + self.a",
            reason: "FieldValueForbidden",
          },
        ],
      }),
      SOURCE,
    );
    expect(md).toContain("#### Validation rules");
    const [first, second] = md.split("\n").filter((l) => l.startsWith("| `spec` "));
    expect(first).toMatch(
      /^\| `spec` +\| `spec\.a` +\| always +\| `has\(self\.a\) \\\|\\\| has\(self\.b\)` +\| set a or b +\|$/,
    );
    expect(second).toContain("on update");
    expect(second).toContain("`'a is ' + self.a` (reason `FieldValueForbidden`)");
  });

  it("walks nested objects, arrays and maps of objects in schema order", () => {
    const md = renderCrdReference(
      crdWith({
        type: "object",
        required: ["outer"],
        properties: {
          outer: {
            type: "object",
            properties: {
              inner: { type: "object", properties: { leaf: { type: "boolean", description: "A <leaf>." } } },
            },
          },
          list: { type: "array", items: { type: "object", properties: { x: { type: "string" } } } },
          byName: {
            type: "object",
            additionalProperties: { type: "object", properties: { y: { type: "string" } } },
          },
        },
      }),
      SOURCE,
    );
    const headings = md.split("\n").filter((l) => l.startsWith("#### "));
    expect(headings).toEqual([
      "#### `spec`",
      "#### `spec.outer`",
      "#### `spec.outer.inner`",
      "#### `spec.list[]`",
      "#### `spec.byName.*`",
    ]);
    expect(row(md, "spec.outer")[3]).toBe("required");
    expect(row(md, "spec.outer.inner.leaf")[4]).toBe("A \\<leaf>.");
    expect(row(md, "spec.list")[1]).toBe("[]object");
    expect(row(md, "spec.list[].x")[1]).toBe("string");
    expect(row(md, "spec.byName.*.y")[1]).toBe("string");
    expect(md).not.toContain("#### Printer columns");
    expect(md).not.toContain("#### Validation rules");
  });
});

describe("spliceGeneratedBlock / extractGeneratedBlock", () => {
  const BEGIN = beginMarker("Widget");
  const END = endMarker("Widget");
  const doc = `# Title\n\nintro\n\n${BEGIN}\nold\n${END}\n\nafter\n`;

  it("replaces only the text between the markers", () => {
    const next = spliceGeneratedBlock(doc, "Widget", "new\n");
    expect(next).toBe(`# Title\n\nintro\n\n${BEGIN}\nnew\n${END}\n\nafter\n`);
    expect(extractGeneratedBlock(next, "Widget")).toBe("new\n");
    expect(spliceGeneratedBlock(next, "Widget", "new\n")).toBe(next);
  });

  it("names the markers when they are missing", () => {
    expect(() => spliceGeneratedBlock("# no markers\n", "Widget", "x\n")).toThrow(BEGIN);
    expect(() => extractGeneratedBlock(`${BEGIN}\nno end\n`, "Widget")).toThrow(END);
  });

  it("keeps each kind's block apart on one page", () => {
    const two = `${doc}\n${beginMarker("Gadget")}\nold gadget\n${endMarker("Gadget")}\n`;
    const next = spliceGeneratedBlock(two, "Gadget", "new gadget\n");
    expect(extractGeneratedBlock(next, "Widget")).toBe("old\n");
    expect(extractGeneratedBlock(next, "Gadget")).toBe("new gadget\n");
    expect(() => extractGeneratedBlock(doc, "Gadget")).toThrow(beginMarker("Gadget"));
  });
});
