// The Helm chart (charts/prometheus-operator): its CRD copies and the docs page's reference are what the shared
// tool (@capstan/cli) generates from the schema, and, where helm is installed, it lints clean and renders what each
// mode needs: cluster-wide and namespace-scoped RBAC (least privilege, holding every read it grants the servers'
// discovery), the Prometheus CRD as a template and the monitoring.coreos.com CRDs in Helm's crds/ (created before
// the templates, only where absent), the reloader image, the PrometheusRule's alerts and the dashboard's queries
// on metrics the operator exports. What the capstan-operator library chart renders (the
// Deployment, leader election, secure or plain metrics, the ServiceMonitor, PodDisruptionBudget and dashboard
// ConfigMap, the common schema) is tested once for every chart in packages/cli/src/operator-library-chart.test.ts.
// The chart's CRD copies are checked here (chartCrdDrift), the docs reference by api/crd-yaml.test.ts (crdDrift);
// `npm run gen:crd` rewrites both.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatDrift, INSTALL_IF_ABSENT } from "@capstan/cli";
import {
  chartCrdDrift,
  crdPermissions,
  dashboardQueries,
  deploymentPodSpec,
  envValue,
  findHelm,
  grantList,
  helmLint,
  helmTemplate,
  helmTemplateError,
  type K8sObject,
  missingPermissions,
  missingStandardLabels,
  monitoringProblems,
  namesOf,
  ofKind,
  operatorSeriesNames,
  podSpecs,
  type RuleLike,
  renderedDashboard,
  restrictedViolations,
  ruleExpressions,
  single,
} from "@capstan/cli/chart";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crds } from "./api/crds.ts";
import { DEFAULT_RELOADER_IMAGE } from "./desired/objects/statefulset.ts";
import { PrometheusOperatorMetrics } from "./reconcile/metrics.ts";

const ownCrds = crds.filter((c) => c.spec.group === "monitoring.capstan.dev");
const packageDir = fileURLToPath(new URL("../", import.meta.url));
const chartDir = fileURLToPath(new URL("../../../charts/prometheus-operator/", import.meta.url));

const MONITORING_CRDS = [
  "podmonitors.monitoring.coreos.com",
  "prometheusrules.monitoring.coreos.com",
  "servicemonitors.monitoring.coreos.com",
];
/** The labels capstan crd gives the crds/ files: static, as Helm does not render crds/. */
const STATIC_CRD_LABELS = {
  "app.kubernetes.io/name": "prometheus-operator",
  "app.kubernetes.io/component": "crds",
  "app.kubernetes.io/part-of": "capstan",
};

describe("the chart's CRD copies", () => {
  it("are what `capstan crd` writes from the schema, and the chart holds no other CRD", async () => {
    const drift = await chartCrdDrift(packageDir);
    expect(drift.map((d) => formatDrift(d, packageDir))).toEqual([]);
  });

  it("are the monitoring.coreos.com CRDs in Helm's crds/ (plain YAML), and the Prometheus CRD alone a template", () => {
    const yamlFiles = (dir: string) =>
      readdirSync(join(chartDir, dir))
        .filter((f) => f.endsWith(".yaml"))
        .sort();
    expect(yamlFiles("crds")).toEqual(MONITORING_CRDS.map((n) => `${n}.yaml`));
    expect(yamlFiles("templates/crds")).toEqual(["prometheuses.monitoring.capstan.dev.yaml"]);
    for (const name of MONITORING_CRDS) {
      const text = readFileSync(join(chartDir, "crds", `${name}.yaml`), "utf8");
      // Helm does not render crds/: a template action there would reach the API server as it is.
      expect(text, name).not.toContain("{{");
      const crd = crds.find((c) => c.metadata.name === name)!;
      expect(parse(text), name).toEqual({
        ...crd,
        metadata: { ...crd.metadata, labels: STATIC_CRD_LABELS },
      });
      expect(crd.metadata.annotations, name).toEqual({ [INSTALL_IF_ABSENT]: "true" });
    }
  });
});

const helm = findHelm();
if (helm === undefined)
  console.warn("chart.test.ts: no helm binary (set CAPSTAN_HELM): skipping the helm tests");

type Obj = K8sObject & { rules?: RuleLike[]; spec?: Record<string, unknown> };

/** `helm template` as release "ops" in namespace "ops-ns" (or `release`) with --set values, parsed. */
const render = (sets: string[] = [], release = "ops"): Obj[] =>
  helmTemplate(helm!, chartDir, { release, set: sets }) as Obj[];
/** The error helm prints for values it must refuse. */
const refused = (...sets: string[]): string => helmTemplateError(helm!, chartDir, { set: sets });

const byKind = (objs: Obj[], kind: string) => ofKind(objs, kind) as Obj[];
const one = (objs: Obj[], kind: string, name?: string) => single<Obj>(objs, kind, name);
const operator = (objs: Obj[]) => deploymentPodSpec(objs).containers[0]!;

/** The ClusterRoles of the operator's own (cluster-wide, the default), without the secure metrics' two. */
const OWN_CLUSTER_ROLES = ["ops-ns-ops-prometheus-operator", "ops-ns-ops-prometheus-operator-cluster"];
/** What the operator may do to its operands, in either mode. */
const operatorGrants = [
  "/configmaps: get,list,watch",
  "/pods/log: get",
  "/pods: get,list,patch,watch",
  "/secrets: create,delete,get,list,patch,watch",
  "/serviceaccounts: create,get,list,patch,watch",
  "/services: create,get,list,patch,watch",
  "apps/statefulsets: create,get,list,patch,watch",
  "discovery.k8s.io/endpointslices: get,list,watch",
  "events.k8s.io/events: create,patch",
  "monitoring.capstan.dev/prometheuses/finalizers: update",
  "monitoring.capstan.dev/prometheuses/status: get,patch,update",
  "monitoring.capstan.dev/prometheuses: get,list,patch,watch",
  "monitoring.coreos.com/podmonitors/status: patch",
  "monitoring.coreos.com/podmonitors: get,list,watch",
  "monitoring.coreos.com/prometheusrules/status: patch",
  "monitoring.coreos.com/prometheusrules: get,list,watch",
  "monitoring.coreos.com/servicemonitors/status: patch",
  "monitoring.coreos.com/servicemonitors: get,list,watch",
  "policy/poddisruptionbudgets: create,delete,get,list,patch,watch",
  "rbac.authorization.k8s.io/rolebindings: create,delete,get,list,patch,watch",
  "rbac.authorization.k8s.io/roles: create,delete,get,list,patch,watch",
];
/**
 * The ClusterRole every mode has: Namespaces, cluster-wide discovery grants for servers that need them, and what
 * spec.clusterMetrics grants on (the kubelets' and the API server's metrics, and Nodes): never nodes/proxy.
 */
const clusterGrants = [
  "//metrics/slis: get",
  "//metrics: get",
  "/namespaces: get,list,watch",
  "/nodes/metrics: get",
  "/nodes: get,list,watch",
  "rbac.authorization.k8s.io/clusterrolebindings: create,delete,get,list,patch,watch",
  "rbac.authorization.k8s.io/clusterroles: create,delete,get,list,patch,watch",
];

describe.skipIf(helm === undefined)("charts/prometheus-operator", () => {
  it("passes helm lint --strict in every mode", () => {
    for (const sets of [
      [],
      ["watchNamespace=apps"],
      ["replicas=2"],
      ["metrics.secure=false", "serviceMonitor.enabled=true"],
    ]) {
      expect(helmLint(helm!, chartDir, sets), sets.join(" ")).toMatch(
        /1 chart\(s\) linted, 0 chart\(s\) failed/,
      );
    }
  });

  it("renders, in every mode, pods that pass Pod Security restricted, RBAC that covers the CRDs, standard labels", () => {
    for (const sets of [[], ["watchNamespace=apps"], ["replicas=2", "serviceMonitor.enabled=true"]]) {
      const objs = render(sets);
      const pods = podSpecs(objs);
      expect(
        pods.map((p) => p.owner),
        sets.join(" "),
      ).toEqual(["Deployment ops-prometheus-operator"]);
      expect(
        pods.flatMap((p) => restrictedViolations(p.owner, p.spec)),
        sets.join(" "),
      ).toEqual([]);
      // The Prometheus CRD is the operator's own; the monitors it only reads and reports on (the grants below).
      expect(missingPermissions(objs, crdPermissions(ownCrds)), sets.join(" ")).toEqual([]);
      expect(
        missingStandardLabels(objs, {
          name: "prometheus-operator",
          instance: "ops",
          chart: "prometheus-operator-0.1.0",
        }),
        sets.join(" "),
      ).toEqual([]);
    }
    // Among the templates, only the Prometheus CRD, with the keep annotation, and not at all with
    // crds.enabled=false. The monitoring ones are in crds/, which helm install creates first (--include-crds shows
    // them), whatever crds.enabled says (--skip-crds skips them).
    const crdObjs = byKind(render(), "CustomResourceDefinition");
    expect(crdObjs.map((c) => [c.metadata.name, c.metadata.annotations])).toEqual([
      ["prometheuses.monitoring.capstan.dev", { "helm.sh/resource-policy": "keep" }],
    ]);
    expect(byKind(render(["crds.enabled=false"]), "CustomResourceDefinition")).toEqual([]);
    for (const set of [[], ["crds.enabled=false"]]) {
      const withCrds = byKind(
        helmTemplate(helm!, chartDir, { set, includeCrds: true }) as Obj[],
        "CustomResourceDefinition",
      );
      expect(
        withCrds.map((c) => [c.metadata.name, c.metadata.labels, c.metadata.annotations]),
        set.join(" "),
      ).toEqual([
        ...MONITORING_CRDS.map((n) => [n, STATIC_CRD_LABELS, { [INSTALL_IF_ABSENT]: "true" }]),
        ...(set.length === 0
          ? [
              [
                "prometheuses.monitoring.capstan.dev",
                expect.objectContaining({ "app.kubernetes.io/instance": "ops" }),
                { "helm.sh/resource-policy": "keep" },
              ],
            ]
          : []),
      ]);
    }
  });

  it("renders a cluster-wide operator by default: ClusterRole with exactly the operator's grants", () => {
    const objs = render();
    const role = one(objs, "ClusterRole", "ops-ns-ops-prometheus-operator");
    expect(grantList(role.rules)).toEqual(operatorGrants);
    expect(grantList(one(objs, "ClusterRole", "ops-ns-ops-prometheus-operator-cluster").rules)).toEqual(
      clusterGrants,
    );
    expect(one(objs, "ClusterRoleBinding", "ops-ns-ops-prometheus-operator")).toMatchObject({
      roleRef: { kind: "ClusterRole", name: "ops-ns-ops-prometheus-operator" },
      subjects: [{ kind: "ServiceAccount", name: "ops-prometheus-operator", namespace: "ops-ns" }],
    });
    // Besides the secure metrics' two (the library's), the operator's own ClusterRoles, which alone remain without them.
    expect(namesOf(objs, "ClusterRole")).toEqual([
      ...OWN_CLUSTER_ROLES,
      "ops-ns-ops-prometheus-operator-metrics-auth",
      "ops-ns-ops-prometheus-operator-metrics-reader",
    ]);
    expect(namesOf(render(["metrics.secure=false"]), "ClusterRole")).toEqual(OWN_CLUSTER_ROLES);
  });

  it("renders a namespace-scoped operator with watchNamespace: a Role there; cluster-wide only Namespaces, RBAC and the reviews", () => {
    const objs = render(["watchNamespace=apps"]);
    const role = one(objs, "Role", "ops-ns-ops-prometheus-operator");
    expect(role.metadata.namespace).toBe("apps");
    expect(grantList(role.rules)).toEqual(operatorGrants);
    expect(one(objs, "RoleBinding", "ops-ns-ops-prometheus-operator")).toMatchObject({
      metadata: { namespace: "apps" },
      roleRef: { kind: "Role", name: "ops-ns-ops-prometheus-operator" },
      subjects: [{ kind: "ServiceAccount", name: "ops-prometheus-operator", namespace: "ops-ns" }],
    });
    // Token and access reviews are cluster-scoped, and so are Namespaces (monitors select them) and a server's
    // cluster-wide discovery grant: the only ClusterRoles.
    expect(
      byKind(objs, "ClusterRole")
        .map((r) => r.metadata.name)
        .sort(),
    ).toEqual([
      "ops-ns-ops-prometheus-operator-cluster",
      "ops-ns-ops-prometheus-operator-metrics-auth",
      "ops-ns-ops-prometheus-operator-metrics-reader",
    ]);
    const plain = render(["watchNamespace=apps", "metrics.secure=false"]);
    expect(byKind(plain, "ClusterRole").map((r) => grantList(r.rules))).toEqual([clusterGrants]);
    expect(byKind(plain, "ClusterRoleBinding").map((b) => b.metadata.name)).toEqual([
      "ops-ns-ops-prometheus-operator-cluster",
    ]);
  });

  it("passes the reloader image to the operator, named like the operator's (registry, repository, tag, digest)", () => {
    const reloader = (...sets: string[]) =>
      envValue(operator(render(sets)), "PROMETHEUS_OPERATOR_RELOADER_IMAGE");
    const digest = `sha256:${"b".repeat(64)}`;
    expect(reloader()).toBe("docker.io/library/busybox:1.37");
    // The operator's own default (without the chart) is the same name.
    expect(DEFAULT_RELOADER_IMAGE).toBe(reloader());
    // A mirror of every image the chart runs, and a pinned digest, as for the operator image.
    expect(reloader("global.imageRegistry=mirror.example")).toBe("mirror.example/library/busybox:1.37");
    expect(reloader(`reloaderImage.digest=${digest}`)).toBe(`docker.io/library/busybox@${digest}`);
    expect(
      reloader(
        "reloaderImage.registry=capstan.local",
        "reloaderImage.repository=busybox",
        "reloaderImage.tag=1.36",
      ),
    ).toBe("capstan.local/busybox:1.36");
    expect(reloader("reloaderImage.registry=", "reloaderImage.repository=busybox")).toBe("busybox:1.37");
    // The one-string form of earlier charts is still taken, as it is.
    expect(reloader("reloaderImage=capstan.local/busybox:1")).toBe("capstan.local/busybox:1");
    expect(refused("reloaderImage=")).toMatch(/reloaderImage is empty/);
    expect(refused("reloaderImage.repository=")).toMatch(/reloaderImage.repository is empty/);
    expect(refused("reloaderImage.tag=")).toMatch(
      /reloaderImage.tag and reloaderImage.digest are both empty/,
    );
    expect(refused("reloaderImage.digest=latest")).toMatch(/reloaderImage/);
    expect(refused("reloaderImage.version=1")).toMatch(/version/);
    expect(refused("reloaderImage=busybox 1.37")).toMatch(/reloaderImage/);
  });
});

describe.skipIf(helm === undefined)("the chart's alerts and dashboard", () => {
  it("renders the PrometheusRule only when asked, every alert scoped to the release's scrape job", () => {
    expect(byKind(render(), "PrometheusRule")).toEqual([]);
    const rule = one(
      render([
        "prometheusRule.enabled=true",
        "prometheusRule.for=10m",
        "prometheusRule.alertLabels.team=obs",
      ]),
      "PrometheusRule",
    );
    expect(rule.apiVersion).toBe("monitoring.coreos.com/v1");
    const alerts = (rule.spec as { groups: { rules: Record<string, unknown>[] }[] }).groups.flatMap(
      (g) => g.rules,
    );
    expect(alerts.map((a) => a.alert)).toEqual([
      "PrometheusServerNotReady",
      "PrometheusConfigReloadFailures",
      "PrometheusOperatorReconcileErrors",
      "PrometheusOperatorLeaderElectionFlapping",
      "PrometheusOperatorDown",
    ]);
    for (const a of alerts) {
      expect(a.for, String(a.alert)).toBe("10m");
      expect(a.labels, String(a.alert)).toMatchObject({ team: "obs" });
      expect(String(a.expr), String(a.alert)).toContain(
        'job="ops-prometheus-operator-metrics", namespace="ops-ns"',
      );
      expect(Object.keys(a.annotations as object), String(a.alert)).toEqual(["summary", "description"]);
    }
    expect(JSON.stringify(rule)).toContain("{{ $labels.object_namespace }}/{{ $labels.object_name }}");
  });

  it("has only queries and alerts that parse and use metrics the operator exports", async () => {
    const known = await operatorSeriesNames((registry) => new PrometheusOperatorMetrics(registry));
    const objs = render(["prometheusRule.enabled=true", "dashboard.enabled=true"]);
    const queries = [
      ...dashboardQueries(renderedDashboard(objs, "prometheus-operator").json),
      ...ruleExpressions(objs),
    ];
    expect(queries.length).toBeGreaterThan(20);
    expect(monitoringProblems(queries, known)).toEqual([]);
    const used = queries.map((q) => q.expr).join("\n");
    for (const m of known.filter((n) => n.startsWith("capstan_prometheus_"))) expect(used).toContain(m);
  });
});
