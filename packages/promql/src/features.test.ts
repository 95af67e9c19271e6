// The one table of Prometheus' --enable-feature flags: which release knows which, in order, and every flag the PromQL
// check honours known from the release that added its construct (a flag misspelt in constructs.ts or functions.ts, or
// dated after its construct, fails here).
import { describe, expect, it } from "vitest";
import { PROMQL_CONSTRUCTS } from "./constructs.ts";
import { featureFlagSince, knownFeatureFlags, PROMETHEUS_FEATURE_FLAGS } from "./features.ts";
import { EXPERIMENTAL_FUNCTIONS_FLAG, PROMQL_FUNCTIONS } from "./functions.ts";
import { compareVersions, NEWEST_KNOWN_PROMETHEUS } from "./target.ts";

describe("the flags of each release", () => {
  it.each<[string, string, boolean]>([
    ["3.0.0", "promql-experimental-functions", true],
    ["3.0.0", "native-histograms", true],
    ["3.3.1", "promql-duration-expr", false],
    ["3.4.0", "promql-duration-expr", true],
    ["3.6.0", "promql-extended-range-selectors", false],
    ["3.7.0", "promql-extended-range-selectors", true],
    ["3.9.1", "promql-binop-fill-modifiers", false],
    ["3.10.0", "promql-binop-fill-modifiers", true],
    ["3.16.0", "query-cost", true],
    ["3.16.0", "promql-experimental-function", false],
    ["3.16.0", "agent", false],
  ])("Prometheus %s knows %s: %s", (version, flag, known) => {
    expect(knownFeatureFlags(version).has(flag)).toBe(known);
  });

  it("lists releases in order, up to the newest the operator knows, each flag once", () => {
    const releases = PROMETHEUS_FEATURE_FLAGS.map(([since]) => since);
    expect([...releases].sort(compareVersions)).toEqual(releases);
    expect(releases.at(-1)).toBe(NEWEST_KNOWN_PROMETHEUS);
    const flags = PROMETHEUS_FEATURE_FLAGS.flatMap(([, names]) => names);
    expect(new Set(flags).size).toBe(flags.length);
  });

  it("knows every flag the PromQL check honours, from the release that added its construct", () => {
    const needed = [
      ...Object.values(PROMQL_FUNCTIONS)
        .filter((f) => f.experimental)
        .map((f) => ({ feature: EXPERIMENTAL_FUNCTIONS_FLAG, since: f.since })),
      ...Object.values(PROMQL_CONSTRUCTS).filter((c) => c.feature !== undefined),
    ];
    expect(needed.length).toBeGreaterThan(5);
    for (const c of needed) expect(knownFeatureFlags(c.since).has(c.feature!), c.feature).toBe(true);
  });

  it("says which release added a flag, and none for a misspelt one", () => {
    expect(featureFlagSince("promql-binop-fill-modifiers")).toBe("3.10.0");
    expect(featureFlagSince("exemplar-storage")).toBe("3.0.0");
    expect(featureFlagSince("promql-experimental-function")).toBeUndefined();
  });
});
