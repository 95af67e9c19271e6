// The Helm chart (charts/etcd-operator): its CRD copy matches the schema, and, where helm is installed, it lints
// clean and renders the objects each mode needs. Refresh the CRD copy after `npm run gen:crd` with:
//   CAPSTAN_UPDATE_CHART_CRDS=1 npm exec -- vitest run src/chart.test.ts      (in operators/etcd)
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { renderCrds } from "./api/crd-yaml.ts";

const chartDir = fileURLToPath(new URL("../../../charts/etcd-operator/", import.meta.url));
const chartCrdDir = join(chartDir, "templates", "crds");

/** The chart's copy of a generated CRD: the same YAML behind `crds.enabled`, with the keep annotation. */
function chartCrd(file: string, yaml: string): string {
  const metadata = "\nmetadata:\n";
  const at = yaml.indexOf(metadata);
  if (at < 0 || yaml.includes(`${metadata}  annotations:`)) {
    throw new Error(`crds/${file}: expected a top-level "metadata:" without annotations`);
  }
  const end = at + metadata.length;
  const body = `${yaml.slice(0, end)}  annotations:\n    helm.sh/resource-policy: keep\n${yaml.slice(end)}`;
  return (
    `{{- /* Copy of operators/etcd/crds/${file} with helm.sh/resource-policy: keep; do not edit: see operators/etcd/src/chart.test.ts. */}}\n` +
    `{{- if .Values.crds.enabled }}\n${body}{{- end }}\n`
  );
}

describe("the chart's CRDs", () => {
  const crds = renderCrds();
  if (process.env.CAPSTAN_UPDATE_CHART_CRDS === "1") {
    for (const { file, yaml } of crds) writeFileSync(join(chartCrdDir, file), chartCrd(file, yaml));
  }

  it.each(crds)(
    "templates/crds/$file is the generated CRD with the keep annotation (CAPSTAN_UPDATE_CHART_CRDS=1 refreshes it)",
    ({ file, yaml }) => {
      expect(readFileSync(join(chartCrdDir, file), "utf8")).toBe(chartCrd(file, yaml));
    },
  );

  it("holds no CRD the operator does not generate", () => {
    expect(readdirSync(chartCrdDir).sort()).toEqual(crds.map((c) => c.file).sort());
  });
});

const helm = [process.env.CAPSTAN_HELM, join(homedir(), ".cache/capstan/helm-v3.22.0/bin/helm")].find(
  (p): p is string => p !== undefined && p !== "" && existsSync(p),
);
if (helm === undefined) {
  console.warn(
    "chart.test.ts: no helm binary (set CAPSTAN_HELM): skipping helm lint and helm template tests",
  );
}

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface EnvVar {
  name: string;
  value?: string;
}

/** Runs helm; throws with helm's stderr when it fails. */
function runHelm(args: string[]): string {
  return execFileSync(helm!, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** `helm template` of the chart as release "ops" in namespace "ops-ns" with --set values; the parsed objects. */
function render(...sets: string[]): K8sObject[] {
  return renderRelease("ops", ...sets);
}

/** `helm template` of the chart as `release` in namespace "ops-ns" with --set values. */
function renderRelease(release: string, ...sets: string[]): K8sObject[] {
  const out = runHelm([
    "template",
    release,
    chartDir,
    "--namespace",
    "ops-ns",
    ...sets.flatMap((s) => ["--set", s]),
  ]);
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** helm's error output for a render expected to fail. */
function renderError(...sets: string[]): string {
  try {
    render(...sets);
  } catch (err) {
    return String((err as { stderr?: unknown }).stderr ?? err);
  }
  throw new Error(`helm template ${sets.join(" ")} succeeded; expected it to fail`);
}

const kinds = (objs: K8sObject[]) => objs.map((o) => o.kind).sort();
const ofKind = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
const names = (objs: K8sObject[], kind: string) =>
  ofKind(objs, kind)
    .map((o) => o.metadata.name)
    .sort();

/** The one object of a kind and name (RBAC objects: with their rules). */
function named(objs: K8sObject[], kind: string, name: string): K8sObject & { rules: unknown[] } {
  const found = ofKind(objs, kind).find((o) => o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} among ${names(objs, kind).join(", ")}`);
  return found as K8sObject & { rules: unknown[] };
}

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
    expect(runHelm(["lint", "--strict", chartDir])).toMatch(/0 chart\(s\) failed/);
    expect(runHelm(["lint", "--strict", chartDir, "--set", "watchNamespace=apps"])).toMatch(
      /0 chart\(s\) failed/,
    );
  });

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
    for (const o of objs.filter((o) => o.kind !== "CustomResourceDefinition")) {
      expect(o.metadata.labels).toMatchObject({
        "app.kubernetes.io/name": "etcd-operator",
        "app.kubernetes.io/instance": "ops",
        "app.kubernetes.io/managed-by": "Helm",
        "helm.sh/chart": "etcd-operator-0.1.0",
      });
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
    expect(monitor.apiVersion).toBe("monitoring.capstan.dev/v1alpha1");
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
