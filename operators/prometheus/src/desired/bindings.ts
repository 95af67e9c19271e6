// The status the reconciler writes from a Selection: each monitor's `status.bindings[]` entry for this server
// (prometheus-operator's shape: an Accepted condition per server, True once the pods run a configuration holding the
// object), and the server's `status.selected`. Pure.
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
 * Whether the server's pods run the configuration this reconcile computed: an object in it is reported Accepted=True
 * only once they do (the reloader of every pod said its Prometheus loaded that generation), not when it is written.
 */
export type LoadState =
  | { loaded: true }
  | {
      loaded: false;
      /** The Accepted=Unknown reason of an object waiting for it. */
      reason: PendingReason;
      /** Why, naming the generation and where to look. */
      message: string;
    };

/** Why an object in the configuration is not yet reported Accepted=True (its condition is Unknown meanwhile). */
export type PendingReason =
  /** The pods have not all loaded the generation holding it yet (or do not answer). */
  | "ReloadPending"
  /** A pod's Prometheus refused the generation holding it: the pods keep running the previous one. */
  | "ConfigRefused"
  /** The API server refused the configuration Secret or a rule shard: the pods cannot get it. */
  | "ConfigNotWritten";

/** The Accepted condition's status, reason and message for `feedback`, given what the pods run. */
export function acceptedVerdict(
  feedback: MonitorFeedback,
  previous: ConfigResourceCondition | undefined,
  load: LoadState,
): Pick<ConfigResourceCondition, "status" | "reason" | "message"> {
  if (!feedback.inConfig) return { status: "False", reason: feedback.reason, message: feedback.message };
  // Reported loaded before, at this generation of the object: every configuration the pods took since holds it.
  const loadedBefore = previous?.status === "True" && previous.observedGeneration === feedback.generation;
  if (load.loaded || loadedBefore) {
    return { status: "True", reason: feedback.reason, message: feedback.message };
  }
  return { status: "Unknown", reason: load.reason, message: `${load.message}; ${feedback.message}` };
}

/**
 * The binding of `prometheus` for the monitor `feedback` judges, with its Accepted condition: False for an object left
 * out of the configuration; for one in it, True (reason Accepted, or the diagnostic NoTargets/PortNotFound) once the
 * pods run a configuration holding this generation of it (`load`, or an earlier True at the same generation), and
 * Unknown (the {@link PendingReason}) until then. The condition's lastTransitionTime is kept from `previous` (the
 * monitor's current status) when its status did not change, and is `now` otherwise.
 */
export function bindingFor(
  prometheus: Prometheus,
  feedback: MonitorFeedback,
  previous: ConfigResourceStatus | undefined,
  load: LoadState,
  now: string,
): WorkloadBinding {
  const old = previous?.bindings
    ?.find((b) => isBindingOf(b, prometheus))
    ?.conditions?.find((c) => c.type === "Accepted");
  const verdict = acceptedVerdict(feedback, old, load);
  const condition: ConfigResourceCondition = {
    type: "Accepted",
    status: verdict.status,
    lastTransitionTime: old?.status === verdict.status ? old.lastTransitionTime : now,
    ...(verdict.reason === undefined ? {} : { reason: verdict.reason }),
    ...(verdict.message === undefined ? {} : { message: verdict.message }),
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

/** What {@link loadStateOf} reads: the reconcile's verdict on the configuration and on the pods' reloads. */
export interface LoadEvidence {
  /** "namespace/name" of the server. */
  server: string;
  /** The API server refused the configuration Secret or a rule shard this reconcile. */
  notWritten: boolean;
  /** Every server pod, on the spec's image, accepted `candidate`. */
  allAccepted: boolean;
  /**
   * The pods whose Prometheus refused the candidate. The messages name no generation: a pending object's status then
   * stays the same while further configurations are written, instead of being rewritten with each one.
   */
  refused: { pods: string[] } | undefined;
}

/** Whether the pods run the candidate configuration, and if not, why: the objects in it wait with that reason. */
export function loadStateOf(e: LoadEvidence): LoadState {
  if (e.notWritten) {
    return {
      loaded: false,
      reason: "ConfigNotWritten",
      message: `the configuration holding it could not be written: see Prometheus ${e.server}, conditions Degraded and Reconciled`,
    };
  }
  if (e.allAccepted) return { loaded: true };
  if (e.refused !== undefined) {
    return {
      loaded: false,
      reason: "ConfigRefused",
      message: `in the configuration, which Prometheus in ${e.refused.pods.join(", ")} refused (see Prometheus ${e.server}, condition Degraded, for the generation and Prometheus's words): the pods keep running the previous one`,
    };
  }
  return {
    loaded: false,
    reason: "ReloadPending",
    message: `in the configuration, which not every pod of Prometheus ${e.server} has loaded yet (the operator reads each ready pod's reloader state on port 9090)`,
  };
}
