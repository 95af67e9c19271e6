// promqlError for a given Prometheus release and its feature flags, over testdata/promql-version-cases.json (the real
// promtool checks the rows of its own release too); the tables' shape; targets that are not a release.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROMQL_CONSTRUCTS } from "./constructs.ts";
import { EXPERIMENTAL_FUNCTIONS_FLAG, PROMQL_FUNCTIONS } from "./functions.ts";
import { promqlError, promqlMetricNames } from "./promql.ts";
import { compareVersions, NEWEST_KNOWN_PROMETHEUS, OLDEST_KNOWN_PROMETHEUS } from "./target.ts";

interface VersionCase {
  expr: string;
  version: string;
  features?: string[];
  message?: string;
  stricter?: true;
}
const { rows } = JSON.parse(
  readFileSync(new URL("../testdata/promql-version-cases.json", import.meta.url), "utf8"),
) as { rows: VersionCase[] };

describe("promqlError for a release and its flags", () => {
  it.each(rows)("Prometheus $version $features: $expr", (row) => {
    const target = { version: row.version, features: row.features ?? [] };
    expect(promqlError(row.expr, target)).toBe(row.message);
  });

  it("covers the 3.5 LTS, the newest release, flags on and off, accepted and refused", () => {
    expect(rows.some((r) => r.version.startsWith("3.5.") && r.message !== undefined)).toBe(true);
    expect(rows.some((r) => r.version === NEWEST_KNOWN_PROMETHEUS && r.message === undefined)).toBe(true);
    expect(rows.some((r) => (r.features ?? []).length > 0 && r.message === undefined)).toBe(true);
  });

  it("refuses first_over_time on 3.5 naming the release that added it, and takes it from 3.14 on", () => {
    expect(promqlError("first_over_time(x[5m])", { version: "3.5.0" })).toContain("it came in 3.7.0");
    expect(promqlError("first_over_time(x[5m])", { version: "3.14.0" })).toBeUndefined();
    // Without a target: the newest release the tables know.
    expect(promqlError("first_over_time(x[5m])")).toBeUndefined();
    expect(promqlMetricNames("first_over_time(x[5m])")).toEqual(["x"]);
    expect(() => promqlMetricNames("first_over_time(x[5m])", { version: "3.5.0" })).toThrow(
      /came in 3\.7\.0/,
    );
  });

  it("takes every function of the table on the release that added it, with the flag it needed", () => {
    for (const [name, fn] of Object.entries(PROMQL_FUNCTIONS)) {
      if (["integral", "min_of", "max_of"].includes(name)) continue; // the grammar does not parse them yet
      const args = fn.args.map((t) =>
        t === "matrix" ? "x[5m]" : t === "scalar" ? "1" : t === "string" ? '"a"' : "x",
      );
      const expr = `${name}(${args.join(", ")})`;
      const features = fn.experimental ? [EXPERIMENTAL_FUNCTIONS_FLAG] : [];
      expect(promqlError(expr, { version: fn.since, features }), expr).toBeUndefined();
      if (fn.experimental) {
        expect(promqlError(expr, { version: fn.since }), expr).toMatch(/is not enabled/);
      }
      if (fn.since !== OLDEST_KNOWN_PROMETHEUS) {
        expect(promqlError(expr, { version: "3.0.0", features }), expr).toMatch(/unknown function/);
      }
    }
  });
});

describe("the tables", () => {
  it("say releases between 3.0.0 and the newest known, a flag lifted only after it came", () => {
    const items = [...Object.values(PROMQL_FUNCTIONS), ...Object.values(PROMQL_CONSTRUCTS)];
    for (const item of items) {
      expect(compareVersions(item.since, OLDEST_KNOWN_PROMETHEUS)).toBeGreaterThanOrEqual(0);
      expect(compareVersions(item.since, NEWEST_KNOWN_PROMETHEUS)).toBeLessThanOrEqual(0);
      if (item.stableSince !== undefined) {
        expect(compareVersions(item.stableSince, item.since)).toBeGreaterThan(0);
      }
    }
  });
});

describe("targets", () => {
  it.each(["3.5", "v3.5.0", "3.5.0-rc.0", ""])("refuses version %j", (version) => {
    expect(() => promqlError("up", { version })).toThrow(RangeError);
  });

  it("refuses Prometheus 2, which the tables do not describe", () => {
    expect(() => promqlError("up", { version: "2.53.0" })).toThrow(/start at 3\.0\.0/);
  });

  it("compares releases numerically", () => {
    expect(compareVersions("3.16.0", "3.6.0")).toBeGreaterThan(0);
    expect(compareVersions("3.5.5", "3.5.10")).toBeLessThan(0);
    expect(compareVersions("3.7.0", "3.7.0")).toBe(0);
  });
});
