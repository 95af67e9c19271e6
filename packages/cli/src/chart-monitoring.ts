// The chart checks of an operator's monitoring (exported from @capstan/cli/chart): the PromQL of its Grafana
// dashboard and of its PrometheusRule alerts, made concrete (Grafana variables substituted), parsed with the shared
// PromQL check, and held against the metric names the operator really registers, so a renamed or misspelt metric
// fails the chart test instead of an empty panel or an alert that never fires.
import { CoreMetrics } from "@capstan/core";
import { promqlError, promqlMetricNames } from "@capstan/promql";
import type { K8sObject } from "./k8s-object.ts";

/** One PromQL expression found in a dashboard or a rule, with where it came from (for messages). */
export interface MonitoringQuery {
  /** e.g. `panel "Reconcile errors"`, `variable "namespace"`, `alert EtcdClusterQuorumLost`. */
  where: string;
  expr: string;
}

/** The concrete values of Grafana's built-in interval variables in a checked query. */
const INTERVALS: Record<string, string> = {
  __rate_interval: "1m",
  __interval: "1m",
  __range: "1h",
  __range_s: "3600",
  __range_ms: "3600000",
  __interval_ms: "60000",
};

/**
 * `text` with Grafana's variables replaced by concrete values: $__rate_interval and $__interval -> 1m, $__range ->
 * 1h, and each variable of `values` (`$namespace`, `${namespace}`, `${namespace:regex}`, `[[namespace]]`) by its
 * value. Other `$names` (a `$1` in label_replace) stay as they are, as Grafana leaves them.
 */
export function substituteGrafanaVariables(text: string, values: Record<string, string> = {}): string {
  const value = (whole: string, name: string) =>
    (Object.hasOwn(INTERVALS, name) ? INTERVALS[name] : undefined) ??
    (Object.hasOwn(values, name) ? values[name] : undefined) ??
    whole;
  return text
    .replace(/\$\{(\w+)(?::[\w-]+)?\}/g, value)
    .replace(/\[\[(\w+)(?::[\w-]+)?\]\]/g, value)
    .replace(/\$(\w+)/g, value);
}

interface PanelLike {
  title?: string;
  type?: string;
  targets?: { expr?: string; hide?: boolean }[];
  panels?: PanelLike[];
}

interface VariableLike {
  name?: string;
  type?: string;
  query?: string | { query?: string };
  definition?: string;
}

/**
 * The PromQL of a Grafana dashboard (its JSON text or parsed model): every target's `expr` of every panel (rows'
 * collapsed panels included), and the series selector of each query variable's `label_values(<selector>, label)` or
 * `query_result(<expr>)`, with variables substituted (see {@link substituteGrafanaVariables}): the dashboard's own
 * variables take their value in `values`, else `.+` (so dashboards must match them with `=~`, as multi-value
 * variables need anyway); a data source variable becomes empty.
 */
export function dashboardQueries(
  json: string | object,
  values: Record<string, string> = {},
): MonitoringQuery[] {
  const model = (typeof json === "string" ? JSON.parse(json) : json) as {
    panels?: PanelLike[];
    templating?: { list?: VariableLike[] };
  };
  const declared: Record<string, string> = {};
  for (const v of model.templating?.list ?? []) {
    if (v.name !== undefined) declared[v.name] = v.type === "datasource" ? "" : ".+";
  }
  const vars = { ...declared, ...values };
  const out: MonitoringQuery[] = [];
  const visit = (panels: PanelLike[] | undefined) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) {
        if (t.expr !== undefined && t.expr.trim() !== "") {
          out.push({
            where: `panel ${JSON.stringify(p.title ?? "")}`,
            expr: substituteGrafanaVariables(t.expr, vars),
          });
        }
      }
      visit(p.panels);
    }
  };
  visit(model.panels);
  for (const v of model.templating?.list ?? []) {
    if (v.type !== "query") continue;
    const query = typeof v.query === "string" ? v.query : (v.query?.query ?? v.definition ?? "");
    const m = /^\s*(?:label_values\((.+),\s*\w+\s*\)|query_result\((.+)\))\s*$/s.exec(query);
    const expr = m?.[1] ?? m?.[2];
    if (expr !== undefined) {
      out.push({
        where: `variable ${JSON.stringify(v.name ?? "")}`,
        expr: substituteGrafanaVariables(expr, vars),
      });
    }
  }
  return out;
}

/** How a panel, target or query variable names the data source the dashboard's user picked. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template.
const DATASOURCE_VARIABLE = "${datasource}";

/**
 * What keeps a dashboard from working with any Prometheus data source: no `datasource` variable of type
 * "datasource" with query "prometheus", or a panel, target or variable whose `datasource` is not `${datasource}`
 * (a data source uid or name of the author's Grafana). One message per problem; empty when there is none.
 */
export function dashboardDatasourceProblems(json: string | object): string[] {
  const model = (typeof json === "string" ? JSON.parse(json) : json) as {
    templating?: { list?: { name?: string; type?: string; query?: unknown }[] };
  };
  const out: string[] = [];
  const variable = model.templating?.list?.find((v) => v.type === "datasource");
  if (variable?.name !== "datasource" || variable.query !== "prometheus") {
    out.push('the dashboard needs a variable "datasource" of type "datasource" with query "prometheus"');
  }
  const visit = (node: unknown, path: string) => {
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) visit(n, `${path}[${i}]`);
    } else if (node !== null && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) {
        if (k === "datasource") {
          const uid = typeof v === "string" ? v : (v as { uid?: unknown } | null)?.uid;
          if (uid !== DATASOURCE_VARIABLE) {
            out.push(`${path}.datasource is ${JSON.stringify(v)}, not ${DATASOURCE_VARIABLE}`);
          }
        } else visit(v, path === "" ? k : `${path}.${k}`);
      }
    }
  };
  visit(model, "");
  return out;
}

interface RuleLike {
  alert?: string;
  record?: string;
  expr?: string | number;
}

/** The expression of every rule of the PrometheusRules among `objects` (e.g. from `helm template`). */
/**
 * The dashboard a chart renders: the ConfigMap `<release>-<chart>-dashboard` and its `<chart>.json` text (the
 * convention of our charts' templates/dashboard.yaml). Throws naming what is missing.
 */
export function renderedDashboard(
  objects: K8sObject[],
  chart: string,
  release = "ops",
): { configMap: K8sObject; json: string } {
  const name = `${release.includes(chart) ? release : `${release}-${chart}`}-dashboard`;
  const configMap = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name);
  if (configMap === undefined) throw new Error(`no dashboard ConfigMap ${name} was rendered`);
  const json = (configMap as K8sObject & { data?: Record<string, string> }).data?.[`${chart}.json`];
  if (json === undefined) throw new Error(`the dashboard ConfigMap ${name} has no ${chart}.json`);
  return { configMap, json };
}

export function ruleExpressions(objects: K8sObject[]): MonitoringQuery[] {
  const out: MonitoringQuery[] = [];
  for (const o of objects) {
    if (o.kind !== "PrometheusRule") continue;
    const groups = (o.spec as { groups?: { name?: string; rules?: RuleLike[] }[] } | undefined)?.groups ?? [];
    for (const g of groups) {
      for (const [i, r] of (g.rules ?? []).entries()) {
        const what =
          r.alert !== undefined
            ? `alert ${r.alert}`
            : r.record !== undefined
              ? `record ${r.record}`
              : `rule ${i + 1}`;
        out.push({
          where: `PrometheusRule ${o.metadata.name} group ${g.name ?? ""} ${what}`,
          expr: String(r.expr ?? ""),
        });
      }
    }
  }
  return out;
}

/** What prom-client's Registry#getMetricsAsJSON says of each family. */
export interface MetricFamilyLike {
  name: string;
  type: string;
}

/** Series Prometheus itself adds to every scraped target. */
export const SCRAPE_SERIES: readonly string[] = [
  "up",
  "scrape_duration_seconds",
  "scrape_samples_scraped",
  "scrape_samples_post_metric_relabeling",
  "scrape_series_added",
];

/** The series names of metric families (a histogram's _bucket, _sum and _count; a summary's _sum and _count). */
export function seriesNames(families: MetricFamilyLike[]): string[] {
  const names = new Set<string>();
  for (const f of families) {
    names.add(f.name);
    if (f.type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(f.name + s);
    if (f.type === "summary") for (const s of ["_sum", "_count"]) names.add(f.name + s);
  }
  return [...names].sort();
}

/** The registry an operator's own metrics register on: core's, as the manager gives it (`mgr.metrics.registry`). */
export type OperatorRegistry = CoreMetrics["registry"];

/**
 * Every series name an operator's /metrics serves, without a cluster: core's families (controller_runtime_*,
 * workqueue_*, leader_election_*, rest_client_*), the Node.js process metrics (process_*, nodejs_*), the operator's
 * own (`register` adds them, e.g. `(r) => new EtcdOperatorMetrics(r)`), and what Prometheus adds to every target
 * ({@link SCRAPE_SERIES}).
 */
export async function operatorSeriesNames(register: (registry: OperatorRegistry) => void): Promise<string[]> {
  const core = new CoreMetrics();
  core.collectProcessMetrics();
  register(core.registry);
  // prom-client types `type` as an enum; at run time it is the exposition type ("counter", "histogram"...).
  const families = (await core.registry.getMetricsAsJSON()) as unknown as MetricFamilyLike[];
  return [...new Set([...seriesNames(families), ...SCRAPE_SERIES])].sort();
}

/**
 * What is wrong with `queries`: one message per expression that does not parse (shared PromQL check) or selects a
 * metric not among `known`, naming where it is; empty when every query parses and uses only known metrics.
 */
export function monitoringProblems(queries: MonitoringQuery[], known: readonly string[]): string[] {
  const knownSet = new Set(known);
  const out: string[] = [];
  for (const q of queries) {
    const err = promqlError(q.expr);
    if (err !== undefined) {
      out.push(`${q.where}: PromQL parse error: ${err} in ${JSON.stringify(q.expr)}`);
      continue;
    }
    for (const name of promqlMetricNames(q.expr)) {
      if (!knownSet.has(name)) out.push(`${q.where}: metric ${name} is not one the operator exports`);
    }
  }
  return out;
}
