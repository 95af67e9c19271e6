// The Helm chart (charts/etcd-operator): its CRD copy is what `capstan crd` writes, and, where helm is installed,
// it lints clean, renders pods that pass Pod Security "restricted", RBAC that covers EtcdCluster, and the objects
// each mode needs. The checks any operator's chart needs come from @capstan/cli/chart; this file adds etcd's.
import { fileURLToPath } from "node:url";
import { formatDrift } from "@capstan/cli";
import {
  chartCrdDrift,
  crdPermissions,
  dashboardDatasourceProblems,
  dashboardQueries,
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
} from "@capstan/cli/chart";
import { describe, expect, it } from "vitest";
import { crds } from "./api/crds.ts";
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

interface EnvVar {
  name: string;
  value?: string;
}

/** `helm template` of the chart as release "ops" in namespace "ops-ns" with --set values; the parsed objects. */
const render = (...set: string[]): K8sObject[] => helmTemplate(helm!, chartDir, { set });
/** `helm template` of the chart as `release` in namespace "ops-ns". */
const renderRelease = (release: string): K8sObject[] => helmTemplate(helm!, chartDir, { release });
/** helm's error output for a render expected to fail. */
const renderError = (...set: string[]): string => helmTemplateError(helm!, chartDir, { set });

const kinds = (objs: K8sObject[]) => objs.map((o) => o.kind).sort();
const names = namesOf;

/** The one object of a kind and name (RBAC objects: with their rules). */
const named = (objs: K8sObject[], kind: string, name: string) =>
  namedObject(objs, kind, name) as K8sObject & { rules: unknown[] };

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

/** The one ServiceMonitor. */
function monitorOf(objs: K8sObject[]) {
  const [monitor] = ofKind(objs, "ServiceMonitor");
  if (monitor === undefined) throw new Error("no ServiceMonitor rendered");
  return monitor as K8sObject & {
    spec: { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] };
  };
}

function operatorContainer(objs: K8sObject[]) {
  const [deploy] = ofKind(objs, "Deployment");
  const spec = (deploy as unknown as { spec: { replicas: number; template: { spec: PodSpec } } }).spec;
  const [container] = spec.template.spec.containers;
  return { replicas: spec.replicas, pod: spec.template.spec, container: container! };
}

interface PodSpec {
  securityContext: Record<string, unknown>;
  serviceAccountName: string;
  volumes?: unknown[];
  containers: {
    image: string;
    env: EnvVar[];
    volumeMounts?: unknown[];
    securityContext: Record<string, unknown>;
    livenessProbe: { httpGet: { path: string; port: string } };
    readinessProbe: { httpGet: { path: string; port: string } };
  }[];
}

const env = (container: { env: EnvVar[] }, name: string) => container.env.find((e) => e.name === name);

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
      "Deployment",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    // The only Role is the leader-election one, in the release namespace, on Leases alone.
    const [role] = ofKind(objs, "Role") as (K8sObject & { rules: { resources: string[] }[] })[];
    expect(role!.metadata.namespace).toBe("ops-ns");
    expect(role!.rules.flatMap((r) => r.resources)).toEqual(["leases", "leases"]);
    const clusterRole = named(objs, "ClusterRole", "ops-ns-ops-etcd-operator") as K8sObject & {
      rules: { resources: string[] }[];
    };
    expect(clusterRole.rules.flatMap((r) => r.resources)).toContain("etcdclusters");

    const { replicas, pod, container } = operatorContainer(objs);
    expect(replicas).toBe(1);
    expect(container.image).toBe("capstan.local/etcd-operator:0.1.0");
    expect(env(container, "WATCH_NAMESPACE")).toBeUndefined();
    expect(env(container, "LEADER_ELECT")?.value).toBe("true");
    expect(container.env.map((e) => e.name)).toEqual(expect.arrayContaining(["POD_NAME", "POD_NAMESPACE"]));
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
    // What Pod Security "restricted" asks for.
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });

    const [crd] = ofKind(objs, "CustomResourceDefinition");
    expect(crd!.metadata).toMatchObject({
      name: "etcdclusters.etcd.capstan.dev",
      annotations: { "helm.sh/resource-policy": "keep" },
    });
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
    expect(env(operatorContainer(objs).container, "WATCH_NAMESPACE")?.value).toBe("apps");
  });

  it("renders two replicas with leader election and its Lease Role", () => {
    const objs = render("replicas=2");
    const { replicas, container } = operatorContainer(objs);
    expect(replicas).toBe(2);
    expect(env(container, "LEADER_ELECT")?.value).toBe("true");
    const leases = ofKind(objs, "Role").filter((r) => JSON.stringify(r).includes('"leases"'));
    expect(leases.map((r) => r.metadata.namespace)).toEqual(["ops-ns"]);
  });

  it("names the Lease after the release, so two releases in one namespace do not fight over it", () => {
    const lease = (release: string) => {
      const objs = renderRelease(release);
      const name = env(operatorContainer(objs).container, "LEADER_ELECTION_NAME")?.value;
      const role = ofKind(objs, "Role").find((r) => JSON.stringify(r).includes('"leases"'));
      expect(JSON.stringify(role)).toContain(`"resourceNames":["${name}"]`);
      return name;
    };
    expect(lease("ops")).toBe("ops-etcd-operator-leader");
    expect(lease("other")).toBe("other-etcd-operator-leader");
  });

  it("renders an optional PodDisruptionBudget and priorityClassName for the operator", () => {
    expect(ofKind(render(), "PodDisruptionBudget")).toEqual([]);
    const objs = render("podDisruptionBudget.enabled=true", "priorityClassName=system-cluster-critical");
    const [pdb] = ofKind(objs, "PodDisruptionBudget") as (K8sObject & { spec: Record<string, unknown> })[];
    expect(pdb!.spec).toMatchObject({
      minAvailable: 1,
      selector: { matchLabels: { "app.kubernetes.io/instance": "ops" } },
    });
    const deployment = ofKind(objs, "Deployment")[0] as K8sObject & {
      spec: { template: { spec: { priorityClassName?: string } } };
    };
    expect(deployment.spec.template.spec.priorityClassName).toBe("system-cluster-critical");
  });

  it("renders no Lease Role without leader election, and refuses two replicas without it", () => {
    const objs = render("leaderElection.enabled=false");
    expect(ofKind(objs, "Role")).toEqual([]);
    expect(env(operatorContainer(objs).container, "LEADER_ELECT")?.value).toBe("false");
    expect(renderError("replicas=2", "leaderElection.enabled=false")).toMatch(
      /more than one operator replica needs leaderElection.enabled=true/,
    );
  });

  it("serves secure metrics by default: the operator may review tokens, scrapers get a reader role", () => {
    const objs = render();
    expect(env(operatorContainer(objs).container, "METRICS_SECURE")?.value).toBe("true");
    expect(env(operatorContainer(objs).container, "METRICS_CERT_DIR")).toBeUndefined();
    const auth = named(objs, "ClusterRole", "ops-ns-ops-etcd-operator-metrics-auth");
    expect(auth.rules).toEqual([
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ]);
    expect(named(objs, "ClusterRoleBinding", "ops-ns-ops-etcd-operator-metrics-auth")).toMatchObject({
      roleRef: { kind: "ClusterRole", name: "ops-ns-ops-etcd-operator-metrics-auth" },
      subjects: [{ kind: "ServiceAccount", name: "ops-etcd-operator", namespace: "ops-ns" }],
    });
    expect(named(objs, "ClusterRole", "ops-ns-ops-etcd-operator-metrics-reader").rules).toEqual([
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ]);
  });

  it("mounts metrics.certSecret as the metrics server's certificate directory", () => {
    const objs = render("metrics.certSecret=metrics-tls");
    const { pod, container } = operatorContainer(objs);
    expect(env(container, "METRICS_CERT_DIR")?.value).toBe("/etc/capstan/metrics-certs");
    expect(container.volumeMounts).toEqual([
      { name: "metrics-certs", mountPath: "/etc/capstan/metrics-certs", readOnly: true },
    ]);
    expect(pod.volumes).toEqual([{ name: "metrics-certs", secret: { secretName: "metrics-tls" } }]);
  });

  it("serves plain HTTP metrics with metrics.secure=false, with no review permissions", () => {
    const objs = render("metrics.secure=false", "metrics.certSecret=ignored");
    const { pod, container } = operatorContainer(objs);
    expect(env(container, "METRICS_SECURE")?.value).toBe("false");
    expect(env(container, "METRICS_CERT_DIR")).toBeUndefined();
    expect(pod.volumes).toBeUndefined();
    expect(names(objs, "ClusterRole")).toEqual(["ops-ns-ops-etcd-operator"]);
    expect(JSON.stringify(objs)).not.toMatch(/tokenreviews|subjectaccessreviews|nonResourceURLs/);
  });

  it("renders a ServiceMonitor scraping HTTPS with Prometheus' token, skipping the self-signed certificate", () => {
    expect(ofKind(render(), "ServiceMonitor")).toEqual([]);
    const objs = render("serviceMonitor.enabled=true", "serviceMonitor.interval=15s");
    expect(monitorOf(objs).spec.endpoints).toEqual([
      {
        port: "metrics",
        path: "/metrics",
        interval: "15s",
        scheme: "https",
        bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
        tlsConfig: { insecureSkipVerify: true },
      },
    ]);
  });

  it("renders a ServiceMonitor verifying metrics.certSecret's CA, with a token from a Secret", () => {
    const objs = render(
      "serviceMonitor.enabled=true",
      "metrics.certSecret=metrics-tls",
      "serviceMonitor.bearerTokenSecret.name=prometheus-token",
    );
    expect(monitorOf(objs).spec.endpoints).toEqual([
      {
        port: "metrics",
        path: "/metrics",
        interval: "30s",
        scheme: "https",
        authorization: { type: "Bearer", credentials: { name: "prometheus-token", key: "token" } },
        tlsConfig: {
          ca: { secret: { name: "metrics-tls", key: "ca.crt" } },
          serverName: "ops-etcd-operator-metrics.ops-ns.svc",
        },
      },
    ]);
    // The name the certificate must carry is the metrics Service's.
    expect(names(objs, "Service")).toEqual(["ops-etcd-operator-metrics"]);
  });

  it("renders a ServiceMonitor scraping plain HTTP with metrics.secure=false", () => {
    const objs = render("serviceMonitor.enabled=true", "metrics.secure=false");
    expect(monitorOf(objs).spec.endpoints).toEqual([
      { port: "metrics", path: "/metrics", interval: "30s", scheme: "http" },
    ]);
  });

  it("renders a ServiceMonitor that selects the metrics Service", () => {
    const objs = render("serviceMonitor.enabled=true", "serviceMonitor.interval=15s");
    const monitor = monitorOf(objs);
    expect(monitor.apiVersion).toBe("monitoring.coreos.com/v1");
    const [service] = ofKind(objs, "Service") as (K8sObject & {
      spec: { ports: { name: string; port: number }[] };
    })[];
    expect(service!.spec.ports).toMatchObject([{ name: "metrics", port: 8080 }]);
    expect(service!.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
  });

  it("leaves the CRD out with crds.enabled=false", () => {
    expect(ofKind(render("crds.enabled=false"), "CustomResourceDefinition")).toEqual([]);
  });

  it("rejects values the schema does not allow, naming them", () => {
    expect(renderError("replicas=x")).toMatch(/replicas.*(integer|number)/i);
    expect(renderError("replicas=0")).toMatch(/replicas.*(minimum|greater)/i);
    expect(renderError("unknownKey=1")).toMatch(/unknownKey/);
    expect(renderError("image.pullPolicy=Sometimes")).toMatch(/pullPolicy/);
    expect(renderError("logLevel=loud")).toMatch(/logLevel/);
    expect(renderError("metrics.secure=maybe")).toMatch(/secure/);
    expect(renderError("metrics.certSecret=Not_A_Name")).toMatch(/certSecret/);
    expect(renderError("metrics.port=8443")).toMatch(/port/);
  });
});

describe.skipIf(helm === undefined)("the chart's alerts and dashboard", () => {
  const ALERTS = [
    "EtcdClusterQuorumLost",
    "EtcdClusterNoLeader",
    "EtcdClusterMembersUnhealthy",
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

  it("renders the dashboard ConfigMap only when asked, labelled for Grafana's sidecar, with its JSON", () => {
    expect(ofKind(render(), "ConfigMap")).toEqual([]);
    const objs = render(
      "dashboard.enabled=true",
      "dashboard.labels.team=db",
      "dashboard.annotations.grafana_folder=Capstan",
    );
    const { configMap, json } = renderedDashboard(objs, "etcd-operator");
    expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: "1", team: "db" });
    expect(configMap.metadata.annotations).toEqual({ grafana_folder: "Capstan" });
    const model = JSON.parse(json) as {
      uid: string;
      templating: { list: { name: string; type: string; query?: unknown }[] };
    };
    expect(model.uid).toBe("capstan-etcd-operator");
    const datasource = model.templating.list.find((v) => v.name === "datasource");
    expect(datasource).toMatchObject({ type: "datasource", query: "prometheus" });
    // Every panel, target and variable reads the data source variable.
    expect(dashboardDatasourceProblems(json)).toEqual([]);
  });

  it("has only queries and alerts that parse and use metrics the operator exports", async () => {
    const known = await operatorSeriesNames((registry) => new EtcdOperatorMetrics(registry));
    const objs = render("prometheusRule.enabled=true", "dashboard.enabled=true");
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
