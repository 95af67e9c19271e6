// Prometheus' PromQL functions, as Prometheus v3.16.0 declares them (promql/parser/functions.go): the argument
// types, how many times the last argument may repeat, and whether the function needs
// --enable-feature=promql-experimental-functions (which the servers Capstan runs do not set). Copied from that file
// when the Prometheus version changes; operators/prometheus/src/desired/promql.real.test.ts checks the real promtool
// agrees with promqlError.

/** A PromQL value type, as functions declare their arguments. */
export type PromqlType = "vector" | "matrix" | "scalar" | "string";

/** One function's signature. */
export interface PromqlFunction {
  /** Argument types; with `variadic`, the last may be left out or repeated. */
  args: PromqlType[];
  /** 0: exactly `args`; n > 0: the last argument optional and repeated up to n times; -1: any number of times. */
  variadic: number;
  /** Behind --enable-feature=promql-experimental-functions. */
  experimental?: true;
}

/** Every function Prometheus v3.16.0 knows, by name. */
export const PROMQL_FUNCTIONS: Readonly<Record<string, PromqlFunction>> = {
  abs: { args: ["vector"], variadic: 0 },
  absent: { args: ["vector"], variadic: 0 },
  absent_over_time: { args: ["matrix"], variadic: 0 },
  acos: { args: ["vector"], variadic: 0 },
  acosh: { args: ["vector"], variadic: 0 },
  asin: { args: ["vector"], variadic: 0 },
  asinh: { args: ["vector"], variadic: 0 },
  atan: { args: ["vector"], variadic: 0 },
  atanh: { args: ["vector"], variadic: 0 },
  avg_over_time: { args: ["matrix"], variadic: 0 },
  ceil: { args: ["vector"], variadic: 0 },
  changes: { args: ["matrix"], variadic: 0 },
  clamp: { args: ["vector", "scalar", "scalar"], variadic: 0 },
  clamp_max: { args: ["vector", "scalar"], variadic: 0 },
  clamp_min: { args: ["vector", "scalar"], variadic: 0 },
  cos: { args: ["vector"], variadic: 0 },
  cosh: { args: ["vector"], variadic: 0 },
  count_over_time: { args: ["matrix"], variadic: 0 },
  days_in_month: { args: ["vector"], variadic: 1 },
  day_of_month: { args: ["vector"], variadic: 1 },
  day_of_week: { args: ["vector"], variadic: 1 },
  day_of_year: { args: ["vector"], variadic: 1 },
  deg: { args: ["vector"], variadic: 0 },
  end: { args: [], variadic: 0, experimental: true },
  delta: { args: ["matrix"], variadic: 0 },
  deriv: { args: ["matrix"], variadic: 0 },
  exp: { args: ["vector"], variadic: 0 },
  first_over_time: { args: ["matrix"], variadic: 0 },
  floor: { args: ["vector"], variadic: 0 },
  histogram_avg: { args: ["vector"], variadic: 0 },
  histogram_count: { args: ["vector"], variadic: 0 },
  histogram_sum: { args: ["vector"], variadic: 0 },
  histogram_stddev: { args: ["vector"], variadic: 0 },
  histogram_stdvar: { args: ["vector"], variadic: 0 },
  histogram_fraction: { args: ["scalar", "scalar", "vector"], variadic: 0 },
  histogram_quantile: { args: ["scalar", "vector"], variadic: 0 },
  histogram_quantiles: { args: ["vector", "string", "scalar", "scalar"], variadic: 9, experimental: true },
  double_exponential_smoothing: { args: ["matrix", "scalar", "scalar"], variadic: 0, experimental: true },
  hour: { args: ["vector"], variadic: 1 },
  idelta: { args: ["matrix"], variadic: 0 },
  increase: { args: ["matrix"], variadic: 0 },
  info: { args: ["vector", "vector"], variadic: 1, experimental: true },
  integral: { args: ["matrix", "scalar"], variadic: 1, experimental: true },
  irate: { args: ["matrix"], variadic: 0 },
  label_replace: { args: ["vector", "string", "string", "string", "string"], variadic: 0 },
  label_join: { args: ["vector", "string", "string", "string"], variadic: -1 },
  max_of: { args: ["scalar", "scalar"], variadic: 0, experimental: true },
  last_over_time: { args: ["matrix"], variadic: 0 },
  min_of: { args: ["scalar", "scalar"], variadic: 0, experimental: true },
  ln: { args: ["vector"], variadic: 0 },
  log10: { args: ["vector"], variadic: 0 },
  log2: { args: ["vector"], variadic: 0 },
  mad_over_time: { args: ["matrix"], variadic: 0, experimental: true },
  max_over_time: { args: ["matrix"], variadic: 0 },
  min_over_time: { args: ["matrix"], variadic: 0 },
  ts_of_first_over_time: { args: ["matrix"], variadic: 0, experimental: true },
  ts_of_max_over_time: { args: ["matrix"], variadic: 0, experimental: true },
  ts_of_min_over_time: { args: ["matrix"], variadic: 0, experimental: true },
  ts_of_last_over_time: { args: ["matrix"], variadic: 0, experimental: true },
  minute: { args: ["vector"], variadic: 1 },
  month: { args: ["vector"], variadic: 1 },
  pi: { args: [], variadic: 0 },
  predict_linear: { args: ["matrix", "scalar"], variadic: 0 },
  present_over_time: { args: ["matrix"], variadic: 0 },
  quantile_over_time: { args: ["scalar", "matrix"], variadic: 0 },
  rad: { args: ["vector"], variadic: 0 },
  range: { args: [], variadic: 0, experimental: true },
  rate: { args: ["matrix"], variadic: 0 },
  resets: { args: ["matrix"], variadic: 0 },
  round: { args: ["vector", "scalar"], variadic: 1 },
  scalar: { args: ["vector"], variadic: 0 },
  sgn: { args: ["vector"], variadic: 0 },
  sin: { args: ["vector"], variadic: 0 },
  sinh: { args: ["vector"], variadic: 0 },
  sort: { args: ["vector"], variadic: 0 },
  sort_desc: { args: ["vector"], variadic: 0 },
  sort_by_label: { args: ["vector", "string"], variadic: -1, experimental: true },
  sort_by_label_desc: { args: ["vector", "string"], variadic: -1, experimental: true },
  sqrt: { args: ["vector"], variadic: 0 },
  start: { args: [], variadic: 0, experimental: true },
  start_timestamp: { args: ["vector"], variadic: 0, experimental: true },
  step: { args: [], variadic: 0, experimental: true },
  stddev_over_time: { args: ["matrix"], variadic: 0 },
  stdvar_over_time: { args: ["matrix"], variadic: 0 },
  sum_over_time: { args: ["matrix"], variadic: 0 },
  tan: { args: ["vector"], variadic: 0 },
  tanh: { args: ["vector"], variadic: 0 },
  time: { args: [], variadic: 0 },
  timestamp: { args: ["vector"], variadic: 0 },
  vector: { args: ["scalar"], variadic: 0 },
  year: { args: ["vector"], variadic: 1 },
};

/** Aggregations behind the same feature flag. */
export const EXPERIMENTAL_AGGREGATIONS: readonly string[] = ["limitk", "limit_ratio"];
