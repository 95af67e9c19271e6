// The objects the footprint benchmark gives each operator: its sample (operators/<op>/samples/, as `npm start`
// applies it) for the idle phase, then a load (etcd: 20 EtcdClusters of 1 member; Vault: 5 VaultClusters; Prometheus:
// 200 ServiceMonitors and 500 alerting rules in 50 PrometheusRules). Every object goes in the run's namespace.
import { defineKind, type Kind } from "../../packages/core/src/api/kinds.ts";
import type { KubeObject } from "../../packages/core/src/api/object.ts";

export const OPERATORS = ["etcd", "vault", "prometheus"] as const;
export type Operator = (typeof OPERATORS)[number];

type Any = KubeObject & Record<string, unknown>;
const kind = (group: string, k: string, plural: string, version = "v1alpha1"): Kind<Any> =>
  defineKind<Any>({ group, version, kind: k, plural, namespaced: true });

export const EtcdClusterKind = kind("etcd.capstan.dev", "EtcdCluster", "etcdclusters");
export const VaultClusterKind = kind("vault.capstan.dev", "VaultCluster", "vaultclusters");
export const PrometheusKind = kind("monitoring.capstan.dev", "Prometheus", "prometheuses");
export const ServiceMonitorKind = kind("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", "v1");
export const PrometheusRuleKind = kind("monitoring.coreos.com", "PrometheusRule", "prometheusrules", "v1");
/** prometheus-operator's own server resource (the Go peer's; its CRD comes from its module). */
export const GoPrometheusKind = kind("monitoring.coreos.com", "Prometheus", "prometheuses", "v1");

/** Small requests, so 20 etcd members and 5 Vault servers fit beside the rest on a 2-core node. */
const POD_RESOURCES = { requests: { cpu: "10m", memory: "64Mi" } };

/** One object to create, with its kind. */
export interface Workload {
  kind: Kind<Any>;
  object: Any;
}

const meta = (name: string, namespace: string, labels?: Record<string, string>) => ({
  name,
  namespace,
  ...(labels === undefined ? {} : { labels }),
});

function etcdCluster(name: string, namespace: string, replicas: number): Workload {
  return {
    kind: EtcdClusterKind,
    object: {
      apiVersion: EtcdClusterKind.apiVersion,
      kind: "EtcdCluster",
      metadata: meta(name, namespace),
      // The sample: etcd 3.6.15, 1Gi per member (operators/etcd/samples/etcdcluster.yaml); the load's members too.
      spec: {
        replicas,
        version: "3.6.15",
        storage: { size: "1Gi" },
        podTemplate: { resources: POD_RESOURCES },
      },
    },
  };
}

function vaultCluster(name: string, namespace: string, replicas: number): Workload {
  return {
    kind: VaultClusterKind,
    object: {
      apiVersion: VaultClusterKind.apiVersion,
      kind: "VaultCluster",
      metadata: meta(name, namespace),
      // operators/vault/samples/vaultcluster.yaml, with antiAffinity Preferred as npm start sets on one node.
      spec: {
        replicas,
        version: "1.14.8",
        storage: { size: "1Gi", whenDeleted: "Delete" },
        unseal: { shares: 5, threshold: 3 },
        podTemplate: { antiAffinity: "Preferred", resources: POD_RESOURCES },
      },
    },
  };
}

/** operators/prometheus/samples/prometheus.yaml, selecting in the run's namespace only. */
function prometheus(namespace: string): Workload {
  const all = {};
  return {
    kind: PrometheusKind,
    object: {
      apiVersion: PrometheusKind.apiVersion,
      kind: "Prometheus",
      metadata: meta("prometheus-demo", namespace),
      spec: {
        replicas: 1,
        serviceMonitorSelector: all,
        podMonitorSelector: all,
        ruleSelector: all,
        scrapeInterval: "15s",
        retention: "2d",
        storage: { size: "1Gi" },
        externalLabels: { cluster: "capstan-bench" },
      },
    },
  };
}

/** prometheus-operator's Prometheus selecting the same monitors and rules (one replica, like ours). */
export function goPrometheus(namespace: string, image?: string): Workload {
  const all = {};
  return {
    kind: GoPrometheusKind,
    object: {
      apiVersion: GoPrometheusKind.apiVersion,
      kind: "Prometheus",
      metadata: meta("prometheus-demo", namespace),
      spec: {
        replicas: 1,
        serviceMonitorSelector: all,
        podMonitorSelector: all,
        ruleSelector: all,
        scrapeInterval: "15s",
        retention: "2d",
        externalLabels: { cluster: "capstan-bench" },
        ...(image === undefined ? {} : { image }),
      },
    },
  };
}

/** ServiceMonitor i of the load: selects Services labelled bench-app=app-<i>, port "web". */
function serviceMonitor(i: number, namespace: string): Workload {
  const app = `app-${String(i).padStart(3, "0")}`;
  return {
    kind: ServiceMonitorKind,
    object: {
      apiVersion: ServiceMonitorKind.apiVersion,
      kind: "ServiceMonitor",
      metadata: meta(`bench-${app}`, namespace, { "bench-app": app }),
      spec: {
        selector: { matchLabels: { "bench-app": app } },
        endpoints: [{ port: "web", interval: "30s", path: "/metrics" }],
      },
    },
  };
}

/** PrometheusRule i of the load: one group of `rules` alerting rules. */
function prometheusRule(i: number, namespace: string, rules: number): Workload {
  const name = `bench-rules-${String(i).padStart(3, "0")}`;
  return {
    kind: PrometheusRuleKind,
    object: {
      apiVersion: PrometheusRuleKind.apiVersion,
      kind: "PrometheusRule",
      metadata: meta(name, namespace),
      spec: {
        groups: [
          {
            name,
            rules: Array.from({ length: rules }, (_, r) => ({
              alert: `BenchAlert${i}x${r}`,
              expr: `sum by (job) (rate(http_requests_total{job="app-${i}",code=~"5.."}[5m])) > ${r + 1}`,
              for: "5m",
              labels: { severity: r % 2 ? "warning" : "critical" },
              annotations: { summary: `bench rule ${r} of group ${i}` },
            })),
          },
        ],
      },
    },
  };
}

/** The operator's sample: the idle phase. */
export function sampleOf(op: Operator, namespace: string, goPeer = false): Workload[] {
  if (op === "etcd") return [etcdCluster("demo", namespace, 3)];
  if (op === "vault") return [vaultCluster("vault-demo", namespace, 3)];
  return [goPeer ? goPrometheus(namespace) : prometheus(namespace)];
}

/** What the loaded phase adds to the sample. */
export function loadOf(op: Operator, namespace: string): Workload[] {
  const n = (count: number) => Array.from({ length: count }, (_, i) => i);
  if (op === "etcd") return n(20).map((i) => etcdCluster(`load-${String(i).padStart(2, "0")}`, namespace, 1));
  if (op === "vault") return n(5).map((i) => vaultCluster(`load-${i}`, namespace, 1));
  return [
    ...n(200).map((i) => serviceMonitor(i, namespace)),
    ...n(50).map((i) => prometheusRule(i, namespace, 10)),
  ];
}
