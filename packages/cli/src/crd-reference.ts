// Renders a CRD as the Markdown reference in an operator's docs page, so the documented API is the schema itself.
import type { CustomResourceDefinitionObject, JSONSchemaProps } from "@capstan/core";

/** The line that opens the generated reference of `kind` in a Markdown page. */
export function beginMarker(kind: string): string {
  return `<!-- BEGIN GENERATED: ${kind} reference -->`;
}

/** The line that closes the generated reference of `kind` in a Markdown page. */
export function endMarker(kind: string): string {
  return `<!-- END GENERATED: ${kind} reference -->`;
}

/** Root properties every object has; the reference skips them. */
const STANDARD_ROOT_FIELDS = new Set(["apiVersion", "kind", "metadata"]);

/** One x-kubernetes-validations entry as it appears in a schema. */
interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
}

/** An object level of the schema: the path of the object and its schema (which has `properties`). */
interface Level {
  path: string;
  schema: JSONSchemaProps;
  required: boolean;
}

/**
 * The markdown reference of `crd`: names, subresources and printer columns, one table per object level of
 * `spec` and `status` (path, type, default, bounds, description), and every CEL rule with its message. The text
 * is what Biome's markdown formatter would write (aligned tables, blank lines around blocks), and depends only
 * on `crd` and `source` (what it is generated from, named in a first comment line), so it can be committed and
 * compared. It excludes the markers; {@link spliceGeneratedBlock} adds them.
 */
export function renderCrdReference(crd: CustomResourceDefinitionObject, source: string): string {
  const { names, group, scope } = crd.spec;
  const out: string[] = [`<!-- Generated from ${source} by capstan crd; do not edit. -->`, ""];
  for (const version of crd.spec.versions) {
    const root = version.schema?.openAPIV3Schema ?? {};
    const apiVersion = `${group}/${version.name}`;
    out.push(`### ${names.kind} (\`${apiVersion}\`)`, "");
    const description = str(root.description);
    if (description !== undefined) out.push(text(description), "");

    const flags = [version.storage ? "storage version" : "", version.deprecated ? "deprecated" : ""];
    const served = version.served ? "served" : "not served";
    out.push(
      `- API: \`${apiVersion}\` (${[served, ...flags].filter((f) => f !== "").join(", ")}), kind \`${names.kind}\`` +
        `${names.listKind === undefined ? "" : `, list kind \`${names.listKind}\``}, ${scope.toLowerCase()}.`,
      `- Names: plural \`${names.plural}\`${names.singular === undefined ? "" : `, singular \`${names.singular}\``}` +
        `, short names ${codeList(names.shortNames)}, categories ${codeList(names.categories)}.`,
      `- Subresources: ${subresources(version.subresources)}.`,
      "",
    );

    const columns = version.additionalPrinterColumns ?? [];
    if (columns.length > 0) {
      out.push("#### Printer columns", "");
      out.push(
        ...table(
          ["column", "type", "JSONPath", "shown by"],
          columns.map((c) => [
            c.name,
            c.type,
            code(c.jsonPath),
            (c.priority ?? 0) === 0 ? "`kubectl get`" : "`kubectl get -o wide`",
          ]),
        ),
        "",
      );
    }

    for (const level of levels(root)) {
      out.push(`#### \`${level.path}\``, "");
      const about = [str(level.schema.description), level.required ? "Required." : undefined].filter(
        (s) => s !== undefined,
      );
      if (about.length > 0) out.push(text(about.join(" ")), "");
      out.push(...fieldTable(level), "");
    }

    const rules = celRules(root);
    if (rules.length > 0) {
      out.push(
        "#### Validation rules",
        "",
        "CEL rules (`x-kubernetes-validations`) the API server checks; `self` is the field the rule is on. A transition " +
          "rule (one that reads `oldSelf`) is checked only on updates that keep the field.",
        "",
        ...table(
          ["on", "error at", "checked", "rule", "message"],
          rules.map(({ path, rule }) => [
            code(path),
            code(rule.fieldPath === undefined ? path : joinPath(path, rule.fieldPath)),
            /\boldSelf\b/.test(rule.rule) ? "on update" : "always",
            code(rule.rule),
            [
              rule.message === undefined ? code(rule.messageExpression ?? "") : text(rule.message),
              rule.reason === undefined ? "" : `(reason ${code(rule.reason)})`,
            ]
              .filter((s) => s !== "")
              .join(" "),
          ]),
        ),
        "",
      );
    }
  }
  while (out[out.length - 1] === "") out.pop();
  return `${out.join("\n")}\n`;
}

/**
 * `doc` with the text between the markers of `kind` ({@link beginMarker}, {@link endMarker}) replaced by `block`;
 * throws when the markers are missing or out of order, naming them.
 */
export function spliceGeneratedBlock(doc: string, kind: string, block: string): string {
  const { start, end } = markerOffsets(doc, kind);
  return `${doc.slice(0, start)}${beginMarker(kind)}\n${block}${doc.slice(end)}`;
}

/** The text between the markers of `kind` in `doc` (what {@link renderCrdReference} produced when generated). */
export function extractGeneratedBlock(doc: string, kind: string): string {
  const { start, end } = markerOffsets(doc, kind);
  return doc.slice(start + beginMarker(kind).length + 1, end);
}

function markerOffsets(doc: string, kind: string): { start: number; end: number } {
  const begin = beginMarker(kind);
  const start = doc.indexOf(`${begin}\n`);
  const end = doc.indexOf(endMarker(kind), start + 1);
  if (start < 0 || end < 0) {
    throw new Error(
      `the page must contain a line "${begin}" followed later by a line "${endMarker(kind)}", where the ${kind} reference goes`,
    );
  }
  return { start, end };
}

/** Object levels of `spec`, `status` (and any other non-standard root field), depth first in schema order. */
function levels(root: JSONSchemaProps): Level[] {
  const found: Level[] = [];
  const visit = (path: string, schema: JSONSchemaProps, required: boolean): void => {
    if (props(schema) !== undefined) found.push({ path, schema, required });
    for (const [child, s, req] of children(path, schema)) visit(child, s, req);
  };
  const rootRequired = strings(root.required);
  for (const [name, s] of Object.entries(props(root) ?? {})) {
    if (!STANDARD_ROOT_FIELDS.has(name)) visit(name, s, rootRequired.includes(name));
  }
  return found;
}

/** The sub-schemas under `schema` with their paths: properties, array items (`[]`) and map values (`.*`). */
function children(path: string, schema: JSONSchemaProps): [string, JSONSchemaProps, boolean][] {
  const result: [string, JSONSchemaProps, boolean][] = [];
  const required = strings(schema.required);
  for (const [name, s] of Object.entries(props(schema) ?? {})) {
    result.push([joinPath(path, name), s, required.includes(name)]);
  }
  const items = obj(schema.items);
  if (items !== undefined) result.push([`${path}[]`, items, false]);
  const values = obj(schema.additionalProperties);
  if (values !== undefined) result.push([`${path}.*`, values, false]);
  return result;
}

/** Every CEL rule under `root` with the path of the field it is on, depth first in schema order. */
function celRules(root: JSONSchemaProps): { path: string; rule: CelRule }[] {
  const found: { path: string; rule: CelRule }[] = [];
  const visit = (path: string, schema: JSONSchemaProps): void => {
    for (const rule of arr(schema["x-kubernetes-validations"])) {
      const r = obj(rule);
      const text = str(r?.rule);
      if (r === undefined || text === undefined) continue;
      found.push({
        path,
        rule: {
          rule: text,
          ...optional("message", str(r.message)),
          ...optional("messageExpression", str(r.messageExpression)),
          ...optional("reason", str(r.reason)),
          ...optional("fieldPath", str(r.fieldPath)),
        },
      });
    }
    for (const [child, s] of children(path, schema)) visit(child, s);
  };
  visit("", root);
  return found.map((f) => ({ ...f, path: f.path === "" ? "(root)" : f.path }));
}

function fieldTable(level: Level): string[] {
  const required = strings(level.schema.required);
  const rows = Object.entries(props(level.schema) ?? {}).map(([name, s]) => [
    code(joinPath(level.path, name)),
    typeOf(s),
    s.default === undefined ? "" : code(JSON.stringify(s.default)),
    constraints(s, required.includes(name)),
    text(str(s.description) ?? ""),
  ]);
  return table(["field", "type", "default", "validation", "description"], rows);
}

/** The type as a reader knows it: `integer (int32)`, `[]string`, `map[string]string`, `int-or-string`. */
function typeOf(s: JSONSchemaProps): string {
  if (s["x-kubernetes-int-or-string"] === true) return "int-or-string";
  const type = str(s.type) ?? "any";
  const format = str(s.format);
  if (type === "array") {
    const items = obj(s.items);
    return `[]${items === undefined ? "any" : typeOf(items)}`;
  }
  if (type === "object") {
    const values = obj(s.additionalProperties);
    if (values !== undefined && props(s) === undefined) return `map[string]${typeOf(values)}`;
    if (s["x-kubernetes-preserve-unknown-fields"] === true && props(s) === undefined)
      return "object (free-form)";
    return "object";
  }
  return format === undefined ? type : `${type} (${format})`;
}

/** Required, bounds, length, pattern, enum, list type and CEL rules of a field, joined with "; ". */
function constraints(s: JSONSchemaProps, required: boolean): string {
  const parts: string[] = [];
  if (required) parts.push("required");
  parts.push(...bounds(s));
  const listType = str(s["x-kubernetes-list-type"]);
  if (listType !== undefined) {
    const keys = strings(s["x-kubernetes-list-map-keys"]);
    parts.push(`list type ${listType}${keys.length === 0 ? "" : ` (key ${codeList(keys)})`}`);
  }
  const items = obj(s.items);
  if (items !== undefined && props(items) === undefined && bounds(items).length > 0) {
    parts.push(`items: ${bounds(items).join(", ")}`);
  }
  const values = obj(s.additionalProperties);
  if (values !== undefined && props(values) === undefined && bounds(values).length > 0) {
    parts.push(`values: ${bounds(values).join(", ")}`);
  }
  if (s["x-kubernetes-preserve-unknown-fields"] === true) parts.push("unknown fields kept");
  const rules = arr(s["x-kubernetes-validations"]).length;
  if (rules > 0) parts.push(`${rules} CEL rule${rules === 1 ? "" : "s"} (see Validation rules)`);
  return parts.join("; ");
}

function bounds(s: JSONSchemaProps): string[] {
  const parts: string[] = [];
  const min = num(s.minimum);
  const max = num(s.maximum);
  if (min !== undefined && max !== undefined) parts.push(`${min} to ${max}`);
  else if (min !== undefined) parts.push(`minimum ${min}`);
  else if (max !== undefined) parts.push(`maximum ${max}`);
  const minLength = num(s.minLength);
  const maxLength = num(s.maxLength);
  if (minLength !== undefined && maxLength !== undefined) parts.push(`length ${minLength} to ${maxLength}`);
  else if (minLength !== undefined) parts.push(`length at least ${minLength}`);
  else if (maxLength !== undefined) parts.push(`length at most ${maxLength}`);
  const minItems = num(s.minItems);
  const maxItems = num(s.maxItems);
  if (minItems !== undefined) parts.push(`at least ${minItems} items`);
  if (maxItems !== undefined) parts.push(`at most ${maxItems} items`);
  const pattern = str(s.pattern);
  if (pattern !== undefined) parts.push(`pattern ${code(pattern)}`);
  const values = arr(s.enum);
  if (values.length > 0) parts.push(`one of ${values.map((v) => code(String(v))).join(", ")}`);
  return parts;
}

function subresources(
  sub: CustomResourceDefinitionObject["spec"]["versions"][number]["subresources"],
): string {
  const parts: string[] = [];
  if (sub?.status !== undefined) parts.push("`status`");
  if (sub?.scale !== undefined) {
    const { specReplicasPath, statusReplicasPath, labelSelectorPath } = sub.scale;
    const selector = labelSelectorPath === undefined ? "" : `, label selector ${code(labelSelectorPath)}`;
    parts.push(
      `\`scale\` (spec replicas ${code(specReplicasPath)}, status replicas ${code(statusReplicasPath)}${selector})`,
    );
  }
  return parts.length === 0 ? "none" : parts.join(", ");
}

/** A markdown table with columns padded as Biome's formatter pads them (at least 3 wide). */
function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows].map((r) => r.map(cell));
  const widths = header.map((_, i) => Math.max(3, ...all.map((r) => width(r[i] ?? ""))));
  const line = (r: string[]) => `| ${widths.map((w, i) => pad(r[i] ?? "", w)).join(" | ")} |`;
  const [head = [], ...body] = all;
  return [line(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...body.map(line)];
}

/** A table cell: one line, pipes escaped (also inside code spans, as GitHub-flavoured tables need). */
function cell(s: string): string {
  return s.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");
}

function width(s: string): number {
  return [...s].length;
}

function pad(s: string, w: number): string {
  return s + " ".repeat(w - width(s));
}

/** Prose from the schema: backtick spans kept, `<` outside them escaped so `<repository>` is not read as HTML. */
function text(s: string): string {
  return s
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, "\\<")))
    .join("");
}

/** An inline code span that survives any backticks in `s`. */
function code(s: string): string {
  if (!s.includes("`")) return `\`${s}\``;
  return `\`\` ${s} \`\``;
}

function codeList(items: string[] | undefined): string {
  return items === undefined || items.length === 0 ? "none" : items.map(code).join(", ");
}

function joinPath(path: string, name: string): string {
  if (path === "") return name;
  return name.startsWith(".") ? `${path}${name}` : `${path}.${name}`;
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

function props(s: JSONSchemaProps): Record<string, JSONSchemaProps> | undefined {
  const p = obj(s.properties);
  if (p === undefined) return undefined;
  const result: Record<string, JSONSchemaProps> = {};
  for (const [k, v] of Object.entries(p)) {
    const o = obj(v);
    if (o !== undefined) result[k] = o;
  }
  return result;
}

function obj(v: unknown): JSONSchemaProps | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as JSONSchemaProps) : undefined;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function strings(v: unknown): string[] {
  return arr(v).filter((x): x is string => typeof x === "string");
}

function num(v: unknown): number | undefined {
  return typeof v === "number" ? v : undefined;
}

// chart-docs.ts writes the README tables of chart values the same way.
export { table as markdownTable, text as markdownText };
