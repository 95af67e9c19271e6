/**
 * @capstan/promql: the PromQL check of the whole project, for the Prometheus release that will load an expression
 * and its feature flags. On the Prometheus project's own grammar (@prometheus-io/lezer-promql), with one table of
 * functions ({@link PROMQL_FUNCTIONS}) and of other version-dependent parts ({@link PROMQL_CONSTRUCTS}) saying which
 * release added each and the `--enable-feature` flag it needs. The Prometheus operator refuses rules with it at run
 * time; the chart tests check every alert and dashboard query with it.
 *
 * @module @capstan/promql
 */

export {
  PROMQL_CONSTRUCTS,
  type PromqlConstruct,
  type PromqlConstructName,
} from "./constructs.ts";
export { featureFlagSince, knownFeatureFlags, PROMETHEUS_FEATURE_FLAGS } from "./features.ts";
export {
  EXPERIMENTAL_FUNCTIONS_FLAG,
  PROMQL_FUNCTIONS,
  type PromqlFunction,
  type PromqlType,
} from "./functions.ts";
export { promqlError, promqlMetricNames } from "./promql.ts";
export {
  atLeast,
  compareVersions,
  DEFAULT_TARGET,
  NEWEST_KNOWN_PROMETHEUS,
  OLDEST_KNOWN_PROMETHEUS,
  type PromqlTarget,
} from "./target.ts";
