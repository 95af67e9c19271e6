// The real promtool against the shared PromQL check (@capstan/cli/promql), which the operator uses to refuse rules:
// every expression of packages/cli/testdata/promql-cases.json that promqlError accepts, `promtool check rules`
// accepts, and every one it refuses, promtool refuses; and the three charts' PrometheusRules (rendered with helm,
// where installed) pass `promtool check rules` whole: expressions, durations, templates of the annotations.
// The "real" project (`npm run test:real`); without promtool it fails, saying how to build it (never skips).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findHelm, helmTemplate } from "@capstan/cli/chart";
import { promqlError } from "@capstan/cli/promql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type PromtoolResult, promtoolCheckRules } from "../promtool-check.ts";

const cases = JSON.parse(
  readFileSync(new URL("../../../../packages/cli/testdata/promql-cases.json", import.meta.url), "utf8"),
) as { accepts: string[]; refuses: { expr: string; message: string }[] };

let work = "";
let files = 0;

/** `promtool check rules` of `groups` written to a fresh file: whether it passed, and its output. */
function checkRules(groups: unknown): PromtoolResult {
  return promtoolCheckRules(join(work, `rules-${files++}.yaml`), stringify({ groups }));
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
