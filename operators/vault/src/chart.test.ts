// The Helm chart (charts/vault-operator): its CRD copy and the docs page's reference are what the shared tool
// (@capstan/cli) generates from the schema, and, where helm is installed, it lints clean and renders what is the
// operator's own: cluster-wide and namespace-scoped RBAC (least privilege), the reloader image, the PrometheusRule's
// alerts and the dashboard's queries on metrics the operator exports. What the capstan-operator library chart renders
// (the Deployment, leader election, secure or plain metrics, the ServiceMonitor, PodDisruptionBudget and dashboard
// ConfigMap, the common schema) is tested once for every chart in packages/cli/src/operator-library-chart.test.ts.
// The chart's CRD copy is checked here (chartCrdDrift), the docs reference by api/crd-yaml.test.ts (crdDrift);
// `npm run gen:crd` rewrites both.
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
import { crds } from "./api/crds.ts";
import { DEFAULT_RELOADER_IMAGE } from "./desired/objects.ts";
import { registrationRole } from "./desired/service-registration.ts";
import { VaultOperatorMetrics } from "./reconcile/metrics.ts";
import { DEFAULT_OPERATOR_IMAGE } from "./reconcile/restore.ts";

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

/** The ClusterRoles of the operator's own (cluster-wide, the default), without the secure metrics' two. */
const OWN_CLUSTER_ROLES = ["ops-ns-ops-vault-operator"];
/** What the operator may do to its operands, in either mode. */
const operatorGrants = [
  "/configmaps: create,get,list,patch,watch",
  "/persistentvolumeclaims: create,delete,get,list,patch,watch",
  "/pods: create,delete,get,list,patch,watch",
  // A snapshot's or restore's Job token and a restore's temporary keys are deleted once done.
  "/secrets: create,delete,get,list,patch,watch",
  "/serviceaccounts: create,get,list,patch,watch",
  "/services: create,get,list,patch,watch",
  // A VaultSnapshot's Job, the Job removing a deleted one's file, and a restore's Job.
  "batch/jobs: create,delete,get,list,watch",
  "events.k8s.io/events: create,patch",
  "policy/poddisruptionbudgets: create,get,list,patch,watch",
  // Each VaultCluster's ServiceAccount, Role and RoleBinding for Vault's service registration.
  "rbac.authorization.k8s.io/rolebindings: create,get,list,patch,watch",
  "rbac.authorization.k8s.io/roles: create,get,list,patch,watch",
  "vault.capstan.dev/vaultclusters/finalizers: update",
  "vault.capstan.dev/vaultclusters/status: get,patch,update",
  "vault.capstan.dev/vaultclusters: get,list,watch",
  "vault.capstan.dev/vaultrecoveries/finalizers: update",
  "vault.capstan.dev/vaultrecoveries/status: get,patch,update",
  "vault.capstan.dev/vaultrecoveries: get,list,patch,watch",
  "vault.capstan.dev/vaultsnapshots/finalizers: update",
  "vault.capstan.dev/vaultsnapshots/status: get,patch,update",
  // A schedule creates its snapshots and deletes them by retention; the deletionPolicy finalizer is a patch.
  "vault.capstan.dev/vaultsnapshots: create,delete,get,list,patch,watch",
  "vault.capstan.dev/vaultsnapshotschedules/finalizers: update",
  "vault.capstan.dev/vaultsnapshotschedules/status: get,patch,update",
  "vault.capstan.dev/vaultsnapshotschedules: get,list,watch",
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
    // The CRDs come with the keep annotation, and not at all with crds.enabled=false.
    const shipped = byKind(render(), "CustomResourceDefinition");
    expect(shipped.map((c) => c.metadata.name).sort()).toEqual([
      "vaultclusters.vault.capstan.dev",
      "vaultrecoveries.vault.capstan.dev",
      "vaultsnapshots.vault.capstan.dev",
      "vaultsnapshotschedules.vault.capstan.dev",
    ]);
    for (const crd of shipped) {
      expect(crd.metadata).toMatchObject({ annotations: { "helm.sh/resource-policy": "keep" } });
    }
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
    // Besides the secure metrics' two (the library's), the operator's own ClusterRoles, which alone remain without them.
    expect(namesOf(objs, "ClusterRole")).toEqual([
      ...OWN_CLUSTER_ROLES,
      "ops-ns-ops-vault-operator-metrics-auth",
      "ops-ns-ops-vault-operator-metrics-reader",
    ]);
    expect(namesOf(render(["metrics.secure=false"]), "ClusterRole")).toEqual(OWN_CLUSTER_ROLES);
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

  it("holds every verb it grants the pods' registration Role (Kubernetes refuses a Role granting more), in either mode", () => {
    const granted = registrationRole(
      {
        apiVersion: "vault.capstan.dev/v1alpha1",
        kind: "VaultCluster",
        metadata: { name: "demo", namespace: "apps", uid: "u" },
        spec: {} as never,
      },
      ["demo-0"],
    ).rules!;
    for (const [kind, objs] of [
      ["ClusterRole", render()],
      ["Role", render(["watchNamespace=apps"])],
    ] as const) {
      const held = one(objs, kind, "ops-ns-ops-vault-operator").rules ?? [];
      for (const g of granted) {
        for (const resource of g.resources ?? []) {
          for (const verb of g.verbs) {
            const holds = held.some(
              (r) =>
                (r.apiGroups ?? []).includes(g.apiGroups?.[0] ?? "") &&
                (r.resources ?? []).includes(resource) &&
                r.resourceNames === undefined &&
                r.verbs.includes(verb),
            );
            expect(holds, `${kind}: ${verb} ${resource}`).toBe(true);
          }
        }
      }
    }
  });

  it("passes the reloader image to the operator, named like the operator's (registry, repository, tag, digest)", () => {
    const reloader = (...sets: string[]) => envValue(operator(render(sets)), "VAULT_OPERATOR_RELOADER_IMAGE");
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

  it("passes the operator's own image to the snapshot and restore Jobs, the default the release pushes", () => {
    expect(envValue(operator(render()), "VAULT_OPERATOR_IMAGE")).toBe(chartImage(chartDir));
    expect(envValue(operator(render(["image.tag=1.2.3"])), "VAULT_OPERATOR_IMAGE")).toBe(
      "ghcr.io/capstan-dev/capstan/vault-operator:1.2.3",
    );
    expect(DEFAULT_OPERATOR_IMAGE).toBe(chartImage(chartDir));
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
      "VaultClusterNoFailureTolerance",
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
      "capstan_vault_autopilot_failure_tolerance",
      "capstan_vault_autopilot_voters",
      "controller_runtime_reconcile_errors_total",
    ]) {
      expect(metrics).toContain(m);
    }
    // Alert templates reach Prometheus as templates, not as Helm's.
    expect(JSON.stringify(rule)).toContain("{{ $labels.object_namespace }}/{{ $labels.object_name }}");
  });
});

describe.skipIf(helm === undefined)("the chart's alerts and dashboard", () => {
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
