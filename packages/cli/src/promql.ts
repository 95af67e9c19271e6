// @capstan/cli/promql: one PromQL syntax check for the whole project, on the Prometheus project's own grammar
// (@prometheus-io/lezer-promql, the parser behind Prometheus' web UI). The Prometheus operator refuses rules with it
// at runtime, and the chart tests check every alert and dashboard query with it.
import { parser } from "@prometheus-io/lezer-promql";

type Tree = ReturnType<typeof parser.parse>;
type Node = Tree["topNode"];

/**
 * Functions whose argument at the given index must be a range vector (`x[5m]` or a subquery): giving them an
 * instant vector (`rate(x)`) is the mistake the grammar alone lets through and Prometheus refuses.
 */
const RANGE_ARGUMENT: Record<string, number> = {
  rate: 0,
  irate: 0,
  increase: 0,
  delta: 0,
  idelta: 0,
  deriv: 0,
  predict_linear: 0,
  changes: 0,
  resets: 0,
  avg_over_time: 0,
  min_over_time: 0,
  max_over_time: 0,
  sum_over_time: 0,
  count_over_time: 0,
  stddev_over_time: 0,
  stdvar_over_time: 0,
  last_over_time: 0,
  first_over_time: 0,
  present_over_time: 0,
  absent_over_time: 0,
  mad_over_time: 0,
  quantile_over_time: 1,
  holt_winters: 0,
  double_exponential_smoothing: 0,
};

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

/** The first call that gets an instant vector where it needs a range vector, as an error message. */
function rangeArgumentError(expr: string, tree: Tree): string | undefined {
  let found: string | undefined;
  tree.iterate({
    enter(ref) {
      if (found !== undefined) return false;
      if (ref.name !== "FunctionCall") return undefined;
      const call = ref.node;
      const ident = call.getChild("FunctionIdentifier");
      const body = call.getChild("FunctionCallBody");
      if (ident === null || body === null) return undefined;
      const fn = expr.slice(ident.from, ident.to);
      const index = RANGE_ARGUMENT[fn];
      if (index === undefined) return undefined;
      let arg: Node | null | undefined = children(body).filter((c) => c.name !== "LineComment")[index];
      while (arg != null && WRAPPERS.has(arg.name)) arg = arg.firstChild;
      if (arg != null && INSTANT.has(arg.name)) {
        found = `expected type range vector in call to function "${fn}", got instant vector at ${position(expr, arg.from)}`;
        return false;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * What keeps Prometheus from parsing `expr`, with its position ("unexpected end of input at 1:14", `unknown function
 * "foo" at 1:1`), or undefined when it parses. Checks the grammar (brackets, operators, modifiers, strings, known
 * functions) and that range functions (rate, increase, *_over_time...) get a range vector. Not checked (promtool's
 * and Prometheus' job): regular expressions inside matchers (`foo{a=~"("}` parses; RE2 judges the regex when the
 * query runs), argument counts and the other types, and selectors that match only empty labels (`{a=""}`).
 */
export function promqlError(expr: string): string | undefined {
  if (expr.trim() === "") return "empty expression";
  const tree = parser.parse(expr);
  const err = firstError(tree);
  if (err !== undefined) {
    const at = position(expr, err.from);
    if (expr.slice(err.from).trim() === "") return `unexpected end of input at ${at}`;
    const token = tokenAt(expr, err.from);
    if (token === "(") {
      // `foo(x)`: an identifier the grammar does not know as a function reads as a metric name.
      const before = tree.resolveInner(err.from, -1);
      if (before.name === "Identifier" && before.parent?.name === "VectorSelector") {
        return `unknown function "${expr.slice(before.from, before.to)}" at ${position(expr, before.from)}`;
      }
    }
    return `unexpected ${JSON.stringify(token)} at ${at}`;
  }
  return rangeArgumentError(expr, tree);
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
