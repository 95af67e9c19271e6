// The `--enable-feature` flags of every Prometheus 3 release: the one table of them in the project. The PromQL check
// (constructs.ts, functions.ts) names the flags it honours; a test holds each to this table. Facts read from
// setFeatureListOptions in cmd/prometheus/main.go of every release from 3.0.0 to 3.14.0 and 3.16.0, and from the
// 3.15.0 section of CHANGELOG.md (openmetrics2, zstd-scrape). No flag left a 3.x release; some became no-ops, which
// Prometheus accepts with a warning (ooo-native-histograms from 3.4.0, native-histograms from 3.9.0,
// promql-duration-expr from 3.14.0, promql-extended-range-selectors from 3.16.0). Prometheus itself only warns about
// a flag it does not know, and goes on without it.
import { atLeast } from "./target.ts";

/** Every flag of Prometheus 3, by the release that added it. */
export const PROMETHEUS_FEATURE_FLAGS: readonly (readonly [since: string, names: readonly string[]])[] = [
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

/** The flags Prometheus `version` knows. */
export function knownFeatureFlags(version: string): ReadonlySet<string> {
  return new Set(
    PROMETHEUS_FEATURE_FLAGS.filter(([since]) => atLeast(version, since)).flatMap(([, names]) => names),
  );
}

/** The release that added flag `flag`, or undefined when no release up to NEWEST_KNOWN_PROMETHEUS has it. */
export function featureFlagSince(flag: string): string | undefined {
  return PROMETHEUS_FEATURE_FLAGS.find(([, names]) => names.includes(flag))?.[0];
}
