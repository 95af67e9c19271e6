// Tests of the CRD reference renderer, and that docs/operators/etcd.md carries its current output.
import { readFileSync } from "node:fs";
import type { CustomResourceDefinitionObject, JSONSchemaProps } from "@capstan/core";
import { describe, expect, it } from "vitest";
import {
  BEGIN_MARKER,
  END_MARKER,
  extractGeneratedBlock,
  renderCrdReference,
  spliceGeneratedBlock,
} from "./crd-reference.ts";
import { etcdClusterCrd } from "./etcd-cluster.ts";

const page = new URL("../../../../docs/operators/etcd.md", import.meta.url);

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

describe("docs/operators/etcd.md", () => {
  it("carries the EtcdCluster reference rendered from the schema", () => {
    const committed = extractGeneratedBlock(readFileSync(page, "utf8"));
    expect(
      committed,
      "docs/operators/etcd.md's generated reference differs from the schema: run npm run gen:docs in operators/etcd",
    ).toBe(renderCrdReference(etcdClusterCrd()));
  });
});

describe("renderCrdReference on the EtcdCluster CRD", () => {
  const md = renderCrdReference(etcdClusterCrd());

  it("is deterministic and ends with one newline", () => {
    expect(renderCrdReference(etcdClusterCrd())).toBe(md);
    expect(md.endsWith("\n")).toBe(true);
    expect(md.endsWith("\n\n")).toBe(false);
  });

  it("shows defaults and bounds of spec fields", () => {
    expect(row(md, "spec.replicas")).toEqual([
      "`spec.replicas`",
      "integer (int32)",
      "`3`",
      "1 to 9",
      "Number of voting members (odd numbers tolerate the same failures with fewer members).",
    ]);
    expect(row(md, "spec.version")[2]).toBe('`"3.6.15"`');
    expect(row(md, "spec.repository")[3]).toBe("length 1 to 512");
    expect(row(md, "spec.storage")[2]).toBe('`{"size":"8Gi"}`');
  });

  it("renders every object level with nested paths", () => {
    for (const level of [
      "spec",
      "spec.storage",
      "spec.podTemplate",
      "spec.podTemplate.resources",
      "spec.podTemplate.tolerations[]",
      "status",
      "status.conditions[]",
      "status.members[]",
    ]) {
      expect(md).toContain(`\n#### \`${level}\`\n`);
    }
    expect(row(md, "spec.storage.size")[3]).toContain("pattern `^([0-9]+(\\.[0-9]+)?)(Ki\\|Mi");
    expect(row(md, "spec.podTemplate.tolerations[].effect")[3]).toBe(
      "one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`",
    );
    expect(row(md, "status.members[].id")[3]).toBe("required");
    expect(row(md, "spec.podTemplate.nodeSelector")[1]).toBe("map[string]string");
    expect(row(md, "spec.podTemplate.resources.limits")[1]).toBe("map[string]int-or-string");
    expect(md).not.toContain("`metadata`");
  });

  it("lists every CEL rule with its message, including the version and storage rules", () => {
    const version = row(md, "spec.version");
    expect(version[3]).toContain("1 CEL rule");
    expect(md).toContain("version must be an etcd 3.5 or 3.6 release written MAJOR.MINOR.PATCH");
    expect(md).toContain("`self.matches('^3[.](5\\|6)[.][0-9]+$')`");
    expect(md).toContain(
      "storage.storageClassName is immutable: create a new EtcdCluster to move to another class",
    );
    expect(md).toContain("storage.ephemeral is immutable");
    expect(md).toContain("storage: set exactly one of size");
    const immutable = md.split("\n").find((l) => l.includes("storageClassName is immutable"))!;
    expect(immutable).toContain("`spec.storage.storageClassName`");
    expect(immutable).toContain("on update");
  });

  it("documents names, subresources and printer columns", () => {
    expect(md).toContain("short names `etcd`, categories `capstan`");
    expect(md).toContain(
      "`scale` (spec replicas `.spec.replicas`, status replicas `.status.replicas`, label selector `.status.selector`)",
    );
    const available = md.split("\n").find((l) => l.startsWith("| Available "))!;
    expect(available).toContain("`kubectl get -o wide`");
    expect(md.split("\n").find((l) => l.startsWith("| Phase "))).toContain("`kubectl get`");
  });

  it("pads every table's columns to one width, as Biome formats markdown", () => {
    const lines = md.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("| ---")) continue;
      const widths = (l: string) => l.split(/(?<!\\)\|/).map((c) => c.length);
      let end = i + 1;
      while (lines[end]?.startsWith("|")) end++;
      for (const l of lines.slice(i - 1, end)) expect(widths(l), l).toEqual(widths(lines[i]!));
    }
  });
});

describe("renderCrdReference on small schemas", () => {
  it("shows a field's default and bounds", () => {
    const md = renderCrdReference(
      crdWith({
        type: "object",
        properties: { size: { type: "integer", default: 2, minimum: 1, description: "How many." } },
      }),
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
  const doc = `# Title\n\nintro\n\n${BEGIN_MARKER}\nold\n${END_MARKER}\n\nafter\n`;

  it("replaces only the text between the markers", () => {
    const next = spliceGeneratedBlock(doc, "new\n");
    expect(next).toBe(`# Title\n\nintro\n\n${BEGIN_MARKER}\nnew\n${END_MARKER}\n\nafter\n`);
    expect(extractGeneratedBlock(next)).toBe("new\n");
    expect(spliceGeneratedBlock(next, "new\n")).toBe(next);
  });

  it("names the markers when they are missing", () => {
    expect(() => spliceGeneratedBlock("# no markers\n", "x\n")).toThrow(BEGIN_MARKER);
    expect(() => extractGeneratedBlock(`${BEGIN_MARKER}\nno end\n`)).toThrow(END_MARKER);
  });
});
