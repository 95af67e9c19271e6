// Reconciles of the Prometheus controller against core's in-memory API server: the first run creates the server's
// objects, the steady state writes nothing, a monitor added or removed changes only the config Secret and the
// statuses, a rule or relabeling Prometheus refuses leaves out only its own object, a refused binding becomes one
// Event (not a retry loop; monitor-status.test.ts has the rest of the monitors' statuses), paused does nothing, deletion relies on owner
// references (and the finalizer only for RBAC it cannot own), a malformed selector and a failed reload degrade.
import { gunzipSync } from "node:zlib";
import {
  type KubeObject,
  Pod,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type Prometheus, PrometheusKind, type PrometheusSpec } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import {
  ClusterRole,
  ClusterRoleBinding,
  CONFIG_HASH_ANNOTATION,
  CONFIG_KEY,
  RBAC_FINALIZER,
} from "../desired/objects.ts";
import { prometheusController } from "./controller.ts";
import { PrometheusOperatorMetrics } from "./metrics.ts";
import { ControllerState } from "./options.ts";
import { reconcilePrometheus } from "./reconcile.ts";
import type { RuntimeInfo } from "./reload.ts";
import { KINDS } from "./test-fixture.ts";

const server = (
  spec: Partial<PrometheusSpec> = {},
  meta: Partial<Prometheus["metadata"]> = {},
): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "main", namespace: "monitoring", uid: "p-1", generation: 1, ...meta },
  spec: {
    ...defaultSpec,
    serviceMonitorSelector: {},
    ...spec,
  },
});

const namespaces: KubeObject[] = ["monitoring", "apps"].map((name) => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
}));

const webService = (namespace = "monitoring"): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace, labels: { app: "web" } },
    spec: { ports: [{ name: "metrics", port: 8080, targetPort: 8080 }] },
  }) as KubeObject;

const monitor = (
  name: string,
  spec: Partial<ServiceMonitor["spec"]> = {},
  namespace = "monitoring",
): ServiceMonitor => ({
  apiVersion: ServiceMonitorKind.apiVersion,
  kind: ServiceMonitorKind.kind,
  metadata: { name, namespace, uid: `sm-${name}`, generation: 1 },
  spec: { selector: { matchLabels: { app: "web" } }, endpoints: [{ port: "metrics" }], ...spec },
});

interface Harness {
  state: ControllerState;
  metrics: PrometheusOperatorMetrics;
  registry: Registry;
  runtime: Map<string, RuntimeInfo>;
}

function harness(): Harness {
  const registry = new Registry();
  return {
    state: new ControllerState(),
    metrics: new PrometheusOperatorMetrics(registry),
    registry,
    runtime: new Map(),
  };
}

function run(
  h: Harness,
  objects: readonly KubeObject[],
  request: Prometheus,
  setup?: Parameters<typeof reconcileOnce>[1]["setup"],
): Promise<ReconcileRun> {
  return reconcileOnce(
    (req, ctx) =>
      reconcilePrometheus(req, ctx, {
        metrics: h.metrics,
        state: h.state,
        runtimeInfo: async (ip) => h.runtime.get(ip),
        reloaderState: async () => undefined,
      }),
    { kinds: KINDS, objects, request, ...(setup === undefined ? {} : { setup }) },
  );
}

const writeList = (r: ReconcileRun) =>
  r.writes.map(
    (w) => `${w.verb} ${w.kind} ${w.namespace}/${w.name}${w.subresource ? ` ${w.subresource}` : ""}`,
  );

function configYaml(r: ReconcileRun): string {
  const secret = r.get(Secret, "prometheus-main", "monitoring");
  return gunzipSync(Buffer.from(secret?.data?.[CONFIG_KEY] ?? "", "base64")).toString("utf8");
}

/** The server's pod prometheus-main-0, ready at 10.0.0.7. */
const serverPod = (): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "prometheus-main-0",
      namespace: "monitoring",
      uid: "pod-0",
      labels: { "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": "main" },
    },
    spec: { containers: [{ name: "prometheus", image: "x" }] },
    status: { podIP: "10.0.0.7", conditions: [{ type: "Ready", status: "True" }] },
  }) as KubeObject;

describe("prometheusController", () => {
  it("applies as capstan-prometheus-operator, the name in users' managedFields since the first release", () => {
    const c = prometheusController({ metrics: new PrometheusOperatorMetrics(new Registry()) });
    expect(c.fieldManager).toBe("capstan-prometheus-operator");
  });
});

describe("reconcilePrometheus", () => {
  it("first run creates the server's objects and statuses; the second run writes nothing", async () => {
    const h = harness();
    const objects = [...namespaces, webService(), server(), monitor("web")];
    const first = await run(h, objects, server());
    first.expectNoError();
    expect(writeList(first).sort()).toEqual(
      [
        "apply ServiceAccount monitoring/prometheus-main",
        "apply Role monitoring/prometheus-main",
        "apply RoleBinding monitoring/prometheus-main",
        "apply Secret monitoring/prometheus-main",
        "apply Service monitoring/prometheus-main-operated",
        "apply Service monitoring/prometheus-main",
        "apply StatefulSet monitoring/prometheus-main",
        "patch ServiceMonitor monitoring/web status",
        "patch Prometheus monitoring/main status",
      ].sort(),
    );
    // Everything it made is owned by the server (deleted with it by the garbage collector); no finalizer needed.
    for (const kind of [ServiceAccount, Role, RoleBinding, Secret, Service, StatefulSet]) {
      for (const o of first.objects.filter(
        (x) => x.kind === kind.kind && x.metadata.namespace === "monitoring",
      )) {
        if (o.metadata.name === "web") continue;
        expect(o.metadata.ownerReferences?.[0], `${o.kind} ${o.metadata.name}`).toMatchObject({
          kind: "Prometheus",
          uid: "p-1",
          controller: true,
        });
      }
    }
    expect(first.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers ?? []).toEqual([]);
    expect(configYaml(first)).toContain("job_name: serviceMonitor/monitoring/web/0");
    const status = first.get(PrometheusKind, "main", "monitoring")?.status;
    expect(status?.selected).toEqual({ serviceMonitors: ["monitoring/web"], podMonitors: [], rules: [] });
    expect(status?.configHash).toMatch(/^[0-9a-f]{16}$/);
    expect(status?.conditions?.find((c) => c.type === "Reconciled")).toMatchObject({
      status: "True",
      reason: "ConfigurationGenerated",
    });
    expect(status?.conditions?.find((c) => c.type === "Degraded")?.status).toBe("False");
    const binding = first.get(ServiceMonitorKind, "web", "monitoring")?.status?.bindings?.[0];
    expect(binding).toMatchObject({ group: "monitoring.capstan.dev", name: "main", namespace: "monitoring" });
    // In the configuration, but no pod has loaded it yet (none runs): Accepted is not reported before the reload.
    expect(binding?.conditions?.[0]).toMatchObject({
      type: "Accepted",
      status: "Unknown",
      reason: "ReloadPending",
    });

    const second = await run(h, first.objects, server());
    second.expectNoError();
    second.expectNoWrites();
    expect(second.result).toEqual({ requeueAfter: 15_000 });
  });

  it("a binding stored with its keys in another order (as the API server sorts them) is not rewritten", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server());
    first.expectNoError();
    const sortKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sortKeys)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .sort(([a], [b]) => (a < b ? -1 : 1))
                .map(([k, x]) => [k, sortKeys(x)]),
            )
          : v;
    const stored = first.objects.map((o) => (o.kind === "ServiceMonitor" ? (sortKeys(o) as KubeObject) : o));
    const again = await run(h, stored, server());
    again.expectNoError();
    again.expectNoWrites();
  });

  it("a monitor added, then removed, changes only the config Secret and the statuses", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server());
    first.expectNoError();
    const stsBefore = first.get(StatefulSet, "prometheus-main", "monitoring");

    const added = await run(h, [...first.objects, monitor("web2")], server());
    added.expectNoError();
    expect(writeList(added).sort()).toEqual(
      [
        "apply Secret monitoring/prometheus-main",
        "patch ServiceMonitor monitoring/web2 status",
        "patch Prometheus monitoring/main status",
      ].sort(),
    );
    expect(configYaml(added)).toContain("serviceMonitor/monitoring/web2/0");
    expect(added.get(StatefulSet, "prometheus-main", "monitoring")).toEqual(stsBefore);
    expect(added.events.map((e) => e.reason)).toContain("ConfigurationChanged");

    const removed = await run(
      h,
      added.objects.filter((o) => !(o.kind === "ServiceMonitor" && o.metadata.name === "web2")),
      server(),
    );
    removed.expectNoError();
    expect(writeList(removed).sort()).toEqual(
      ["apply Secret monitoring/prometheus-main", "patch Prometheus monitoring/main status"].sort(),
    );
    expect(configYaml(removed)).not.toContain("web2");
    expect(removed.get(PrometheusKind, "main", "monitoring")?.status?.selected?.serviceMonitors).toEqual([
      "monitoring/web",
    ]);
  });

  it("a binding the API server refuses becomes one Event on the monitor, and is not retried in a loop", async () => {
    const h = harness();
    const refuse = (s: Parameters<NonNullable<Parameters<typeof reconcileOnce>[1]["setup"]>>[0]) => {
      s.fail({ verb: "patch", kind: ServiceMonitorKind, subresource: "status" }, 422, {
        message:
          'ServiceMonitor.monitoring.coreos.com "web" is invalid: status.bindings[0].group: Unsupported value: "monitoring.capstan.dev": supported values: "monitoring.coreos.com"',
      });
    };
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server(), refuse);
    first.expectNoError();
    expect(first.events).toMatchObject([
      {
        type: "Normal",
        reason: "ReloadPending",
        regarding: { kind: "ServiceMonitor", namespace: "monitoring", name: "web" },
      },
    ]);
    expect(first.events[0]?.note).toContain("Prometheus monitoring/main: pending");
    expect(first.events[0]?.note).toContain(
      "reported here because the API server refused status.bindings for group monitoring.capstan.dev",
    );
    expect(first.get(ServiceMonitorKind, "web", "monitoring")?.status).toBeUndefined();

    const second = await run(h, first.objects, server(), refuse);
    second.expectNoError();
    second.expectNoWrites();
    expect(second.events).toEqual([]);

    // A new verdict (the monitor's port goes away) is reported again, once.
    const broken = first.objects.map((o) =>
      o.kind === "ServiceMonitor"
        ? ({
            ...o,
            metadata: { ...o.metadata, generation: 2 },
            spec: { ...(o as ServiceMonitor).spec, endpoints: [{ port: "nope" }] },
          } as KubeObject)
        : o,
    );
    const third = await run(h, broken, server(), refuse);
    third.expectNoError();
    const onMonitor = third.events.filter((e) => e.regarding.kind === "ServiceMonitor");
    expect(onMonitor).toHaveLength(1);
    expect(onMonitor[0]?.note).toContain("endpoints[0]: port nope not found on Service web");
  });

  it("a Secret key a monitor references is copied into the config Secret; a missing one leaves the monitor out", async () => {
    const h = harness();
    const token: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "scrape-token", namespace: "monitoring" },
      data: { token: Buffer.from("s3cret").toString("base64") },
    } as KubeObject;
    const withAuth = monitor("web", {
      endpoints: [
        { port: "metrics", authorization: { credentials: { name: "scrape-token", key: "token" } } },
      ],
    });
    const first = await run(h, [...namespaces, webService(), server(), withAuth, token], server());
    first.expectNoError();
    const secret = first.get(Secret, "prometheus-main", "monitoring");
    expect(secret?.data?.["secret_monitoring_scrape-token_token"]).toBe(
      Buffer.from("s3cret").toString("base64"),
    );
    expect(configYaml(first)).toContain("/etc/prometheus/assets/secret_monitoring_scrape-token_token");
    expect(configYaml(first)).not.toContain("s3cret");

    const missing = await run(
      h,
      first.objects.filter((o) => !(o.kind === "Secret" && o.metadata.name === "scrape-token")),
      server(),
    );
    missing.expectNoError();
    expect(configYaml(missing)).not.toContain("serviceMonitor/monitoring/web/0");
    expect(
      missing.get(ServiceMonitorKind, "web", "monitoring")?.status?.bindings?.[0]?.conditions?.[0],
    ).toMatchObject({
      status: "False",
      reason: "SecretNotFound",
    });
  });

  it("a rule or relabeling Prometheus refuses leaves out only its own object, which says why on its status", async () => {
    const h = harness();
    const rule = (name: string, summary: string): KubeObject =>
      ({
        apiVersion: PrometheusRuleKind.apiVersion,
        kind: PrometheusRuleKind.kind,
        metadata: { name, namespace: "monitoring", uid: `pr-${name}`, generation: 2 },
        spec: { groups: [{ name: "g", rules: [{ alert: "A", expr: "up == 0", annotations: { summary } }] }] },
      }) as KubeObject;
    const lowercase = monitor("lower", {
      endpoints: [
        {
          port: "metrics",
          relabelings: [{ sourceLabels: ["job"], targetLabel: "job", action: "lowercase", replacement: "x" }],
        },
      ],
    });
    const p = server({ ruleSelector: {} });
    const r = await run(
      h,
      [
        ...namespaces,
        webService(),
        p,
        monitor("web"),
        lowercase,
        rule("good", "{{ $value | humanize }}"),
        rule("bad", "{{ humanise $value }}"),
      ],
      p,
    );
    r.expectNoError();
    const accepted = (kind: typeof PrometheusRuleKind | typeof ServiceMonitorKind, name: string) =>
      r.get(kind as typeof ServiceMonitorKind, name, "monitoring")?.status?.bindings?.[0]?.conditions?.[0];
    expect(accepted(PrometheusRuleKind, "bad")).toMatchObject({
      status: "False",
      reason: "InvalidRules",
      observedGeneration: 2,
      message:
        'group "g" rule 1 (alert A): template annotations.summary: function "humanise" not defined at line 1 (Prometheus 3.16.0)',
    });
    expect(accepted(ServiceMonitorKind, "lower")).toMatchObject({
      status: "False",
      reason: "InvalidRelabeling",
      message: expect.stringContaining(
        "endpoints[0].relabelings[0]: 'replacement' can not be set for lowercase action",
      ),
    });
    // In the configuration: Accepted once the pods load it (none runs here).
    expect(accepted(PrometheusRuleKind, "good")).toMatchObject({
      status: "Unknown",
      reason: "ReloadPending",
    });
    expect(accepted(ServiceMonitorKind, "web")).toMatchObject({ status: "Unknown", reason: "ReloadPending" });
    expect(r.get(PrometheusKind, "main", "monitoring")?.status?.selected).toMatchObject({
      serviceMonitors: ["monitoring/web"],
      rules: ["monitoring/good"],
    });
    expect(configYaml(r)).toContain("serviceMonitor/monitoring/web/0");
    expect(configYaml(r)).not.toContain("serviceMonitor/monitoring/lower/0");
  });

  it("replicas 1 -> 2 adds the PodDisruptionBudget, 2 -> 1 removes it; a storage size change keeps the claim template", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, server()], server());
    first.expectNoError();
    const two = server({ replicas: 2 }, { generation: 2 });
    const scaled = await run(
      h,
      first.objects.map((o) => (o.kind === "Prometheus" ? { ...two, status: (o as Prometheus).status } : o)),
      two,
    );
    scaled.expectNoError();
    expect(scaled.get(StatefulSet, "prometheus-main", "monitoring")?.spec?.replicas).toBe(2);
    expect(writeList(scaled)).toContain("apply PodDisruptionBudget monitoring/prometheus-main");

    const one = server({ replicas: 1, storage: { size: "20Gi" } }, { generation: 3 });
    const back = await run(
      h,
      scaled.objects.map((o) => (o.kind === "Prometheus" ? { ...one, status: (o as Prometheus).status } : o)),
      one,
    );
    back.expectNoError();
    expect(writeList(back)).toContain("delete PodDisruptionBudget monitoring/prometheus-main");
    const sts = back.get(StatefulSet, "prometheus-main", "monitoring");
    expect(sts?.spec?.replicas).toBe(1);
    expect(sts?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage).toBe("10Gi");
    expect(
      back.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === "Degraded"),
    ).toMatchObject({
      status: "True",
      reason: "StorageSizeChangeNotApplied",
    });
  });

  it("paused: no object is created or changed; only the status says so", async () => {
    const h = harness();
    const paused = server({ paused: true });
    const r = await run(h, [...namespaces, webService(), paused, monitor("web")], paused);
    r.expectNoError();
    expect(writeList(r)).toEqual(["patch Prometheus monitoring/main status"]);
    expect(
      r.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === "Reconciled"),
    ).toMatchObject({
      status: "False",
      reason: "Paused",
    });
    const again = await run(h, r.objects, paused);
    again.expectNoWrites();
  });

  it("a monitor looking in every namespace: ClusterRole and binding, held by a finalizer until the server goes", async () => {
    const h = harness();
    const everywhere = monitor("all", { namespaceSelector: { any: true } });
    const first = await run(h, [...namespaces, webService("apps"), server(), everywhere], server());
    first.expectNoError();
    expect(
      first.get(ClusterRole, "prometheus-monitoring-main")?.rules?.map((r) => r.resources),
    ).toContainEqual(["namespaces"]);
    expect(first.get(ClusterRoleBinding, "prometheus-monitoring-main")?.subjects).toEqual([
      { kind: "ServiceAccount", name: "prometheus-main", namespace: "monitoring" },
    ]);
    // No Role in the server's namespace: the ClusterRole covers it.
    expect(first.get(Role, "prometheus-main", "monitoring")).toBeUndefined();
    const p = first.get(PrometheusKind, "main", "monitoring");
    expect(p?.metadata.finalizers).toEqual([RBAC_FINALIZER]);

    const steady = await run(h, first.objects, server());
    steady.expectNoWrites();

    // Deleted: the cluster-wide objects go, then the finalizer.
    const deleting = first.objects.map((o) =>
      o.kind === "Prometheus"
        ? { ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-12-01T12:00:00Z" } }
        : o,
    );
    const gone = await run(h, deleting, server());
    gone.expectNoError();
    expect(writeList(gone).sort()).toEqual(
      [
        "delete ClusterRole /prometheus-monitoring-main",
        "delete ClusterRoleBinding /prometheus-monitoring-main",
        "patch Prometheus monitoring/main",
      ].sort(),
    );
  });

  it("discovery narrowed from a list of namespaces back to the server's: the foreign Role goes", async () => {
    const h = harness();
    const listed = monitor("web", { namespaceSelector: { matchNames: ["apps", "monitoring"] } });
    const first = await run(h, [...namespaces, webService("apps"), server(), listed], server());
    first.expectNoError();
    expect(first.get(Role, "prometheus-monitoring-main", "apps")?.metadata.labels).toMatchObject({
      "monitoring.capstan.dev/prometheus-name": "main",
    });
    expect(first.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers).toEqual([RBAC_FINALIZER]);
    const narrowed = first.objects.map((o) => (o.kind === "ServiceMonitor" ? monitor("web") : o));
    const next = await run(h, narrowed, server());
    next.expectNoError();
    expect(next.get(Role, "prometheus-monitoring-main", "apps")).toBeUndefined();
    expect(next.get(RoleBinding, "prometheus-monitoring-main", "apps")).toBeUndefined();
    expect(next.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers ?? []).toEqual([]);
  });

  it("a monitor attaching node metadata: a ClusterRole reading Nodes, held by the finalizer, gone with the field", async () => {
    const h = harness();
    const withNodes = monitor("web", { attachMetadata: { node: true } });
    const first = await run(h, [...namespaces, webService(), server(), withNodes], server());
    first.expectNoError();
    expect(first.get(ClusterRole, "prometheus-monitoring-main")?.rules).toEqual([
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
    ]);
    expect(first.get(Role, "prometheus-main", "monitoring")).toBeDefined();
    expect(first.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers).toEqual([RBAC_FINALIZER]);
    expect(configYaml(first)).toMatch(/attach_metadata:\n\s+node: true/);
    (await run(h, first.objects, server())).expectNoWrites();

    const without = first.objects.map((o) => (o.kind === "ServiceMonitor" ? monitor("web") : o));
    const next = await run(h, without, server());
    next.expectNoError();
    expect(next.get(ClusterRole, "prometheus-monitoring-main")).toBeUndefined();
    expect(next.get(ClusterRoleBinding, "prometheus-monitoring-main")).toBeUndefined();
    expect(next.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers ?? []).toEqual([]);
  });

  it("a feature flag the server's release does not know: Degraded naming it, one Event, and passed on to the pods", async () => {
    const h = harness();
    const p = server({
      version: "3.5.0",
      enableFeatures: ["promql-binop-fill-modifiers", "exemplar-storage"],
    });
    const first = await run(h, [...namespaces, webService(), p, monitor("web")], p);
    first.expectNoError();
    const degraded = first
      .get(PrometheusKind, "main", "monitoring")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "UnknownFeatureFlag" });
    expect(degraded?.message).toContain(
      'spec.enableFeatures[0] "promql-binop-fill-modifiers" came in Prometheus 3.10.0',
    );
    expect(first.events.map((e) => e.reason)).toContain("UnknownFeatureFlag");
    expect(
      first.get(StatefulSet, "prometheus-main", "monitoring")?.spec?.template.spec?.containers[0]?.args,
    ).toContain("--enable-feature=exemplar-storage,promql-binop-fill-modifiers");
    const steady = await run(h, first.objects, p);
    steady.expectNoWrites();
    expect(steady.events).toEqual([]);
  });

  it("a malformed server selector: Degraded naming the field, an Event, and the configuration kept", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server());
    const bad = server(
      { serviceMonitorSelector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] } },
      { generation: 2 },
    );
    const objects = first.objects.map((o) =>
      o.kind === "Prometheus" ? { ...bad, status: (o as Prometheus).status } : o,
    );
    const r = await run(h, objects as KubeObject[], bad);
    r.expectNoError();
    expect(r.writesOf(Secret)).toEqual([]);
    const status = r.get(PrometheusKind, "main", "monitoring")?.status;
    expect(status?.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "InvalidSelector",
    });
    expect(status?.conditions?.find((c) => c.type === "Degraded")?.message).toContain(
      "spec.serviceMonitorSelector",
    );
    expect(status?.conditions?.find((c) => c.type === "Reconciled")?.status).toBe("False");
    expect(r.events.map((e) => e.reason)).toEqual(["InvalidSelector"]);
  });

  it("a new configuration stamps each server pod with its hash once (the kubelet then refreshes the Secret at once)", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server());
    const hashOf = (r: ReconcileRun) =>
      r.get(Secret, "prometheus-main", "monitoring")?.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    const podHash = (r: ReconcileRun) =>
      r.get(Pod, "prometheus-main-0", "monitoring")?.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    // A pod the StatefulSet made: stamped once.
    const stamped = await run(h, [...first.objects, serverPod()], server());
    stamped.expectNoError();
    expect(writeList(stamped)).toEqual(["patch Pod monitoring/prometheus-main-0"]);
    expect(podHash(stamped)).toBe(hashOf(first));
    expect(stamped.get(Pod, "prometheus-main-0", "monitoring")?.metadata.uid).toBe("pod-0");
    // Steady state: nothing.
    (await run(h, stamped.objects, server())).expectNoWrites();
    // A monitor added: the Secret, then the pod with the new hash.
    const added = await run(h, [...stamped.objects, monitor("web2")], server());
    expect(writeList(added)).toContain("patch Pod monitoring/prometheus-main-0");
    expect(hashOf(added)).not.toBe(hashOf(first));
    expect(podHash(added)).toBe(hashOf(added));
    // A pod being deleted is left alone.
    const leaving = added.objects.map((o) =>
      o.kind === "Pod" ? { ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-12-01T10:00:00Z" } } : o,
    );
    const gone = await run(
      h,
      [...leaving.filter((o) => o.kind !== "ServiceMonitor" || o.metadata.name !== "web2")],
      server(),
    );
    expect(writeList(gone)).not.toContain("patch Pod monitoring/prometheus-main-0");
  });

  it("a pod whose image cannot be pulled: Degraded naming pod and image, one Event, then no writes", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server());
    const stuck = {
      ...serverPod(),
      metadata: {
        ...serverPod().metadata,
        annotations: {
          [CONFIG_HASH_ANNOTATION]:
            first.get(Secret, "prometheus-main", "monitoring")?.metadata.annotations?.[
              CONFIG_HASH_ANNOTATION
            ] ?? "",
        },
      },
      status: {
        phase: "Pending",
        containerStatuses: [
          {
            name: "prometheus",
            image: "quay.io/prometheus/prometheus:v3.99.0",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: "ImagePullBackOff", message: "Back-off" } },
          },
        ],
      },
    } as KubeObject;
    const a = await run(h, [...first.objects, stuck], server());
    a.expectNoError();
    expect(
      a.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === "Degraded"),
    ).toMatchObject({ status: "True", reason: "ImagePullFailed" });
    const degraded = a
      .get(PrometheusKind, "main", "monitoring")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded?.message).toContain(
      "pod prometheus-main-0 cannot pull image quay.io/prometheus/prometheus:v3.99.0",
    );
    expect(a.events.filter((e) => e.reason === "ImagePullFailed")).toHaveLength(1);
    const b = await run(h, a.objects, server());
    b.expectNoWrites();
    expect(b.events.filter((e) => e.reason === "ImagePullFailed")).toHaveLength(0);
  });

  it("reloads the pods report are counted; a failed one degrades the server", async () => {
    const h = harness();
    const first = await run(h, [...namespaces, webService(), server(), monitor("web")], server());
    const pod = serverPod();
    h.runtime.set("10.0.0.7", { reloadConfigSuccess: true, lastConfigTime: "2026-12-01T10:00:00Z" });
    const a = await run(h, [...first.objects, pod], server());
    a.expectNoError();
    h.runtime.set("10.0.0.7", { reloadConfigSuccess: false, lastConfigTime: "2026-12-01T10:01:00Z" });
    const b = await run(h, a.objects, server());
    b.expectNoError();
    const metrics = await h.registry.getSingleMetricAsString("capstan_prometheus_config_reloads_total");
    expect(metrics).toContain('capstan_prometheus_config_reloads_total{result="failure"} 1');
    expect(metrics).toContain('capstan_prometheus_config_reloads_total{result="success"} 0');
    expect(
      b.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === "Degraded"),
    ).toMatchObject({ status: "True", reason: "ReloadFailed" });
    const selected = await h.registry.getSingleMetricAsString("capstan_prometheus_selected_monitors");
    expect(selected).toContain(
      'capstan_prometheus_selected_monitors{object_namespace="monitoring",object_name="main",kind="ServiceMonitor"} 1',
    );
  });
});
