// The controller's Service and Pod watches after real reconciles of two servers against core's in-memory API server:
// each reconcile records what its selection can be affected by, and an event maps to the servers it can affect
// (both the old and the new object of an update, as core maps them); a server without a recorded interest (not
// reconciled yet, deleted, or its selection failed) gets every event.
import type { KubeObject, ReconcileRequest, Watch } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import type { PodMonitor } from "../api/pod-monitor.ts";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { type Prometheus, PrometheusKind, type PrometheusSpec } from "../api/prometheus.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { targetWatches } from "./controller.ts";
import { ControllerState } from "./options.ts";
import { KINDS, MONITORING_NAMESPACE, quietReconciler } from "./test-fixture.ts";

const server = (name: string, spec: Partial<PrometheusSpec> = {}): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name, namespace: "monitoring", uid: `p-${name}`, generation: 1 },
  spec: {
    ...defaultSpec,
    serviceMonitorSelector: { matchLabels: { server: name } },
    podMonitorSelector: { matchLabels: { server: name } },
    ...spec,
  },
});

/** Server a's PodMonitor: pods app=web (none exist: NoTargets, still in the configuration). */
const podMonitor: PodMonitor = {
  apiVersion: PodMonitorKind.apiVersion,
  kind: PodMonitorKind.kind,
  metadata: { name: "web", namespace: "monitoring", uid: "pm-web", generation: 1, labels: { server: "a" } },
  spec: { selector: { matchLabels: { app: "web" } }, podMetricsEndpoints: [{ port: "metrics" }] },
};

/** Server b's ServiceMonitor: Services app=api (none exist: NoTargets, still in the configuration). */
const serviceMonitor: ServiceMonitor = {
  apiVersion: ServiceMonitorKind.apiVersion,
  kind: ServiceMonitorKind.kind,
  metadata: { name: "api", namespace: "monitoring", uid: "sm-api", generation: 1, labels: { server: "b" } },
  spec: { selector: { matchLabels: { app: "api" } }, endpoints: [{ port: "metrics" }] },
};

const pod = (labels: Record<string, string>): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "x-0", namespace: "monitoring", labels },
    spec: { containers: [{ name: "x", image: "x" }] },
  }) as KubeObject;

const service = (labels: Record<string, string>): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "x", namespace: "monitoring", labels },
    spec: { ports: [{ name: "metrics", port: 8080 }] },
  }) as KubeObject;

async function reconcile(state: ControllerState, objects: readonly KubeObject[], request: ReconcileRequest) {
  const run = await reconcileOnce(quietReconciler(state), { kinds: KINDS, objects, request });
  run.expectNoError();
}

/** What the controller enqueues for an event of the watch: add/delete (old undefined) or update, after predicates. */
function enqueued(w: Watch, cur: KubeObject, old?: KubeObject): string[] {
  if (old !== undefined && !(w.predicates ?? []).every((p) => p.update?.(old, cur) ?? true)) return [];
  const reqs = [...w.map(cur), ...(old === undefined ? [] : w.map(old))];
  return [...new Set(reqs.map((r) => r.name))].sort();
}

const watchOf = (state: ControllerState, kind: string): Watch => {
  const w = targetWatches(state).find((x) => x.kind.kind === kind);
  if (w === undefined) throw new Error(`no ${kind} watch`);
  return w;
};

describe("the Service and Pod watches", () => {
  const objects = [MONITORING_NAMESPACE, server("a"), server("b"), podMonitor, serviceMonitor];
  const a = { namespace: "monitoring", name: "a" };
  const b = { namespace: "monitoring", name: "b" };

  async function twoServers(): Promise<ControllerState> {
    const state = new ControllerState();
    await reconcile(state, objects, a);
    await reconcile(state, objects, b);
    return state;
  }

  it("a pod only server a's PodMonitor matches reconciles a only; one whose labels moved out of it, still a", async () => {
    const pods = watchOf(await twoServers(), "Pod");
    expect(enqueued(pods, pod({ app: "web" }))).toEqual(["a"]);
    expect(enqueued(pods, pod({ app: "other" }), pod({ app: "web" }))).toEqual(["a"]);
    expect(enqueued(pods, pod({ app: "other" }))).toEqual([]);
  });

  it("a Service only server b's ServiceMonitor matches reconciles b only", async () => {
    const services = watchOf(await twoServers(), "Service");
    expect(enqueued(services, service({ app: "api" }))).toEqual(["b"]);
    expect(enqueued(services, service({ app: "web" }))).toEqual([]);
    expect(enqueued(services, service({ app: "web" }), service({ app: "api" }))).toEqual(["b"]);
  });

  it("each server's own pods reconcile that server", async () => {
    const pods = watchOf(await twoServers(), "Pod");
    const own = (name: string) =>
      pod({ "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": name });
    expect(enqueued(pods, own("a"))).toEqual(["a"]);
    expect(enqueued(pods, own("b"))).toEqual(["b"]);
  });

  it("a server with no recorded interest gets every event; a deleted server's interest is dropped", async () => {
    const state = new ControllerState();
    state.servers.set("monitoring/a", a);
    state.servers.set("monitoring/b", b);
    expect(enqueued(watchOf(state, "Pod"), pod({ app: "nothing" }))).toEqual(["a", "b"]);
    await reconcile(state, objects, a);
    expect(enqueued(watchOf(state, "Pod"), pod({ app: "nothing" }))).toEqual(["b"]);
    await reconcile(
      state,
      objects.filter((o) => o.metadata.name !== "a"),
      a,
    );
    expect(state.interest.has("monitoring/a")).toBe(false);
    expect(state.servers.has("monitoring/a")).toBe(false);
    expect(enqueued(watchOf(state, "Pod"), pod({ app: "web" }))).toEqual(["b"]);
  });

  it("a server whose selection failed (a malformed selector) gets every event again", async () => {
    const state = await twoServers();
    const bad = server("a", {
      podMonitorSelector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
    });
    await reconcile(
      state,
      objects.map((o) => (o.metadata.name === "a" && o.kind === "Prometheus" ? bad : o)),
      a,
    );
    expect(enqueued(watchOf(state, "Service"), service({ app: "api" }))).toEqual(["a", "b"]);
  });
});
