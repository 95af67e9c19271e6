// What a Prometheus server's last reconcile can be changed by among Services and Pods: its "interest", recorded from
// the monitors it put into its configuration, so that a Service or Pod event reconciles only the servers it can
// affect instead of every server. A ServiceMonitor's verdict and targets depend on the Services its selector matches
// in its namespaces, a PodMonitor's on such Pods, and the server's status on its own pods; refused monitors depend on
// neither (their checks read only the monitor). Kept small: label matchers and namespace names, never object lists.
// A server without a recorded interest (not reconciled since the operator started, a reconcile in progress, or one
// that failed before selecting) is interested in everything.
import { type KubeObject, type LabelMatcher, labelSelector, type ReconcileRequest } from "@capstan/core";
import type { PodMonitor } from "../api/pod-monitor.ts";
import type { Prometheus } from "../api/prometheus.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import { selectorLabels } from "../desired/objects.ts";
import type { SelectedMonitor, SelectedMonitors } from "../desired/select.ts";

/** Objects in some namespaces whose labels a selector matches. */
export interface Scope {
  /** Namespace names; undefined: every namespace. */
  namespaces?: ReadonlySet<string>;
  matcher: LabelMatcher;
}

/** The Services and Pods whose changes can change a server's configuration or status. */
export interface Interest {
  services: Scope[];
  pods: Scope[];
}

/** The interest of server `p` whose configuration holds the monitors of `selection` (none: paused). */
export function interestOf(
  p: Prometheus,
  selection: Pick<SelectedMonitors, "serviceMonitors" | "podMonitors">,
): Interest {
  const own: Scope = {
    namespaces: new Set([p.metadata.namespace ?? ""]),
    matcher: labelSelector({ matchLabels: selectorLabels(p) }),
  };
  return {
    services: scopes(selection.serviceMonitors),
    pods: [own, ...scopes(selection.podMonitors)],
  };
}

/** Whether a change of `obj` (a Service or a Pod, per `kind`) can change what the server's reconcile does. */
export function isInterested(interest: Interest, kind: "Service" | "Pod", obj: KubeObject): boolean {
  const ns = obj.metadata.namespace ?? "";
  const labels = obj.metadata.labels;
  return (kind === "Service" ? interest.services : interest.pods).some(
    (s) => (s.namespaces === undefined || s.namespaces.has(ns)) && s.matcher.matches(labels),
  );
}

/**
 * The servers a Service or Pod event maps to: those whose recorded interest matches the object, and every server
 * without one. Core maps both the old and the new object of an update, so an object whose labels stopped matching
 * still reaches the servers it used to matter to.
 */
export function interestedServers(
  servers: ReadonlyMap<string, ReconcileRequest>,
  interests: ReadonlyMap<string, Interest>,
  kind: "Service" | "Pod",
  obj: KubeObject,
): ReconcileRequest[] {
  const out: ReconcileRequest[] = [];
  for (const [key, req] of servers) {
    const interest = interests.get(key);
    if (interest === undefined || isInterested(interest, kind, obj)) out.push(req);
  }
  return out;
}

const everything: LabelMatcher = { matches: () => true, text: "" };

/** One scope per distinct (namespaces, selector) of the monitors. */
function scopes(monitors: readonly SelectedMonitor<ServiceMonitor | PodMonitor>[]): Scope[] {
  const out = new Map<string, Scope>();
  for (const m of monitors) {
    let matcher = everything; // a selector that does not parse cannot be in the configuration; be safe all the same
    try {
      matcher = labelSelector(m.object.spec.selector);
    } catch {}
    // Two matchers with the same text match the same labels ("" is everything, as an empty selector is).
    const id = JSON.stringify([m.namespaces ?? null, matcher.text]);
    if (!out.has(id)) {
      out.set(id, { ...(m.namespaces === undefined ? {} : { namespaces: new Set(m.namespaces) }), matcher });
    }
  }
  return [...out.values()];
}
