// The PromQL check: the Prometheus project's own grammar (@prometheus-io/lezer-promql, the parser behind
// Prometheus' web UI), then what Prometheus' parser refuses beyond the grammar, for one Prometheus release and its
// feature flags (functions.ts and constructs.ts say what each release has).

import { parser } from "@prometheus-io/lezer-promql";
import { RE2JS } from "re2js";
import { PROMQL_CONSTRUCTS, type PromqlConstruct, type PromqlConstructName } from "./constructs.ts";
import { EXPERIMENTAL_FUNCTIONS_FLAG, PROMQL_FUNCTIONS, type PromqlType } from "./functions.ts";
import { atLeast, DEFAULT_TARGET, type PromqlTarget, resolveTarget } from "./target.ts";

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
const WRAPPERS = new Set(["ParenExpr", "OffsetExpr", "StepInvariantExpr", "AnchoredExpr", "SmoothedExpr"]);

/** The target as the checks read it. */
interface Target {
  version: string;
  features: ReadonlySet<string>;
}

/**
 * Whether `target` has something that came in release `since`, behind flag `feature` until `stableSince`: a
 * problem ("missing": too old a release; "flag": the flag is not set), or undefined.
 */
function availability(
  item: { since: string; feature?: string; stableSince?: string },
  target: Target,
): "missing" | "flag" | undefined {
  if (!atLeast(target.version, item.since)) return "missing";
  if (item.feature === undefined) return undefined;
  if (item.stableSince !== undefined && atLeast(target.version, item.stableSince)) return undefined;
  return target.features.has(item.feature) ? undefined : "flag";
}

/** "it came in 3.7.0, behind --enable-feature=F until 3.14.0": the history of something a release lacks. */
function history(item: { since: string; feature?: string; stableSince?: string }): string {
  const flag =
    item.feature === undefined
      ? ""
      : `, behind --enable-feature=${item.feature}${item.stableSince === undefined ? "" : ` until ${item.stableSince}`}`;
  return `it came in ${item.since}${flag}`;
}

/** "Prometheus 3.10.0 needs --enable-feature=F for it; 3.14.0 and later do not". */
function needsFlag(item: { feature?: string; stableSince?: string }, target: Target): string {
  const later = item.stableSince === undefined ? "" : `; ${item.stableSince} and later do not`;
  return `Prometheus ${target.version} needs --enable-feature=${item.feature} for it${later}`;
}

/** What `target` refuses in construct `name` found at `at`, or undefined. */
function constructError(name: PromqlConstructName, at: string, target: Target): string | undefined {
  const c: PromqlConstruct = PROMQL_CONSTRUCTS[name];
  const problem = availability(c, target);
  if (problem === "missing")
    return `${c.what} is not in Prometheus ${target.version} at ${at} (${history(c)})`;
  if (problem === "flag") {
    const said = c.notEnabled ?? `${c.what} is not enabled`;
    // Prometheus' own words may name the flag already.
    const why =
      c.feature !== undefined && said.includes(c.feature)
        ? `Prometheus ${target.version}`
        : needsFlag(c, target);
    return `${said} at ${at} (${why})`;
  }
  return undefined;
}

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

/** `node` without the parentheses, offset, @, anchored and smoothed modifiers around it (they keep its type). */
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

/** What `target` says of function `name` (known to it, enabled), or undefined when it takes it. */
function functionError(name: string, at: string, target: Target): string | undefined {
  const fn = Object.hasOwn(PROMQL_FUNCTIONS, name) ? PROMQL_FUNCTIONS[name] : undefined;
  if (fn === undefined) return `unknown function with name "${name}" at ${at}`;
  const item = { ...fn, ...(fn.experimental ? { feature: EXPERIMENTAL_FUNCTIONS_FLAG } : {}) };
  const problem = availability(item, target);
  if (problem === "missing") {
    return `unknown function with name "${name}" at ${at} (Prometheus ${target.version} does not have it: ${history(item)})`;
  }
  if (problem === "flag") return `function "${name}" is not enabled at ${at} (${needsFlag(item, target)})`;
  return undefined;
}

/** What Prometheus' parser refuses in one function call (as Prometheus says it), or undefined. */
function callError(expr: string, call: Node, target: Target): string | undefined {
  const at = (n: Node) => position(expr, n.from);
  const ident = call.getChild("FunctionIdentifier");
  if (ident === null) return undefined;
  const name = expr.slice(ident.from, ident.to);
  const unavailable = functionError(name, at(call), target);
  if (unavailable !== undefined) return unavailable;
  const fn = PROMQL_FUNCTIONS[name];
  if (fn === undefined) return undefined;
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

/** Operators of a duration expression (`5m + 1m`). */
const DURATION_OPERATORS = new Set(["Add", "Sub", "Mul", "Div", "Mod", "Pow"]);
/** Duration functions, by the construct they are. */
const DURATION_FUNCTIONS: Readonly<Record<string, PromqlConstructName>> = {
  DurationStep: "durationStep",
  DurationRange: "durationRange",
  DurationMinOf: "durationMinMax",
  DurationMaxOf: "durationMinMax",
};

/**
 * The constructs of one duration (a range, a subquery's range or step, an offset), with where each starts: a
 * literal (`5m`, `300`, `-1m` for an offset) is none; arithmetic or parentheses make a duration expression, and
 * step(), range(), min_of(), max_of() are constructs of their own.
 */
function durationConstructs(expr: string, duration: Node): { name: PromqlConstructName; from: number }[] {
  const out: { name: PromqlConstructName; from: number }[] = [];
  let operator = false;
  const walk = (n: Node) => {
    const fn = DURATION_FUNCTIONS[n.name];
    if (fn !== undefined) out.push({ name: fn, from: n.from });
    if (DURATION_OPERATORS.has(n.name)) operator = true;
    for (const c of children(n)) walk(c);
  };
  walk(duration);
  // Parentheses of the user's own (not step()'s and friends'): an opening one before every function's name.
  const text = expr.slice(duration.from, duration.to);
  const opened = (text.match(/\(/g) ?? []).length;
  const paren = opened > out.length;
  if (operator || paren) out.unshift({ name: "durationExpression", from: duration.from });
  return out;
}

/** The nodes a modifier may sit on (Prometheus' parser sets it on a selector only). */
function modifierError(expr: string, node: Node, modifier: "anchored" | "smoothed"): string | undefined {
  let inner = node.firstChild;
  while (inner !== null && (inner.name === "OffsetExpr" || inner.name === "StepInvariantExpr")) {
    inner = inner.firstChild;
  }
  const at = position(expr, node.from);
  if (inner?.name === "SubqueryExpr") return `${modifier} modifier is not supported for subqueries at ${at}`;
  if (inner?.name === "AnchoredExpr" || inner?.name === "SmoothedExpr") {
    return `anchored and smoothed modifiers cannot be used together at ${at}`;
  }
  if (inner?.name !== "VectorSelector" && inner?.name !== "MatrixSelector") {
    return `${modifier} modifier not implemented at ${at}`;
  }
  return undefined;
}

/**
 * The first thing Prometheus' parser refuses that the grammar lets through: a function or a construct (limitk,
 * a duration expression, the anchored modifier, fill()...) the target release does not have or keeps behind a
 * feature flag the target does not set, a wrong argument count, a range vector where an instant vector belongs or
 * the reverse (`rate(x)`, `abs(x[5m])`, `sum(x[5m])`, `x[5m] + 1`, `sum(x)[5m]`), a modifier where Prometheus
 * takes none.
 */
function typeError(expr: string, tree: Tree, target: Target): string | undefined {
  let found: string | undefined;
  const construct = (name: PromqlConstructName, from: number) =>
    constructError(name, position(expr, from), target);
  const durations = (node: Node, names: string[], positive: boolean) => {
    for (const d of children(node).filter((c) => names.includes(c.name))) {
      const found = durationConstructs(expr, d);
      for (const c of found) {
        const err = construct(c.name, c.from);
        if (err !== undefined) return err;
      }
      const text = expr.slice(d.from, d.to).trim();
      if (
        positive &&
        found.length === 0 &&
        (text.startsWith("-") || /^[0.]+$/.test(text.replace(/[^\d.]/g, "")))
      ) {
        return `duration must be greater than 0 at ${position(expr, d.from)}`;
      }
    }
    return undefined;
  };
  tree.iterate({
    enter(ref) {
      if (found !== undefined) return false;
      const node = ref.node;
      if (ref.name === "FunctionCall") found = callError(expr, node, target);
      else if (ref.name === "AggregateExpr") {
        const op = node.getChild("AggregateOp");
        const name = op === null ? "" : expr.slice(op.from, op.to);
        const last = argumentsOf(node.getChild("FunctionCallBody")).at(-1) ?? null;
        if (name === "limitk" || name === "limit_ratio") found = construct(name, ref.from);
        if (found === undefined && last !== null && isRange(last)) {
          found = `expected type instant vector in aggregation expression, got range vector at ${position(expr, last.from)}`;
        }
      } else if (ref.name === "MatrixSelector" && node.firstChild?.name !== "VectorSelector") {
        // The grammar reads `a + b[5m]` as `(a + b)[5m]`; Prometheus allows a range on a selector only.
        const duration = node.getChild("DurationExpr");
        const bracket = expr.lastIndexOf("[", duration?.from ?? node.to);
        found = `ranges only allowed for vector selectors at ${position(expr, bracket)}`;
      } else if (ref.name === "MatrixSelector" || ref.name === "SubqueryExpr") {
        found = durations(node, ["DurationExpr"], true);
      } else if (ref.name === "OffsetExpr") {
        found = durations(node, ["OffsetDurationExpr"], false);
      } else if (ref.name === "AnchoredExpr" || ref.name === "SmoothedExpr") {
        const modifier = ref.name === "AnchoredExpr" ? "anchored" : "smoothed";
        const word = node.getChild(ref.name === "AnchoredExpr" ? "Anchored" : "Smoothed");
        found = construct(modifier, word?.from ?? ref.from) ?? modifierError(expr, node, modifier);
      } else if (ref.name === "BinaryExpr") {
        const fill = node.getChild("FillModifier");
        if (fill !== null) found = construct("fill", fill.from);
        const range = [node.firstChild, node.lastChild].find((n) => isRange(n));
        if (found === undefined && range != null) {
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
 * What keeps Prometheus release `target.version`, run with `target.features` (its `--enable-feature` flags), from
 * parsing `expr`, with its position ("unexpected end of input at 1:14", `unknown function with name "foo" at 1:1`),
 * or undefined when it parses. Without a target: the newest release this package knows
 * ({@link NEWEST_KNOWN_PROMETHEUS}), no flags.
 *
 * Checks the grammar (brackets, operators, modifiers, strings); the functions against {@link PROMQL_FUNCTIONS}
 * (known to that release, not behind a flag it lacks: `first_over_time` is refused on 3.5.0 as a function 3.7.0
 * added, and on 3.10.0 without promql-experimental-functions; the argument count, range vectors where they belong:
 * `rate(x)` and `abs(x[5m])` are refused); the constructs of {@link PROMQL_CONSTRUCTS} (limitk, duration
 * expressions, anchored and smoothed, fill modifiers) the same way; range vectors in aggregations and binary
 * expressions; and the regular expressions of `=~` and `!~` matchers with RE2 (re2js), as Prometheus' parser
 * compiles them (the grammar alone accepts `foo{a=~"("}`). A refusal names the release that added the function or
 * construct, or the flag it needs. Not checked (promtool's and Prometheus' job): scalar against instant vector
 * arguments, selectors that match only empty labels (`{a=""}`), and what only evaluation finds. Throws a
 * RangeError when `target.version` is not MAJOR.MINOR.PATCH from 3.0.0 on.
 */
export function promqlError(expr: string, target: PromqlTarget = DEFAULT_TARGET): string | undefined {
  const t = resolveTarget(target);
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
        const name = expr.slice(before.from, before.to);
        const where = position(expr, before.from);
        return (
          functionError(name, where, t) ??
          // A function the target has (behind its flag) that the grammar, older than the table, cannot parse.
          `function "${name}" at ${where} cannot be checked: the PromQL grammar this check uses (@prometheus-io/lezer-promql) does not parse it yet, so it is refused rather than passed unchecked`
        );
      }
    }
    return `unexpected ${JSON.stringify(token)} at ${at}`;
  }
  return typeError(expr, tree, t) ?? regexError(expr, tree);
}

/** Unquotes a PromQL string literal ("..." or '...' with backslash escapes, or `...`). */
function unquote(literal: string): string {
  if (literal.startsWith("`")) return literal.slice(1, -1);
  const body = literal.slice(1, -1);
  return body.replace(/\\(.)/g, "$1");
}

/**
 * The metric names `expr` selects, sorted and without repeats: `foo` in `foo{a="b"}` and `{__name__="foo"}`
 * (a `__name__` regex names no metric and is left out). Throws when `expr` does not parse for `target` (see
 * {@link promqlError}).
 */
export function promqlMetricNames(expr: string, target: PromqlTarget = DEFAULT_TARGET): string[] {
  const err = promqlError(expr, target);
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
