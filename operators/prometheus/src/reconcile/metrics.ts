// The Prometheus operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { type ObjectGauge, ObjectMetrics } from "@capstan/core";
import { Counter, type Registry } from "prom-client";

/** The kinds counted by capstan_prometheus_selected_monitors. */
export const MONITOR_KINDS = ["ServiceMonitor", "PodMonitor", "PrometheusRule"] as const;
export type MonitorKind = (typeof MONITOR_KINDS)[number];

/**
 * Metrics of the Prometheus controller, registered on the manager's registry. A server's series (object_namespace,
 * object_name) are made by core's ObjectMetrics, so that {@link forget} drops all of a deleted server's.
 */
export class PrometheusOperatorMetrics {
  /** capstan_prometheus_selected_monitors{object_namespace,object_name,kind}: objects in a server's configuration. */
  readonly selected: ObjectGauge<"kind">;
  /**
   * capstan_prometheus_config_reloads_total{result}: configuration reloads the pods made, as the operator sees
   * them (a pod's Prometheus reports a newer lastConfigTime): result "success" or "failure".
   */
  readonly reloads: Counter<"result">;
  /** capstan_prometheus_server_replicas{object_namespace,object_name,state}: a server's pods, "desired" and "ready". */
  readonly replicas: ObjectGauge<"state">;
  /** The Prometheus servers' series, per server. */
  readonly #servers: ObjectMetrics;

  constructor(registry: Registry) {
    const servers = new ObjectMetrics(registry);
    this.#servers = servers;
    this.selected = servers.gauge({
      name: "capstan_prometheus_selected_monitors",
      help: "ServiceMonitors, PodMonitors and PrometheusRules in a Prometheus server's configuration, by kind.",
      labelNames: ["kind"],
    });
    this.reloads = new Counter({
      name: "capstan_prometheus_config_reloads_total",
      help: "Configuration reloads of the Prometheus pods seen by the operator, by result (success, failure).",
      labelNames: ["result"],
      registers: [registry],
    });
    for (const result of ["success", "failure"]) this.reloads.inc({ result }, 0);
    this.replicas = servers.gauge({
      name: "capstan_prometheus_server_replicas",
      help: "Pods of a Prometheus server: the replicas its spec asks for (desired) and those ready (ready).",
      labelNames: ["state"],
    });
  }

  /** Records what one server's configuration holds. */
  observe(namespace: string, name: string, counts: Record<MonitorKind, number>): void {
    for (const kind of MONITOR_KINDS) this.selected.set({ namespace, name }, { kind }, counts[kind]);
  }

  /** Records a server's desired and ready replicas. */
  observeReplicas(namespace: string, name: string, desired: number, ready: number): void {
    this.replicas.set({ namespace, name }, { state: "desired" }, desired);
    this.replicas.set({ namespace, name }, { state: "ready" }, ready);
  }

  /** Drops every series of a deleted server. */
  forget(namespace: string, name: string): void {
    this.#servers.forget({ namespace, name });
  }
}
