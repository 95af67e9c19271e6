// Writes each selected monitor's status.bindings[] entry for this server (only when it changed), and removes the
// entry from monitors the server no longer selects. Where the API server refuses the binding (prometheus-operator's
// CRDs allow only group monitoring.coreos.com), the verdict becomes an Event on the monitor instead, once per
// verdict: the refusal is remembered, so a steady state makes no request at all.
import {
  isConflict,
  isInvalid,
  isNotFound,
  type Kind,
  type ReconcileContext,
  stableHash,
} from "@capstan/core";
import type { ConfigResourceStatus } from "../api/monitoring-common.ts";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import type { Prometheus } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { bindingFor, isBindingOf, withBinding, withoutBinding } from "../desired/bindings.ts";
import type { MonitorFeedback, MonitorObjects } from "../desired/select.ts";

type MonitorObject =
  | MonitorObjects["serviceMonitors"][number]
  | MonitorObjects["podMonitors"][number]
  | MonitorObjects["rules"][number];

const KINDS: Record<MonitorFeedback["kind"], Kind> = {
  ServiceMonitor: ServiceMonitorKind as Kind,
  PodMonitor: PodMonitorKind as Kind,
  PrometheusRule: PrometheusRuleKind as Kind,
};

/**
 * Verdicts the API server refused to store as a binding, by "<server>|<monitor uid>": the verdict's signature
 * (generation, reason, message). Kept by the controller across reconciles.
 */
export class RefusedBindings {
  private readonly refused = new Map<string, string>();
  has(key: string, signature: string): boolean {
    return this.refused.get(key) === signature;
  }
  set(key: string, signature: string): void {
    this.refused.set(key, signature);
  }
  delete(key: string): void {
    this.refused.delete(key);
  }
  get size(): number {
    return this.refused.size;
  }
}

/** What {@link syncBindings} did. */
export interface BindingsResult {
  /** Status writes that succeeded. */
  written: number;
  /** Monitors whose binding the API server refused (reported by an Event instead). */
  refused: string[];
}

/** Equal bindings whatever their key order (the API server stores custom resources with sorted keys). */
function sameBindings(a: ConfigResourceStatus | undefined, b: ConfigResourceStatus): boolean {
  return stableHash(a?.bindings ?? []) === stableHash(b.bindings ?? []);
}

const keyText = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/** Brings every monitor's binding for `prometheus` in line with `feedback`. */
export async function syncBindings(
  ctx: ReconcileContext,
  prometheus: Prometheus,
  feedback: readonly MonitorFeedback[],
  monitors: MonitorObjects,
  memo: RefusedBindings,
  now: Date,
): Promise<BindingsResult> {
  const out: BindingsResult = { written: 0, refused: [] };
  const server = keyText(prometheus);
  const all: { kind: MonitorFeedback["kind"]; object: MonitorObject }[] = [
    ...monitors.serviceMonitors.map((object) => ({ kind: "ServiceMonitor" as const, object })),
    ...monitors.podMonitors.map((object) => ({ kind: "PodMonitor" as const, object })),
    ...monitors.rules.map((object) => ({ kind: "PrometheusRule" as const, object })),
  ];
  const find = (f: MonitorFeedback) =>
    all.find(
      (m) =>
        m.kind === f.kind && m.object.metadata.namespace === f.namespace && m.object.metadata.name === f.name,
    )?.object;
  const judged = new Set<MonitorObject>();

  for (const f of feedback) {
    const object = find(f);
    if (object === undefined) continue;
    judged.add(object);
    const status = object.status;
    const next = withBinding(status, bindingFor(prometheus, f, status, now.toISOString()));
    if (sameBindings(status, next)) continue;
    const memoKey = `${server}|${object.metadata.uid ?? keyText(object)}`;
    const signature = JSON.stringify([object.metadata.generation, f.reason, f.message]);
    if (memo.has(memoKey, signature)) continue;
    const result = await writeBindings(ctx, KINDS[f.kind], object, next);
    if (result === "refused") {
      memo.set(memoKey, signature);
      out.refused.push(`${f.kind} ${f.namespace}/${f.name}`);
      ctx.recorder.event(
        object,
        f.accepted ? "Normal" : "Warning",
        f.reason,
        "Bind",
        `Prometheus ${server}: ${f.accepted ? "accepted" : "not accepted"}: ${f.message} (reported here because the API server refused status.bindings for group monitoring.capstan.dev)`,
      );
    } else if (result === "written") {
      memo.delete(memoKey);
      out.written++;
    }
  }

  // Monitors this server no longer selects lose its binding.
  for (const { kind, object } of all) {
    if (judged.has(object)) continue;
    if (!(object.status?.bindings ?? []).some((b) => isBindingOf(b, prometheus))) continue;
    const result = await writeBindings(ctx, KINDS[kind], object, withoutBinding(object.status, prometheus));
    if (result === "written") out.written++;
  }
  return out;
}

/**
 * A merge patch of status.bindings, guarded by the monitor's resourceVersion (another server, or
 * prometheus-operator, may write its own binding at the same time: a conflict is retried by a later reconcile).
 */
async function writeBindings(
  ctx: ReconcileContext,
  kind: Kind,
  object: MonitorObject,
  status: ConfigResourceStatus,
): Promise<"written" | "refused" | "skipped"> {
  try {
    await ctx.client.patchStatus(
      kind,
      object.metadata.name ?? "",
      object.metadata.namespace ?? "",
      {
        metadata: { resourceVersion: object.metadata.resourceVersion },
        status: { bindings: status.bindings ?? [] },
      },
      "merge",
      { signal: ctx.signal },
    );
    return "written";
  } catch (err) {
    if (isInvalid(err)) return "refused";
    if (isConflict(err) || isNotFound(err)) return "skipped";
    throw err;
  }
}
