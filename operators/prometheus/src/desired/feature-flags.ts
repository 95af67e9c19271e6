// The `--enable-feature` flags of a Prometheus server (spec.enableFeatures): which flags each Prometheus 3 release
// knows, the argument the pods get, and what the operator reports about a flag the server's release does not know.
// Facts read from setFeatureListOptions in cmd/prometheus/main.go of every release from 3.0.0 to 3.14.0 and 3.16.0,
// and from the 3.15.0 section of CHANGELOG.md (openmetrics2, zstd-scrape). No flag left a 3.x release; some became
// no-ops, which Prometheus accepts with a warning (ooo-native-histograms from 3.4.0, native-histograms from 3.9.0,
// promql-duration-expr from 3.14.0, promql-extended-range-selectors from 3.16.0). Prometheus itself only warns
// about a flag it does not know, and goes on without it. Pure.
import { atLeast, NEWEST_KNOWN_PROMETHEUS } from "@capstan/promql";
import { DEFAULT_PROMETHEUS_VERSION, type PrometheusSpec } from "../api/prometheus.ts";

/** Every flag of Prometheus 3, by the release that added it. */
export const FEATURE_FLAGS: readonly (readonly [since: string, names: readonly string[]])[] = [
  [
    "3.0.0",
    [
      "auto-reload-config",
      "concurrent-rule-eval",
      "created-timestamp-zero-ingestion",
      "delayed-compaction",
      "exemplar-storage",
      "extra-scrape-metrics",
      "memory-snapshot-on-shutdown",
      "metadata-wal-records",
      "native-histograms",
      "old-ui",
      "ooo-native-histograms",
      "promql-delayed-name-removal",
      "promql-experimental-functions",
      "promql-per-step-stats",
    ],
  ],
  ["3.2.0", ["otlp-deltatocumulative"]],
  ["3.4.0", ["otlp-native-delta-ingestion", "promql-duration-expr"]],
  ["3.5.0", ["type-and-unit-labels", "use-uncached-io"]],
  ["3.7.0", ["promql-extended-range-selectors"]],
  ["3.10.0", ["promql-binop-fill-modifiers", "st-storage"]],
  ["3.11.0", ["fast-startup", "xor2-encoding"]],
  ["3.12.0", ["st-synthesis", "use-start-timestamps"]],
  ["3.13.0", ["search-api"]],
  ["3.14.0", ["histograms-st-encoding"]],
  ["3.15.0", ["openmetrics2", "zstd-scrape"]],
  ["3.16.0", ["promql-unquoted-utf8-names", "query-cost"]],
];

/** The flag that made Prometheus 3.0 to 3.7 scrape native histograms (3.8.0 has `scrape_native_histograms`). */
export const NATIVE_HISTOGRAMS_FLAG = "native-histograms";

/** The flags Prometheus `version` knows. */
export function knownFeatureFlags(version: string): ReadonlySet<string> {
  return new Set(FEATURE_FLAGS.filter(([since]) => atLeast(version, since)).flatMap(([, names]) => names));
}

/** The flags a server runs with: spec.enableFeatures without duplicates, sorted (their order means nothing). */
export function enabledFeatures(spec: Pick<PrometheusSpec, "enableFeatures">): string[] {
  return [...new Set(spec.enableFeatures ?? [])].sort();
}

/** The `--enable-feature` argument of the prometheus container, or none. */
export function featureArgs(spec: Pick<PrometheusSpec, "enableFeatures">): string[] {
  const flags = enabledFeatures(spec);
  return flags.length === 0 ? [] : [`--enable-feature=${flags.join(",")}`];
}

/**
 * What the operator says about spec.enableFeatures (a Degraded message per flag the server's release does not know,
 * naming the field), or nothing. A flag unknown to the release is still passed on: Prometheus warns and ignores it,
 * and PromQL is checked without it. For a release newer than the operator's table, only the flags it knows are
 * judged (a newer release may have added the others).
 */
export function featureFlagProblems(spec: Pick<PrometheusSpec, "enableFeatures" | "version">): string[] {
  const version = spec.version ?? DEFAULT_PROMETHEUS_VERSION;
  if (!atLeast(NEWEST_KNOWN_PROMETHEUS, version)) return [];
  const known = knownFeatureFlags(version);
  const problems: string[] = [];
  (spec.enableFeatures ?? []).forEach((flag, i) => {
    if (known.has(flag)) return;
    const since = FEATURE_FLAGS.find(([, names]) => names.includes(flag))?.[0];
    const why =
      since === undefined
        ? `is not a feature flag of any Prometheus release up to ${NEWEST_KNOWN_PROMETHEUS}`
        : `came in Prometheus ${since}`;
    problems.push(
      `spec.enableFeatures[${i}] ${JSON.stringify(flag)} ${why}; Prometheus ${version} ignores it (with a warning), and rules are checked without it: remove it${since === undefined ? " or correct its name" : ` or run ${since} or later`}`,
    );
  });
  return problems;
}
