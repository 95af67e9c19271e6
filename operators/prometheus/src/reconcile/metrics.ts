// The Prometheus operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { Counter, Gauge, type Registry } from "prom-client";

/** The kinds counted by capstan_prometheus_selected_monitors. */
export const MONITOR_KINDS = ["ServiceMonitor", "PodMonitor", "PrometheusRule"] as const;
export type MonitorKind = (typeof MONITOR_KINDS)[number];

/** Metrics of the Prometheus controller, registered on the manager's registry. */
export class PrometheusOperatorMetrics {
  /** capstan_prometheus_selected_monitors{object_namespace,object_name,kind}: objects in a server's configuration. */
  readonly selected: Gauge<"object_namespace" | "object_name" | "kind">;
  /**
   * capstan_prometheus_config_reloads_total{result}: configuration reloads the pods made, as the operator sees
   * them (a pod's Prometheus reports a newer lastConfigTime): result "success" or "failure".
   */
  readonly reloads: Counter<"result">;
  /** capstan_prometheus_server_replicas{object_namespace,object_name,state}: a server's pods, "desired" and "ready". */
  readonly replicas: Gauge<"object_namespace" | "object_name" | "state">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.selected = new Gauge({
      name: "capstan_prometheus_selected_monitors",
      help: "ServiceMonitors, PodMonitors and PrometheusRules in a Prometheus server's configuration, by kind.",
      labelNames: ["object_namespace", "object_name", "kind"],
      registers,
    });
    this.reloads = new Counter({
      name: "capstan_prometheus_config_reloads_total",
      help: "Configuration reloads of the Prometheus pods seen by the operator, by result (success, failure).",
      labelNames: ["result"],
      registers,
    });
    for (const result of ["success", "failure"]) this.reloads.inc({ result }, 0);
    this.replicas = new Gauge({
      name: "capstan_prometheus_server_replicas",
      help: "Pods of a Prometheus server: the replicas its spec asks for (desired) and those ready (ready).",
      labelNames: ["object_namespace", "object_name", "state"],
      registers,
    });
  }

  /** Records what one server's configuration holds. */
  observe(namespace: string, name: string, counts: Record<MonitorKind, number>): void {
    for (const kind of MONITOR_KINDS)
      this.selected.set({ object_namespace: namespace, object_name: name, kind }, counts[kind]);
  }

  /** Records a server's desired and ready replicas. */
  observeReplicas(namespace: string, name: string, desired: number, ready: number): void {
    this.replicas.set({ object_namespace: namespace, object_name: name, state: "desired" }, desired);
    this.replicas.set({ object_namespace: namespace, object_name: name, state: "ready" }, ready);
  }

  /** Drops every series of a deleted server. */
  forget(namespace: string, name: string): void {
    for (const kind of MONITOR_KINDS)
      this.selected.remove({ object_namespace: namespace, object_name: name, kind });
    for (const state of ["desired", "ready"]) {
      this.replicas.remove({ object_namespace: namespace, object_name: name, state });
    }
  }
}
