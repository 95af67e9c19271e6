// The monitors' status.bindings[] at the reconcile level, against core's in-memory API server with scripted pod
// answers (issue 29 items 8 and 9):
// - Accepted means "in the configuration", and is reported once the pods run it: Unknown (ReloadPending) while they
//   load it, True once every pod's reloader says its Prometheus accepted the generation; NoTargets and PortNotFound
//   are Accepted=True diagnostics; a refused generation leaves its objects Unknown (ConfigRefused);
// - a CRD without a status subresource (prometheus-operator's before v0.84: the /status PATCH answers 404 while the
//   object exists): found with one PATCH and one GET, then no status write of that kind, the verdicts as Events on
//   each monitor (a verdict that needs attention repeated every 30 minutes, the others once), said once on the
//   Prometheus (an Event and its Reconciled condition), one write again after 30 minutes to check.
import { type KubeObject, Secret } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { GENERATION_ANNOTATION } from "../desired/objects.ts";
import { REPORT_REPEAT_MS, STATUS_RECHECK_MS } from "./binding-reports.ts";
import { PrometheusOperatorMetrics } from "./metrics.ts";
import { ControllerState } from "./options.ts";
import { reconcilePrometheus } from "./reconcile.ts";
import type { ReloaderState } from "./reload.ts";
import { KINDS, MONITORING_NAMESPACE } from "./test-fixture.ts";

const server = (): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "main", namespace: "monitoring", uid: "p-1", generation: 1 },
  spec: { ...defaultSpec, serviceMonitorSelector: {} },
});

const webService = (ports = [{ name: "metrics", port: 8080, targetPort: 8080 }]): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "monitoring", labels: { app: "web" } },
    spec: { ports },
  }) as KubeObject;

const monitor = (name: string, app = "web"): ServiceMonitor => ({
  apiVersion: ServiceMonitorKind.apiVersion,
  kind: ServiceMonitorKind.kind,
  metadata: { name, namespace: "monitoring", uid: `sm-${name}`, generation: 1 },
  spec: { selector: { matchLabels: { app } }, endpoints: [{ port: "metrics" }] },
});

/** The server's pod, ready at 10.0.0.7, on the spec's image. */
const pod: KubeObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "prometheus-main-0",
    namespace: "monitoring",
    uid: "pod-0",
    labels: { "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": "main" },
  },
  spec: {
    containers: [{ name: "prometheus", image: `quay.io/prometheus/prometheus:v${defaultSpec.version}` }],
  },
  status: { podIP: "10.0.0.7", conditions: [{ type: "Ready", status: "True" }] },
} as KubeObject;

interface Harness {
  state: ControllerState;
  /** The pod's reloader state (absent: it does not answer). */
  reloader?: ReloaderState;
}

type Setup = NonNullable<Parameters<typeof reconcileOnce>[1]["setup"]>;

function run(h: Harness, objects: readonly KubeObject[], setup?: Setup): Promise<ReconcileRun> {
  return reconcileOnce(
    (req, ctx) =>
      reconcilePrometheus(req, ctx, {
        metrics: new PrometheusOperatorMetrics(new Registry()),
        state: h.state,
        runtimeInfo: async () => undefined,
        reloaderState: async () => h.reloader,
      }),
    { kinds: KINDS, objects, request: server(), ...(setup === undefined ? {} : { setup }) },
  );
}

const candidateId = (r: ReconcileRun) =>
  r.get(Secret, "prometheus-main", "monitoring")?.metadata.annotations?.[GENERATION_ANNOTATION] ?? "";

const acceptedOf = (r: ReconcileRun, name: string) =>
  r
    .get(ServiceMonitorKind, name, "monitoring")
    ?.status?.bindings?.find((b) => b.group === "monitoring.capstan.dev")
    ?.conditions?.find((c) => c.type === "Accepted");

const reconciled = (r: ReconcileRun) =>
  r.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === "Reconciled");

/** The Events on monitors, as "name type reason". */
const monitorEvents = (r: ReconcileRun) =>
  r.events
    .filter((e) => e.regarding.kind === "ServiceMonitor")
    .map((e) => `${e.regarding.name} ${e.type} ${e.reason}`);

const statusRequests = (r: ReconcileRun) =>
  r.requests
    .filter((q) => q.kind === "ServiceMonitor")
    .map((q) => `${q.verb} ${q.name}${q.subresource ? `/${q.subresource}` : ""} ${q.status}`);

describe("Accepted is reported once the pods run the configuration", () => {
  it("Unknown (ReloadPending) while the pods load it, True once every pod accepted the generation; then no writes", async () => {
    const h: Harness = { state: new ControllerState() };
    const objects = [
      MONITORING_NAMESPACE,
      webService(),
      server(),
      monitor("web"),
      monitor("nothing", "none"),
      pod,
    ];
    // The pod still runs an older generation.
    h.reloader = { accepted: "0000000000000000", refused: "", message: "" };
    const first = await run(h, objects);
    first.expectNoError();
    const id = candidateId(first);
    for (const name of ["web", "nothing"]) {
      expect(acceptedOf(first, name), name).toMatchObject({
        status: "Unknown",
        reason: "ReloadPending",
        observedGeneration: 1,
      });
      expect(acceptedOf(first, name)?.message).toContain(
        "in the configuration, which not every pod of Prometheus monitoring/main has loaded yet",
      );
    }
    expect(acceptedOf(first, "nothing")?.message).toContain(
      "no Service in namespaces [monitoring] matches app=none",
    );
    // The pod on its way: looked at again soon.
    expect(first.result).toEqual({ requeueAfter: 15_000 });
    const waiting = await run(h, first.objects);
    waiting.expectNoError();
    expect(waiting.writesOf(ServiceMonitorKind, "status")).toEqual([]);

    // The pod's Prometheus accepted it: Accepted=True; NoTargets is a diagnostic, not a refusal.
    h.reloader = { accepted: id, refused: "", message: "" };
    const loaded = await run(h, waiting.objects);
    loaded.expectNoError();
    expect(acceptedOf(loaded, "web")).toMatchObject({ status: "True", reason: "Accepted" });
    expect(acceptedOf(loaded, "nothing")).toMatchObject({
      status: "True",
      reason: "NoTargets",
      message: "no Service in namespaces [monitoring] matches app=none",
    });
    expect(reconciled(loaded)?.message).toBe(
      "2 ServiceMonitors, 0 PodMonitors and 0 PrometheusRules in the configuration",
    );

    const steady = await run(h, loaded.objects);
    steady.expectNoWrites();
  });

  it("a change reloads only what changed: an unchanged monitor stays True, a new one waits for the reload", async () => {
    const h: Harness = { state: new ControllerState() };
    h.reloader = { accepted: "0000000000000000", refused: "", message: "" };
    const first = await run(h, [MONITORING_NAMESPACE, webService(), server(), monitor("web"), pod]);
    h.reloader = { accepted: candidateId(first), refused: "", message: "" };
    const loaded = await run(h, first.objects);
    expect(acceptedOf(loaded, "web")?.status).toBe("True");

    const added = await run(h, [...loaded.objects, monitor("web2")]);
    added.expectNoError();
    expect(acceptedOf(added, "web")?.status).toBe("True");
    expect(acceptedOf(added, "web2")).toMatchObject({ status: "Unknown", reason: "ReloadPending" });
    expect(added.writesOf(ServiceMonitorKind, "status").map((w) => w.name)).toEqual(["web2"]);

    // The Service loses the port: a diagnostic of a monitor the pods already run, True at once.
    const portless = await run(h, [
      ...added.objects.filter((o) => !(o.kind === "Service" && o.metadata.name === "web")),
      webService([{ name: "http", port: 80, targetPort: 80 }]),
    ]);
    expect(acceptedOf(portless, "web")).toMatchObject({ status: "True", reason: "PortNotFound" });
  });

  it("a generation a pod refused leaves its new objects Unknown (ConfigRefused), naming the server", async () => {
    const h: Harness = { state: new ControllerState() };
    h.reloader = { accepted: "0000000000000000", refused: "", message: "" };
    const first = await run(h, [MONITORING_NAMESPACE, webService(), server(), monitor("web"), pod]);
    const id = candidateId(first);
    h.reloader = { accepted: "0000000000000000", refused: id, message: "failed to reload config: x" };
    const refused = await run(h, first.objects);
    refused.expectNoError();
    expect(acceptedOf(refused, "web")).toMatchObject({ status: "Unknown", reason: "ConfigRefused" });
    expect(acceptedOf(refused, "web")?.message).toContain(
      "in the configuration, which Prometheus in prometheus-main-0 refused (see Prometheus monitoring/main, condition Degraded",
    );
  });
});

describe("a monitor CRD without a status subresource (prometheus-operator's before v0.84)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-12-10T10:00:00Z"));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The API server as it answers for such a CRD: every /status PATCH is a 404, the object itself is there. */
  const noStatusSubresource: Setup = (s) => {
    s.fail({ verb: "patch", kind: ServiceMonitorKind, subresource: "status" }, 404, {
      message: 'servicemonitors.monitoring.coreos.com "web" not found',
    });
  };

  it("is found once, then its verdicts are Events (not a write per reconcile), and said once on the Prometheus", async () => {
    const h: Harness = { state: new ControllerState() };
    h.reloader = { accepted: "0000000000000000", refused: "", message: "" };
    const objects = [
      MONITORING_NAMESPACE,
      webService(),
      server(),
      monitor("web"),
      monitor("nothing", "none"),
      pod,
    ];
    const first = await run(h, objects, noStatusSubresource);
    first.expectNoError();
    // One PATCH found it (404), one GET told it from a deleted monitor; the other monitor was not tried.
    expect(statusRequests(first)).toEqual(["patch nothing/status 404", "get nothing 200"]);
    expect(first.get(ServiceMonitorKind, "web", "monitoring")).toBeDefined();
    const onMonitors = first.events.filter((e) => e.regarding.kind === "ServiceMonitor");
    expect(onMonitors.map((e) => `${e.regarding.name} ${e.type} ${e.reason}`).sort()).toEqual([
      "nothing Normal ReloadPending",
      "web Normal ReloadPending",
    ]);
    expect(onMonitors[0]?.note).toContain(
      "servicemonitors.monitoring.coreos.com CRD has no status subresource (prometheus-operator's CRDs before v0.84)",
    );
    // Said once on the server: an Event, and its Reconciled condition.
    const said = first.events.filter((e) => e.regarding.kind === "Prometheus");
    expect(said.map((e) => `${e.type} ${e.reason}`)).toEqual(["Warning MonitorStatusUnsupported"]);
    expect(reconciled(first)).toMatchObject({ status: "True", reason: "ConfigurationGenerated" });
    expect(reconciled(first)?.message).toContain(
      "ServiceMonitor verdicts are reported as Events on each object, not in status.bindings: the CRD has no status subresource",
    );

    // The pods load the configuration: the new verdicts are reported, still without any status request.
    h.reloader = { accepted: candidateId(first), refused: "", message: "" };
    const loaded = await run(h, first.objects, noStatusSubresource);
    loaded.expectNoError();
    expect(statusRequests(loaded)).toEqual([]);
    expect(monitorEvents(loaded).sort()).toEqual(["nothing Warning NoTargets", "web Normal Accepted"]);
    expect(loaded.events.find((e) => e.reason === "NoTargets")?.note).toContain(
      "Prometheus monitoring/main: accepted (in the configuration its pods run): no Service in namespaces [monitoring] matches app=none",
    );

    // Reconciles while the verdicts stand: no request about the monitors, no Event, no write at all.
    for (let i = 0; i < 3; i++) {
      vi.setSystemTime(new Date(Date.now() + 5 * 60_000));
      const steady = await run(h, loaded.objects, noStatusSubresource);
      steady.expectNoError();
      steady.expectNoWrites();
      expect(statusRequests(steady)).toEqual([]);
      expect(steady.events).toEqual([]);
    }

    // Half an hour on: one write checks whether the CRD was upgraded (it was not); the verdict that needs attention
    // is reported again (Events expire), the Accepted one is not; the server is not told again.
    vi.setSystemTime(new Date(Date.now() + Math.max(REPORT_REPEAT_MS, STATUS_RECHECK_MS)));
    const later = await run(h, loaded.objects, noStatusSubresource);
    later.expectNoError();
    expect(statusRequests(later)).toEqual(["patch nothing/status 404", "get nothing 200"]);
    expect(later.events.map((e) => `${e.regarding.name} ${e.type} ${e.reason}`)).toEqual([
      "nothing Warning NoTargets",
    ]);
    expect(later.writesOf(PrometheusKind, "status")).toEqual([]);
  });

  it("a configuration change re-reports only the monitor that changed, not every accepted one", async () => {
    const h: Harness = { state: new ControllerState() };
    h.reloader = { accepted: "0000000000000000", refused: "", message: "" };
    const first = await run(
      h,
      [MONITORING_NAMESPACE, webService(), server(), monitor("web"), pod],
      noStatusSubresource,
    );
    h.reloader = { accepted: candidateId(first), refused: "", message: "" };
    const loaded = await run(h, first.objects, noStatusSubresource);
    expect(monitorEvents(loaded)).toEqual(["web Normal Accepted"]);
    // A new monitor: a new generation, which the pod has not loaded yet.
    const added = await run(h, [...loaded.objects, monitor("web2")], noStatusSubresource);
    added.expectNoError();
    expect(monitorEvents(added)).toEqual(["web2 Normal ReloadPending"]);
    h.reloader = { accepted: candidateId(added), refused: "", message: "" };
    const reloaded = await run(h, added.objects, noStatusSubresource);
    expect(monitorEvents(reloaded)).toEqual(["web2 Normal Accepted"]);
  });

  it("once the CRD has its status subresource again, the next check writes the bindings and the note goes", async () => {
    const h: Harness = { state: new ControllerState() };
    h.reloader = { accepted: "0000000000000000", refused: "", message: "" };
    const first = await run(
      h,
      [MONITORING_NAMESPACE, webService(), server(), monitor("web"), pod],
      noStatusSubresource,
    );
    h.reloader = { accepted: candidateId(first), refused: "", message: "" };
    const loaded = await run(h, first.objects, noStatusSubresource);
    vi.setSystemTime(new Date(Date.now() + STATUS_RECHECK_MS));
    const upgraded = await run(h, loaded.objects);
    upgraded.expectNoError();
    expect(acceptedOf(upgraded, "web")).toMatchObject({ status: "True", reason: "Accepted" });
    expect(reconciled(upgraded)?.message).not.toContain("status subresource");
    (await run(h, upgraded.objects)).expectNoWrites();
  });

  it("a 404 for a monitor that is really gone is not taken for a missing subresource", async () => {
    const h: Harness = { state: new ControllerState() };
    const r = await run(h, [MONITORING_NAMESPACE, webService(), server(), monitor("web")], (s) => {
      s.fail({ verb: "patch", kind: ServiceMonitorKind, subresource: "status" }, 404);
      s.fail({ verb: "get", kind: ServiceMonitorKind, name: "web" }, 404);
    });
    r.expectNoError();
    expect(r.events.filter((e) => e.reason === "MonitorStatusUnsupported")).toEqual([]);
    expect(reconciled(r)?.message).not.toContain("status subresource");
    expect(h.state.monitorStatus.missingKinds()).toEqual([]);
  });
});
