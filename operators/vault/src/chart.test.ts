// The Helm chart (charts/vault-operator): its CRD copy and the docs page's reference are what the shared tool
// (@capstan/cli) generates from the schema, and, where helm is installed, it lints clean and renders what each mode
// needs: cluster-wide and namespace-scoped RBAC (least privilege), leader election, secure or plain metrics, the
// optional ServiceMonitor and PrometheusRule, the reloader image and a termination grace longer than the
// operator's shutdown; values the schema refuses are refused with their name.
// The chart's CRD copy is checked here (chartCrdDrift), the docs reference by api/crd-yaml.test.ts (crdDrift);
// `npm run gen:crd` rewrites both.
import { fileURLToPath } from "node:url";
import { formatDrift } from "@capstan/cli";
import {
  chartCrdDrift,
  crdPermissions,
  dashboardDatasourceProblems,
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
import { crds } from "./api/crds.ts";
import { VaultOperatorMetrics } from "./reconcile/metrics.ts";

const packageDir = fileURLToPath(new URL("../", import.meta.url));
const chartDir = fileURLToPath(new URL("../../../charts/vault-operator/", import.meta.url));

describe("the chart's CRD copy", () => {
  it("are what `capstan crd` writes from the schema, and the chart holds no other CRD", async () => {
    const drift = await chartCrdDrift(packageDir);
    expect(drift.map((d) => formatDrift(d, packageDir))).toEqual([]);
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

/** What the operator may do to its operands, in either mode. */
const operatorGrants = [
  "/configmaps: create,get,list,patch,update,watch",
  "/persistentvolumeclaims: create,delete,get,list,patch,watch",
  "/pods: create,delete,get,list,patch,watch",
  "/secrets: create,get,list,patch,update,watch",
  "/services: create,get,list,patch,update,watch",
  "events.k8s.io/events: create,patch",
  "policy/poddisruptionbudgets: create,get,list,patch,update,watch",
  "vault.capstan.dev/vaultclusters/finalizers: update",
  "vault.capstan.dev/vaultclusters/status: get,patch,update",
  "vault.capstan.dev/vaultclusters: get,list,watch",
];

describe.skipIf(helm === undefined)("charts/vault-operator", () => {
  it("passes helm lint --strict in every mode", () => {
    for (const sets of [
      [],
      ["watchNamespace=apps"],
      ["replicas=2"],
      ["metrics.secure=false", "serviceMonitor.enabled=true", "prometheusRule.enabled=true"],
    ]) {
      expect(helmLint(helm!, chartDir, sets), sets.join(" ")).toMatch(
        /1 chart\(s\) linted, 0 chart\(s\) failed/,
      );
    }
  });

  it("renders, in every mode, pods that pass Pod Security restricted, RBAC that covers VaultCluster, standard labels", () => {
    for (const sets of [
      [],
      ["watchNamespace=apps"],
      ["replicas=2", "serviceMonitor.enabled=true", "prometheusRule.enabled=true"],
    ]) {
      const objs = render(sets);
      const pods = podSpecs(objs);
      expect(
        pods.map((p) => p.owner),
        sets.join(" "),
      ).toEqual(["Deployment ops-vault-operator"]);
      expect(
        pods.flatMap((p) => restrictedViolations(p.owner, p.spec)),
        sets.join(" "),
      ).toEqual([]);
      expect(missingPermissions(objs, crdPermissions(crds)), sets.join(" ")).toEqual([]);
      expect(
        missingStandardLabels(objs, {
          name: "vault-operator",
          instance: "ops",
          chart: "vault-operator-0.1.0",
        }),
        sets.join(" "),
      ).toEqual([]);
    }
    // The CRD comes with the keep annotation, and not at all with crds.enabled=false.
    expect(one(render(), "CustomResourceDefinition").metadata).toMatchObject({
      name: "vaultclusters.vault.capstan.dev",
      annotations: { "helm.sh/resource-policy": "keep" },
    });
    expect(byKind(render(["crds.enabled=false"]), "CustomResourceDefinition")).toEqual([]);
  });

  it("renders a cluster-wide operator by default: ClusterRole with exactly the operator's grants", () => {
    const objs = render();
    const role = one(objs, "ClusterRole", "ops-ns-ops-vault-operator");
    expect(grantList(role.rules)).toEqual(operatorGrants);
    expect(one(objs, "ClusterRoleBinding", "ops-ns-ops-vault-operator")).toMatchObject({
      roleRef: { kind: "ClusterRole", name: "ops-ns-ops-vault-operator" },
      subjects: [{ kind: "ServiceAccount", name: "ops-vault-operator", namespace: "ops-ns" }],
    });
    // The only namespaced Role is leader election's, on the release's own Lease.
    const lease = one(objs, "Role");
    expect(lease.metadata.namespace).toBe("ops-ns");
    expect(grantList(lease.rules)).toEqual([
      "coordination.k8s.io/leases: create",
      "coordination.k8s.io/leases[ops-vault-operator-leader]: get,update",
    ]);
    const c = operator(objs);
    expect(c.image).toBe("capstan.local/vault-operator:0.1.0");
    expect(envValue(c, "WATCH_NAMESPACE")).toBeUndefined();
    expect(envValue(c, "LEADER_ELECT")).toBe("true");
    expect(envValue(c, "LEADER_ELECTION_NAME")).toBe("ops-vault-operator-leader");
    expect(c.ports.map((p) => [p.name, p.containerPort])).toEqual([
      ["metrics", 8080],
      ["health", 8081],
    ]);
  });

  it("renders a namespace-scoped operator with watchNamespace: a Role there, no cluster-wide grant but the reviews", () => {
    const objs = render(["watchNamespace=apps"]);
    const role = one(objs, "Role", "ops-ns-ops-vault-operator");
    expect(role.metadata.namespace).toBe("apps");
    expect(grantList(role.rules)).toEqual(operatorGrants);
    expect(one(objs, "RoleBinding", "ops-ns-ops-vault-operator")).toMatchObject({
      metadata: { namespace: "apps" },
      roleRef: { kind: "Role", name: "ops-ns-ops-vault-operator" },
      subjects: [{ kind: "ServiceAccount", name: "ops-vault-operator", namespace: "ops-ns" }],
    });
    expect(envValue(operator(objs), "WATCH_NAMESPACE")).toBe("apps");
    // Token and access reviews are cluster-scoped: the secure metrics' grants are the only ClusterRoles.
    expect(
      byKind(objs, "ClusterRole")
        .map((r) => r.metadata.name)
        .sort(),
    ).toEqual(["ops-ns-ops-vault-operator-metrics-auth", "ops-ns-ops-vault-operator-metrics-reader"]);
    const plain = render(["watchNamespace=apps", "metrics.secure=false"]);
    expect(byKind(plain, "ClusterRole")).toEqual([]);
    expect(byKind(plain, "ClusterRoleBinding")).toEqual([]);
  });

  it("runs the operator as Pod Security restricted asks, for longer than its shutdown", () => {
    const objs = render();
    const pod = deploymentPodSpec(objs);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(operator(objs).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    // The manager's shutdown: 30 s for in-flight reconciles + 5 s for aborted ones (packages/core's Manager).
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(35);
    expect(
      deploymentPodSpec(render(["terminationGracePeriodSeconds=120"])).terminationGracePeriodSeconds,
    ).toBe(120);
    expect(refused("terminationGracePeriodSeconds=30")).toMatch(/terminationGracePeriodSeconds/);
  });

  it("passes the reloader image to the operator", () => {
    expect(envValue(operator(render()), "VAULT_OPERATOR_RELOADER_IMAGE")).toBe("busybox:1.37");
    const local = render(["reloaderImage=capstan.local/busybox:1"]);
    expect(envValue(operator(local), "VAULT_OPERATOR_RELOADER_IMAGE")).toBe("capstan.local/busybox:1");
    expect(refused("reloaderImage=")).toMatch(/reloaderImage/);
  });

  it("runs one leader among replicas, and no Lease grant without leader election", () => {
    expect((one(render(["replicas=2"]), "Deployment").spec as { replicas: number }).replicas).toBe(2);
    const single = render(["leaderElection.enabled=false"]);
    expect(byKind(single, "Role")).toEqual([]);
    expect(envValue(operator(single), "LEADER_ELECT")).toBe("false");
    expect(refused("replicas=2", "leaderElection.enabled=false")).toMatch(
      /more than one operator replica needs leaderElection.enabled=true/,
    );
    // Two releases in one namespace hold different Leases.
    expect(envValue(operator(render([], "other")), "LEADER_ELECTION_NAME")).toBe(
      "other-vault-operator-leader",
    );
  });

  it("serves secure metrics by default, with the review grants and a reader role for scrapers", () => {
    const objs = render();
    expect(envValue(operator(objs), "METRICS_SECURE")).toBe("true");
    expect(grantList(one(objs, "ClusterRole", "ops-ns-ops-vault-operator-metrics-auth").rules)).toEqual([
      "authentication.k8s.io/tokenreviews: create",
      "authorization.k8s.io/subjectaccessreviews: create",
    ]);
    expect(grantList(one(objs, "ClusterRole", "ops-ns-ops-vault-operator-metrics-reader").rules)).toEqual([
      "//metrics: get",
    ]);
    const svc = one(objs, "Service", "ops-vault-operator-metrics");
    expect(svc.spec).toMatchObject({ ports: [{ name: "metrics", port: 8080, targetPort: "metrics" }] });
    const withCert = render(["metrics.certSecret=metrics-tls"]);
    expect(envValue(operator(withCert), "METRICS_CERT_DIR")).toBe("/etc/capstan/metrics-certs");
    expect(deploymentPodSpec(withCert).volumes).toEqual([
      { name: "metrics-certs", secret: { secretName: "metrics-tls" } },
    ]);
    const plain = render(["metrics.secure=false"]);
    expect(envValue(operator(plain), "METRICS_SECURE")).toBe("false");
    expect(JSON.stringify(plain)).not.toMatch(/tokenreviews|subjectaccessreviews|nonResourceURLs/);
  });

  it("renders the ServiceMonitor (monitoring.coreos.com/v1) only when asked, selecting the metrics Service", () => {
    expect(byKind(render(), "ServiceMonitor")).toEqual([]);
    const objs = render(["serviceMonitor.enabled=true", "serviceMonitor.labels.release=prom"]);
    const monitor = one(objs, "ServiceMonitor");
    expect(monitor.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(monitor.metadata.labels?.release).toBe("prom");
    const spec = monitor.spec as { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] };
    expect(one(objs, "Service").metadata.labels).toMatchObject(spec.selector.matchLabels);
    expect(spec.endpoints).toEqual([
      {
        port: "metrics",
        path: "/metrics",
        interval: "30s",
        scheme: "https",
        bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
        tlsConfig: { insecureSkipVerify: true },
      },
    ]);
    const plain = one(render(["serviceMonitor.enabled=true", "metrics.secure=false"]), "ServiceMonitor");
    expect((plain.spec as { endpoints: unknown[] }).endpoints).toEqual([
      { port: "metrics", path: "/metrics", interval: "30s", scheme: "http" },
    ]);
  });

  it("renders the PrometheusRule only when asked, with alerts on the operator's own metrics", () => {
    expect(byKind(render(), "PrometheusRule")).toEqual([]);
    const rule = one(
      render([
        "prometheusRule.enabled=true",
        "prometheusRule.for=10m",
        "prometheusRule.alertLabels.team=vault",
      ]),
      "PrometheusRule",
    );
    expect(rule.apiVersion).toBe("monitoring.coreos.com/v1");
    const [group] = (rule.spec as { groups: { rules: Record<string, unknown>[] }[] }).groups;
    const alerts = group!.rules;
    expect(alerts.map((a) => a.alert)).toEqual([
      "VaultClusterSealedPods",
      "VaultClusterNoActiveNode",
      "VaultClusterRaftPeersMismatch",
      "VaultOperatorReconcileErrors",
      "VaultOperatorLeaderElectionFlapping",
      "VaultOperatorDown",
    ]);
    for (const a of alerts) {
      expect(a.for, String(a.alert)).toBe("10m");
      expect(a.labels, String(a.alert)).toMatchObject({ team: "vault" });
      // Scoped to this release's Service (prometheus-operator's job label).
      expect(String(a.expr), String(a.alert)).toContain(
        'job="ops-vault-operator-metrics", namespace="ops-ns"',
      );
    }
    const metrics = alerts.map((a) => String(a.expr)).join("\n");
    for (const m of [
      "capstan_vault_cluster_pods",
      "capstan_vault_raft_peers",
      "controller_runtime_reconcile_errors_total",
    ]) {
      expect(metrics).toContain(m);
    }
    // Alert templates reach Prometheus as templates, not as Helm's.
    expect(JSON.stringify(rule)).toContain("{{ $labels.object_namespace }}/{{ $labels.object_name }}");
  });

  it("refuses values the schema does not allow, naming them", () => {
    expect(refused("unknownKey=1")).toMatch(/unknownKey/);
    expect(refused("replicas=0")).toMatch(/replicas/);
    expect(refused("logLevel=loud")).toMatch(/logLevel/);
    expect(refused("prometheusRule.for=soon")).toMatch(/for/);
    expect(refused("prometheusRule.extra=1")).toMatch(/extra/);
    expect(refused("watchNamespace=Not_A_Namespace")).toMatch(/watchNamespace/);
  });
});

describe.skipIf(helm === undefined)("the chart's alerts and dashboard", () => {
  it("renders the dashboard ConfigMap only when asked, labelled for Grafana's sidecar, with its JSON", () => {
    expect(byKind(render(), "ConfigMap")).toEqual([]);
    const objs = render([
      "dashboard.enabled=true",
      "dashboard.labels.team=vault",
      "dashboard.annotations.grafana_folder=Capstan",
    ]);
    const { configMap, json } = renderedDashboard(objs, "vault-operator");
    expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: "1", team: "vault" });
    expect(configMap.metadata.annotations).toEqual({ grafana_folder: "Capstan" });
    const model = JSON.parse(json) as { uid: string; templating: { list: { name: string; type: string }[] } };
    expect(model.uid).toBe("capstan-vault-operator");
    expect(model.templating.list.find((v) => v.name === "datasource")).toMatchObject({
      type: "datasource",
      query: "prometheus",
    });
    expect(dashboardDatasourceProblems(json)).toEqual([]);
  });

  it("has only queries and alerts that parse and use metrics the operator exports", async () => {
    const known = await operatorSeriesNames((registry) => new VaultOperatorMetrics(registry));
    const objs = render(["prometheusRule.enabled=true", "dashboard.enabled=true"]);
    const queries = [
      ...dashboardQueries(renderedDashboard(objs, "vault-operator").json),
      ...ruleExpressions(objs),
    ];
    expect(queries.length).toBeGreaterThan(20);
    expect(monitoringProblems(queries, known)).toEqual([]);
    const used = queries.map((q) => q.expr).join("\n");
    for (const m of known.filter((n) => n.startsWith("capstan_vault_"))) expect(used).toContain(m);
  });
});
