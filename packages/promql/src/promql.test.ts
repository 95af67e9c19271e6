// Table tests of the shared PromQL check (testdata/promql-cases.json): expressions Prometheus accepts pass, those it
// refuses fail with the position; the metric names an expression selects.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { promqlError, promqlMetricNames } from "./promql.ts";

/** The table of testdata/promql-cases.json (the real promtool is checked against it too). */
const cases = JSON.parse(readFileSync(new URL("../testdata/promql-cases.json", import.meta.url), "utf8")) as {
  accepts: string[];
  refuses: { expr: string; message: string }[];
};

describe("promqlError", () => {
  it.each(cases.accepts)("accepts %j", (expr) => {
    expect(promqlError(expr)).toBeUndefined();
  });

  it.each(cases.refuses)("refuses $expr: $message", ({ expr, message }) => {
    expect(promqlError(expr)).toBe(message);
  });

  it("reads a table with both kinds", () => {
    expect(cases.accepts.length).toBeGreaterThan(10);
    expect(cases.refuses.length).toBeGreaterThan(10);
  });
});

describe("promqlMetricNames", () => {
  it.each([
    ["up == 0", ["up"]],
    [
      "histogram_quantile(0.99, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket[1m])))",
      ["controller_runtime_reconcile_time_seconds_bucket"],
    ],
    ['{__name__="x", a="b"} / on (a) y', ["x", "y"]],
    ['{__name__=~"x.*"}', []],
    ["sum(a) + sum(a) - vector(1)", ["a"]],
    ["rate(b[5m] offset 1m)", ["b"]],
  ])("%s selects %j", (expr, names) => {
    expect(promqlMetricNames(expr)).toEqual(names);
  });

  it("throws on an expression that does not parse", () => {
    expect(() => promqlMetricNames("rate(x[5m]) >")).toThrow(/unexpected end of input at 1:14/);
  });
});
