/**
 * @capstan/cli/promql: one PromQL syntax check for the whole project, on the Prometheus project's own grammar
 * (@prometheus-io/lezer-promql, the parser behind Prometheus' web UI). The Prometheus operator refuses rules with it
 * at runtime, and the chart tests check every alert and dashboard query with it.
 *
 * @module @capstan/cli/promql
 */

import { parser } from "@prometheus-io/lezer-promql";
import { RE2JS } from "re2js";
import { EXPERIMENTAL_AGGREGATIONS, PROMQL_FUNCTIONS, type PromqlType } from "./promql-functions.ts";

type Tree = ReturnType<typeof parser.parse>;
type Node = Tree["topNode"];

/** Expression nodes that are instant vectors or scalars whatever they hold. */
const INSTANT = new Set([
  "VectorSelector",
  "FunctionCall",
  "AggregateExpr",
  "BinaryExpr",
  "UnaryExpr",
  "NumberDurationLiteral",
  "StringLiteral",
]);
/** Nodes that wrap one expression and keep its type. */
const WRAPPERS = new Set(["ParenExpr", "OffsetExpr", "StepInvariantExpr"]);

/** "line:column" (both from 1) of offset `at` in `text`. */
function position(text: string, at: number): string {
  const before = text.slice(0, at).split("\n");
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

/** The token at `at`: a word, a quoted string, or one character. */
function tokenAt(text: string, at: number): string {
  const m = /^([A-Za-z_:][\w:]*|\d[\w.]*|"(?:[^"\\]|\\.)*"?|\S)/.exec(text.slice(at));
  const token = m?.[1] ?? text.slice(at, at + 1);
  return token.length > 40 ? `${token.slice(0, 40)}...` : token;
}

/** Where a string literal that never closes starts ("...", '...' with escapes, or `...`), comments skipped. */
function unterminatedString(expr: string): number | undefined {
  for (let i = 0; i < expr.length; i++) {
    const ch = expr[i];
    if (ch === "#") {
      while (i < expr.length && expr[i] !== "\n") i++;
    } else if (ch === '"' || ch === "'" || ch === "`") {
      const start = i;
      for (i++; i < expr.length && expr[i] !== ch; i++) if (ch !== "`" && expr[i] === "\\") i++;
      if (i >= expr.length) return start;
    }
  }
  return undefined;
}

function firstError(tree: Tree): { from: number; to: number } | undefined {
  let found: { from: number; to: number } | undefined;
  tree.iterate({
    enter(n) {
      if (found !== undefined) return false;
      if (n.type.isError) {
        found = { from: n.from, to: n.to };
        return false;
      }
      return undefined;
    },
  });
  return found;
}

/** The named child nodes of `node`, in order. */
function children(node: Node): Node[] {
  const out: Node[] = [];
  for (let c = node.firstChild; c !== null; c = c.nextSibling) out.push(c);
  return out;
}

/** `node` without the parentheses, offset and @ modifiers around it (they keep its type). */
function unwrap(node: Node | null): Node | null {
  let n = node;
  while (n !== null && WRAPPERS.has(n.name)) n = n.firstChild;
  return n;
}

/** Whether `node` is a range vector (`x[5m]`, a subquery). */
const isRange = (node: Node | null) => {
  const n = unwrap(node);
  return n !== null && (n.name === "MatrixSelector" || n.name === "SubqueryExpr");
};
/** Whether `node` is certainly not a range vector (an instant vector or a scalar). */
const isInstant = (node: Node | null) => {
  const n = unwrap(node);
  return n !== null && INSTANT.has(n.name);
};

const DOCUMENTED: Record<PromqlType, string> = {
  vector: "instant vector",
  matrix: "range vector",
  scalar: "scalar",
  string: "string",
};

/** The arguments of a call or aggregation body, comments left out. */
const argumentsOf = (body: Node | null) =>
  body === null ? [] : children(body).filter((c) => c.name !== "LineComment");

/** What Prometheus' parser refuses in one function call (as Prometheus says it), or undefined. */
function callError(expr: string, call: Node): string | undefined {
  const at = (n: Node) => position(expr, n.from);
  const ident = call.getChild("FunctionIdentifier");
  if (ident === null) return undefined;
  const name = expr.slice(ident.from, ident.to);
  const fn = Object.hasOwn(PROMQL_FUNCTIONS, name) ? PROMQL_FUNCTIONS[name] : undefined;
  if (fn === undefined) return `unknown function with name "${name}" at ${at(call)}`;
  if (fn.experimental) return `function "${name}" is not enabled at ${at(call)}`;
  const args = argumentsOf(call.getChild("FunctionCallBody"));
  const declared = fn.args.length;
  if (fn.variadic === 0 && args.length !== declared) {
    return `expected ${declared} argument(s) in call to "${name}", got ${args.length} at ${at(call)}`;
  }
  if (fn.variadic !== 0 && args.length < declared - 1) {
    return `expected at least ${declared - 1} argument(s) in call to "${name}", got ${args.length} at ${at(call)}`;
  }
  if (fn.variadic > 0 && args.length > declared - 1 + fn.variadic) {
    return `expected at most ${declared - 1 + fn.variadic} argument(s) in call to "${name}", got ${args.length} at ${at(call)}`;
  }
  for (const [i, arg] of args.entries()) {
    const want = fn.args[Math.min(i, declared - 1)];
    if (want === undefined) break;
    const got =
      want === "matrix"
        ? isInstant(arg)
          ? "instant vector"
          : undefined
        : isRange(arg)
          ? "range vector"
          : undefined;
    if (got !== undefined) {
      return `expected type ${DOCUMENTED[want]} in call to function "${name}", got ${got} at ${at(arg)}`;
    }
  }
  return undefined;
}

/**
 * The first thing Prometheus' parser refuses that the grammar lets through: a function it does not know or keeps
 * behind a feature flag, a wrong argument count, a range vector where an instant vector belongs or the reverse
 * (`rate(x)`, `abs(x[5m])`, `sum(x[5m])`, `x[5m] + 1`, `sum(x)[5m]`), an experimental aggregation (limitk,
 * limit_ratio).
 */
function typeError(expr: string, tree: Tree): string | undefined {
  let found: string | undefined;
  tree.iterate({
    enter(ref) {
      if (found !== undefined) return false;
      const node = ref.node;
      if (ref.name === "FunctionCall") found = callError(expr, node);
      else if (ref.name === "AggregateExpr") {
        const op = node.getChild("AggregateOp");
        const name = op === null ? "" : expr.slice(op.from, op.to);
        const last = argumentsOf(node.getChild("FunctionCallBody")).at(-1) ?? null;
        if (EXPERIMENTAL_AGGREGATIONS.includes(name)) {
          found = `${name}() is experimental and must be enabled with --enable-feature=promql-experimental-functions at ${position(expr, ref.from)}`;
        } else if (last !== null && isRange(last)) {
          found = `expected type instant vector in aggregation expression, got range vector at ${position(expr, last.from)}`;
        }
      } else if (ref.name === "MatrixSelector" && node.firstChild?.name !== "VectorSelector") {
        // The grammar reads `a + b[5m]` as `(a + b)[5m]`; Prometheus allows a range on a selector only.
        const duration = node.getChild("DurationExpr");
        const bracket = expr.lastIndexOf("[", duration?.from ?? node.to);
        found = `ranges only allowed for vector selectors at ${position(expr, bracket)}`;
      } else if (ref.name === "BinaryExpr") {
        const range = [node.firstChild, node.lastChild].find((n) => isRange(n));
        if (range != null) {
          found = `binary expression must contain only scalar and instant vector types at ${position(expr, range.from)}`;
        }
      }
      return found === undefined ? undefined : false;
    },
  });
  return found;
}

/**
 * The first regular expression of a matcher (`=~`, `!~`) that RE2, Prometheus' regex engine, refuses: Prometheus'
 * parser compiles them, anchored, so a bad one fails the whole expression.
 */
function regexError(expr: string, tree: Tree): string | undefined {
  let found: string | undefined;
  tree.iterate({
    enter(ref) {
      if (found !== undefined) return false;
      if (ref.name !== "UnquotedLabelMatcher" && ref.name !== "QuotedLabelMatcher") return undefined;
      const op = ref.node.getChild("MatchOp")?.firstChild?.name;
      const value = ref.node.getChildren("StringLiteral").at(-1);
      if ((op !== "EqlRegex" && op !== "NeqRegex") || value === undefined) return false;
      const regex = unquote(expr.slice(value.from, value.to));
      try {
        // The bare expression first, so an error quotes the user's text, not the anchored wrapper.
        RE2JS.compile(regex);
        RE2JS.compile(`^(?s:${regex})$`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        found = `${message} at ${position(expr, ref.from)}`;
      }
      return false;
    },
  });
  return found;
}

/**
 * What keeps Prometheus from parsing `expr`, with its position ("unexpected end of input at 1:14", `unknown function
 * with name "foo" at 1:1`), or undefined when it parses. Checks the grammar (brackets, operators, modifiers,
 * strings), the functions against Prometheus v3.16.0's list (known, not behind the experimental-functions flag, the
 * argument count, range vectors where they belong: `rate(x)` and `abs(x[5m])` are refused), range vectors in
 * aggregations and binary expressions, and the regular expressions of `=~` and `!~` matchers with RE2 (re2js), as
 * Prometheus' parser compiles them (the grammar alone accepts `foo{a=~"("}`). Not checked (promtool's and
 * Prometheus' job): scalar against instant vector arguments, selectors that match only empty labels (`{a=""}`),
 * and what only evaluation finds.
 */
export function promqlError(expr: string): string | undefined {
  if (expr.trim() === "") return "empty expression";
  const tree = parser.parse(expr);
  const err = firstError(tree);
  if (err !== undefined) {
    const open = unterminatedString(expr);
    if (open !== undefined) return `unterminated quoted string at ${position(expr, open)}`;
    const at = position(expr, err.from);
    if (expr.slice(err.from).trim() === "") return `unexpected end of input at ${at}`;
    const token = tokenAt(expr, err.from);
    if (token === "(") {
      // `foo(x)`: an identifier the grammar does not know as a function reads as a metric name.
      const before = tree.resolveInner(err.from, -1);
      if (before.name === "Identifier" && before.parent?.name === "VectorSelector") {
        return `unknown function with name "${expr.slice(before.from, before.to)}" at ${position(expr, before.from)}`;
      }
    }
    return `unexpected ${JSON.stringify(token)} at ${at}`;
  }
  return typeError(expr, tree) ?? regexError(expr, tree);
}

/** Unquotes a PromQL string literal ("..." or '...' with backslash escapes, or `...`). */
function unquote(literal: string): string {
  if (literal.startsWith("`")) return literal.slice(1, -1);
  const body = literal.slice(1, -1);
  return body.replace(/\\(.)/g, "$1");
}

/**
 * The metric names `expr` selects, sorted and without repeats: `foo` in `foo{a="b"}` and `{__name__="foo"}`
 * (a `__name__` regex names no metric and is left out). Throws when `expr` does not parse (see {@link promqlError}).
 */
export function promqlMetricNames(expr: string): string[] {
  const err = promqlError(expr);
  if (err !== undefined) throw new Error(`PromQL parse error: ${err} in ${JSON.stringify(expr)}`);
  const names = new Set<string>();
  parser.parse(expr).iterate({
    enter(ref) {
      if (ref.name !== "VectorSelector") return undefined;
      const node = ref.node;
      const ident = node.getChild("Identifier");
      if (ident !== null) names.add(expr.slice(ident.from, ident.to));
      const matchers = node.getChild("LabelMatchers");
      for (const m of matchers === null ? [] : children(matchers)) {
        const [label, op, value] = children(m);
        if (m.name === "QuotedLabelName" || (label?.name === "StringLiteral" && op === undefined)) {
          // {"metric.name"}: a quoted metric name alone among the matchers.
          names.add(unquote(expr.slice(m.from, m.to)));
        } else if (
          label !== undefined &&
          expr.slice(label.from, label.to) === "__name__" &&
          op !== undefined &&
          expr.slice(op.from, op.to) === "=" &&
          value !== undefined
        ) {
          names.add(unquote(expr.slice(value.from, value.to)));
        }
      }
      return false;
    },
  });
  return [...names].sort();
}
