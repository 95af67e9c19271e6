// The real promtool against the shared PromQL check (@capstan/promql), which the operator uses to refuse rules:
// every expression of packages/promql/testdata/promql-cases.json that promqlError accepts, `promtool check rules`
// accepts, and every one it refuses, promtool refuses; the rows of packages/promql/testdata/promql-version-cases.json
// for promtool's own release the same, with each row's --enable-feature flags (only one release is cached, so the
// other releases' rows rest on the table, read from each release's source); and the three charts'
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
import { type PromtoolResult, promtoolCheckRules, promtoolVersion } from "../promtool-check.ts";

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
function checkRules(groups: unknown, features: readonly string[] = []): PromtoolResult {
  return promtoolCheckRules(join(work, `rules-${files++}.yaml`), stringify({ groups }), features);
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
