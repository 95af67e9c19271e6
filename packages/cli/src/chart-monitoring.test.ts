// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings hold Grafana's ${variable} syntax, not templates.
// The monitoring chart checks: queries found in a dashboard and in rendered PrometheusRules, Grafana variables made
// concrete, and the problems reported for a query that does not parse or names a metric the operator lacks.
import { Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import type { K8sObject } from "./chart.ts";
import {
  dashboardDatasourceProblems,
  dashboardQueries,
  monitoringProblems,
  operatorSeriesNames,
  renderedDashboard,
  ruleExpressions,
  seriesNames,
  substituteGrafanaVariables,
} from "./chart-monitoring.ts";

const dashboard = {
  templating: {
    list: [
      { name: "datasource", type: "datasource", query: "prometheus" },
      {
        name: "namespace",
        type: "query",
        datasource: { uid: "${datasource}" },
        query: { query: 'label_values(capstan_etcd_cluster_quorum{job=~"$job"}, object_namespace)' },
      },
      { name: "job", type: "custom", query: "etcd-operator-metrics" },
    ],
  },
  panels: [
    {
      title: "Reconciles",
      targets: [
        { expr: 'sum by (result) (rate(controller_runtime_reconcile_total{job=~"$job"}[$__rate_interval]))' },
        { expr: "" },
      ],
    },
    {
      title: "Row",
      type: "row",
      panels: [
        {
          title: "Quorum",
          targets: [{ expr: 'capstan_etcd_cluster_quorum{object_namespace=~"${namespace:regex}"}' }],
        },
      ],
    },
  ],
};

describe("substituteGrafanaVariables", () => {
  it.each([
    ["rate(x[$__rate_interval])", {}, "rate(x[1m])"],
    ["rate(x[${__interval}])", {}, "rate(x[1m])"],
    [
      'x{a=~"$a",b=~"${b}",c=~"${c:regex}",d=~"[[d]]"}',
      { a: "1", b: "2", c: "3", d: "4" },
      'x{a=~"1",b=~"2",c=~"3",d=~"4"}',
    ],
    ['label_replace(x, "y", "$1", "z", "(.*)")', { a: ".+" }, 'label_replace(x, "y", "$1", "z", "(.*)")'],
    ['x{a=~"$constructor"}', {}, 'x{a=~"$constructor"}'],
  ])("%s -> %s", (text, values, want) => {
    expect(substituteGrafanaVariables(text, values)).toBe(want);
  });
});

describe("dashboardQueries", () => {
  it("lists every panel's targets (rows included) and query variables, with variables substituted", () => {
    expect(dashboardQueries(JSON.stringify(dashboard), { job: "ops-etcd-operator-metrics" })).toEqual([
      {
        where: 'panel "Reconciles"',
        expr: 'sum by (result) (rate(controller_runtime_reconcile_total{job=~"ops-etcd-operator-metrics"}[1m]))',
      },
      { where: 'panel "Quorum"', expr: 'capstan_etcd_cluster_quorum{object_namespace=~".+"}' },
      {
        where: 'variable "namespace"',
        expr: 'capstan_etcd_cluster_quorum{job=~"ops-etcd-operator-metrics"}',
      },
    ]);
  });
});

describe("dashboardDatasourceProblems", () => {
  it("is empty when everything reads the datasource variable", () => {
    expect(dashboardDatasourceProblems(dashboard)).toEqual([]);
  });
  it("names a panel bound to the author's data source, and a missing datasource variable", () => {
    const bound = {
      templating: { list: [] },
      panels: [{ title: "x", datasource: { type: "prometheus", uid: "P1809F7CD0C75ACF3" }, targets: [] }],
    };
    expect(dashboardDatasourceProblems(bound)).toEqual([
      'the dashboard needs a variable "datasource" of type "datasource" with query "prometheus"',
      'panels[0].datasource is {"type":"prometheus","uid":"P1809F7CD0C75ACF3"}, not ${datasource}',
    ]);
  });
});

describe("ruleExpressions", () => {
  it("lists the rules of PrometheusRules only", () => {
    const objects = [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } },
      {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "PrometheusRule",
        metadata: { name: "r" },
        spec: {
          groups: [
            {
              name: "g",
              rules: [
                { alert: "A", expr: "up == 0" },
                { record: "b", expr: "sum(up)" },
              ],
            },
          ],
        },
      },
    ] as K8sObject[];
    expect(ruleExpressions(objects)).toEqual([
      { where: "PrometheusRule r group g alert A", expr: "up == 0" },
      { where: "PrometheusRule r group g record b", expr: "sum(up)" },
    ]);
  });
});

describe("seriesNames and operatorSeriesNames", () => {
  it("expands histograms and summaries into their series", () => {
    expect(
      seriesNames([
        { name: "h", type: "histogram" },
        { name: "s", type: "summary" },
        { name: "c_total", type: "counter" },
      ]),
    ).toEqual(["c_total", "h", "h_bucket", "h_count", "h_sum", "s", "s_count", "s_sum"]);
  });

  it("lists core's families, the process metrics, the operator's own and up", async () => {
    const names = await operatorSeriesNames((registry) => {
      new Gauge({ name: "capstan_test_things", help: "things", registers: [registry] });
    });
    expect(names).toEqual(
      expect.arrayContaining([
        "capstan_test_things",
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "workqueue_depth",
        "leader_election_master_status",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "nodejs_heap_size_used_bytes",
        "up",
      ]),
    );
    expect(names).not.toContain("capstan_test_thing");
  });
});

describe("monitoringProblems", () => {
  const known = ["up", "controller_runtime_reconcile_total", "capstan_etcd_cluster_quorum"];
  it("is empty when every query parses and uses known metrics", () => {
    expect(monitoringProblems(dashboardQueries(dashboard), known)).toEqual([]);
  });
  it("names the query that does not parse, and the metric the operator does not export", () => {
    expect(
      monitoringProblems(
        [
          { where: 'panel "A"', expr: "rate(up[5m]) >" },
          { where: "alert B", expr: "capstan_etcd_cluster_quorom == 0 and on () up" },
        ],
        known,
      ),
    ).toEqual([
      'panel "A": PromQL parse error: unexpected end of input at 1:15 in "rate(up[5m]) >"',
      "alert B: metric capstan_etcd_cluster_quorom is not one the operator exports",
    ]);
  });
});

describe("renderedDashboard", () => {
  const cm = (name: string, data: Record<string, string>): K8sObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data,
  });
  it("finds <release>-<chart>-dashboard (or <release>-dashboard when the release names the chart) and its JSON", () => {
    expect(
      renderedDashboard([cm("ops-x-operator-dashboard", { "x-operator.json": "{}" })], "x-operator").json,
    ).toBe("{}");
    expect(
      renderedDashboard([cm("x-operator-dashboard", { "x-operator.json": "[]" })], "x-operator", "x-operator")
        .json,
    ).toBe("[]");
  });
  it("says what is missing", () => {
    expect(() => renderedDashboard([], "x-operator")).toThrow(
      "no dashboard ConfigMap ops-x-operator-dashboard",
    );
    expect(() => renderedDashboard([cm("ops-x-operator-dashboard", {})], "x-operator")).toThrow(
      "has no x-operator.json",
    );
  });
});
