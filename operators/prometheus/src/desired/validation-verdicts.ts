// How a row of validation-cases.ts becomes an object and a verdict: a PrometheusRule or a ServiceMonitor in
// namespace app, judged by selectMonitors for a server that selects everything. Test support for validate.test.ts
// and validate.real.test.ts.
import type { Prometheus } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import { prometheus } from "./config-fixtures.ts";
import { type MonitorFeedback, selectMonitors } from "./select.ts";
import type { RelabelCase, RuleCase } from "./validation-cases.ts";

/** A server selecting every ServiceMonitor and PrometheusRule, running `version` (default: the default). */
export function selectingServer(version?: string): Prometheus {
  return prometheus({
    serviceMonitorSelector: {},
    serviceMonitorNamespaceSelector: {},
    ruleSelector: {},
    ruleNamespaceSelector: {},
    ...(version === undefined ? {} : { version }),
  });
}

/** The PrometheusRule of a rule row. */
export function ruleObject(row: RuleCase, name = "r"): PrometheusRule {
  return { metadata: { name, namespace: "app", generation: 1 }, spec: { groups: [row.group] } };
}

/** The ServiceMonitor of a relabeling row: one endpoint with the row's relabeling alone in its list. */
export function monitorObject(row: RelabelCase, name = "m"): ServiceMonitor {
  return {
    metadata: { name, namespace: "app", generation: 1 },
    spec: {
      selector: { matchLabels: { app: "web" } },
      endpoints: [{ port: "metrics", [row.list ?? "relabelings"]: [row.relabeling] }],
    },
  };
}

/** selectMonitors' feedback on the object alone. */
export function verdict(
  object: { rule: PrometheusRule } | { monitor: ServiceMonitor },
  server = selectingServer(),
): MonitorFeedback {
  const selection = selectMonitors(
    server,
    [],
    {
      serviceMonitors: "monitor" in object ? [object.monitor] : [],
      podMonitors: [],
      rules: "rule" in object ? [object.rule] : [],
    },
    [],
    [],
  );
  const f = selection.feedback[0];
  if (f === undefined) throw new Error("the server did not select the object");
  return f;
}
