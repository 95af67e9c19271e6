// What the controller's reconcile tests share: the kinds core's in-memory API server serves for them, the servers'
// namespace, and a reconciler whose pods answer nothing.
import type { KubeObject, Reconciler } from "@capstan/core";
import { Registry } from "prom-client";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { PrometheusKind } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { ClusterRole, ClusterRoleBinding } from "../desired/objects.ts";
import { PrometheusOperatorMetrics } from "./metrics.ts";
import type { ControllerState } from "./options.ts";
import { reconcilePrometheus } from "./reconcile.ts";

/** The kinds a reconcile of a Prometheus reads and writes besides core's built-in ones. */
export const KINDS = [
  PrometheusKind,
  ServiceMonitorKind,
  PodMonitorKind,
  PrometheusRuleKind,
  ClusterRole,
  ClusterRoleBinding,
];

/** Namespace monitoring, where the tests' servers live (labelled as the API server labels every namespace). */
export const MONITORING_NAMESPACE: KubeObject = {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "monitoring", labels: { "kubernetes.io/metadata.name": "monitoring" } },
};

/** reconcilePrometheus keeping `state`, with metrics of its own and pods that answer neither runtimeinfo nor reloads. */
export function quietReconciler(state: ControllerState): Reconciler {
  return (req, ctx) =>
    reconcilePrometheus(req, ctx, {
      metrics: new PrometheusOperatorMetrics(new Registry()),
      state,
      runtimeInfo: async () => undefined,
      reloaderState: async () => undefined,
    });
}
