// Golden files of the generated configuration (testdata/*.yaml; UPDATE_GOLDEN=1 rewrites them), and the properties
// the reconciler relies on: determinism, a hash that follows the content, the assets list, escaping.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { PodMonitor } from "../api/pod-monitor.ts";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import { ASSETS_DIR, RULES_DIR } from "./assets.ts";
import { renderConfig } from "./config.ts";
import type { SelectedMonitors } from "./select.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

/** Compares `actual` with testdata/<name>; with UPDATE_GOLDEN=1 writes it instead. */
function golden(name: string, actual: string): void {
  const url = new URL(name, TESTDATA);
  if (UPDATE) writeFileSync(url, actual);
  expect(existsSync(url), `testdata/${name} is missing: run UPDATE_GOLDEN=1 npm test`).toBe(true);
  expect(actual).toBe(readFileSync(url, "utf8"));
}

function prometheus(spec: Partial<PrometheusSpec> = {}): Prometheus {
  return {
    metadata: { name: "main", namespace: "monitoring" },
    spec: {
      replicas: 1,
      version: "3.16.0",
      repository: "quay.io/prometheus/prometheus",
      scrapeInterval: "30s",
      evaluationInterval: "30s",
      retention: "15d",
      storage: { size: "10Gi" },
      ...spec,
    },
  };
}

const none: SelectedMonitors = { serviceMonitors: [], podMonitors: [], rules: [] };

/** A ServiceMonitor with every field the operator reads (and one it only keeps). */
const fullServiceMonitor: ServiceMonitor = {
  metadata: { name: "api", namespace: "shop", labels: { team: "shop" } },
  spec: {
    jobLabel: "app.kubernetes.io/name",
    targetLabels: ["tier", "app.kubernetes.io/version"],
    podTargetLabels: ["pod-template-hash"],
    selector: {
      matchLabels: { "app.kubernetes.io/name": "api", release: "v1.2" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["backend", "edge"] },
        { key: "canary", operator: "NotIn", values: ["true"] },
        { key: "app.kubernetes.io/part-of", operator: "Exists" },
        { key: "legacy", operator: "DoesNotExist" },
      ],
    },
    namespaceSelector: { matchNames: ["shop", "shop-staging"] },
    sampleLimit: 5000,
    targetLimit: 10,
    endpoints: [
      {
        port: "metrics",
        path: "/internal/metrics",
        scheme: "HTTPS",
        params: { format: ["prometheus"], collect: ["a", "b"] },
        interval: "15s",
        scrapeTimeout: "10s",
        honorLabels: true,
        honorTimestamps: false,
        followRedirects: false,
        enableHttp2: true,
        tlsConfig: {
          ca: { configMap: { name: "shop-ca", key: "ca.crt" } },
          cert: { secret: { name: "scrape-client", key: "tls.crt" } },
          keySecret: { name: "scrape-client", key: "tls.key" },
          serverName: "api.shop.svc",
          insecureSkipVerify: false,
          minVersion: "TLS12",
        },
        authorization: { type: "Bearer", credentials: { name: "scrape-token", key: "token" } },
        relabelings: [
          { sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node_name", action: "Replace" },
          { regex: "__meta_kubernetes_service_annotation_(.+)", action: "labelmap", replacement: "svc_$1" },
        ],
        metricRelabelings: [{ sourceLabels: ["__name__"], regex: "go_gc_.*", action: "drop" }],
      },
      {
        targetPort: 9102,
        basicAuth: {
          username: { name: "basic", key: "user" },
          password: { name: "basic", key: "pass" },
        },
        filterRunning: false,
      },
      { targetPort: "admin", bearerTokenSecret: { name: "scrape-token", key: "token" } },
    ],
    attachMetadata: { node: true },
  },
};

const podMonitor: PodMonitor = {
  metadata: { name: "etcd-members", namespace: "etcd" },
  spec: {
    jobLabel: "app.kubernetes.io/instance",
    podTargetLabels: ["app.kubernetes.io/instance"],
    selector: { matchLabels: { "app.kubernetes.io/name": "etcd" } },
    podMetricsEndpoints: [
      { port: "metrics", interval: "10s", relabelings: [{ targetLabel: "cluster", replacement: "local" }] },
      { portNumber: 2381, path: "/health" },
    ],
  },
};

const rule: PrometheusRule = {
  metadata: { name: "etcd-alerts", namespace: "etcd" },
  spec: {
    groups: [
      {
        name: "etcd",
        interval: "1m",
        rules: [
          {
            alert: "EtcdQuorumLost",
            expr: "sum by (namespace, cluster) (etcd_server_has_leader) < 2",
            for: "2m",
            labels: { severity: "critical" },
            annotations: {
              summary: "etcd cluster {{ $labels.cluster }} lost quorum",
              description: "Only {{ $value }} members have a leader.",
            },
          },
          {
            record: "etcd:has_leader:sum",
            expr: "sum by (namespace) (etcd_server_has_leader)",
            labels: { a: "b" },
          },
        ],
      },
      { name: "numbers", rules: [{ record: "one", expr: 1 }] },
    ],
  },
};

describe("golden files", () => {
  it("an empty selection", () => {
    const out = renderConfig(prometheus(), none);
    golden("config-empty.yaml", out.yaml);
    expect(out.rules).toEqual({});
    expect(out.assets).toEqual([]);
  });

  it("a ServiceMonitor with every field", () => {
    const out = renderConfig(
      prometheus({ scrapeInterval: "1m", scrapeTimeout: "20s", externalLabels: { cluster: "local" } }),
      { ...none, serviceMonitors: [{ object: fullServiceMonitor, namespaces: ["shop", "shop-staging"] }] },
    );
    golden("config-servicemonitor-full.yaml", out.yaml);
  });

  it("a PodMonitor", () => {
    const out = renderConfig(prometheus(), {
      ...none,
      podMonitors: [{ object: podMonitor, namespaces: ["etcd"] }],
    });
    golden("config-podmonitor.yaml", out.yaml);
  });

  it("a PrometheusRule", () => {
    const out = renderConfig(prometheus({ evaluationInterval: "15s" }), { ...none, rules: [rule] });
    golden("config-rules.yaml", out.yaml);
    expect(Object.keys(out.rules)).toEqual(["etcd_etcd-alerts.yaml"]);
    golden("rules-etcd_etcd-alerts.yaml", out.rules["etcd_etcd-alerts.yaml"]!);
  });

  it("namespace scoping: own namespace, a list, and every namespace", () => {
    const sm = (name: string, namespace: string): ServiceMonitor => ({
      metadata: { name, namespace },
      spec: { selector: { matchLabels: { app: name } }, endpoints: [{ port: "http" }] },
    });
    const out = renderConfig(prometheus(), {
      ...none,
      serviceMonitors: [
        { object: sm("everywhere", "monitoring") },
        { object: sm("listed", "monitoring"), namespaces: ["a", "b"] },
        { object: sm("own", "app"), namespaces: ["app"] },
      ],
      podMonitors: [{ object: { ...podMonitor, metadata: { name: "all-etcd", namespace: "etcd" } } }],
    });
    golden("config-namespaces.yaml", out.yaml);
  });
});

describe("renderConfig", () => {
  const selection: SelectedMonitors = {
    serviceMonitors: [{ object: fullServiceMonitor, namespaces: ["shop", "shop-staging"] }],
    podMonitors: [{ object: podMonitor, namespaces: ["etcd"] }],
    rules: [rule],
  };

  it("produces YAML that parses, jobs named as prometheus-operator names them", () => {
    const out = renderConfig(prometheus(), selection);
    const config = parse(out.yaml) as { scrape_configs: { job_name: string }[]; rule_files: string[] };
    expect(config.scrape_configs.map((j) => j.job_name)).toEqual([
      "serviceMonitor/shop/api/0",
      "serviceMonitor/shop/api/1",
      "serviceMonitor/shop/api/2",
      "podMonitor/etcd/etcd-members/0",
      "podMonitor/etcd/etcd-members/1",
    ]);
    expect(config.rule_files).toEqual([`${RULES_DIR}/etcd_etcd-alerts.yaml`]);
  });

  it("is deterministic: input order does not matter, the hash is stable", () => {
    const other: Prometheus = prometheus();
    other.spec.externalLabels = { b: "2", a: "1" };
    const a = renderConfig(other, {
      serviceMonitors: [
        { object: fullServiceMonitor, namespaces: ["shop"] },
        {
          object: { ...fullServiceMonitor, metadata: { name: "aaa", namespace: "shop" } },
          namespaces: ["shop"],
        },
      ],
      podMonitors: [],
      rules: [rule, { ...rule, metadata: { name: "x", namespace: "a" } }],
    });
    other.spec.externalLabels = { a: "1", b: "2" };
    const b = renderConfig(other, {
      serviceMonitors: [
        {
          object: { ...fullServiceMonitor, metadata: { name: "aaa", namespace: "shop" } },
          namespaces: ["shop"],
        },
        { object: fullServiceMonitor, namespaces: ["shop"] },
      ],
      podMonitors: [],
      rules: [{ ...rule, metadata: { name: "x", namespace: "a" } }, rule],
    });
    expect(b).toEqual(a);
    expect(a.hash).toMatch(/^[0-9a-f]{16}$/);
  });

  it("the hash follows the configuration and the rule files", () => {
    const base = renderConfig(prometheus(), selection);
    const changedConfig = renderConfig(prometheus({ scrapeInterval: "15s" }), selection);
    const changedRule: PrometheusRule = structuredClone(rule);
    changedRule.spec.groups![0]!.rules![0]!.for = "3m";
    const changedRules = renderConfig(prometheus(), { ...selection, rules: [changedRule] });
    expect(changedRules.yaml).toBe(base.yaml);
    expect(new Set([base.hash, changedConfig.hash, changedRules.hash]).size).toBe(3);
  });

  it("lists every Secret and ConfigMap key the configuration reads, once, with its file", () => {
    const out = renderConfig(prometheus(), selection);
    expect(out.assets.map((a) => [a.kind, a.namespace, a.name, a.key, a.path])).toEqual([
      ["ConfigMap", "shop", "shop-ca", "ca.crt", `${ASSETS_DIR}/configmap_shop_shop-ca_ca.crt`],
      ["Secret", "shop", "basic", "pass", `${ASSETS_DIR}/secret_shop_basic_pass`],
      ["Secret", "shop", "basic", "user", `${ASSETS_DIR}/secret_shop_basic_user`],
      ["Secret", "shop", "scrape-client", "tls.crt", `${ASSETS_DIR}/secret_shop_scrape-client_tls.crt`],
      ["Secret", "shop", "scrape-client", "tls.key", `${ASSETS_DIR}/secret_shop_scrape-client_tls.key`],
      ["Secret", "shop", "scrape-token", "token", `${ASSETS_DIR}/secret_shop_scrape-token_token`],
    ]);
    for (const a of out.assets) expect(out.yaml).toContain(a.path);
  });

  it("keeps user external label values literal ($ escaped) and the operator's labels first", () => {
    const out = renderConfig(prometheus({ externalLabels: { cost: "$5", prometheus: "mine" } }), none);
    const labels = (parse(out.yaml) as { global: { external_labels: Record<string, string> } }).global
      .external_labels;
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Prometheus expands ${POD_NAME} itself
    const replica = "${POD_NAME}";
    expect(labels).toEqual({ prometheus: "monitoring/main", prometheus_replica: replica, cost: "$$5" });
  });

  it("escapes regex characters of selector label values", () => {
    const out = renderConfig(prometheus(), {
      ...none,
      serviceMonitors: [{ object: fullServiceMonitor, namespaces: ["shop"] }],
    });
    expect(out.yaml).toContain("regex: (v1\\.2);true");
  });
});
