// The etcd and Vault operator charts ship their ServiceMonitor (and Vault's chart a PrometheusRule) in
// prometheus-operator's API: rendered by helm, unchanged, they must be Accepted by selectMonitors against the
// chart's own metrics Service, and become scrape jobs and a rule file, by a server that trusts their namespace with
// its pods' ServiceAccount token (secure metrics send it: bearerTokenFile); one that does not says why it refuses
// them. Skipped where helm is not installed.
import { readFileSync } from "node:fs";
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
    arbitraryFSAccessThroughSMs: {
      serviceAccountTokenNamespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "operators" } },
    },
  },
};
const namespaces = [
  { metadata: { name: "operators", labels: { "kubernetes.io/metadata.name": "operators" } } },
  { metadata: { name: "monitoring", labels: { "kubernetes.io/metadata.name": "monitoring" } } },
];

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
      namespaces,
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

  // npm start applies samples/prometheus.yaml in `default` and installs each operator's chart in a namespace of its
  // own, monitors on: the sample must take their ServiceMonitors (it failed to once the token became opt-in).
  it.each(["etcd-operator", "vault-operator", "prometheus-operator"])(
    "the sample Prometheus (in default) accepts the %s chart's ServiceMonitor from the chart's namespace",
    (name) => {
      const sample = parse(
        readFileSync(new URL("../samples/prometheus.yaml", import.meta.url), "utf8"),
      ) as Prometheus;
      sample.metadata.namespace = "default";
      sample.spec = { ...defaultSpec, ...sample.spec };
      const objects: K8sObject[] = helmTemplate(helm!, chart(name), {
        release: name,
        namespace: name,
        set: ["serviceMonitor.enabled=true"],
      });
      const serviceMonitors = ofKind(objects, "ServiceMonitor") as unknown as ServiceMonitor[];
      const services = ofKind(objects, "Service") as unknown as ServiceLike[];
      for (const o of [...serviceMonitors, ...services]) o.metadata.namespace ??= name;
      expect(serviceMonitors).toHaveLength(1);
      const spaces = ["default", name].map((n) => ({
        metadata: { name: n, labels: { "kubernetes.io/metadata.name": n } },
      }));
      const { feedback } = selectMonitors(
        sample,
        spaces,
        { serviceMonitors, podMonitors: [], rules: [] },
        services,
        [],
      );
      expect(feedback.map((f) => [f.kind, f.reason, f.message])).toEqual([
        ["ServiceMonitor", "Accepted", expect.stringContaining("1 Service match")],
      ]);
    },
  );

  it("secure metrics from a namespace the server does not trust with its token: FileAccessDenied, saying so", () => {
    const objects: K8sObject[] = helmTemplate(helm!, chart("etcd-operator"), {
      release: "etcd-operator",
      namespace: "operators",
      set: ["serviceMonitor.enabled=true", "metrics.secure=true"],
    });
    const serviceMonitors = ofKind(objects, "ServiceMonitor") as unknown as ServiceMonitor[];
    for (const o of serviceMonitors) o.metadata.namespace ??= "operators";
    const untrusting: Prometheus = {
      ...prometheus,
      spec: { ...prometheus.spec, arbitraryFSAccessThroughSMs: {} },
    };
    const [f] = selectMonitors(
      untrusting,
      namespaces,
      { serviceMonitors, podMonitors: [], rules: [] },
      [],
      [],
    ).feedback;
    expect(f?.reason).toBe("FileAccessDenied");
    expect(f?.message).toContain("serviceAccountTokenNamespaceSelector");
  });
});
