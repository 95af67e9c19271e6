// The objects a Prometheus server owns, as the operator and the cache name them: their types (and the cluster-wide RBAC
// kinds core does not define), their names, labels and annotations, and the finalizer. The builders are by object in
// objects/: discovery-rbac.ts (ServiceAccount, Roles, ClusterRoles), secrets.ts (the config Secret, the rule shards
// and their last-good copies), services.ts and statefulset.ts (the StatefulSet and its PodDisruptionBudget). No
// client imports: the reconciler applies what those return.
import { defineKind, type KubeObject, type RoleObject } from "@capstan/core";
import type { Prometheus } from "../api/prometheus.ts";

export {
  CONFIG_KEY,
  RELOAD_CHECK_SECONDS,
  RELOADER_SCRIPT,
  WEB_PORT,
} from "./reloader.ts";

type PolicyRule = NonNullable<RoleObject["rules"]>[number];

/** A ClusterRole (rbac.authorization.k8s.io/v1), for servers whose monitors look in every namespace. */
export interface ClusterRoleObject extends KubeObject {
  rules?: PolicyRule[];
}
/** A ClusterRoleBinding (rbac.authorization.k8s.io/v1). */
export interface ClusterRoleBindingObject extends KubeObject {
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}
/** The ClusterRole kind (core defines the namespaced RBAC kinds only). */
export const ClusterRole = defineKind<ClusterRoleObject>({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
});
/** The ClusterRoleBinding kind. */
export const ClusterRoleBinding = defineKind<ClusterRoleBindingObject>({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRoleBinding",
  plural: "clusterrolebindings",
  namespaced: false,
});

/** The app.kubernetes.io/managed-by value on every object the operator creates (and the cache's selector). */
export const MANAGED_BY = "capstan-prometheus-operator";
/** Label on RBAC objects outside the server's namespace (no owner reference possible): the server's namespace. */
export const SERVER_NAMESPACE_LABEL = "monitoring.capstan.dev/prometheus-namespace";
/** Label on RBAC objects outside the server's namespace: the server's name. */
export const SERVER_NAME_LABEL = "monitoring.capstan.dev/prometheus-name";
/** Finalizer on a Prometheus while RBAC objects it cannot own (other namespaces, cluster-wide) exist. */
export const RBAC_FINALIZER = "monitoring.capstan.dev/rbac-cleanup";
/** Annotation on the config Secret: the hash of the configuration and rule files it holds. */
export const CONFIG_HASH_ANNOTATION = "monitoring.capstan.dev/config-hash";

/** Annotation on the config Secret and the last-good Secret: the id of the generation they hold (generation.ts). */
export const GENERATION_ANNOTATION = "monitoring.capstan.dev/generation";
/** Annotation on the last-good Secret: the Prometheus version whose pods all accepted that generation. */
export const LAST_GOOD_VERSION_ANNOTATION = "monitoring.capstan.dev/prometheus-version";
/** The app.kubernetes.io/component label of the rule shards (the cache finds a server's shards by it). */
export const RULE_SHARD_COMPONENT = "rules";
/** The app.kubernetes.io/component label of the last-good Secret. */
export const LAST_GOOD_COMPONENT = "last-good";
/** The app.kubernetes.io/component label of the last-good rule shards. */
export const LAST_GOOD_SHARD_COMPONENT = "last-good-rules";

// ---- names and labels ----

/** `prometheus-<name>`: the StatefulSet, client Service, config Secret, ServiceAccount, PDB and home RBAC. */
export function serverName(p: Prometheus): string {
  return `prometheus-${p.metadata.name ?? ""}`;
}
/** `prometheus-<name>-rules-<i>`: rule shard i. */
export function ruleShardName(p: Prometheus, i: number): string {
  return `${serverName(p)}-rules-${i}`;
}
/** `prometheus-<name>-last-good`: the last generation every pod accepted (config, assets, checksums, version). */
export function lastGoodName(p: Prometheus): string {
  return `${serverName(p)}-last-good`;
}
/** `prometheus-<name>-last-good-rules-<i>`: the copy of rule shard i in the last-good generation. */
export function lastGoodShardName(p: Prometheus, i: number): string {
  return `${serverName(p)}-last-good-rules-${i}`;
}
/** `prometheus-<name>-operated`: the governing headless Service of the StatefulSet. */
export function governingServiceName(p: Prometheus): string {
  return `${serverName(p)}-operated`;
}
/** The ServiceAccount the pods run as: spec.serviceAccountName, else `prometheus-<name>`. */
export function serviceAccountName(p: Prometheus): string {
  return p.spec.serviceAccountName ?? serverName(p);
}
/** Name of RBAC objects outside the server's namespace and of cluster-wide ones: `prometheus-<namespace>-<name>`. */
export function foreignRbacName(p: Prometheus): string {
  return `prometheus-${p.metadata.namespace ?? ""}-${p.metadata.name ?? ""}`;
}

/** Labels selecting the server's pods. */
export function selectorLabels(p: Prometheus): Record<string, string> {
  return { "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": p.metadata.name ?? "" };
}
/** Labels of every object the server owns. */
export function serverLabels(p: Prometheus): Record<string, string> {
  return { ...selectorLabels(p), "app.kubernetes.io/managed-by": MANAGED_BY };
}
/** The pods' label selector as a string (status.selector, for the scale subresource). */
export function selectorString(p: Prometheus): string {
  return Object.entries(selectorLabels(p))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** Labels of an RBAC object the server cannot own: its namespace and name (observe.ts finds them by these). */
export function foreignLabels(p: Prometheus): Record<string, string> {
  return {
    ...serverLabels(p),
    [SERVER_NAMESPACE_LABEL]: p.metadata.namespace ?? "",
    [SERVER_NAME_LABEL]: p.metadata.name ?? "",
  };
}
