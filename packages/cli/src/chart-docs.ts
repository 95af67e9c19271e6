// The values reference of an operator chart: its README's table of values and the descriptions in its
// values.schema.json, both from the comments of the chart's values.yaml, the one place a value is documented
// (the schema stays the one place its type and bounds are). `capstan crd` writes both and `--check` reports drift.
//
// The comment lines right above a key document it. A key whose value is a map with no documented key inside
// (resources, a securityContext) is one row; otherwise each of its keys is. A row needs a comment: an undocumented
// value fails with its path, so a new value cannot ship without one.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isMap, isScalar, type Pair, parseDocument, type YAMLMap } from "yaml";
import { formatJson, type JsonSchema } from "./chart-values.ts";
import { markdownTable, markdownText, spliceGeneratedBlock } from "./crd-reference.ts";
import type { GeneratedFile } from "./generated-file.ts";

/** The README section the table goes in: between `<!-- BEGIN GENERATED: values reference -->` and its END line. */
export const VALUES_BLOCK = "values";

/**
 * What `capstan crd` writes into an operator chart from `schema` (operatorValuesSchema's) and the chart's
 * values.yaml: values.schema.json with the values.yaml descriptions, and README.md with its values table (when the
 * chart has a README, it must hold the markers).
 */
export function chartValuesFiles(chartDir: string, schema: JsonSchema): GeneratedFile[] {
  const valuesFile = join(chartDir, "values.yaml");
  if (!existsSync(valuesFile)) throw new Error(`${valuesFile} is missing: the chart's values, documented`);
  const values = readFileSync(valuesFile, "utf8");
  const described = describeSchema(schema, values, valuesFile);
  const files: GeneratedFile[] = [
    { path: join(chartDir, "values.schema.json"), content: formatJson(described) },
  ];
  const readmeFile = join(chartDir, "README.md");
  if (existsSync(readmeFile)) {
    const table = renderValuesTable(documentedValues(values, described, valuesFile), "values.yaml");
    let readme: string;
    try {
      readme = spliceGeneratedBlock(readFileSync(readmeFile, "utf8"), VALUES_BLOCK, table);
    } catch (err) {
      throw new Error(`${readmeFile}: ${err instanceof Error ? err.message : String(err)}`);
    }
    files.push({ path: readmeFile, content: readme });
  }
  return files;
}

/** One documented value: a row of the README's table. */
export interface ValueDoc {
  /** Dotted path, e.g. image.repository. */
  path: string;
  /** The type the schema gives it, e.g. string, integer or string, map of string. */
  type: string;
  /** Its default, as values.yaml sets it. */
  default: unknown;
  /** Its values.yaml comment, lines joined. */
  description: string;
}

/** A values.yaml key: its path, comment, default and, for a map, its keys. */
interface ValueNode {
  path: string;
  comment: string | undefined;
  value: unknown;
  children: ValueNode[] | undefined;
}

/**
 * Every documented value of `valuesYaml` (named `file` in errors) in file order, typed by `schema` (the chart's
 * values.schema.json). Throws naming each value without a comment, and each key the schema does not have.
 */
export function documentedValues(valuesYaml: string, schema: JsonSchema, file = "values.yaml"): ValueDoc[] {
  const roots = valueTree(valuesYaml, file);
  const rows: ValueDoc[] = [];
  const problems: string[] = [];
  const visit = (node: ValueNode, nodeSchema: JsonSchema | undefined): void => {
    if (nodeSchema === undefined) {
      problems.push(`${node.path} is not in values.schema.json (which rejects it): remove it or declare it`);
      return;
    }
    const documentedInside = node.children?.some(hasComment) ?? false;
    if (node.children !== undefined && documentedInside) {
      for (const child of node.children) visit(child, childSchema(schema, nodeSchema, lastKey(child.path)));
      return;
    }
    if (node.comment === undefined) {
      problems.push(`${node.path} has no comment: add one above it saying what it does`);
      return;
    }
    rows.push({
      path: node.path,
      type: typeName(schema, nodeSchema),
      default: node.value,
      description: node.comment,
    });
  };
  for (const root of roots) visit(root, childSchema(schema, schema, root.path));
  if (problems.length > 0) throw new Error(`${file}:\n  ${problems.join("\n  ")}`);
  return rows;
}

/**
 * `schema` with the `description` of every property that values.yaml documents (a row, or a map whose keys are
 * rows) replaced by its comment, so the schema an editor shows says what the README says.
 */
export function describeSchema(schema: JsonSchema, valuesYaml: string, file = "values.yaml"): JsonSchema {
  const copy = structuredClone(schema);
  const visit = (nodes: ValueNode[], parent: JsonSchema): void => {
    for (const node of nodes) {
      const props = properties(copy, parent);
      const key = lastKey(node.path);
      const own = props?.[key];
      if (props === undefined || own === undefined) continue;
      if (node.comment !== undefined) {
        const { description: _old, ...rest } = own;
        props[key] = { description: node.comment, ...rest };
      }
      if (node.children !== undefined) visit(node.children, props[key]!);
    }
  };
  visit(valueTree(valuesYaml, file), copy);
  return copy;
}

/**
 * The Markdown between a README's `values reference` markers: a comment naming the source, then the table of
 * `rows` (value, type, default, description), aligned as Biome's formatter writes it.
 */
export function renderValuesTable(rows: ValueDoc[], source: string): string {
  const table = markdownTable(
    ["Value", "Type", "Default", "Description"],
    rows.map((r) => [`\`${r.path}\``, r.type, `\`${flow(r.default)}\``, markdownText(r.description)]),
  );
  return [`<!-- Generated from ${source} by capstan crd; do not edit. -->`, "", ...table, ""].join("\n");
}

/** A value on one line, as YAML flow (JSON) writes it: `""`, `[]`, `{"cpu": "100m"}`. */
function flow(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(flow).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${flow(x)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(v ?? null);
}

function valueTree(valuesYaml: string, file: string): ValueNode[] {
  const doc = parseDocument(valuesYaml);
  if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
  if (!isMap(doc.contents)) throw new Error(`${file}: expected a map of values at the top`);
  return mapNodes(doc.contents, "");
}

function mapNodes(map: YAMLMap, prefix: string): ValueNode[] {
  return map.items.map((pair, i) => {
    const p = pair as Pair;
    const key = isScalar(p.key) ? String(p.key.value) : String(p.key);
    const path = prefix === "" ? key : `${prefix}.${key}`;
    // yaml puts the comment above a map's first key on the map itself.
    const raw =
      (isScalar(p.key) ? p.key.commentBefore : undefined) ?? (i === 0 ? map.commentBefore : undefined);
    const children = isMap(p.value) && p.value.items.length > 0 ? mapNodes(p.value, path) : undefined;
    const value: unknown =
      p.value !== null && typeof p.value === "object" && "toJSON" in p.value
        ? (p.value as { toJSON(): unknown }).toJSON()
        : p.value;
    return { path, comment: commentText(raw), value, children };
  });
}

/** The last paragraph of a comment block (a file's header comment is separated by a blank line), on one line. */
function commentText(raw: string | null | undefined): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  const paragraphs = raw.split(/\n\s*\n/);
  const last = (paragraphs[paragraphs.length - 1] ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ");
  return last === "" ? undefined : last;
}

const hasComment = (n: ValueNode): boolean =>
  n.comment !== undefined || (n.children?.some(hasComment) ?? false);

const lastKey = (path: string): string => path.slice(path.lastIndexOf(".") + 1);

/** `node` with a `$ref` into `definitions` resolved. */
function resolveRef(root: JsonSchema, node: JsonSchema): JsonSchema {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/definitions/")) return node;
  const defs = root.definitions as Record<string, JsonSchema> | undefined;
  return { ...(defs?.[ref.slice("#/definitions/".length)] ?? {}), ...node };
}

function properties(root: JsonSchema, node: JsonSchema): Record<string, JsonSchema> | undefined {
  return resolveRef(root, node).properties as Record<string, JsonSchema> | undefined;
}

/** The schema of key `key` of an object whose schema is `node`: a declared property, or what a map holds. */
function childSchema(root: JsonSchema, node: JsonSchema, key: string): JsonSchema | undefined {
  const resolved = resolveRef(root, node);
  const declared = properties(root, node)?.[key];
  if (declared !== undefined) return declared;
  const extra = resolved.additionalProperties;
  if (extra !== undefined && extra !== false) return typeof extra === "object" ? (extra as JsonSchema) : {};
  return resolved.properties === undefined && resolved.type === "object" ? {} : undefined;
}

/** What the README's Type column says of a schema node. */
function typeName(root: JsonSchema, node: JsonSchema): string {
  const s = resolveRef(root, node);
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === "string" ? [s.type] : [];
  const extra = s.additionalProperties;
  if (types.length === 1 && types[0] === "object" && typeof extra === "object" && extra !== null) {
    return `map of ${typeName(root, extra as JsonSchema)}`;
  }
  if (types.length === 1 && types[0] === "array") {
    const items = s.items;
    if (items !== null && typeof items === "object" && !Array.isArray(items)) {
      const of = typeName(root, items as JsonSchema);
      if (of !== "") return `array of ${of}`;
    }
  }
  return types.join(" or ");
}
