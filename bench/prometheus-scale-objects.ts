// The cluster bench/prometheus-scale.ts reconciles: one Prometheus server selecting, over many team namespaces, a
// ServiceMonitor per Service (realistic endpoints and relabelings), the Pods behind those Services, and
// PrometheusRules of alerting and recording rules. Deterministic: the same scale gives the same objects.
import type { KubeObject } from "@capstan/core";
import { type Prometheus, PrometheusKind } from "../operators/prometheus/src/api/prometheus.ts";
import {
  type PrometheusRule,
  PrometheusRuleKind,
  type RuleGroup,
} from "../operators/prometheus/src/api/prometheus-rule.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../operators/prometheus/src/api/service-monitor.ts";
import { selectorLabels } from "../operators/prometheus/src/desired/objects.ts";

/** How big the generated cluster is. */
export interface Scale {
  monitors: number;
  rules: number;
  pods: number;
  namespaces: number;
}

/** Rules per PrometheusRule object (two groups of five), as a chart's rule file typically holds. */
export const RULES_PER_OBJECT = 10;
const RULES_PER_GROUP = 5;
/** Where the server runs; its own pod is the one whose reloader "accepts" each generation. */
export const SERVER = { name: "main", namespace: "monitoring" } as const;
/** The server pod's IP, which the bench's runtimeinfo and reloader clients answer for. */
export const SERVER_POD_IP = "10.0.0.7";

const pad = (i: number) => String(i).padStart(4, "0");
const nsOf = (i: number, scale: Scale) => `team-${pad(i % scale.namespaces)}`;
/** App i of a scale: each scale's names (and so its regexes and PromQL) are its own, so no scale warms another's memos. */
const appOf = (i: number, scale: Scale) => `app${scale.monitors}-${pad(i)}`;

/** The Prometheus server: monitors and rules labelled release=main in namespaces labelled monitoring=enabled. */
export function prometheusServer(): Prometheus {
  return {
    apiVersion: PrometheusKind.apiVersion,
    kind: PrometheusKind.kind,
    metadata: { ...SERVER, uid: "prometheus-main", generation: 1 },
    spec: {
      replicas: 1,
      version: "3.16.0",
      repository: "quay.io/prometheus/prometheus",
      scrapeInterval: "30s",
      evaluationInterval: "30s",
      retention: "15d",
      storage: { size: "10Gi" },
      serviceMonitorSelector: { matchLabels: { release: "main" } },
      serviceMonitorNamespaceSelector: { matchLabels: { monitoring: "enabled" } },
      ruleSelector: { matchLabels: { release: "main" } },
      ruleNamespaceSelector: { matchLabels: { monitoring: "enabled" } },
      externalLabels: { cluster: "bench" },
    },
  };
}

function namespace(name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name, monitoring: "enabled" } },
  };
}

/** Service i: app i in its team namespace, ports metrics (9090) and http (8080). */
function service(i: number, scale: Scale): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: appOf(i, scale),
      namespace: nsOf(i, scale),
      labels: { app: appOf(i, scale), "app.kubernetes.io/name": appOf(i, scale), tier: "backend" },
    },
    spec: {
      selector: { app: appOf(i, scale) },
      ports: [
        { name: "metrics", port: 9090, targetPort: "metrics" },
        { name: "http", port: 8080, targetPort: 8080 },
      ],
    },
  } as KubeObject;
}

/** Pod j, behind Service j mod monitors. */
function pod(j: number, scale: Scale): KubeObject {
  const i = j % scale.monitors;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${appOf(i, scale)}-${pad(j)}`,
      namespace: nsOf(i, scale),
      uid: `pod-${j}`,
      labels: { app: appOf(i, scale), "pod-template-hash": "5d8f7c9b6d" },
    },
    spec: {
      nodeName: `node-${j % 20}`,
      containers: [
        {
          name: "app",
          image: "registry.example/app:1.0",
          ports: [
            { name: "metrics", containerPort: 9090 },
            { name: "http", containerPort: 8080 },
          ],
        },
      ],
    },
    status: {
      phase: "Running",
      podIP: `10.1.${(j >> 8) & 255}.${j & 255}`,
      conditions: [{ type: "Ready", status: "True" }],
    },
  } as KubeObject;
}

/**
 * ServiceMonitor i: selects Service i; scrapes `metrics` with the relabelings a chart's monitor usually carries
 * (node and pod labels, a labelmap, a drop) and drops Go runtime and its own debug series; every fifth one also scrapes `http` at
 * /admin/metrics every 60s.
 */
function serviceMonitor(i: number, scale: Scale): ServiceMonitor {
  const endpoints: ServiceMonitor["spec"]["endpoints"] = [
    {
      port: "metrics",
      path: "/metrics",
      interval: "30s",
      scrapeTimeout: "10s",
      honorLabels: false,
      relabelings: [
        { sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node", action: "replace" },
        { sourceLabels: ["__meta_kubernetes_pod_name"], targetLabel: "pod" },
        { regex: "__meta_kubernetes_service_label_(app_kubernetes_io_.+)", action: "labelmap" },
        { sourceLabels: ["__meta_kubernetes_pod_phase"], regex: "Succeeded|Failed", action: "drop" },
      ],
      metricRelabelings: [
        // One regex of each monitor is its own (its app's debug series); the others are shared, as charts' are.
        {
          sourceLabels: ["__name__"],
          regex: `go_(gc|memstats)_.*|app${scale.monitors}_${i}_debug_.*`,
          action: "drop",
        },
        { regex: "pod_template_hash", action: "labeldrop" },
      ],
    },
  ];
  if (i % 5 === 0) endpoints.push({ port: "http", path: "/admin/metrics", interval: "60s" });
  return {
    apiVersion: ServiceMonitorKind.apiVersion,
    kind: ServiceMonitorKind.kind,
    metadata: {
      name: appOf(i, scale),
      namespace: nsOf(i, scale),
      uid: `sm-${i}`,
      generation: 1,
      labels: { release: "main" },
    },
    spec: {
      jobLabel: "app.kubernetes.io/name",
      selector: { matchLabels: { app: appOf(i, scale) } },
      podTargetLabels: ["pod-template-hash"],
      endpoints,
    },
  };
}

/** PrometheusRule k: RULES_PER_OBJECT rules in groups of RULES_PER_GROUP, alternating recording and alerting. */
function prometheusRule(k: number, scale: Scale): PrometheusRule {
  const app = appOf(k % scale.monitors, scale);
  const groups: RuleGroup[] = [];
  for (let g = 0; g < RULES_PER_OBJECT / RULES_PER_GROUP; g++) {
    const rules: NonNullable<RuleGroup["rules"]> = [];
    for (let r = 0; r < RULES_PER_GROUP; r++) {
      const n = g * RULES_PER_GROUP + r;
      rules.push(
        n % 2 === 0
          ? {
              record: `job:http_requests_${n}:rate5m`,
              expr: `sum by (job, code) (rate(http_requests_total{job="${app}",handler=~"/api/.*"}[5m]))`,
            }
          : {
              alert: `HighErrorRate${n}`,
              expr: `sum by (job) (rate(http_requests_total{job="${app}",code=~"5.."}[5m])) / sum by (job) (rate(http_requests_total{job="${app}"}[5m])) > 0.05`,
              for: "10m",
              labels: { severity: n % 3 === 0 ? "critical" : "warning", team: nsOf(k, scale) },
              annotations: {
                summary: `{{ $labels.job }}: {{ $value | humanizePercentage }} of requests fail`,
                runbook_url: `https://runbooks.example/${app}/high-error-rate`,
              },
            },
      );
    }
    groups.push({ name: `${app}.rules-${k}-${g}`, interval: "1m", rules });
  }
  return {
    apiVersion: PrometheusRuleKind.apiVersion,
    kind: PrometheusRuleKind.kind,
    metadata: {
      name: `${app}-rules-${pad(k)}`,
      namespace: nsOf(k, scale),
      uid: `rule-${k}`,
      generation: 1,
      labels: { release: "main" },
    },
    spec: { groups },
  };
}

/** The server's own pod, ready at SERVER_POD_IP. */
function serverPod(p: Prometheus): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `prometheus-${SERVER.name}-0`,
      namespace: SERVER.namespace,
      uid: "prometheus-pod-0",
      labels: selectorLabels(p),
    },
    spec: { containers: [{ name: "prometheus", image: "quay.io/prometheus/prometheus:v3.16.0" }] },
    status: { podIP: SERVER_POD_IP, conditions: [{ type: "Ready", status: "True" }] },
  } as KubeObject;
}

/** Every object of the generated cluster (the server included), and counts to check them by. */
export function generate(scale: Scale): { objects: KubeObject[]; server: Prometheus } {
  const server = prometheusServer();
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  const ruleObjects = Math.ceil(scale.rules / RULES_PER_OBJECT);
  const objects: KubeObject[] = [
    namespace(SERVER.namespace),
    ...range(scale.namespaces).map((i) => namespace(`team-${pad(i)}`)),
    server,
    serverPod(server),
    ...range(scale.monitors).map((i) => service(i, scale)),
    ...range(scale.pods).map((j) => pod(j, scale)),
    ...range(scale.monitors).map((i) => serviceMonitor(i, scale)),
    ...range(ruleObjects).map((k) => prometheusRule(k, scale)),
  ];
  return { objects, server };
}
