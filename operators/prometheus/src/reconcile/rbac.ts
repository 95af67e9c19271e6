// What the Prometheus operator may do in the cluster: its controller (whose for/owns/watches kinds give the read
// rules), the reads and writes its reconciler makes, and the reads it grants each server (discovery, and the kubelet
// and API server metrics of spec.clusterMetrics: Kubernetes refuses a Role or ClusterRole granting more than its
// creator holds). `capstan rbac` prints the rules;
// `capstan rbac --check` (and chart.test.ts) fails when charts/prometheus-operator/templates/rbac.yaml grants less or more.
import type { OperatorAccess } from "@capstan/cli";
import {
  ConfigMap,
  EndpointSlice,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from "@capstan/core";
import { Registry } from "prom-client";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { PrometheusKind } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { Node } from "../desired/cluster-metrics.ts";
import { ClusterRole, ClusterRoleBinding } from "../desired/objects.ts";
import { prometheusController } from "./controller.ts";
import { PrometheusOperatorMetrics } from "./metrics.ts";

const apply = ["create", "patch"] as const;

export const access: OperatorAccess = {
  controllers: () => [prometheusController({ metrics: new PrometheusOperatorMetrics(new Registry()) })],
  rules: [
    {
      kind: PrometheusKind,
      verbs: ["patch"],
      why: "the finalizer a server has while RBAC of its own exists outside its namespace",
    },
    ...[ServiceMonitorKind, PodMonitorKind, PrometheusRuleKind].map((kind) => ({
      kind,
      subresource: "status",
      verbs: ["patch"] as const,
      why: "status.bindings: each server's feedback on the monitors it selects",
    })),
    {
      kind: Pod,
      verbs: ["patch"],
      why: "a server pod gets its configuration's hash (an annotation), so the kubelet refreshes the mounted Secret",
    },
    { kind: Service, verbs: apply, why: "the servers' Services (server-side apply)" },
    { kind: ServiceAccount, verbs: apply, why: "a server's ServiceAccount (server-side apply)" },
    { kind: StatefulSet, verbs: apply, why: "the servers' StatefulSets (server-side apply)" },
    {
      kind: Secret,
      verbs: [...apply, "delete"],
      why: "a server's gzipped configuration, rule shards and their last-good copies (server-side apply); shards no longer needed deleted",
    },
    {
      kind: Pod,
      subresource: "log",
      verbs: ["get"],
      why: "the last lines of a server pod's prometheus container log, read once when it refused a configuration, for the errors it names",
    },
    {
      kind: ConfigMap,
      verbs: ["get"],
      why: "ConfigMap keys monitors reference (TLS files), read when their metadata says they changed (Secret keys: the owned Secrets' read)",
    },
    {
      kind: PodDisruptionBudget,
      verbs: [...apply, "delete"],
      why: "a server's PodDisruptionBudget (server-side apply), deleted below two replicas",
    },
    ...[Role, RoleBinding].map((kind) => ({
      kind,
      verbs: [...apply, "delete"] as const,
      why: "a server's discovery RBAC in each namespace its monitors look in, deleted when no longer needed",
    })),
    ...[ClusterRole, ClusterRoleBinding].map((kind) => ({
      kind,
      verbs: ["get", "list", "watch", ...apply, "delete"] as const,
      why: "a server's cluster-wide discovery RBAC when a monitor looks in every namespace, deleted when no longer needed",
    })),
    {
      kind: EndpointSlice,
      verbs: ["get", "list", "watch"],
      why: "granted to each server for its discovery (with pods, services and namespaces, which the controller reads)",
    },
    {
      kind: Node,
      verbs: ["get", "list", "watch"],
      why: "granted to a server whose spec.clusterMetrics.kubelet is set (node discovery), or whose monitors set attachMetadata.node",
    },
    {
      kind: Node,
      subresource: "metrics",
      verbs: ["get"],
      why: "granted to a server whose spec.clusterMetrics.kubelet is set (the kubelets' /metrics, /metrics/cadvisor, /metrics/probes)",
    },
  ],
  nonResourceRules: [
    {
      nonResourceURLs: ["/metrics", "/metrics/slis"],
      verbs: ["get"],
      why: "granted to a server whose spec.clusterMetrics.apiServer is set (the API server's metrics)",
    },
  ],
};
