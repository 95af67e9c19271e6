// The cluster-wide reads a server's pods get when spec.clusterMetrics asks for them (issue 29 item 10): what the
// kubelet and API server monitors of kube-prometheus-stack (and of anyone scraping those endpoints with the pod's
// ServiceAccount token) need, beside the discovery RBAC that follows the selected monitors (objects.ts). Pure.
//
// - kubelet: the kubelet authorizes /metrics and every path under it (/metrics/cadvisor, /metrics/probes,
//   /metrics/resource) as `get` on the subresource nodes/metrics of its Node, through a SubjectAccessReview. Node
//   discovery (role node) and attachMetadata.node read Nodes: get, list, watch. Not nodes/proxy: it is only needed to
//   scrape a kubelet through the API server's proxy, and it lets its holder run commands in any pod through the
//   kubelet API, far more than reading metrics.
// - apiServer: the API server's /metrics and /metrics/slis are non-resource URLs (a ClusterRole only).
//
// The operator holds these itself (Kubernetes refuses a grant of more than the granter holds): reconcile/rbac.ts.
import { defineKind, type KubeObject } from "@capstan/core";
import type { Prometheus } from "../api/prometheus.ts";
import {
  ClusterRole,
  ClusterRoleBinding,
  type ClusterRoleBindingObject,
  type ClusterRoleObject,
  foreignLabels,
  foreignRbacName,
  serviceAccountName,
} from "./objects.ts";

type PolicyRule = NonNullable<ClusterRoleObject["rules"]>[number];

/** The Node kind (core defines none): only named in the operator's RBAC, never read by it. */
export const Node = defineKind<KubeObject>({
  group: "",
  version: "v1",
  kind: "Node",
  plural: "nodes",
  namespaced: false,
});

/** What a kubelet monitor needs: nodes/metrics (every /metrics path of the kubelet), and Nodes for discovery. */
export const KUBELET_METRICS_RULES: PolicyRule[] = [
  { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
  { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
];
/** What an API server monitor needs: its metrics endpoints, non-resource URLs. */
export const API_SERVER_METRICS_RULES: PolicyRule[] = [
  { nonResourceURLs: ["/metrics", "/metrics/slis"], verbs: ["get"] },
];

/** `prometheus-<namespace>-<name>-cluster-metrics`: the ClusterRole and ClusterRoleBinding of the grants. */
export function clusterMetricsRbacName(p: Prometheus): string {
  return `${foreignRbacName(p)}-cluster-metrics`;
}

/**
 * The ClusterRole and ClusterRoleBinding granting the pods' ServiceAccount what spec.clusterMetrics asks for
 * (labelled as the server's, like its other cluster-wide RBAC: deleted when no longer asked for, and with the server
 * through its finalizer); none when it asks for nothing.
 */
export function clusterMetricsRbac(p: Prometheus): (ClusterRoleObject | ClusterRoleBindingObject)[] {
  const want = p.spec.clusterMetrics ?? {};
  const rules = [
    ...(want.kubelet === true ? KUBELET_METRICS_RULES : []),
    ...(want.apiServer === true ? API_SERVER_METRICS_RULES : []),
  ];
  if (rules.length === 0) return [];
  const name = clusterMetricsRbacName(p);
  const labels = foreignLabels(p);
  return [
    {
      apiVersion: ClusterRole.apiVersion,
      kind: ClusterRole.kind,
      metadata: { name, labels },
      rules: structuredClone(rules),
    },
    {
      apiVersion: ClusterRoleBinding.apiVersion,
      kind: ClusterRoleBinding.kind,
      metadata: { name, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [
        { kind: "ServiceAccount", name: serviceAccountName(p), namespace: p.metadata.namespace ?? "" },
      ],
    },
  ];
}
