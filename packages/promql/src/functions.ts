// Prometheus' PromQL functions in one table, by release: each function's argument types, how many times its last
// argument may repeat, the release that added it, and whether it needs --enable-feature=promql-experimental-functions
// (and from which release on it no longer does). Facts read from promql/parser/functions.go of every Prometheus 3
// release: 3.0.0, 3.1.0, 3.2.0, 3.3.0, 3.4.0, 3.5.0 (and the 3.5 LTS patches to 3.5.5), 3.6.0, 3.7.0 (to 3.7.3),
// 3.8.0, 3.9.0, 3.10.0, 3.11.0 (to 3.11.3), 3.12.0, 3.13.0 (to 3.13.2), 3.14.0, 3.15.0 and 3.16.0; no patch release
// changed it, and no signature changed within 3.x. "since: 3.0.0" means "in every 3.x" (many are older).
// A new Prometheus release: compare its functions.go with this table and add what changed, with the release.

/** A PromQL value type, as functions declare their arguments. */
export type PromqlType = "vector" | "matrix" | "scalar" | "string";

/** The flag Prometheus keeps its experimental functions and aggregations behind. */
export const EXPERIMENTAL_FUNCTIONS_FLAG = "promql-experimental-functions";

/** One function's signature and history. */
export interface PromqlFunction {
  /** Argument types; with `variadic`, the last may be left out or repeated. */
  args: readonly PromqlType[];
  /** 0: exactly `args`; n > 0: the last argument optional and repeated up to n times; -1: any number of times. */
  variadic: number;
  /** The Prometheus release that added it ("3.0.0": every 3.x has it). */
  since: string;
  /** Behind --enable-feature=promql-experimental-functions (until `stableSince`, when set). */
  experimental?: true;
  /** The release from which it works without the flag. */
  stableSince?: string;
}

/** Every function of Prometheus 3.0.0 to 3.16.0, by name. */
export const PROMQL_FUNCTIONS: Readonly<Record<string, PromqlFunction>> = {
  abs: { args: ["vector"], variadic: 0, since: "3.0.0" },
  absent: { args: ["vector"], variadic: 0, since: "3.0.0" },
  absent_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  acos: { args: ["vector"], variadic: 0, since: "3.0.0" },
  acosh: { args: ["vector"], variadic: 0, since: "3.0.0" },
  asin: { args: ["vector"], variadic: 0, since: "3.0.0" },
  asinh: { args: ["vector"], variadic: 0, since: "3.0.0" },
  atan: { args: ["vector"], variadic: 0, since: "3.0.0" },
  atanh: { args: ["vector"], variadic: 0, since: "3.0.0" },
  avg_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  ceil: { args: ["vector"], variadic: 0, since: "3.0.0" },
  changes: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  clamp: { args: ["vector", "scalar", "scalar"], variadic: 0, since: "3.0.0" },
  clamp_max: { args: ["vector", "scalar"], variadic: 0, since: "3.0.0" },
  clamp_min: { args: ["vector", "scalar"], variadic: 0, since: "3.0.0" },
  cos: { args: ["vector"], variadic: 0, since: "3.0.0" },
  cosh: { args: ["vector"], variadic: 0, since: "3.0.0" },
  count_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  day_of_month: { args: ["vector"], variadic: 1, since: "3.0.0" },
  day_of_week: { args: ["vector"], variadic: 1, since: "3.0.0" },
  day_of_year: { args: ["vector"], variadic: 1, since: "3.0.0" },
  days_in_month: { args: ["vector"], variadic: 1, since: "3.0.0" },
  deg: { args: ["vector"], variadic: 0, since: "3.0.0" },
  delta: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  deriv: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  double_exponential_smoothing: {
    args: ["matrix", "scalar", "scalar"],
    variadic: 0,
    since: "3.0.0",
    experimental: true,
  },
  end: { args: [], variadic: 0, since: "3.12.0", experimental: true },
  exp: { args: ["vector"], variadic: 0, since: "3.0.0" },
  first_over_time: {
    args: ["matrix"],
    variadic: 0,
    since: "3.7.0",
    experimental: true,
    stableSince: "3.14.0",
  },
  floor: { args: ["vector"], variadic: 0, since: "3.0.0" },
  histogram_avg: { args: ["vector"], variadic: 0, since: "3.0.0" },
  histogram_count: { args: ["vector"], variadic: 0, since: "3.0.0" },
  histogram_fraction: { args: ["scalar", "scalar", "vector"], variadic: 0, since: "3.0.0" },
  histogram_quantile: { args: ["scalar", "vector"], variadic: 0, since: "3.0.0" },
  histogram_quantiles: {
    args: ["vector", "string", "scalar", "scalar"],
    variadic: 9,
    since: "3.11.0",
    experimental: true,
  },
  histogram_stddev: { args: ["vector"], variadic: 0, since: "3.0.0" },
  histogram_stdvar: { args: ["vector"], variadic: 0, since: "3.0.0" },
  histogram_sum: { args: ["vector"], variadic: 0, since: "3.0.0" },
  hour: { args: ["vector"], variadic: 1, since: "3.0.0" },
  idelta: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  increase: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  info: { args: ["vector", "vector"], variadic: 1, since: "3.0.0", experimental: true },
  integral: { args: ["matrix", "scalar"], variadic: 1, since: "3.16.0", experimental: true },
  irate: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  label_join: { args: ["vector", "string", "string", "string"], variadic: -1, since: "3.0.0" },
  label_replace: { args: ["vector", "string", "string", "string", "string"], variadic: 0, since: "3.0.0" },
  last_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  ln: { args: ["vector"], variadic: 0, since: "3.0.0" },
  log10: { args: ["vector"], variadic: 0, since: "3.0.0" },
  log2: { args: ["vector"], variadic: 0, since: "3.0.0" },
  mad_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0", experimental: true },
  max_of: { args: ["scalar", "scalar"], variadic: 0, since: "3.13.0", experimental: true },
  max_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  min_of: { args: ["scalar", "scalar"], variadic: 0, since: "3.13.0", experimental: true },
  min_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  minute: { args: ["vector"], variadic: 1, since: "3.0.0" },
  month: { args: ["vector"], variadic: 1, since: "3.0.0" },
  pi: { args: [], variadic: 0, since: "3.0.0" },
  predict_linear: { args: ["matrix", "scalar"], variadic: 0, since: "3.0.0" },
  present_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  quantile_over_time: { args: ["scalar", "matrix"], variadic: 0, since: "3.0.0" },
  rad: { args: ["vector"], variadic: 0, since: "3.0.0" },
  range: { args: [], variadic: 0, since: "3.12.0", experimental: true },
  rate: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  resets: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  round: { args: ["vector", "scalar"], variadic: 1, since: "3.0.0" },
  scalar: { args: ["vector"], variadic: 0, since: "3.0.0" },
  sgn: { args: ["vector"], variadic: 0, since: "3.0.0" },
  sin: { args: ["vector"], variadic: 0, since: "3.0.0" },
  sinh: { args: ["vector"], variadic: 0, since: "3.0.0" },
  sort: { args: ["vector"], variadic: 0, since: "3.0.0" },
  sort_by_label: { args: ["vector", "string"], variadic: -1, since: "3.0.0", experimental: true },
  sort_by_label_desc: { args: ["vector", "string"], variadic: -1, since: "3.0.0", experimental: true },
  sort_desc: { args: ["vector"], variadic: 0, since: "3.0.0" },
  sqrt: { args: ["vector"], variadic: 0, since: "3.0.0" },
  start: { args: [], variadic: 0, since: "3.12.0", experimental: true },
  start_timestamp: { args: ["vector"], variadic: 0, since: "3.14.0", experimental: true },
  stddev_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  stdvar_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  step: { args: [], variadic: 0, since: "3.12.0", experimental: true },
  sum_over_time: { args: ["matrix"], variadic: 0, since: "3.0.0" },
  tan: { args: ["vector"], variadic: 0, since: "3.0.0" },
  tanh: { args: ["vector"], variadic: 0, since: "3.0.0" },
  time: { args: [], variadic: 0, since: "3.0.0" },
  timestamp: { args: ["vector"], variadic: 0, since: "3.0.0" },
  ts_of_first_over_time: { args: ["matrix"], variadic: 0, since: "3.7.0", experimental: true },
  ts_of_last_over_time: { args: ["matrix"], variadic: 0, since: "3.5.0", experimental: true },
  ts_of_max_over_time: { args: ["matrix"], variadic: 0, since: "3.5.0", experimental: true },
  ts_of_min_over_time: { args: ["matrix"], variadic: 0, since: "3.5.0", experimental: true },
  vector: { args: ["scalar"], variadic: 0, since: "3.0.0" },
  year: { args: ["vector"], variadic: 1, since: "3.0.0" },
};
