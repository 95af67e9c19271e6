// Inputs of the configuration golden files, shared by config.test.ts (the golden files) and
// promtool.real.test.ts (the real promtool over the same output), and the defaulted spec every test starts from. Test support only: not exported by the package.
import type { PodMonitor } from "../api/pod-monitor.ts";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import type { SelectedMonitors } from "./select.ts";

/** The spec of a server with every default spelled out (what the API server stores for an empty spec). */
export const defaultSpec: PrometheusSpec = {
  replicas: 1,
  version: "3.16.0",
  repository: "quay.io/prometheus/prometheus",
  scrapeInterval: "30s",
  evaluationInterval: "30s",
  retention: "15d",
  storage: { size: "10Gi" },
};

export function prometheus(spec: Partial<PrometheusSpec> = {}): Prometheus {
  return {
    metadata: { name: "main", namespace: "monitoring" },
    spec: {
      ...defaultSpec,
      ...spec,
    },
  };
}

export const none: SelectedMonitors = { serviceMonitors: [], podMonitors: [], rules: [] };

/** A ServiceMonitor with every field the operator reads. */
export const fullServiceMonitor: ServiceMonitor = {
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
    fallbackScrapeProtocol: "PrometheusText0.0.4",
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
        trackTimestampsStaleness: true,
      },
      { targetPort: "admin", bearerTokenSecret: { name: "scrape-token", key: "token" } },
    ],
    attachMetadata: { node: true },
    bodySizeLimit: "10MB",
    scrapeProtocols: ["OpenMetricsText1.0.0", "PrometheusText0.0.4"],
    scrapeClassicHistograms: true,
    scrapeNativeHistograms: true,
    nativeHistogramBucketLimit: 160,
    nativeHistogramMinBucketFactor: "1.1",
    convertClassicHistogramsToNHCB: false,
    labelLimit: 30,
    keepDroppedTargets: 5,
  },
};

export const podMonitor: PodMonitor = {
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

export const rule: PrometheusRule = {
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

function namespaced(name: string, namespace: string): ServiceMonitor {
  return {
    metadata: { name, namespace },
    spec: { selector: { matchLabels: { app: name } }, endpoints: [{ port: "http" }] },
  };
}

/** One golden file: testdata/<file> holds renderConfig(prometheus, selected).yaml. */
export interface GoldenCase {
  name: string;
  file: string;
  prometheus: Prometheus;
  selected: SelectedMonitors;
}

export const GOLDEN_CASES: GoldenCase[] = [
  { name: "an empty selection", file: "config-empty.yaml", prometheus: prometheus(), selected: none },
  {
    name: "a ServiceMonitor with every field",
    file: "config-servicemonitor-full.yaml",
    prometheus: prometheus({
      scrapeInterval: "1m",
      scrapeTimeout: "20s",
      externalLabels: { cluster: "local" },
    }),
    selected: {
      ...none,
      serviceMonitors: [{ object: fullServiceMonitor, namespaces: ["shop", "shop-staging"] }],
    },
  },
  {
    name: "a PodMonitor",
    file: "config-podmonitor.yaml",
    prometheus: prometheus(),
    selected: { ...none, podMonitors: [{ object: podMonitor, namespaces: ["etcd"] }] },
  },
  {
    name: "a PrometheusRule",
    file: "config-rules.yaml",
    prometheus: prometheus({ evaluationInterval: "15s" }),
    selected: { ...none, rules: [rule] },
  },
  {
    name: "namespace scoping: own namespace, a list, and every namespace",
    file: "config-namespaces.yaml",
    prometheus: prometheus(),
    selected: {
      ...none,
      serviceMonitors: [
        { object: namespaced("everywhere", "monitoring") },
        { object: namespaced("listed", "monitoring"), namespaces: ["a", "b"] },
        { object: namespaced("own", "app"), namespaces: ["app"] },
      ],
      podMonitors: [{ object: { ...podMonitor, metadata: { name: "all-etcd", namespace: "etcd" } } }],
    },
  },
];

/**
 * `count` PrometheusRules in `namespace` (labelled role: alert-rules), each one alert whose rendered rule file is
 * about 2.7 kB (a long runbook annotation, as real alerts carry): 450 of them make the 1.22 MB that one Secret could
 * not hold (issue 29).
 */
export function manyRules(count: number, namespace = "monitoring"): PrometheusRule[] {
  return Array.from({ length: count }, (_, i) => {
    const n = String(i).padStart(4, "0");
    return {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PrometheusRule",
      metadata: { name: `team-rules-${n}`, namespace, uid: `rule-${n}`, labels: { role: "alert-rules" } },
      spec: {
        groups: [
          {
            name: `team-${n}`,
            rules: [
              {
                alert: `HighErrorRate${n}`,
                expr: `sum by (job) (rate(http_requests_total{code=~"5..",service="svc-${n}"}[5m])) / sum by (job) (rate(http_requests_total{service="svc-${n}"}[5m])) > 0.05`,
                for: "10m",
                labels: { severity: "warning", team: `team-${n}` },
                annotations: {
                  summary: `Service svc-${n} answers more than 5% errors`,
                  description: Array.from(
                    { length: 28 },
                    (_, s) =>
                      `Step ${s + 1} for svc-${n}: check the dashboard, the logs and the recent deploys.`,
                  ).join(" "),
                },
              },
            ],
          },
        ],
      },
    };
  });
}
