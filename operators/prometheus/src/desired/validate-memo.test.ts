// The rule checks remember each PromQL expression's verdict per Prometheus version and feature flags: parsing PromQL
// was most of a steady reconcile's cost at 1,000 rules (bench/prometheus-scale.ts), and the same rules come back on
// every reconcile. (re2Error's memory is tested in validate.test.ts.)
import * as promql from "@capstan/promql";
import { describe, expect, it, vi } from "vitest";
import type { RuleGroup } from "../api/prometheus-rule.ts";
import { ruleGroupError } from "./validate.ts";

vi.mock("@capstan/promql", async (actual) => {
  const real = await actual<typeof import("@capstan/promql")>();
  return { ...real, promqlError: vi.fn(real.promqlError) };
});

describe("ruleGroupError", () => {
  it("parses each expression once per version and feature flags, and gives the same verdicts", () => {
    const parse = vi.mocked(promql.promqlError);
    const group: RuleGroup = {
      name: "memo",
      rules: [
        { record: "job:memo_ok:rate5m", expr: 'sum by (job) (rate(memo_ok_total{job="a"}[5m]))' },
        { alert: "MemoBad", expr: "sum(rate(memo_bad_total[5m]) > " },
      ],
    };
    const ok: RuleGroup = { name: "memo-ok", rules: group.rules?.slice(0, 1) ?? [] };
    parse.mockClear();
    expect(ruleGroupError(ok, "3.16.0")).toBeUndefined();
    const refused = ruleGroupError(group, "3.16.0");
    expect(refused).toMatch(/^PromQL parse error in group "memo" rule 2 \(alert MemoBad\)/);
    expect(parse).toHaveBeenCalledTimes(2);

    expect(ruleGroupError(ok, "3.16.0")).toBeUndefined();
    expect(ruleGroupError(group, "3.16.0")).toBe(refused);
    expect(parse).toHaveBeenCalledTimes(2);

    // Another release or other feature flags may judge the same text otherwise: asked again.
    ruleGroupError(ok, "3.5.0");
    ruleGroupError(ok, "3.16.0", ["promql-experimental-functions"]);
    expect(parse).toHaveBeenCalledTimes(4);
  });
});
