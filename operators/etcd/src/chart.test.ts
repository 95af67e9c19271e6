// The Helm chart (charts/etcd-operator): its CRD copy is what `capstan crd` writes, and, where helm is installed,
// it lints clean, renders pods that pass Pod Security "restricted", RBAC that covers EtcdCluster, and the objects
// each mode needs, and alerts and dashboard queries on metrics the operator exports. The checks any operator's chart
// needs come from @capstan/cli/chart, what the capstan-operator library chart renders is tested once for every chart
// in packages/cli/src/operator-library-chart.test.ts; this file adds etcd's.
import { fileURLToPath } from "node:url";
import { formatDrift } from "@capstan/cli";
import {
  chartCrdDrift,
  chartImage,
  crdPermissions,
  dashboardQueries,
  deploymentPodSpec,
  envValue,
  findHelm,
  helmLint,
  helmTemplate,
  helmTemplateError,
  type K8sObject,
  missingPermissions,
  missingStandardLabels,
  monitoringProblems,
  named as namedObject,
  namesOf,
  ofKind,
  operatorSeriesNames,
  podSpecs,
  renderedDashboard,
  restrictedViolations,
  ruleExpressions,
  single,
} from "@capstan/cli/chart";
import { describe, expect, it } from "vitest";
import { crds } from "./api/crds.ts";
import { podSelectorLabels } from "./desired/network-policy.ts";
import { DEFAULT_BACKUP_IMAGE } from "./reconcile/cluster/controller.ts";
import { EtcdOperatorMetrics } from "./reconcile/metrics.ts";

const packageDir = fileURLToPath(new URL("../", import.meta.url));
const chartDir = fileURLToPath(new URL("../../../charts/etcd-operator/", import.meta.url));

describe("the chart's CRDs", () => {
  it("are the generated CRDs with the keep annotation, and no other (npm run gen:crd rewrites them)", async () => {
    const drift = await chartCrdDrift(packageDir);
    expect(drift.map((d) => formatDrift(d, packageDir))).toEqual([]);
  });
});

const helm = findHelm();
if (helm === undefined) {
  console.warn(
    "chart.test.ts: no helm binary (set CAPSTAN_HELM): skipping helm lint and helm template tests",
  );
}

/** `helm template` of the chart as release "ops" in namespace "ops-ns" with --set values; the parsed objects. */
const render = (...set: string[]): K8sObject[] => helmTemplate(helm!, chartDir, { set });

const kinds = (objs: K8sObject[]) => objs.map((o) => o.kind).sort();
const names = namesOf;

/** Every mode the chart has, as --set values: each must render restricted pods and RBAC that covers the CRDs. */
const MODES: string[][] = [
  [],
  ["watchNamespace=apps"],
  ["replicas=2"],
  ["leaderElection.enabled=false"],
  ["metrics.secure=false"],
  ["metrics.certSecret=metrics-tls", "serviceMonitor.enabled=true"],
  ["podDisruptionBudget.enabled=true", "priorityClassName=system-cluster-critical"],
];

describe.skipIf(helm === undefined)("the chart with helm", () => {
  it("passes helm lint --strict, cluster-wide and namespaced", () => {
    expect(helmLint(helm!, chartDir)).toMatch(/0 chart\(s\) failed/);
    expect(helmLint(helm!, chartDir, ["watchNamespace=apps"])).toMatch(/0 chart\(s\) failed/);
  });

  it.each(MODES.map((set) => ({ set, mode: set.join(" ") || "(defaults)" })))(
    "renders pods that pass Pod Security restricted, standard labels and RBAC for EtcdCluster: $mode",
    ({ set }) => {
      const objs = render(...set);
      const pods = podSpecs(objs);
      expect(pods.map((p) => p.owner)).toEqual(["Deployment ops-etcd-operator"]);
      expect(pods.flatMap((p) => restrictedViolations(p.owner, p.spec))).toEqual([]);
      expect(missingPermissions(objs, crdPermissions(crds))).toEqual([]);
      expect(
        missingStandardLabels(objs, { name: "etcd-operator", instance: "ops", chart: "etcd-operator-0.1.0" }),
      ).toEqual([]);
    },
  );

  it("renders the cluster-wide operator by default", () => {
    const objs = render();
    expect(kinds(objs)).toEqual([
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "Deployment",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    const clusterRole = namedObject(objs, "ClusterRole", "ops-ns-ops-etcd-operator") as K8sObject & {
      rules: { resources: string[] }[];
    };
    expect(clusterRole.rules.flatMap((r) => r.resources)).toContain("etcdclusters");
    // Without secure metrics (whose two ClusterRoles the library renders), the operator's own is the only one.
    expect(names(render("metrics.secure=false"), "ClusterRole")).toEqual(["ops-ns-ops-etcd-operator"]);

    const crdObjects = ofKind(objs, "CustomResourceDefinition");
    expect(crdObjects.map((c) => c.metadata.name).sort()).toEqual([
      "etcdbackups.etcd.capstan.dev",
      "etcdbackupschedules.etcd.capstan.dev",
      "etcdclusters.etcd.capstan.dev",
      "etcdrestores.etcd.capstan.dev",
    ]);
    for (const crd of crdObjects) {
      expect(crd.metadata).toMatchObject({ annotations: { "helm.sh/resource-policy": "keep" } });
    }
  });

  it("renders a Role and RoleBinding in the watched namespace in namespaced mode", () => {
    const objs = render("watchNamespace=apps");
    // The only cluster-wide grants are the secure metrics' (reviews are cluster-scoped).
    expect(names(objs, "ClusterRole")).toEqual([
      "ops-ns-ops-etcd-operator-metrics-auth",
      "ops-ns-ops-etcd-operator-metrics-reader",
    ]);
    expect(names(objs, "ClusterRoleBinding")).toEqual(["ops-ns-ops-etcd-operator-metrics-auth"]);
    expect(ofKind(render("watchNamespace=apps", "metrics.secure=false"), "ClusterRole")).toEqual([]);
    const roles = ofKind(objs, "Role").filter((r) => r.metadata.namespace === "apps");
    const bindings = ofKind(objs, "RoleBinding").filter((r) => r.metadata.namespace === "apps");
    expect(roles).toHaveLength(1);
    expect(bindings).toHaveLength(1);
    expect(bindings[0]).toMatchObject({
      roleRef: { kind: "Role", name: roles[0]!.metadata.name },
      subjects: [{ kind: "ServiceAccount", name: "ops-etcd-operator", namespace: "ops-ns" }],
    });
  });

  it("leaves the CRD out with crds.enabled=false", () => {
    expect(ofKind(render("crds.enabled=false"), "CustomResourceDefinition")).toEqual([]);
  });

  it("tells the operator its pods' selector labels, which the clusters' NetworkPolicies let in (nameOverride too)", () => {
    for (const set of [[], ["nameOverride=etcd-ops"]]) {
      const objects = render(...set);
      const container = deploymentPodSpec(objects).containers[0]!;
      const labels = podSelectorLabels(envValue(container, "POD_SELECTOR_LABELS"));
      const deployment = single(objects, "Deployment").spec as { selector: { matchLabels: object } };
      expect(labels).toEqual(deployment.selector.matchLabels);
    }
    expect(
      podSelectorLabels(
        envValue(deploymentPodSpec(render("nameOverride=etcd-ops")).containers[0]!, "POD_SELECTOR_LABELS"),
      ),
    ).toMatchObject({
      "app.kubernetes.io/name": "etcd-ops",
    });
  });
});

describe.skipIf(helm === undefined)("the chart's alerts and dashboard", () => {
  const ALERTS = [
    "EtcdClusterQuorumLost",
    "EtcdClusterNoLeader",
    "EtcdClusterMembersUnhealthy",
    "EtcdBackupScheduleStale",
    "EtcdCertificateExpiringSoon",
    "EtcdCertificateExpired",
    "EtcdOperatorReconcileErrors",
    "EtcdOperatorLeaderElectionFlapping",
    "EtcdOperatorDown",
  ];

  it("renders the PrometheusRule only when asked, every alert scoped to the release's scrape job", () => {
    expect(ofKind(render(), "PrometheusRule")).toEqual([]);
    const objs = render(
      "prometheusRule.enabled=true",
      "prometheusRule.for=10m",
      "prometheusRule.alertLabels.team=db",
    );
    const [rule] = ofKind(objs, "PrometheusRule") as (K8sObject & {
      spec: { groups: { rules: Record<string, unknown>[] }[] };
    })[];
    expect(rule!.apiVersion).toBe("monitoring.coreos.com/v1");
    const alerts = rule!.spec.groups.flatMap((g) => g.rules);
    expect(alerts.map((a) => a.alert)).toEqual(ALERTS);
    for (const a of alerts) {
      expect(a.for, String(a.alert)).toBe("10m");
      expect(a.labels, String(a.alert)).toMatchObject({ team: "db" });
      expect(String(a.expr), String(a.alert)).toContain(
        'job="ops-etcd-operator-metrics", namespace="ops-ns"',
      );
      expect(Object.keys(a.annotations as object), String(a.alert)).toEqual(["summary", "description"]);
    }
    // Alert templates reach Prometheus as templates, not as Helm's.
    expect(JSON.stringify(rule)).toContain("{{ $labels.object_namespace }}/{{ $labels.object_name }}");
  });

  it("adds the stale-backup alert only when asked, with its threshold", () => {
    const alertsOf = (...set: string[]) =>
      (
        ofKind(render("prometheusRule.enabled=true", ...set), "PrometheusRule") as (K8sObject & {
          spec: { groups: { rules: Record<string, unknown>[] }[] };
        })[]
      ).flatMap((r) => r.spec.groups.flatMap((g) => g.rules));
    expect(alertsOf().map((a) => a.alert)).not.toContain("EtcdBackupStale");
    // Without the PrometheusRule there is no alert at all.
    expect(ofKind(render("backup.staleAlert.enabled=true"), "PrometheusRule")).toEqual([]);
    const stale = alertsOf("backup.staleAlert.enabled=true", "backup.staleAlert.thresholdSeconds=7200").find(
      (a) => a.alert === "EtcdBackupStale",
    );
    expect(stale?.expr).toBe(
      'time() - max by (object_namespace, object_name) (capstan_etcd_backup_last_success_timestamp_seconds{job="ops-etcd-operator-metrics", namespace="ops-ns"}) > 7200',
    );
    expect(JSON.stringify(stale)).toContain("{{ $labels.object_namespace }}/{{ $labels.object_name }}");
  });

  it("alerts on a stale backup schedule whenever the PrometheusRule is on", () => {
    const rules = (
      ofKind(render("prometheusRule.enabled=true"), "PrometheusRule") as (K8sObject & {
        spec: { groups: { rules: Record<string, unknown>[] }[] };
      })[]
    ).flatMap((r) => r.spec.groups.flatMap((g) => g.rules));
    expect(rules.find((a) => a.alert === "EtcdBackupScheduleStale")?.expr).toBe(
      'max by (object_namespace, object_name) (capstan_etcd_backup_schedule_stale{job="ops-etcd-operator-metrics", namespace="ops-ns"}) == 1',
    );
  });

  it("alerts on certificates the operator warns about (their warning window started, not yet expired) and on expired ones", () => {
    const rulesOf = (...set: string[]) =>
      (
        ofKind(render("prometheusRule.enabled=true", ...set), "PrometheusRule") as (K8sObject & {
          spec: { groups: { rules: Record<string, unknown>[] }[] };
        })[]
      ).flatMap((r) => r.spec.groups.flatMap((g) => g.rules));
    const sel = 'job="ops-etcd-operator-metrics", namespace="ops-ns"';
    const by = "min by (object_namespace, object_name, secret, key)";
    const soon = rulesOf().find((a) => a.alert === "EtcdCertificateExpiringSoon");
    // The operator's own judgement (the warning window's start), and not one already expired.
    const on = "on (object_namespace, object_name, secret, key)";
    expect(soon?.expr).toBe(
      `(${by} (capstan_etcd_certificate_expiry_timestamp_seconds{${sel}}) - time() > 0) and ${on} (${by} (capstan_etcd_certificate_warning_timestamp_seconds{${sel}}) <= time())`,
    );
    expect(soon?.labels).toMatchObject({ severity: "warning" });
    const expired = rulesOf().find((a) => a.alert === "EtcdCertificateExpired");
    expect(expired?.expr).toBe(
      `${by} (capstan_etcd_certificate_expiry_timestamp_seconds{${sel}}) - time() <= 0`,
    );
    expect(expired?.labels).toMatchObject({ severity: "critical" });
    expect(JSON.stringify(soon)).toContain("{{ $labels.secret }}");
  });

  it("passes the operator's own image to the backup Jobs unless backup.image names another", () => {
    const envOf = (...set: string[]) => {
      const [pod] = podSpecs(render(...set));
      const env = (pod?.spec.containers?.[0] as { env?: { name: string; value?: string }[] } | undefined)
        ?.env;
      return env?.find((e) => e.name === "ETCD_OPERATOR_BACKUP_IMAGE")?.value;
    };
    const digest = `sha256:${"c".repeat(64)}`;
    expect(envOf()).toBe(chartImage(chartDir));
    expect(envOf("image.tag=1.2.3")).toBe("ghcr.io/capstan-dev/capstan/etcd-operator:1.2.3");
    // The operator's own image follows global.imageRegistry and image.digest.
    expect(envOf("global.imageRegistry=mirror.example", `image.digest=${digest}`)).toBe(
      `mirror.example/capstan-dev/capstan/etcd-operator@${digest}`,
    );
    // Another image, named like the operator's: its tag defaults to the appVersion; a mirror and a digest apply.
    expect(envOf("backup.image.registry=r.example", "backup.image.repository=ops/etcd-operator")).toBe(
      "r.example/ops/etcd-operator:0.1.0",
    );
    expect(envOf("backup.image.repository=ops/etcd-operator", "backup.image.tag=9.0")).toBe(
      "ops/etcd-operator:9.0",
    );
    expect(
      envOf(
        "backup.image.repository=ops/etcd-operator",
        `backup.image.digest=${digest}`,
        "global.imageRegistry=m.example",
      ),
    ).toBe(`m.example/ops/etcd-operator@${digest}`);
    // The one-string form of earlier charts is still taken, as it is ("" for the operator's own image).
    expect(envOf("backup.image=mirror.example/etcd-operator:9")).toBe("mirror.example/etcd-operator:9");
    expect(envOf("backup.image=")).toBe(chartImage(chartDir));
    expect(helmTemplateError(helm!, chartDir, { set: ["backup.image.digest=latest"] })).toMatch(/backup/);
    expect(helmTemplateError(helm!, chartDir, { set: ["backup.image.name=x"] })).toMatch(/name/);
  });

  it("the operator's own default backup image is the chart's default image (the one each release pushes)", () => {
    expect(DEFAULT_BACKUP_IMAGE).toBe(chartImage(chartDir));
  });

  it("has only queries and alerts that parse and use metrics the operator exports", async () => {
    const known = await operatorSeriesNames((registry) => new EtcdOperatorMetrics(registry));
    const objs = render(
      "prometheusRule.enabled=true",
      "backup.staleAlert.enabled=true",
      "dashboard.enabled=true",
    );
    const queries = [
      ...dashboardQueries(renderedDashboard(objs, "etcd-operator").json),
      ...ruleExpressions(objs),
    ];
    expect(queries.length).toBeGreaterThan(20);
    expect(monitoringProblems(queries, known)).toEqual([]);
    // Each of the operator's own gauges is on the dashboard.
    const used = queries.map((q) => q.expr).join("\n");
    for (const m of known.filter((n) => n.startsWith("capstan_etcd_"))) expect(used).toContain(m);
  });
});
