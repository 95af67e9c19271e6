// spec.enableFeatures: the flags each Prometheus release knows, the one --enable-feature argument of the pods, what
// the server is Degraded for, and that every flag the PromQL check honours is one the table knows from the release
// that added the construct on.
import {
  compareVersions,
  EXPERIMENTAL_FUNCTIONS_FLAG,
  NEWEST_KNOWN_PROMETHEUS,
  PROMQL_CONSTRUCTS,
} from "@capstan/promql";
import { describe, expect, it } from "vitest";
import { defaultSpec } from "./config-fixtures.ts";
import {
  enabledFeatures,
  FEATURE_FLAGS,
  featureArgs,
  featureFlagProblems,
  knownFeatureFlags,
} from "./feature-flags.ts";

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
    const releases = FEATURE_FLAGS.map(([since]) => since);
    expect([...releases].sort(compareVersions)).toEqual(releases);
    expect(releases.at(-1)).toBe(NEWEST_KNOWN_PROMETHEUS);
    const flags = FEATURE_FLAGS.flatMap(([, names]) => names);
    expect(new Set(flags).size).toBe(flags.length);
  });

  it("knows every flag the PromQL check honours, from the release that added its construct", () => {
    const needed = [
      { feature: EXPERIMENTAL_FUNCTIONS_FLAG, since: "3.0.0" },
      ...Object.values(PROMQL_CONSTRUCTS).filter((c) => c.feature !== undefined),
    ];
    for (const c of needed) expect(knownFeatureFlags(c.since).has(c.feature!), c.feature).toBe(true);
  });
});

describe("the pods' argument", () => {
  it("is one --enable-feature with the flags sorted and once each (their order means nothing)", () => {
    expect(featureArgs({ enableFeatures: ["promql-experimental-functions", "exemplar-storage"] })).toEqual([
      "--enable-feature=exemplar-storage,promql-experimental-functions",
    ]);
    expect(enabledFeatures({ enableFeatures: ["b", "a", "b"] })).toEqual(["a", "b"]);
  });

  it("is left out without flags", () => {
    expect(featureArgs({})).toEqual([]);
    expect(featureArgs({ enableFeatures: [] })).toEqual([]);
  });
});

describe("Degraded for a flag the server's release does not know", () => {
  it("names the field and the release that added it", () => {
    const problems = featureFlagProblems({
      ...defaultSpec,
      version: "3.5.0",
      enableFeatures: ["promql-experimental-functions", "promql-binop-fill-modifiers"],
    });
    expect(problems).toEqual([
      'spec.enableFeatures[1] "promql-binop-fill-modifiers" came in Prometheus 3.10.0; Prometheus 3.5.0 ignores it (with a warning), and rules are checked without it: remove it or run 3.10.0 or later',
    ]);
  });

  it("says when no release has it (a misspelt flag)", () => {
    const [problem] = featureFlagProblems({
      ...defaultSpec,
      enableFeatures: ["promql-experimental-function"],
    });
    expect(problem).toContain(
      'spec.enableFeatures[0] "promql-experimental-function" is not a feature flag of any Prometheus release up to 3.16.0',
    );
    expect(problem).toContain("correct its name");
  });

  it("is quiet for known flags, and for a release newer than the table (it may have added flags)", () => {
    expect(featureFlagProblems({ ...defaultSpec, enableFeatures: ["query-cost", "old-ui"] })).toEqual([]);
    expect(featureFlagProblems({ ...defaultSpec, version: "3.17.0", enableFeatures: ["new-flag"] })).toEqual(
      [],
    );
    expect(
      featureFlagProblems({ ...defaultSpec, version: "3.16.0", enableFeatures: ["new-flag"] }),
    ).toHaveLength(1);
  });
});
