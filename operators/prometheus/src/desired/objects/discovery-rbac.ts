// The identity the server's pods run as and what they may read: the ServiceAccount and the Roles and RoleBindings (or
// ClusterRole and ClusterRoleBinding) Prometheus's Kubernetes discovery needs, for the namespaces its monitors look in.
import type { RoleBindingObject, RoleObject, ServiceAccountObject } from "@capstan/core";
import type { Prometheus } from "../../api/prometheus.ts";
import {
  ClusterRole,
  ClusterRoleBinding,
  type ClusterRoleBindingObject,
  type ClusterRoleObject,
  foreignLabels,
  foreignRbacName,
  serverLabels,
  serverName,
  serviceAccountName,
} from "../objects.ts";
import { attachesNodeMetadata } from "../scrape-settings.ts";
import { meta, owned } from "./metadata.ts";

type PolicyRule = NonNullable<RoleObject["rules"]>[number];

/** What Prometheus's Kubernetes discovery (roles endpointslice and pod) reads. */
export const DISCOVERY_RULES: PolicyRule[] = [
  { apiGroups: [""], resources: ["pods", "services"], verbs: ["get", "list", "watch"] },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
];
/** What discovery reads besides, for monitors with attachMetadata.node (cluster-scoped: always a ClusterRole). */
export const NODE_DISCOVERY_RULES: PolicyRule[] = [
  { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
];
/** Cluster-wide discovery also lists namespaces. */
export const CLUSTER_DISCOVERY_RULES: PolicyRule[] = [
  ...DISCOVERY_RULES,
  { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
];

/**
 * The namespaces the server's discovery looks in: sorted names, or "all" when a monitor says `any`; and whether it
 * reads Nodes (`nodes`: a monitor attaches node metadata).
 */
export type DiscoveryScope = ({ all: true } | { all: false; namespaces: string[] }) & { nodes?: boolean };

/**
 * The scope of a selection: the union of its monitors' namespaces (`undefined` on one of them: all), and Nodes when
 * one of them sets attachMetadata.node.
 */
export function discoveryScope(
  monitors: readonly { namespaces?: string[]; object?: { spec: Record<string, unknown> } }[],
): DiscoveryScope {
  const names = new Set<string>();
  let all = false;
  for (const m of monitors) {
    if (m.namespaces === undefined) all = true;
    for (const n of m.namespaces ?? []) names.add(n);
  }
  const nodes = monitors.some((m) => m.object !== undefined && attachesNodeMetadata(m.object.spec));
  const scope: DiscoveryScope = all ? { all: true } : { all: false, namespaces: [...names].sort() };
  return nodes ? { ...scope, nodes } : scope;
}

/** The ServiceAccount `prometheus-<name>` (only when spec.serviceAccountName is unset). */
export function serviceAccount(p: Prometheus): ServiceAccountObject {
  return owned<ServiceAccountObject>(p, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(p, serverName(p)),
  });
}

/** Every RBAC object a server needs for `scope`, split into those it owns and those it cannot own. */
export interface DiscoveryRbac {
  /** In the server's namespace, with an owner reference (deleted with the server). */
  owned: (RoleObject | RoleBindingObject)[];
  /**
   * In other namespaces, or cluster-wide: labelled with the server's namespace and name; the reconciler deletes
   * them when no longer needed and, through RBAC_FINALIZER, when the server goes.
   */
  foreign: (RoleObject | RoleBindingObject | ClusterRoleObject | ClusterRoleBindingObject)[];
}

/**
 * The Roles and RoleBindings (one pair per namespace the monitors look in), or one ClusterRole and
 * ClusterRoleBinding when a monitor looks in every namespace, granting the ServiceAccount exactly what discovery
 * reads; Nodes (read) in that ClusterRole, or in a ClusterRole of their own, when the scope says so. A server with a
 * user-provided spec.serviceAccountName gets the same bindings for that account.
 */
export function discoveryRbac(p: Prometheus, scope: DiscoveryScope): DiscoveryRbac {
  const home = p.metadata.namespace ?? "";
  const subject = { kind: "ServiceAccount", name: serviceAccountName(p), namespace: home };
  const out: DiscoveryRbac = { owned: [], foreign: [] };
  const nodeRules = scope.nodes === true ? NODE_DISCOVERY_RULES : [];
  if (scope.all || nodeRules.length > 0) {
    const name = foreignRbacName(p);
    const labels = foreignLabels(p);
    out.foreign.push(
      {
        apiVersion: ClusterRole.apiVersion,
        kind: ClusterRole.kind,
        metadata: { name, labels },
        rules: [...(scope.all ? CLUSTER_DISCOVERY_RULES : []), ...nodeRules],
      },
      {
        apiVersion: ClusterRoleBinding.apiVersion,
        kind: ClusterRoleBinding.kind,
        metadata: { name, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [subject],
      },
    );
    if (scope.all) return out;
  }
  for (const ns of scope.namespaces) {
    const isHome = ns === home;
    const name = isHome ? serverName(p) : foreignRbacName(p);
    const metadata = { name, namespace: ns, labels: isHome ? serverLabels(p) : foreignLabels(p) };
    const role: RoleObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { ...metadata },
      rules: DISCOVERY_RULES,
    };
    const binding: RoleBindingObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { ...metadata },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [subject],
    };
    if (isHome) out.owned.push(owned(p, role), owned(p, binding));
    else out.foreign.push(role, binding);
  }
  return out;
}
