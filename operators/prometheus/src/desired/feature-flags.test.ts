// spec.enableFeatures: the one --enable-feature argument of the pods and what the server is Degraded for (which flags
// each release knows is @capstan/promql's table, tested there: packages/promql/src/features.test.ts).
import { knownFeatureFlags } from "@capstan/promql";
import { describe, expect, it } from "vitest";
import { defaultSpec } from "./config-fixtures.ts";
import {
  enabledFeatures,
  featureArgs,
  featureFlagProblems,
  NATIVE_HISTOGRAMS_FLAG,
} from "./feature-flags.ts";

describe("the operator's flags", () => {
  it("are in @capstan/promql's table of Prometheus' flags", () => {
    expect(knownFeatureFlags("3.0.0").has(NATIVE_HISTOGRAMS_FLAG)).toBe(true);
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
