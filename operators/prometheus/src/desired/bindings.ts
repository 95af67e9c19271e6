// The status the reconciler writes from a Selection: each monitor's `status.bindings[]` entry for this server
// (prometheus-operator's shape: an Accepted condition per server), and the server's `status.selected`. Pure.
import type {
  ConfigResourceCondition,
  ConfigResourceStatus,
  WorkloadBinding,
} from "../api/monitoring-common.ts";
import { GROUP, type Prometheus, PrometheusKind, type PrometheusSelected } from "../api/prometheus.ts";
import type { MonitorFeedback, SelectedMonitors } from "./select.ts";

/** `status.selected` of the server: what its configuration holds, as sorted "namespace/name" lists. */
export function selectedStatus(selected: SelectedMonitors): PrometheusSelected {
  const key = (o: { metadata: { namespace?: string; name?: string } }) =>
    `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
  return {
    serviceMonitors: selected.serviceMonitors.map((m) => key(m.object)).sort(),
    podMonitors: selected.podMonitors.map((m) => key(m.object)).sort(),
    rules: selected.rules.map(key).sort(),
  };
}

/** Whether `b` is the binding of `prometheus` (our group and resource, its name and namespace). */
export function isBindingOf(b: WorkloadBinding, prometheus: Prometheus): boolean {
  return (
    b.group === GROUP &&
    b.resource === PrometheusKind.plural &&
    b.name === prometheus.metadata.name &&
    b.namespace === prometheus.metadata.namespace
  );
}

/**
 * The binding of `prometheus` for the monitor `feedback` judges, with its Accepted condition. The condition's
 * lastTransitionTime is kept from `previous` (the monitor's current status) when its status did not change, and is
 * `now` otherwise.
 */
export function bindingFor(
  prometheus: Prometheus,
  feedback: MonitorFeedback,
  previous: ConfigResourceStatus | undefined,
  now: string,
): WorkloadBinding {
  const status = feedback.accepted ? "True" : "False";
  const old = previous?.bindings
    ?.find((b) => isBindingOf(b, prometheus))
    ?.conditions?.find((c) => c.type === "Accepted");
  const condition: ConfigResourceCondition = {
    type: "Accepted",
    status,
    lastTransitionTime: old?.status === status ? old.lastTransitionTime : now,
    reason: feedback.reason,
    message: feedback.message,
    ...(feedback.generation === undefined ? {} : { observedGeneration: feedback.generation }),
  };
  return {
    group: GROUP,
    resource: PrometheusKind.plural,
    name: prometheus.metadata.name ?? "",
    namespace: prometheus.metadata.namespace ?? "",
    conditions: [condition],
  };
}

/**
 * The monitor's status with `binding` in place of the same server's entry (other servers' bindings, including
 * prometheus-operator's, are kept in their order; a new entry goes last).
 */
export function withBinding(
  status: ConfigResourceStatus | undefined,
  binding: WorkloadBinding,
): ConfigResourceStatus {
  const same = (b: WorkloadBinding) =>
    b.group === binding.group &&
    b.resource === binding.resource &&
    b.name === binding.name &&
    b.namespace === binding.namespace;
  const bindings = [...(status?.bindings ?? [])];
  const i = bindings.findIndex(same);
  if (i >= 0) bindings[i] = binding;
  else bindings.push(binding);
  return { ...status, bindings };
}

/** The monitor's status without the binding of `prometheus` (the server no longer selects it, or is deleted). */
export function withoutBinding(
  status: ConfigResourceStatus | undefined,
  prometheus: Prometheus,
): ConfigResourceStatus {
  return { ...status, bindings: (status?.bindings ?? []).filter((b) => !isBindingOf(b, prometheus)) };
}
