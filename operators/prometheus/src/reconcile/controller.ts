// The Prometheus controller: what it reconciles (Prometheus servers), what it owns and watches (the monitors, rules
// and Namespaces a server selects, each event mapped to every server; the Services and Pods, each event mapped to the
// servers whose last selection it can affect: interest.ts), and what the cache holds. Each reconcile is
// reconcilePrometheus (reconcile.ts).
import {
  type CacheSelector,
  type Controller,
  controller,
  generationChanged,
  type KubeObject,
  labelsChanged,
  managedBySelectors,
  Namespace,
  or,
  owns,
  Pod,
  PodDisruptionBudget,
  type Predicate,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  type Watch,
  watch,
} from "@capstan/core";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { ClusterRole, ClusterRoleBinding, MANAGED_BY } from "../desired/objects.ts";
import { interestedServers } from "./interest.ts";
import { ControllerState, type PrometheusControllerOptions } from "./options.ts";
import { reconcilePrometheus } from "./reconcile.ts";
import { referencedKinds } from "./referenced.ts";

/** Only the objects the operator created are cached, except Services, Pods and Namespaces: monitors select those. */
export function prometheusCacheSelectors(): CacheSelector[] {
  return managedBySelectors(MANAGED_BY, [
    StatefulSet,
    Secret,
    ServiceAccount,
    Role,
    RoleBinding,
    PodDisruptionBudget,
    ClusterRole,
    ClusterRoleBinding,
  ]);
}

const serviceChanged: Predicate<KubeObject> = {
  update: (o, n) =>
    JSON.stringify([o.metadata.labels, (o as { spec?: { ports?: unknown } }).spec?.ports]) !==
    JSON.stringify([n.metadata.labels, (n as { spec?: { ports?: unknown } }).spec?.ports]),
};

/**
 * The Service and Pod watches: a Service's labels or ports, or a Pod's labels, changed (or the object added or deleted)
 * reconcile the servers whose recorded interest (interest.ts) the old or the new object matches, and every server
 * with none recorded.
 */
export function targetWatches(state: ControllerState): Watch[] {
  return [
    watch(Service, (s) => interestedServers(state.servers, state.interest, "Service", s), [serviceChanged]),
    watch(Pod, (p) => interestedServers(state.servers, state.interest, "Pod", p), [labelsChanged()]),
  ];
}

/**
 * The watches of the Secrets and ConfigMaps monitors reference (metadata only): a change of one reconciles the servers
 * whose last reconcile read it, so a rotated password or CA reaches the configuration at once.
 */
export function referencedWatches(state: ControllerState): Watch[] {
  const [secrets, configMaps] = referencedKinds;
  const requests = (servers: string[]) =>
    servers.flatMap((s) => {
      const r = state.servers.get(s);
      return r === undefined ? [] : [r];
    });
  return [
    watch(secrets, (o) => requests(state.referenced.serversUsing("Secret", o))),
    watch(configMaps, (o) => requests(state.referenced.serversUsing("ConfigMap", o))),
  ];
}

/** The controller that reconciles Prometheus servers. */
export function prometheusController(options: PrometheusControllerOptions): Controller<Prometheus> {
  const state = options.state ?? new ControllerState();
  const all = () => [...state.servers.values()];
  const monitorChanged = [or(generationChanged(), labelsChanged())];
  return controller({
    name: "prometheus",
    for: PrometheusKind,
    // The field manager of every object the operator applies (in users' managedFields: never renamed).
    fieldManager: "capstan-prometheus-operator",
    owns: [
      StatefulSet,
      Service,
      Secret,
      ServiceAccount,
      Role,
      RoleBinding,
      owns(PodDisruptionBudget, [generationChanged()]),
    ],
    watches: [
      watch(ServiceMonitorKind, all, monitorChanged),
      watch(PodMonitorKind, all, monitorChanged),
      watch(PrometheusRuleKind, all, monitorChanged),
      watch(Namespace, all, [labelsChanged()]),
      ...targetWatches(state),
      ...referencedWatches(state),
    ],
    predicates: [generationChanged()],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
    reconcile: (req, ctx) => reconcilePrometheus(req, ctx, { ...options, state }),
  });
}
