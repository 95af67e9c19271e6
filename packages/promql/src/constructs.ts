// The parts of PromQL besides functions that came, or still are, behind a Prometheus release or an
// --enable-feature flag, in one table. Facts read from promql/parser/{generated_parser.y,parse.go} and
// cmd/prometheus/main.go of every Prometheus 3 release from 3.0.0 to 3.16.0 (the same releases as functions.ts):
// - limitk and limit_ratio: in 3.0.0, behind promql-experimental-functions ever since (3.16.0 too).
// - duration expressions (arithmetic or parentheses in a range, an offset or a subquery step: `x[5m+1m]`,
//   `offset (1h)`): 3.4.0, behind promql-duration-expr; 3.14.0 made the flag a no-op (always on).
// - step() in a duration: 3.6.0; range(): 3.10.0; min_of()/max_of(): 3.13.0; under the same flag and the same
//   3.14.0 no-op. (3.6.0 to 3.11.x parse step() and range() without the flag, as 3.12.0 fixed: the table asks for
//   the flag there too, stricter than those servers, never looser.)
// - the anchored and smoothed modifiers: 3.7.0, behind promql-extended-range-selectors; always on from 3.16.0.
// - fill(), fill_left(), fill_right() on binary operators: 3.10.0, behind promql-binop-fill-modifiers (3.16.0 too).
// Always in 3.x, so not listed: the @ modifier with start()/end(), negative offsets, a number as a duration.
// Not parsed by the grammar this package uses (so refused whatever the target): unquoted UTF-8 names
// (promql-unquoted-utf8-names, 3.16.0), the min()/max() duration syntax of 3.6.0 to 3.12.x.

/** Something PromQL gained in a release, maybe behind a flag at first. */
export interface PromqlConstruct {
  /** How Prometheus names it in a message, e.g. "anchored modifier". */
  what: string;
  /** The release that added it. */
  since: string;
  /** The --enable-feature flag it needs (from `since`, until `stableSince` when set). */
  feature?: string;
  /** The release from which the flag is no longer needed. */
  stableSince?: string;
  /** Prometheus' own message when the flag is missing. */
  notEnabled?: string;
}

/** Names of the constructs the checker looks for. */
export type PromqlConstructName =
  | "limitk"
  | "limit_ratio"
  | "durationExpression"
  | "durationStep"
  | "durationRange"
  | "durationMinMax"
  | "anchored"
  | "smoothed"
  | "fill";

const DURATION_EXPRESSION_NOT_ENABLED = "experimental duration expression is not enabled";

/** Every construct the checker knows, by name. */
export const PROMQL_CONSTRUCTS: Readonly<Record<PromqlConstructName, PromqlConstruct>> = {
  limitk: {
    what: "limitk()",
    since: "3.0.0",
    feature: "promql-experimental-functions",
    notEnabled:
      "limitk() is experimental and must be enabled with --enable-feature=promql-experimental-functions",
  },
  limit_ratio: {
    what: "limit_ratio()",
    since: "3.0.0",
    feature: "promql-experimental-functions",
    notEnabled:
      "limit_ratio() is experimental and must be enabled with --enable-feature=promql-experimental-functions",
  },
  durationExpression: {
    what: "a duration expression",
    since: "3.4.0",
    feature: "promql-duration-expr",
    stableSince: "3.14.0",
    notEnabled: DURATION_EXPRESSION_NOT_ENABLED,
  },
  durationStep: {
    what: "step() in a duration",
    since: "3.6.0",
    feature: "promql-duration-expr",
    stableSince: "3.14.0",
    notEnabled: DURATION_EXPRESSION_NOT_ENABLED,
  },
  durationRange: {
    what: "range() in a duration",
    since: "3.10.0",
    feature: "promql-duration-expr",
    stableSince: "3.14.0",
    notEnabled: DURATION_EXPRESSION_NOT_ENABLED,
  },
  durationMinMax: {
    what: "min_of()/max_of() in a duration",
    since: "3.13.0",
    feature: "promql-duration-expr",
    stableSince: "3.14.0",
    notEnabled: DURATION_EXPRESSION_NOT_ENABLED,
  },
  anchored: {
    what: "the anchored modifier",
    since: "3.7.0",
    feature: "promql-extended-range-selectors",
    stableSince: "3.16.0",
    notEnabled: "anchored modifier is experimental and not enabled",
  },
  smoothed: {
    what: "the smoothed modifier",
    since: "3.7.0",
    feature: "promql-extended-range-selectors",
    stableSince: "3.16.0",
    notEnabled: "smoothed modifier is experimental and not enabled",
  },
  fill: {
    what: "the fill modifier",
    since: "3.10.0",
    feature: "promql-binop-fill-modifiers",
    notEnabled: "binop fill modifiers are experimental and not enabled",
  },
};
