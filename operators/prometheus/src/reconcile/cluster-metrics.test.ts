// spec.clusterMetrics (issue 29 item 10), reconciled against core's in-memory API server: asked for, the pods'
// ServiceAccount gets a ClusterRole and ClusterRoleBinding of the server's with exactly the kubelet and API server
// reads (never nodes/proxy), held by the RBAC finalizer; narrowed or unset, they follow; the steady state writes
// nothing. The operator holds what it grants: the chart's RBAC check (rbac.test.ts) fails without it.
import type { KubeObject } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { type Prometheus, PrometheusKind, type PrometheusSpec } from "../api/prometheus.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { ClusterRole, ClusterRoleBinding, RBAC_FINALIZER } from "../desired/objects.ts";
import { ControllerState } from "./options.ts";
import { access } from "./rbac.ts";
import { KINDS, MONITORING_NAMESPACE, quietReconciler } from "./test-fixture.ts";

const server = (spec: Partial<PrometheusSpec> = {}, generation = 1): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "main", namespace: "monitoring", uid: "p-1", generation },
  spec: { ...defaultSpec, serviceMonitorSelector: {}, ...spec },
});

const state = new ControllerState();
const run = (objects: readonly KubeObject[], request: Prometheus): Promise<ReconcileRun> =>
  reconcileOnce(quietReconciler(state), { kinds: KINDS, objects, request });

/** The objects with the Prometheus replaced by `p` (its status and finalizers kept). */
const withServer = (objects: readonly KubeObject[], p: Prometheus): KubeObject[] =>
  objects.map((o) =>
    o.kind === "Prometheus"
      ? ({
          ...p,
          metadata: { ...o.metadata, generation: p.metadata.generation },
          status: (o as Prometheus).status,
        } as KubeObject)
      : o,
  );

const NAME = "prometheus-monitoring-main-cluster-metrics";

describe("spec.clusterMetrics", () => {
  it("grants the kubelet and API server reads to the pods' ServiceAccount, then follows the spec", async () => {
    const both = server({ clusterMetrics: { kubelet: true, apiServer: true } });
    const first = await run([MONITORING_NAMESPACE, both], both);
    first.expectNoError();
    expect(first.get(ClusterRole, NAME)?.rules).toEqual([
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
      { nonResourceURLs: ["/metrics", "/metrics/slis"], verbs: ["get"] },
    ]);
    expect(JSON.stringify(first.get(ClusterRole, NAME)?.rules)).not.toContain("nodes/proxy");
    expect(first.get(ClusterRoleBinding, NAME)).toMatchObject({
      roleRef: { kind: "ClusterRole", name: NAME },
      subjects: [{ kind: "ServiceAccount", name: "prometheus-main", namespace: "monitoring" }],
    });
    expect(first.get(ClusterRole, NAME)?.metadata.labels).toMatchObject({
      "monitoring.capstan.dev/prometheus-namespace": "monitoring",
      "monitoring.capstan.dev/prometheus-name": "main",
    });
    // Cluster-wide objects cannot be owned by the server: its finalizer deletes them with it.
    expect(first.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers).toEqual([RBAC_FINALIZER]);
    (await run(first.objects, both)).expectNoWrites();

    // Only the API server: the kubelet reads go.
    const api = server({ clusterMetrics: { apiServer: true } }, 2);
    const narrowed = await run(withServer(first.objects, api), api);
    narrowed.expectNoError();
    expect(narrowed.get(ClusterRole, NAME)?.rules).toEqual([
      { nonResourceURLs: ["/metrics", "/metrics/slis"], verbs: ["get"] },
    ]);

    // Unset: both objects go, then the finalizer.
    const none = server({}, 3);
    const unset = await run(withServer(narrowed.objects, none), none);
    unset.expectNoError();
    expect(unset.get(ClusterRole, NAME)).toBeUndefined();
    expect(unset.get(ClusterRoleBinding, NAME)).toBeUndefined();
    expect(unset.get(PrometheusKind, "main", "monitoring")?.metadata.finalizers ?? []).toEqual([]);
  });

  it("a server's own ServiceAccount (spec.serviceAccountName) is the one bound", async () => {
    const own = server({ serviceAccountName: "scraper", clusterMetrics: { kubelet: true } });
    const r = await run([MONITORING_NAMESPACE, own], own);
    r.expectNoError();
    expect(r.get(ClusterRoleBinding, NAME)?.subjects).toEqual([
      { kind: "ServiceAccount", name: "scraper", namespace: "monitoring" },
    ]);
  });

  it("the operator declares every read it grants (Kubernetes refuses a grant of more than the granter holds)", () => {
    const declared = [
      ...access.rules.map(
        (r) => `${r.kind.plural}${r.subresource ? `/${r.subresource}` : ""}: ${r.verbs.join(",")}`,
      ),
      ...(access.nonResourceRules ?? []).flatMap((r) =>
        r.nonResourceURLs.map((u) => `${u}: ${r.verbs.join(",")}`),
      ),
    ];
    expect(declared).toEqual(
      expect.arrayContaining([
        "nodes: get,list,watch",
        "nodes/metrics: get",
        "/metrics: get",
        "/metrics/slis: get",
      ]),
    );
  });
});
