// What the controller's reconcile tests share: the kinds core's in-memory API server serves for them.
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { PrometheusKind } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { ClusterRole, ClusterRoleBinding } from "../desired/objects.ts";

/** The kinds a reconcile of a Prometheus reads and writes besides core's built-in ones. */
export const KINDS = [
  PrometheusKind,
  ServiceMonitorKind,
  PodMonitorKind,
  PrometheusRuleKind,
  ClusterRole,
  ClusterRoleBinding,
];
