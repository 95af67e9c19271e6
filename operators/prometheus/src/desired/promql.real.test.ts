// The real promtool against the shared PromQL check (@capstan/promql), which the operator uses to refuse rules:
// every expression of packages/promql/testdata/promql-cases.json that promqlError accepts, `promtool check rules`
// accepts, and every one it refuses, promtool refuses; the rows of packages/promql/testdata/promql-version-cases.json
// for promtool's own release the same, with each row's --enable-feature flags, and likewise the rows of 3.5.0 (the
// first LTS release) through that release's own promtool (built alone by
// e2e/images/prometheus/build-promtool.sh; the other releases' rows rest on the table, read from each release's
// source); and the three charts'
// PrometheusRules (rendered with helm, where installed) pass `promtool check rules` whole: expressions, durations,
// templates of the annotations.
// The "real" project (`npm run test:real`); without promtool it fails, saying how to build it (never skips).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findHelm, helmTemplate } from "@capstan/cli/chart";
import { promqlError } from "@capstan/promql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { OLDER_PROMTOOL_RELEASES, promtoolOf } from "../prometheus-binaries.ts";
import {
  type PromtoolResult,
  promtoolCheckRules,
  promtoolFeatures,
  promtoolVersion,
} from "../promtool-check.ts";

const testdata = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../../../packages/promql/testdata/${file}`, import.meta.url), "utf8"));
const cases = testdata("promql-cases.json") as {
  accepts: string[];
  refuses: { expr: string; message: string }[];
};
const versionRows = (
  testdata("promql-version-cases.json") as {
    rows: { expr: string; version: string; features?: string[]; message?: string; stricter?: true }[];
  }
).rows;

let work = "";
let files = 0;

/** `promtool check rules` of `groups` written to a fresh file: whether it passed, and its output. */
function checkRules(groups: unknown, features: readonly string[] = [], binary?: string): PromtoolResult {
  return promtoolCheckRules(join(work, `rules-${files++}.yaml`), stringify({ groups }), features, binary);
}

const oneAlert = (expr: string) => [{ name: "g", rules: [{ alert: "A", expr }] }];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "capstan-promql-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("promqlError agrees with promtool", () => {
  it.each(cases.accepts)("both accept %j", (expr) => {
    expect(promqlError(expr)).toBeUndefined();
    const result = checkRules(oneAlert(expr));
    expect(result.output).toMatch(/SUCCESS/);
    expect(result.ok).toBe(true);
  });

  it.each(cases.refuses)("both refuse $expr", ({ expr, message }) => {
    expect(promqlError(expr)).toBe(message);
    const result = checkRules(oneAlert(expr));
    expect(result.output).toMatch(/FAILED/);
    expect(result.ok).toBe(false);
  });
});

describe("promqlError for promtool's release agrees with promtool, flags and all", () => {
  const version = promtoolVersion();
  const rows = versionRows.filter((r) => r.version === version);

  it("has rows for promtool's release, accepted and refused, with flags and without", () => {
    expect(rows.filter((r) => r.message === undefined).length).toBeGreaterThan(3);
    expect(rows.filter((r) => r.message !== undefined).length).toBeGreaterThan(3);
    expect(rows.filter((r) => (r.features ?? []).length > 0).length).toBeGreaterThan(3);
  });

  it.each(rows)("$expr with [$features]", (row) => {
    const features = row.features ?? [];
    expect(promqlError(row.expr, { version, features })).toBe(row.message);
    const result = checkRules(oneAlert(row.expr), features);
    // A stricter row is one this check refuses although promtool accepts it (a function its grammar cannot parse).
    const promtoolAccepts = row.message === undefined || row.stricter === true;
    expect(result.output).toMatch(promtoolAccepts ? /SUCCESS/ : /FAILED/);
    expect(result.ok).toBe(promtoolAccepts);
  });
});

/**
 * Rows an older promtool cannot judge: a flag its server takes but its promtool does not (promtool 3.5's
 * `--enable-feature` knows only promql-experimental-functions and promql-delayed-name-removal; the 3.5 server also
 * takes promql-duration-expr). Listed here, so that no row is left out unsaid.
 */
const SERVER_ONLY_FLAGS: Record<string, string[]> = {
  "3.5.0": ["rate(x[5m+1m]) [promql-duration-expr]", "x[step()] [promql-duration-expr]"],
};

describe.each(OLDER_PROMTOOL_RELEASES)(
  "promqlError for %s agrees with that release's own promtool",
  (release) => {
    const binary = promtoolOf(release);
    const known = promtoolFeatures(binary);
    const all = versionRows.filter((r) => r.version === release);
    const rows = all.filter((r) => (r.features ?? []).every((f) => known.includes(f)));

    it("is that release's promtool, and the table has rows for it, accepted and refused", () => {
      expect(promtoolVersion(binary)).toBe(release);
      expect(rows.filter((r) => r.message === undefined).length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.message !== undefined).length).toBeGreaterThan(0);
    });

    it("leaves out only the rows whose flag that promtool does not take (its server does)", () => {
      const left = all
        .filter((r) => !rows.includes(r))
        .map((r) => `${r.expr} [${(r.features ?? []).join(",")}]`);
      expect(left).toEqual(SERVER_ONLY_FLAGS[release] ?? []);
    });

    it.each(rows)("$expr with [$features]", (row) => {
      const features = row.features ?? [];
      expect(promqlError(row.expr, { version: release, features })).toBe(row.message);
      const result = checkRules(oneAlert(row.expr), features, binary);
      const promtoolAccepts = row.message === undefined || row.stricter === true;
      expect(result.output).toMatch(promtoolAccepts ? /SUCCESS/ : /FAILED/);
      expect(result.ok).toBe(promtoolAccepts);
    });
  },
);

const helm = findHelm();
const chartsDir = fileURLToPath(new URL("../../../../charts/", import.meta.url));

describe.skipIf(helm === undefined)("the charts' PrometheusRules pass promtool check rules", () => {
  it.each(["etcd-operator", "vault-operator", "prometheus-operator"])("%s", (chart) => {
    const objects = helmTemplate(helm!, join(chartsDir, chart), {
      set: ["prometheusRule.enabled=true", "prometheusRule.alertLabels.team=ops"],
    });
    const rules = objects.filter((o) => o.kind === "PrometheusRule");
    expect(rules).toHaveLength(1);
    const groups = (rules[0]!.spec as { groups: { rules: unknown[] }[] }).groups;
    expect(groups.flatMap((g) => g.rules).length).toBeGreaterThan(4);
    const result = checkRules(groups);
    expect(result.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(result.ok).toBe(true);
  });
});
