// The chart values reference: which values.yaml keys become rows and with what text, the golden table and schema
// descriptions of testdata/chart-docs (CAPSTAN_UPDATE_GOLDEN=1 rewrites them), and `capstan crd` writing a chart's
// README table and failing --check on a stale one.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeSchema, documentedValues, renderValuesTable } from "./chart-docs.ts";
import { formatJson, type JsonSchema } from "./chart-values.ts";
import { runCliCaptured } from "./cli-captured.ts";

const testdata = fileURLToPath(new URL("../testdata/chart-docs/", import.meta.url));
const widget = fileURLToPath(new URL("../testdata/widget-operator/", import.meta.url));
const fixtureValues = readFileSync(join(testdata, "values.yaml"), "utf8");
const fixtureSchema = JSON.parse(readFileSync(join(testdata, "schema.json"), "utf8")) as JsonSchema;

const schema: JsonSchema = {
  type: "object",
  definitions: { stringMap: { type: "object", additionalProperties: { type: "string" } } },
  properties: {
    a: { type: "integer" },
    b: { type: ["integer", "string"] },
    labels: { $ref: "#/definitions/stringMap" },
    obj: {
      type: "object",
      properties: {
        x: { type: "string" },
        y: { type: "boolean" },
        z: { type: "array", items: { type: "object" } },
      },
    },
    free: { type: "object" },
  },
};

describe("documentedValues", () => {
  it.each<[string, string, { path: string; type: string; default: unknown; description: string }[]]>([
    ["a comment documents the key below it", "# The a.\na: 1\n", [row("a", "integer", 1, "The a.")]],
    [
      "comment lines are joined; a header paragraph is dropped",
      "# File header.\n\n# First line\n# second line.\nb: x\n",
      [row("b", "integer or string", "x", "First line second line.")],
    ],
    [
      "the first key of a map keeps the comment yaml puts on the map",
      "obj:\n  # The x.\n  x: hi\n  # The y.\n  y: true\n",
      [row("obj.x", "string", "hi", "The x."), row("obj.y", "boolean", true, "The y.")],
    ],
    [
      "a map whose keys have no comment is one row with the whole default",
      "# Anything.\nfree:\n  k: v\n  n:\n    deep: 1\n",
      [row("free", "object", { k: "v", n: { deep: 1 } }, "Anything.")],
    ],
    [
      "types come through $ref and items",
      "# Labels.\nlabels: {}\nobj:\n  # Zs.\n  z: []\n",
      [row("labels", "map of string", {}, "Labels."), row("obj.z", "array of object", [], "Zs.")],
    ],
  ])("%s", (_name, yaml, rows) => {
    expect(documentedValues(yaml, schema)).toEqual(rows);
  });

  it.each([
    ["a value without a comment", "# The a.\na: 1\nb: 2\n", "b has no comment"],
    [
      "a map key without a comment beside one with",
      "obj:\n  # The x.\n  x: hi\n  y: true\n",
      "obj.y has no comment",
    ],
    ["a key the schema does not have", "# Nope.\nc: 1\n", "c is not in values.schema.json"],
    [
      "a nested key the schema does not have",
      "obj:\n  # Nope.\n  w: 1\n",
      "obj.w is not in values.schema.json",
    ],
  ])("rejects %s, naming it", (_name, yaml, message) => {
    expect(() => documentedValues(yaml, schema, "chart/values.yaml")).toThrow(message);
    expect(() => documentedValues(yaml, schema, "chart/values.yaml")).toThrow("chart/values.yaml:");
  });
});

describe("describeSchema", () => {
  it("puts each documented key's comment in its description and leaves the rest, without changing its input", () => {
    const before = structuredClone(schema);
    const described = describeSchema(schema, "# The a.\na: 1\nobj:\n  # The x.\n  x: hi\n  y: true\n");
    expect(schema).toEqual(before);
    const props = described.properties as Record<string, JsonSchema>;
    expect(props.a).toEqual({ description: "The a.", type: "integer" });
    const obj = props.obj?.properties as Record<string, JsonSchema>;
    expect(obj.x).toEqual({ description: "The x.", type: "string" });
    expect(obj.y).toEqual({ type: "boolean" });
    expect(props.b).toEqual({ type: ["integer", "string"] });
  });
});

describe("the values reference of testdata/chart-docs", () => {
  it.each([
    [
      "values-table.golden.md",
      () => renderValuesTable(documentedValues(fixtureValues, fixtureSchema), "values.yaml"),
    ],
    ["schema.golden.json", () => formatJson(describeSchema(fixtureSchema, fixtureValues))],
  ])("is %s", (file, render) => {
    const text = render();
    if (process.env.CAPSTAN_UPDATE_GOLDEN === "1") writeFileSync(join(testdata, file), text);
    expect(text, `${file} (CAPSTAN_UPDATE_GOLDEN=1 rewrites it)`).toBe(
      readFileSync(join(testdata, file), "utf8"),
    );
  });
});

describe("capstan crd on a chart built on the capstan-operator library", () => {
  let dir = "";
  const readme = () => readFileSync(join(dir, "chart/README.md"), "utf8");
  const capstan = (...args: string[]) => runCliCaptured(args, dir);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "capstan-chart-docs-"));
    cpSync(widget, dir, { recursive: true });
    const chart = readFileSync(join(dir, "chart/Chart.yaml"), "utf8");
    writeFileSync(
      join(dir, "chart/Chart.yaml"),
      `${chart}dependencies:\n  - name: capstan-operator\n    version: 0.1.0\n    repository: file://../capstan-operator\n`,
    );
    writeFileSync(
      join(dir, "chart/values.yaml"),
      "# Number of pods.\nreplicas: 1\n\ncrds:\n  # Install the CRDs.\n  enabled: true\n",
    );
    writeFileSync(
      join(dir, "chart/README.md"),
      "# Widget chart\n\n## Values\n\n<!-- BEGIN GENERATED: values reference -->\n<!-- END GENERATED: values reference -->\n\nAfter.\n",
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the README's table and the schema's descriptions from values.yaml", async () => {
    expect((await capstan("crd")).code).toBe(0);
    expect(readme()).toContain("| `replicas`     | integer | `1`     | Number of pods.   |");
    expect(readme()).toContain("| `crds.enabled` | boolean | `true`  | Install the CRDs. |");
    expect(readme().endsWith("<!-- END GENERATED: values reference -->\n\nAfter.\n")).toBe(true);
    const written = JSON.parse(readFileSync(join(dir, "chart/values.schema.json"), "utf8")) as {
      properties: { replicas: JsonSchema };
    };
    expect(written.properties.replicas.description).toBe("Number of pods.");
    expect(await capstan("crd", "--check")).toMatchObject({ code: 0 });
  });

  it("--check fails on a stale README and on a changed comment, writing nothing", async () => {
    await capstan("crd");
    const current = readme();
    writeFileSync(join(dir, "chart/README.md"), current.replace("Number of pods.", "Number of pods!"));
    let check = await capstan("crd", "--check");
    expect(check.code).toBe(1);
    expect(check.err).toContain("stale: chart/README.md");
    expect(readme()).toContain("Number of pods!");

    await capstan("crd");
    expect(readme()).toBe(current);
    const values = readFileSync(join(dir, "chart/values.yaml"), "utf8");
    writeFileSync(join(dir, "chart/values.yaml"), values.replace("# Number of pods.", "# Operator pods."));
    check = await capstan("crd", "--check");
    expect(check.code).toBe(1);
    expect(check.err).toContain("stale: chart/values.schema.json");
    expect(check.err).toContain("stale: chart/README.md");
  });

  it("fails naming an undocumented value, and a README without the markers", async () => {
    writeFileSync(join(dir, "chart/values.yaml"), "replicas: 1\n");
    let run = await capstan("crd");
    expect(run.code).toBe(2);
    expect(run.err).toContain("replicas has no comment");

    writeFileSync(join(dir, "chart/values.yaml"), "# Number of pods.\nreplicas: 1\n");
    writeFileSync(join(dir, "chart/README.md"), "# Widget chart\n");
    run = await capstan("crd");
    expect(run.code).toBe(2);
    expect(run.err).toContain("chart/README.md");
    expect(run.err).toContain("<!-- BEGIN GENERATED: values reference -->");
  });
});

function row(path: string, type: string, value: unknown, description: string) {
  return { path, type, default: value, description };
}
