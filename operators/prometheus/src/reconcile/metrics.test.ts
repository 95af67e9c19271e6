// The Prometheus operator's gauges label the server object_namespace/object_name, never namespace/name: scraped
// without honorLabels, Prometheus would rename an object's `namespace` to `exported_namespace` (the target's wins).
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { PrometheusOperatorMetrics } from "./metrics.ts";

describe("PrometheusOperatorMetrics", () => {
  it("labels each server's series object_namespace and object_name, and drops them on forget", async () => {
    const registry = new Registry();
    const metrics = new PrometheusOperatorMetrics(registry);
    metrics.observe("monitoring", "main", { ServiceMonitor: 2, PodMonitor: 0, PrometheusRule: 1 });
    metrics.observeReplicas("monitoring", "main", 2, 1);
    const text = await registry.metrics();
    expect(text).toContain(
      'capstan_prometheus_selected_monitors{object_namespace="monitoring",object_name="main",kind="ServiceMonitor"} 2',
    );
    expect(text).toContain(
      'capstan_prometheus_server_replicas{object_namespace="monitoring",object_name="main",state="desired"} 2',
    );
    expect(text).toContain(
      'capstan_prometheus_server_replicas{object_namespace="monitoring",object_name="main",state="ready"} 1',
    );
    expect(text).toContain('capstan_prometheus_config_reloads_total{result="failure"} 0');
    // No series carries a label Prometheus would rename.
    expect(text).not.toMatch(/[{,](namespace|name)="/);

    metrics.forget("monitoring", "main");
    const after = await registry.metrics();
    expect(after).not.toContain("object_name=");
  });

  it("forgets every series of a deleted server, and only that server's", async () => {
    const registry = new Registry();
    const metrics = new PrometheusOperatorMetrics(registry);
    for (const name of ["gone", "kept"]) {
      metrics.observe("monitoring", name, { ServiceMonitor: 2, PodMonitor: 1, PrometheusRule: 1 });
      metrics.observeReplicas("monitoring", name, 2, 2);
    }
    metrics.forget("monitoring", "gone");
    const text = await registry.metrics();
    expect(text).not.toContain('object_name="gone"');
    for (const family of ["capstan_prometheus_selected_monitors", "capstan_prometheus_server_replicas"]) {
      expect(text).toMatch(new RegExp(`^${family}\\{object_namespace="monitoring",object_name="kept"`, "m"));
    }
    // The reload counter is the operator's, not a server's: forget leaves it.
    expect(text).toContain('capstan_prometheus_config_reloads_total{result="success"} 0');
  });
});
