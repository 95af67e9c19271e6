// Pure: the Prometheus status a reconcile writes (conditions Available, Progressing, Degraded, Reconciled; replicas;
// what the configuration holds; its hash) from what it observed and decided. Messages depend only on state, never
// on what this reconcile wrote, so a steady state computes the same status and writes nothing.
import { type Condition, type PodObject, type StatefulSetObject, setCondition } from "@capstan/core";
import type { Prometheus, PrometheusSelected, PrometheusStatus } from "../api/prometheus.ts";
import { selectorString } from "../desired/objects.ts";

/** Something only the operator can judge, or a refusal that needs a human: Degraded with this reason. */
export interface Problem {
  reason: string;
  message: string;
}

/** What the status is computed from. */
export interface StatusInput {
  statefulSet?: StatefulSetObject;
  /** What the configuration holds; undefined when it could not be computed (keep the previous). */
  selected?: PrometheusSelected;
  /** Monitors and rules selected but left out or not accepted. */
  notAccepted?: number;
  configHash?: string;
  /** Degraded problems, the first one reported in the condition. */
  problems: Problem[];
  /** The configuration could not be generated (a malformed server selector): Reconciled is False. */
  configProblem?: Problem;
  /** Monitor kinds whose CRD has no status subresource: their verdicts are Events (said in Reconciled). */
  noStatusKinds?: readonly string[];
}

/** What Reconciled adds when some monitor kinds' verdicts are Events, because their CRDs have no status subresource. */
export function noStatusNote(kinds: readonly string[]): string {
  if (kinds.length === 0) return "";
  const names = kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(", ")} and ${kinds.at(-1)}`;
  return `${names} verdicts are reported as Events on each object, not in status.bindings: the CRD${kinds.length === 1 ? " has" : "s have"} no status subresource (prometheus-operator's CRDs before v0.84; update them to get status.bindings)`;
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** The four conditions. */
export function conditionsOf(p: Prometheus, input: StatusInput, now: Date): Condition[] {
  const generation = p.metadata.generation ?? 0;
  let conditions = p.status?.conditions ?? [];
  const set = (type: string, status: Condition["status"], reason: string, message: string) => {
    conditions = setCondition(
      conditions,
      { type, status, reason, message, observedGeneration: generation },
      now,
    );
  };
  const paused = p.spec.paused === true;
  const sts = input.statefulSet;
  const want = p.spec.replicas;
  const ready = sts?.status?.readyReplicas ?? 0;
  const updated = sts?.status?.updatedReplicas ?? 0;
  const current = sts?.status?.replicas ?? 0;

  if (want === 0) set("Available", "False", "ScaledToZero", "spec.replicas is 0");
  else if (ready > 0) set("Available", "True", "PodsReady", `${ready} of ${want} pods ready`);
  else set("Available", "False", "NoPodReady", `none of ${count(want, "pod")} is ready yet`);

  const rolledOut =
    sts !== undefined &&
    (sts.status?.observedGeneration ?? 0) >= (sts.metadata.generation ?? 0) &&
    updated === want &&
    ready === want &&
    current === want;
  if (paused) set("Progressing", "False", "Paused", "spec.paused is set: the operator changes nothing");
  else if (!rolledOut)
    set("Progressing", "True", "RollingOut", `${ready} of ${want} pods ready, ${updated} up to date`);
  else set("Progressing", "False", "RolledOut", `${count(want, "pod")} ready and up to date`);

  const problem = input.problems[0];
  if (problem !== undefined) set("Degraded", "True", problem.reason, problem.message);
  else set("Degraded", "False", "AsExpected", "");

  if (paused) {
    set("Reconciled", "False", "Paused", "spec.paused is set: the configuration is not updated");
  } else if (input.configProblem !== undefined) {
    set("Reconciled", "False", input.configProblem.reason, input.configProblem.message);
  } else {
    const s = input.selected;
    const held = `${count(s?.serviceMonitors?.length ?? 0, "ServiceMonitor")}, ${count(s?.podMonitors?.length ?? 0, "PodMonitor")} and ${count(s?.rules?.length ?? 0, "PrometheusRule")} in the configuration`;
    const refused = input.notAccepted ?? 0;
    const note = noStatusNote(input.noStatusKinds ?? []);
    set(
      "Reconciled",
      "True",
      "ConfigurationGenerated",
      [
        held,
        ...(refused === 0
          ? []
          : [`${count(refused, "selected object")} not accepted: see their status.bindings or Events`]),
        ...(note === "" ? [] : [note]),
      ].join("; "),
    );
  }
  return conditions;
}

/** The whole status this reconcile would write. */
export function statusOf(p: Prometheus, input: StatusInput, now: Date): PrometheusStatus {
  const previous = p.status ?? {};
  const selected = input.selected ?? previous.selected;
  const configHash = input.configHash ?? previous.configHash;
  return {
    observedGeneration: p.metadata.generation ?? 0,
    conditions: conditionsOf(p, input, now),
    replicas: input.statefulSet?.status?.replicas ?? 0,
    readyReplicas: input.statefulSet?.status?.readyReplicas ?? 0,
    selector: selectorString(p),
    ...(selected === undefined ? {} : { selected }),
    ...(configHash === undefined ? {} : { configHash }),
  };
}

/** Waiting reasons of a container whose image the node cannot get. */
const IMAGE_PULL_REASONS = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
]);

/**
 * Why the server's pods do not run, as Degraded problems naming the pod and what to check: an image the node
 * cannot pull (ImagePullFailed, naming the image), a pod the scheduler cannot place (PodUnschedulable, with the
 * scheduler's reason), a container that keeps crashing (PodCrashLooping). Pods being deleted are skipped. Messages
 * name no kubelet-varying text (back-off times, retry counts), so a pod stuck the same way keeps the same status.
 */
export function podProblems(pods: readonly PodObject[]): Problem[] {
  const problems: Problem[] = [];
  for (const pod of [...pods].sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const name = pod.metadata.name ?? "";
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    const pull = statuses.find((c) => IMAGE_PULL_REASONS.has(c.state?.waiting?.reason ?? ""));
    if (pull !== undefined) {
      problems.push({
        reason: "ImagePullFailed",
        message: `pod ${name} cannot pull image ${pull.image} (container ${pull.name}): check spec.version and spec.repository (the image is <repository>:v<version>), and that the node can reach the registry`,
      });
      continue;
    }
    const unscheduled = pod.status?.conditions?.find(
      (c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
    );
    if (unscheduled !== undefined) {
      problems.push({
        reason: "PodUnschedulable",
        message: `pod ${name} cannot be scheduled: ${unscheduled.message ?? "no node fits"}; check spec.podTemplate (nodeSelector, affinity, tolerations), spec.resources and spec.storage`,
      });
      continue;
    }
    const crashing = statuses.find((c) => c.state?.waiting?.reason === "CrashLoopBackOff");
    if (crashing !== undefined) {
      problems.push({
        reason: "PodCrashLooping",
        message: `pod ${name} container ${crashing.name} keeps crashing: see kubectl logs ${name} -c ${crashing.name} --previous`,
      });
    }
  }
  return problems;
}
