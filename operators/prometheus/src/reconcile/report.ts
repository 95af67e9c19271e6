// The end of a reconcile: the Prometheus status (statusOf, written only when it changed), the Degraded Event when the
// first problem is new, and the server's metrics (what its configuration holds, its ready replicas).
import { findCondition, type ReconcileContext, statusMergePatch } from "@capstan/core";
import { type Prometheus, PrometheusKind, type PrometheusStatus } from "../api/prometheus.ts";
import { selectedStatus } from "../desired/bindings.ts";
import type { Selection } from "../desired/select.ts";
import type { BindingsResult } from "./bindings.ts";
import type { PrometheusOperatorMetrics } from "./metrics.ts";
import type { Observation } from "./observe.ts";
import { type Problem, statusOf } from "./status.ts";

/** What a reconcile found and did, as its status reports it. */
export interface Outcome {
  /** What the server selects (undefined: its own selector is malformed). */
  selection: Selection | undefined;
  /** The hash of the configuration written (undefined: none was, the status keeps the previous one). */
  configHash: string | undefined;
  /** Why the configuration was not written, if it was not. */
  configProblem: Problem | undefined;
  /** Every problem found, the first one Degraded. */
  problems: Problem[];
  /** What writing the monitors' bindings found (undefined: no selection). */
  bindings: BindingsResult | undefined;
}

/** Reports `outcome`: the server's metrics, an Event for a new Degraded problem, the status. Answers the status. */
export async function report(
  ctx: ReconcileContext,
  p: Prometheus,
  obs: Observation,
  metrics: PrometheusOperatorMetrics,
  outcome: Outcome,
  now: Date,
): Promise<PrometheusStatus> {
  const { selection, configHash, configProblem, problems, bindings } = outcome;
  const selected = selection === undefined ? undefined : selectedStatus(selection);
  const written = configProblem === undefined ? selected : undefined;
  if (selected !== undefined) {
    metrics.observe(p.metadata.namespace ?? "", p.metadata.name ?? "", {
      ServiceMonitor: selected.serviceMonitors?.length ?? 0,
      PodMonitor: selected.podMonitors?.length ?? 0,
      PrometheusRule: selected.rules?.length ?? 0,
    });
  }
  metrics.observeReplicas(
    p.metadata.namespace ?? "",
    p.metadata.name ?? "",
    p.spec.replicas,
    obs.statefulSet?.status?.readyReplicas ?? 0,
  );
  const problem = problems[0];
  if (problem !== undefined) {
    const before = findCondition(p.status?.conditions, "Degraded");
    if (before?.status !== "True" || before.reason !== problem.reason || before.message !== problem.message) {
      ctx.log.warn({ reason: problem.reason }, problem.message);
      ctx.recorder.event(p, "Warning", problem.reason, "Reconcile", problem.message);
    }
  }
  const status = statusOf(
    p,
    {
      ...(obs.statefulSet === undefined ? {} : { statefulSet: obs.statefulSet }),
      ...(written === undefined ? {} : { selected: written }),
      ...(selection === undefined
        ? {}
        : { notAccepted: selection.feedback.filter((f) => !f.inConfig).length }),
      ...(bindings === undefined ? {} : { noStatusKinds: bindings.noStatusKinds }),
      ...(configHash === undefined ? {} : { configHash }),
      problems,
      ...(configProblem === undefined ? {} : { configProblem }),
    },
    now,
  );
  await writeStatus(ctx, p, status);
  return status;
}

/** Writes `status` as a merge patch of what changed; nothing when nothing did. */
export async function writeStatus(
  ctx: ReconcileContext,
  p: Prometheus,
  status: NonNullable<Prometheus["status"]>,
): Promise<void> {
  const patch = statusMergePatch(p.status, status);
  if (patch !== undefined) {
    await ctx.client.patchStatus(
      PrometheusKind,
      p.metadata.name ?? "",
      p.metadata.namespace ?? "",
      patch,
      "merge",
      {
        signal: ctx.signal,
      },
    );
  }
}
