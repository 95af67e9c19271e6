// Writes each selected monitor's status.bindings[] entry for this server (only when it changed), and removes the
// entry from monitors the server no longer selects. Accepted=True waits for the pods to run the configuration
// (desired/bindings.ts). Where the status cannot be written, the verdict becomes an Event on the monitor instead,
// without a retry loop (binding-reports.ts): the API server refuses the binding (422: prometheus-operator's CRDs
// allow only group monitoring.coreos.com), or the monitor's CRD has no status subresource (prometheus-operator's
// CRDs before v0.84: the /status PATCH answers 404 while the object exists). A steady state makes no request.
import {
  isConflict,
  isInvalid,
  isNotFound,
  type Kind,
  type ReconcileContext,
  stableHash,
} from "@capstan/core";
import type { ConfigResourceCondition, ConfigResourceStatus } from "../api/monitoring-common.ts";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { GROUP, type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { bindingFor, isBindingOf, type LoadState, withBinding, withoutBinding } from "../desired/bindings.ts";
import type { MonitorFeedback, MonitorObjects } from "../desired/select.ts";
import type { MonitorStatusMemo } from "./binding-reports.ts";

type MonitorObject =
  | MonitorObjects["serviceMonitors"][number]
  | MonitorObjects["podMonitors"][number]
  | MonitorObjects["rules"][number];

type MonitorKindName = MonitorFeedback["kind"];

const KINDS: Record<MonitorKindName, Kind> = {
  ServiceMonitor: ServiceMonitorKind as Kind,
  PodMonitor: PodMonitorKind as Kind,
  PrometheusRule: PrometheusRuleKind as Kind,
};

/** The CRD of each monitor kind, for messages. */
const MONITOR_CRDS: Record<MonitorKindName, string> = {
  ServiceMonitor: `${ServiceMonitorKind.plural}.${ServiceMonitorKind.group}`,
  PodMonitor: `${PodMonitorKind.plural}.${PodMonitorKind.group}`,
  PrometheusRule: `${PrometheusRuleKind.plural}.${PrometheusRuleKind.group}`,
};

/** What {@link syncBindings} did. */
export interface BindingsResult {
  /** Status writes that succeeded. */
  written: number;
  /** Monitors whose verdict was reported by an Event instead ("Kind namespace/name"). */
  reported: string[];
  /**
   * The kinds among this server's objects whose CRD has no status subresource, sorted (the server is told once, by a
   * Warning Event MonitorStatusUnsupported).
   */
  noStatusKinds: MonitorKindName[];
}

/** Equal bindings whatever their key order (the API server stores custom resources with sorted keys). */
function sameBindings(a: ConfigResourceStatus | undefined, b: ConfigResourceStatus): boolean {
  return stableHash(a?.bindings ?? []) === stableHash(b.bindings ?? []);
}

const keyText = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/** The binding entry of `prometheus`, without conditions. */
const ownBinding = (prometheus: Prometheus) => ({
  group: GROUP,
  resource: PrometheusKind.plural,
  name: prometheus.metadata.name ?? "",
  namespace: prometheus.metadata.namespace ?? "",
});

/** Reasons that need attention: their Event is a Warning, repeated while the verdict stands. */
function needsAttention(c: ConfigResourceCondition): boolean {
  return c.status === "False" || (c.reason !== "Accepted" && c.reason !== "ReloadPending");
}

const VERDICT_WORDS: Record<ConfigResourceCondition["status"], string> = {
  True: "accepted (in the configuration its pods run)",
  False: "not accepted (left out of the configuration)",
  Unknown: "pending (in the configuration, not yet loaded by every pod)",
};

function noStatusWhy(kind: MonitorKindName): string {
  return `the ${MONITOR_CRDS[kind]} CRD has no status subresource (prometheus-operator's CRDs before v0.84): update the CRD to get status.bindings`;
}
const REFUSED_WHY = "the API server refused status.bindings for group monitoring.capstan.dev";

/** Brings every monitor's binding for `prometheus` in line with `feedback` and what the pods run (`load`). */
export async function syncBindings(
  ctx: ReconcileContext,
  prometheus: Prometheus,
  feedback: readonly MonitorFeedback[],
  monitors: MonitorObjects,
  load: LoadState,
  memo: MonitorStatusMemo,
  now: Date,
): Promise<BindingsResult> {
  const out: BindingsResult = { written: 0, reported: [], noStatusKinds: [] };
  const t = now.getTime();
  const server = keyText(prometheus);
  const all: { kind: MonitorKindName; object: MonitorObject }[] = [
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
  const keys = new Set<string>();

  for (const f of feedback) {
    const object = find(f);
    if (object === undefined) continue;
    judged.add(object);
    const memoKey = `${server}|${object.metadata.uid ?? keyText(object)}`;
    keys.add(memoKey);
    const status = object.status;
    // Where the status could not be written, the verdict last reported stands in for it.
    const remembered = (status?.bindings ?? []).some((b) => isBindingOf(b, prometheus))
      ? undefined
      : memo.condition(memoKey);
    const previous =
      remembered === undefined
        ? status
        : withBinding(status, { ...ownBinding(prometheus), conditions: [remembered] });
    const binding = bindingFor(prometheus, f, previous, load, now.toISOString());
    const next = withBinding(status, binding);
    const skip = memo.skipStatus(f.kind, t);
    if (!skip && sameBindings(status, next)) {
      memo.forget(memoKey);
      continue;
    }
    const condition = binding.conditions?.[0] as ConfigResourceCondition;
    const signature = JSON.stringify([
      object.metadata.generation,
      condition.status,
      condition.reason,
      condition.message,
    ]);
    // Reported by Event (or its write refused) recently, with the same verdict: nothing to do until it is due again.
    if (!memo.due(memoKey, signature, t)) continue;
    let why: string;
    if (skip) why = noStatusWhy(f.kind);
    else {
      const result = await writeBindings(ctx, KINDS[f.kind], object, next);
      if (result === "written") {
        memo.forget(memoKey);
        memo.markPresent(f.kind);
        out.written++;
        continue;
      }
      if (result === "skipped") continue;
      if (result === "no-status") {
        memo.markMissing(f.kind, t);
        why = noStatusWhy(f.kind);
      } else why = REFUSED_WHY;
    }
    const repeat = memo.isRepeat(memoKey, signature);
    memo.reported(memoKey, signature, condition, t);
    // A verdict that needs no attention is reported once; one that does, again while it stands (Events expire).
    if (repeat && !needsAttention(condition)) continue;
    out.reported.push(`${f.kind} ${f.namespace}/${f.name}`);
    ctx.recorder.event(
      object,
      needsAttention(condition) ? "Warning" : "Normal",
      condition.reason ?? "Accepted",
      "Bind",
      `Prometheus ${server}: ${VERDICT_WORDS[condition.status]}: ${condition.message ?? ""} (reported here because ${why})`,
    );
  }
  memo.retain(server, keys);

  // Monitors this server no longer selects lose its binding (not where the kind's status cannot be written).
  for (const { kind, object } of all) {
    if (judged.has(object) || memo.skipStatus(kind, t)) continue;
    if (!(object.status?.bindings ?? []).some((b) => isBindingOf(b, prometheus))) continue;
    const result = await writeBindings(ctx, KINDS[kind], object, withoutBinding(object.status, prometheus));
    if (result === "written") out.written++;
    if (result === "no-status") memo.markMissing(kind, t);
  }
  const kinds = new Set(feedback.map((f) => f.kind));
  out.noStatusKinds = memo
    .missingKinds()
    .filter((k): k is MonitorKindName => kinds.has(k as MonitorKindName));
  // Said once on the server (its Reconciled condition says it too, from noStatusKinds).
  for (const kind of out.noStatusKinds) {
    if (!memo.announce(server, kind)) continue;
    ctx.recorder.event(
      prometheus,
      "Warning",
      "MonitorStatusUnsupported",
      "Bind",
      `the ${MONITOR_CRDS[kind]} CRD has no status subresource (prometheus-operator's CRDs before v0.84, which Helm never upgrades): this server reports each ${kind}'s verdict as an Event on it instead of status.bindings; update the CRD (kubectl apply --server-side -f charts/prometheus-operator/crds/, or prometheus-operator's v0.84 or later) to get status.bindings`,
    );
  }
  return out;
}

/**
 * A merge patch of status.bindings, guarded by the monitor's resourceVersion (another server, or
 * prometheus-operator, may write its own binding at the same time: a conflict is retried by a later reconcile). A 404
 * is either the monitor gone or its CRD without a status subresource (the API server says the same for both): a GET
 * of the object tells them apart.
 */
async function writeBindings(
  ctx: ReconcileContext,
  kind: Kind,
  object: MonitorObject,
  status: ConfigResourceStatus,
): Promise<"written" | "refused" | "no-status" | "skipped"> {
  const name = object.metadata.name ?? "";
  const namespace = object.metadata.namespace ?? "";
  try {
    await ctx.client.patchStatus(
      kind,
      name,
      namespace,
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
    if (isConflict(err)) return "skipped";
    if (!isNotFound(err)) throw err;
  }
  try {
    const live = await ctx.client.get(kind, name, namespace, ctx.signal);
    return live.metadata.uid === object.metadata.uid ? "no-status" : "skipped";
  } catch (err) {
    if (isNotFound(err)) return "skipped";
    throw err;
  }
}
