// Table tests of the shared PromQL check: expressions Prometheus accepts pass, those it refuses fail with the
// position; the metric names an expression selects.
import { describe, expect, it } from "vitest";
import { promqlError, promqlMetricNames } from "./promql.ts";

describe("promqlError", () => {
  it.each([
    "up == 0",
    "rate(x[5m])",
    'sum by (object_namespace, object_name) (capstan_vault_cluster_pods{job="a", state="sealed"}) > 0',
    "histogram_quantile(0.99, sum by (le, controller) (rate(controller_runtime_reconcile_time_seconds_bucket[1m])))",
    'sum(rate(x{a="b"}[5m])) by (a)',
    "rate((x[5m]))",
    "rate(x[5m] offset 1m)",
    "rate(x[5m] @ 100)",
    "rate(x[5m:])",
    "quantile_over_time(0.9, x[5m])",
    "changes(leader_election_master_status[30m]) > 2",
    "max_over_time(x[1m]) unless on (a) y",
    'absent(up{job="x"} == 1)',
    "topk(3, x)",
    'label_replace(x, "a", "$1", "b", "(.*)")',
    "x offset -1m",
    'x{a="b",}',
    '{__name__="x"}',
    "# a comment\nup\n  == 0",
    "rate(x[5m]) > bool 1",
    "sum without () (x)",
    // A regex is RE2's to judge when the query runs, not the grammar's: this parses.
    'foo{a=~"("}',
  ])("accepts %s", (expr) => {
    expect(promqlError(expr)).toBeUndefined();
  });

  it.each([
    ["", "empty expression"],
    ["  \n", "empty expression"],
    ["rate(x[5m]) >", "unexpected end of input at 1:14"],
    ["1 +", "unexpected end of input at 1:4"],
    ["sum by (a (x)", 'unexpected "(" at 1:11'],
    ["up\n  == 0 )", 'unexpected ")" at 2:8'],
    ["foo(x)", 'unknown function "foo" at 1:1'],
    ["rate(x)", 'expected type range vector in call to function "rate", got instant vector at 1:6'],
    ["rate(x offset 1m)", 'expected type range vector in call to function "rate", got instant vector at 1:6'],
    [
      "quantile_over_time(0.9, sum(x))",
      'expected type range vector in call to function "quantile_over_time", got instant vector at 1:25',
    ],
    ['x{a="b}', "unexpected end of input at 1:8"],
    ["x[5m", "unexpected end of input at 1:5"],
    ["sum(rate(x[$__rate_interval]))", 'unexpected "$" at 1:12'],
  ])("refuses %j: %s", (expr, message) => {
    expect(promqlError(expr)).toBe(message);
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
