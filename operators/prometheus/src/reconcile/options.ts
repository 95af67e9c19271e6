// What the Prometheus controller is given and keeps: its options (the reloader image, the clients that ask the pods,
// the metrics), the state it keeps across reconciles, and when to look again.
import type { ReconcileRequest } from "@capstan/core";
import { MonitorStatusMemo } from "./binding-reports.ts";
import type { Interest } from "./interest.ts";
import type { PrometheusOperatorMetrics } from "./metrics.ts";
import { ReferencedObjects } from "./referenced.ts";
import type { PodLogClient, ReloaderStateClient, RuntimeInfoClient } from "./reload.ts";
import { RenderCache } from "./render-cache.ts";

/** When to look again (milliseconds). */
export const REQUEUE = {
  /** Pods starting or rolling: their reloads and readiness are worth watching closely. */
  rollingOut: 15_000,
  /** In sync: referenced Secret keys and the pods' reload results are not watched, so they are polled. */
  inSync: 300_000,
} as const;

/** State a controller keeps across reconciles (in memory: lost on restart, which only repeats an Event). */
export class ControllerState {
  /** Servers seen, for mapping a monitor or Namespace event to every server. */
  readonly servers = new Map<string, ReconcileRequest>();
  /**
   * The Services and Pods each server's last reconcile depends on (interest.ts), by server: a Service or Pod event
   * maps to the servers it can affect, and to every server without an entry (a reconcile in progress, or one that
   * failed before selecting).
   */
  readonly interest = new Map<string, Interest>();
  /** The Secret and ConfigMap keys monitors reference, read once per change, and which server uses which. */
  readonly referenced = new ReferencedObjects();
  /** Monitor statuses the API server would not take (refused, or no status subresource), reported by Events. */
  readonly monitorStatus = new MonitorStatusMemo();
  /** Each server's pods' last seen lastConfigTime, by pod uid. */
  readonly reloads = new Map<string, Map<string, string>>();
  /**
   * What Prometheus logged about a refused generation, by server, as "<pod>/<generation>" -> the errors: read once,
   * so the Degraded message stays the same while the log scrolls on.
   */
  readonly refusals = new Map<string, Map<string, string>>();
  /** Each server's last rendered configuration and rule files, reused while their inputs are unchanged. */
  readonly rendered = new RenderCache();
}

/** Options of {@link prometheusController}. */
export interface PrometheusControllerOptions {
  metrics: PrometheusOperatorMetrics;
  /** Image of the reloader sidecar (default busybox:1.37). */
  reloaderImage?: string;
  /** Default 4: different servers in parallel, one server never by two workers. */
  maxConcurrentReconciles?: number;
  /** Asks a pod's Prometheus for its runtimeinfo (tests replace it). */
  runtimeInfo?: RuntimeInfoClient;
  /** Asks a pod's reloader which generation its Prometheus accepted or refused (tests replace it). */
  reloaderState?: ReloaderStateClient;
  /** Reads a pod's prometheus container log, to explain a refused reload (default: the API's pods/log). */
  podLog?: PodLogClient;
  /** Shared state; a fresh one when omitted. */
  state?: ControllerState;
}
