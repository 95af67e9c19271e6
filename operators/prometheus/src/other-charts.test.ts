// The etcd and Vault operator charts ship their ServiceMonitor (and Vault's chart a PrometheusRule) in
// prometheus-operator's API: rendered by helm, unchanged, they must be Accepted by selectMonitors against the
// chart's own metrics Service, and become scrape jobs and a rule file. Skipped where helm is not installed.
import { fileURLToPath } from "node:url";
import { findHelm, helmTemplate, type K8sObject, ofKind } from "@capstan/cli/chart";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Prometheus } from "./api/prometheus.ts";
import type { PrometheusRule } from "./api/prometheus-rule.ts";
import type { ServiceMonitor } from "./api/service-monitor.ts";
import { renderConfig } from "./desired/config.ts";
import { defaultSpec } from "./desired/config-fixtures.ts";
import { type ServiceLike, selectMonitors } from "./desired/select.ts";

const helm = findHelm();
if (helm === undefined) console.warn("other-charts.test.ts: no helm binary (set CAPSTAN_HELM): skipping");

const chart = (name: string) => fileURLToPath(new URL(`../../../charts/${name}/`, import.meta.url));

const prometheus: Prometheus = {
  metadata: { name: "main", namespace: "monitoring" },
  spec: {
    ...defaultSpec,
    serviceMonitorSelector: {},
    serviceMonitorNamespaceSelector: {},
    ruleSelector: {},
    ruleNamespaceSelector: {},
  },
};

describe.skipIf(helm === undefined)("other operators' charts", () => {
  it.each([
    ["etcd-operator", "metrics.secure=true", []],
    ["etcd-operator", "metrics.secure=false", []],
    ["vault-operator", "metrics.secure=true", ["prometheusRule.enabled=true"]],
    ["vault-operator", "metrics.secure=false", ["prometheusRule.enabled=true"]],
    ["vault-operator", "metrics.secure=true", ["serviceMonitor.bearerTokenSecret.name=scrape-token"]],
  ])("%s with %s %j: Accepted, and rendered", (name, secure, extra) => {
    const objects: K8sObject[] = helmTemplate(helm!, chart(name), {
      release: name,
      namespace: "operators",
      set: ["serviceMonitor.enabled=true", secure, ...extra],
    });
    const serviceMonitors = ofKind(objects, "ServiceMonitor") as unknown as ServiceMonitor[];
    const rules = ofKind(objects, "PrometheusRule") as unknown as PrometheusRule[];
    const services = ofKind(objects, "Service") as unknown as ServiceLike[];
    // helm template leaves metadata.namespace to the release for some objects: set it as the API server would.
    for (const o of [...serviceMonitors, ...rules, ...services]) o.metadata.namespace ??= "operators";
    expect(serviceMonitors).toHaveLength(1);

    const selection = selectMonitors(
      prometheus,
      [{ metadata: { name: "operators" } }, { metadata: { name: "monitoring" } }],
      { serviceMonitors, podMonitors: [], rules },
      services,
      [],
    );
    expect(selection.feedback.map((f) => [f.kind, f.reason, f.message])).toEqual([
      ["ServiceMonitor", "Accepted", expect.stringContaining("1 Service match")],
      ...rules.map(() => ["PrometheusRule", "Accepted", expect.any(String)]),
    ]);

    const out = renderConfig(prometheus, selection);
    const config = parse(out.yaml) as { scrape_configs: { job_name: string; scheme?: string }[] };
    expect(config.scrape_configs.map((j) => j.job_name)).toEqual([`serviceMonitor/operators/${name}/0`]);
    expect(config.scrape_configs[0]!.scheme ?? "http").toBe(secure.endsWith("true") ? "https" : "http");
    expect(Object.keys(out.rules)).toHaveLength(rules.length);
  });
});
