// The `--enable-feature` flags of a Prometheus server (spec.enableFeatures): the argument the pods get, and what the
// operator reports about a flag the server's release does not know. Which flags each release knows is
// @capstan/promql's table (PROMETHEUS_FEATURE_FLAGS), the same one the PromQL check of the rules honours. Pure.
import { atLeast, featureFlagSince, knownFeatureFlags, NEWEST_KNOWN_PROMETHEUS } from "@capstan/promql";
import { DEFAULT_PROMETHEUS_VERSION, type PrometheusSpec } from "../api/prometheus.ts";

/** The flag that made Prometheus 3.0 to 3.7 scrape native histograms (3.8.0 has `scrape_native_histograms`). */
export const NATIVE_HISTOGRAMS_FLAG = "native-histograms";

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
    const since = featureFlagSince(flag);
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
