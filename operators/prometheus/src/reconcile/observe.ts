// Observation: what the cache holds about one Prometheus server and what it selects (namespaces, monitors, rules,
// the Services and Pods its monitors look for, its own objects), and which Secret and ConfigMap keys its monitors
// reference (read by referenced.ts: the cache holds only their metadata).
import {
  type Cache,
  hasFinalizer,
  Namespace,
  Pod,
  PodDisruptionBudget,
  type PodDisruptionBudgetObject,
  type PodObject,
  Role,
  RoleBinding,
  type RoleBindingObject,
  type RoleObject,
  Secret,
  type SecretObject,
  Service,
  ServiceAccount,
  type ServiceAccountObject,
  type ServiceObject,
  StatefulSet,
  type StatefulSetObject,
} from "@capstan/core";
import { type PodMonitor, PodMonitorKind } from "../api/pod-monitor.ts";
import type { Prometheus } from "../api/prometheus.ts";
import { type PrometheusRule, PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { type AssetRef, endpointAssets } from "../desired/assets.ts";
import {
  ClusterRole,
  ClusterRoleBinding,
  type ClusterRoleBindingObject,
  type ClusterRoleObject,
  LAST_GOOD_SHARD_COMPONENT,
  lastGoodName,
  RBAC_FINALIZER,
  RULE_SHARD_COMPONENT,
  SERVER_NAME_LABEL,
  SERVER_NAMESPACE_LABEL,
  selectorLabels,
  serverName,
} from "../desired/objects.ts";
import type { KeyRef, MonitorObjects, NamespaceLike } from "../desired/select.ts";

/** A foreign RBAC object (other namespace, or cluster-wide) labelled as this server's. */
export type ForeignRbacObject = RoleObject | RoleBindingObject | ClusterRoleObject | ClusterRoleBindingObject;

/** Everything one reconcile knows about a server. */
export interface Observation {
  namespaces: NamespaceLike[];
  monitors: MonitorObjects;
  services: ServiceObject[];
  pods: PodObject[];
  /** The server's own pods (its selector labels), by name. */
  serverPods: PodObject[];
  statefulSet?: StatefulSetObject;
  configSecret?: SecretObject;
  /** The server's rule shards (Secrets prometheus-<name>-rules-<i>), sorted by name. */
  ruleShards: SecretObject[];
  /** The last-good Secret prometheus-<name>-last-good, when one was recorded. */
  lastGood?: SecretObject;
  /** The last-good rule shards (prometheus-<name>-last-good-rules-<i>), sorted by name. */
  lastGoodShards: SecretObject[];
  /** Owned objects by "Kind/name" (in the server's namespace). */
  owned: Map<
    string,
    ServiceObject | ServiceAccountObject | PodDisruptionBudgetObject | RoleObject | RoleBindingObject
  >;
  /** RBAC objects outside the server's namespace, and cluster-wide ones, labelled as this server's. */
  foreign: ForeignRbacObject[];
}

/** Reads what the cache holds for `prometheus`. */
export async function observe(prometheus: Prometheus, cache: Cache): Promise<Observation> {
  const namespace = prometheus.metadata.namespace ?? "";
  const name = serverName(prometheus);
  const [namespaces, serviceMonitors, podMonitors, rules, services, pods] = await Promise.all([
    cache.list(Namespace),
    cache.list(ServiceMonitorKind),
    cache.list(PodMonitorKind),
    cache.list(PrometheusRuleKind),
    cache.list(Service),
    cache.list(Pod),
  ]);
  const labels = selectorLabels(prometheus);
  const serverPods = pods.filter(
    (p) =>
      p.metadata.namespace === namespace &&
      Object.entries(labels).every(([k, v]) => p.metadata.labels?.[k] === v),
  );
  const owned: Observation["owned"] = new Map();
  const put = (o: { kind?: string; metadata: { name?: string } } | undefined, kind: string) => {
    if (o !== undefined) owned.set(`${kind}/${o.metadata.name ?? ""}`, o as never);
  };
  put(await cache.get(Service, name, namespace), "Service");
  put(await cache.get(Service, `${name}-operated`, namespace), "Service");
  put(await cache.get(ServiceAccount, name, namespace), "ServiceAccount");
  put(await cache.get(PodDisruptionBudget, name, namespace), "PodDisruptionBudget");
  put(await cache.get(Role, name, namespace), "Role");
  put(await cache.get(RoleBinding, name, namespace), "RoleBinding");

  const mine = {
    [SERVER_NAMESPACE_LABEL]: namespace,
    [SERVER_NAME_LABEL]: prometheus.metadata.name ?? "",
  };
  // Foreign RBAC is only ever created after RBAC_FINALIZER is set: without it there is none to look for (and an
  // operator in the namespace-scoped mode, which may not list ClusterRoles, never has to).
  const foreign: ForeignRbacObject[] = hasFinalizer(prometheus, RBAC_FINALIZER)
    ? [
        ...(await cache.list(Role, { labels: mine })),
        ...(await cache.list(RoleBinding, { labels: mine })),
        ...(await cache.list(ClusterRole, { labels: mine })),
        ...(await cache.list(ClusterRoleBinding, { labels: mine })),
      ]
    : [];
  const statefulSet = await cache.get(StatefulSet, name, namespace);
  const configSecret = await cache.get(Secret, name, namespace);
  const ruleShards = (
    await cache.list(Secret, {
      namespace,
      labels: { ...labels, "app.kubernetes.io/component": RULE_SHARD_COMPONENT },
    })
  )
    .filter((s) => (s.metadata.name ?? "").startsWith(`${name}-rules-`))
    .sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
  const lastGood = await cache.get(Secret, lastGoodName(prometheus), namespace);
  const lastGoodShards = (
    await cache.list(Secret, {
      namespace,
      labels: { ...labels, "app.kubernetes.io/component": LAST_GOOD_SHARD_COMPONENT },
    })
  )
    .filter((s) => (s.metadata.name ?? "").startsWith(`${lastGoodName(prometheus)}-rules-`))
    .sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
  return {
    namespaces,
    monitors: { serviceMonitors, podMonitors, rules },
    services,
    pods,
    serverPods,
    ...(statefulSet === undefined ? {} : { statefulSet }),
    ...(configSecret === undefined ? {} : { configSecret }),
    ruleShards,
    ...(lastGood === undefined ? {} : { lastGood }),
    lastGoodShards,
    owned,
    foreign,
  };
}

/** The Secret and ConfigMap keys the endpoints of `monitors` reference, deduplicated. */
export function referencedKeys(monitors: {
  serviceMonitors: readonly ServiceMonitor[];
  podMonitors: readonly PodMonitor[];
}): AssetRef[] {
  const out = new Map<string, AssetRef>();
  for (const sm of monitors.serviceMonitors) {
    for (const [i, ep] of (sm.spec.endpoints ?? []).entries()) {
      for (const a of endpointAssets(ep, sm.metadata.namespace ?? "", `endpoints[${i}]`))
        out.set(a.assetKey, a);
    }
  }
  for (const pm of monitors.podMonitors) {
    for (const [i, ep] of (pm.spec.podMetricsEndpoints ?? []).entries()) {
      for (const a of endpointAssets(ep, pm.metadata.namespace ?? "", `podMetricsEndpoints[${i}]`)) {
        out.set(a.assetKey, a);
      }
    }
  }
  return [...out.values()];
}

/** The map key of a referenced key. */
export function keyId(ref: KeyRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}/${ref.key}`;
}

/** Type guards used by the reconciler. */
export type { PodMonitor, PrometheusRule, ServiceMonitor };
