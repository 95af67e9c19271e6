// The capstan-operator library chart, rendered through each operator chart that uses it: the values a Helm user
// expects of an operator chart (cert-manager's set) reach the Deployment, the schema refuses what they must not
// hold, and every chart is built on the library (no template of its own for what the library renders). What the
// library renders is tested here once, against every chart (the Deployment, metrics Service and RBAC, ServiceMonitor,
// PodDisruptionBudget, dashboard ConfigMap, leader election, the common schema, the ServiceMonitor and PrometheusRule
// only where the cluster serves their API, with a NOTES line when one was skipped); each operator's chart.test.ts
// keeps what is its own (CRDs, RBAC rules, own values, alerts, dashboard queries).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  dashboardDatasourceProblems,
  deploymentPodSpec,
  findHelm,
  grantList,
  helmNotes,
  helmTemplate,
  helmTemplateError,
  type K8sObject,
  named,
  namesOf,
  ofKind,
  type RuleLike,
  renderedDashboard,
} from "./chart.ts";
import { usesOperatorLibrary } from "./crd-files.ts";

const charts = resolve(dirname(fileURLToPath(import.meta.url)), "../../../charts");
const operatorCharts = readdirSync(charts).filter((c) => c.endsWith("-operator") && c !== "capstan-operator");
const helm = findHelm();

interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: Record<string, unknown>;
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string }[];
  securityContext?: Record<string, unknown>;
  priorityClassName?: string;
  imagePullSecrets?: { name: string }[];
  topologySpreadConstraints?: unknown[];
  terminationGracePeriodSeconds?: number;
}
interface ProbedContainer {
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
}
const pod = (objs: K8sObject[], chart: string) =>
  (named(objs, "Deployment", `ops-${chart}`) as unknown as { spec: { template: { spec: PodSpec } } }).spec
    .template.spec;

describe("charts built on the capstan-operator library chart", () => {
  it("are the three operator charts, each depending on the library and linking it", () => {
    expect(operatorCharts.sort()).toEqual(["etcd-operator", "prometheus-operator", "vault-operator"]);
    for (const chart of operatorCharts) {
      expect(readFileSync(join(charts, chart, "Chart.yaml"), "utf8"), chart).toContain(
        "repository: file://../capstan-operator",
      );
      expect(readFileSync(join(charts, chart, "charts/capstan-operator/Chart.yaml"), "utf8")).toContain(
        "type: library",
      );
    }
  });

  it("document every value of their schema in values.yaml (and capstan crd writes the schema only for them)", () => {
    for (const chart of operatorCharts) {
      const dir = join(charts, chart);
      expect(usesOperatorLibrary(dir), chart).toBe(true);
      const schema = JSON.parse(readFileSync(join(dir, "values.schema.json"), "utf8")) as {
        properties: Record<string, unknown>;
      };
      const values = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as Record<string, unknown>;
      const documented = Object.keys(values).sort();
      const schemaKeys = Object.keys(schema.properties).filter((k) => k !== "capstan-operator");
      expect(documented, `${chart}: values.yaml keys vs values.schema.json`).toEqual(schemaKeys.sort());
    }
    const fixtureChart = fileURLToPath(new URL("../testdata/widget-operator/chart", import.meta.url));
    expect(usesOperatorLibrary(fixtureChart)).toBe(false);
  });

  it("gate the ServiceMonitor and PrometheusRule on the library's one API check, and say in NOTES when it skips one", () => {
    const library = join(charts, "capstan-operator", "templates");
    const checks = readdirSync(library).filter((f) =>
      readFileSync(join(library, f), "utf8").includes(".Capabilities.APIVersions.Has"),
    );
    expect(checks).toEqual(["_helpers.tpl"]);
    expect(readFileSync(join(library, "_objects.tpl"), "utf8")).toContain(
      '{{- if include "capstan-operator.monitoringEnabled" (dict "ctx" . "kind" "ServiceMonitor") }}',
    );
    for (const chart of operatorCharts) {
      const templates = join(charts, chart, "templates");
      for (const f of readdirSync(templates, { recursive: true, encoding: "utf8" })) {
        if (!f.endsWith(".yaml") && !f.endsWith(".txt") && !f.endsWith(".tpl")) continue;
        expect(readFileSync(join(templates, f), "utf8"), `${chart}/templates/${f}`).not.toContain(
          "Capabilities.APIVersions",
        );
      }
      expect(readFileSync(join(templates, "prometheusrule.yaml"), "utf8"), chart).toContain(
        '{{- if include "capstan-operator.monitoringEnabled" (dict "ctx" . "kind" "PrometheusRule") }}',
      );
      expect(readFileSync(join(templates, "NOTES.txt"), "utf8"), chart).toContain(
        '{{- include "capstan-operator.monitoringNotes" . }}',
      );
    }
  });

  describe.skipIf(helm === undefined).each(operatorCharts)("%s", (chart) => {
    const dir = join(charts, chart);
    /** Release "ops"'s objects are named `ops-<chart>`; its RBAC objects `ops-ns-ops-<chart>` (namespace first). */
    const full = `ops-${chart}`;
    const rbac = `ops-ns-${full}`;
    /** `helm template` as release "ops" (or `release`) in namespace "ops-ns" with --set values, parsed. */
    const render = (set: string[] = [], release = "ops") =>
      helmTemplate(helm!, dir, { set, release }) as (K8sObject & { rules?: RuleLike[] })[];
    const refused = (...set: string[]) => helmTemplateError(helm!, dir, { set });
    const operator = (objs: K8sObject[]) => deploymentPodSpec(objs).containers[0]!;
    /** The container's variable `name` (undefined when it has none: not even one from a reference). */
    const envVar = (objs: K8sObject[], name: string) => operator(objs).env.find((e) => e.name === name);
    const monitor = (objs: K8sObject[]) =>
      named(objs, "ServiceMonitor", full) as K8sObject & {
        spec: { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] };
      };
    /** The leader-election Roles (those on Leases). */
    const leaseRoles = (objs: (K8sObject & { rules?: RuleLike[] })[]) =>
      (ofKind(objs, "Role") as (K8sObject & { rules?: RuleLike[] })[]).filter((r) =>
        (r.rules ?? []).some((rule) => rule.resources?.includes("leases")),
      );

    it("renders the defaults: restricted contexts without a fixed uid, a grace period past the shutdown", () => {
      const spec = pod(helmTemplate(helm!, dir), chart);
      expect(spec.securityContext).toEqual({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(spec.containers[0]?.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      });
      expect(spec.terminationGracePeriodSeconds).toBe(45);
      expect(spec.containers[0]?.image).toBe(`ghcr.io/capstan-dev/capstan/${chart}:0.1.0`);
      expect(spec.containers[0]?.args).toBeUndefined();
    });

    it("sizes Node.js's heap from the memory limit (NODE_OPTIONS), and requests no more memory than the limit", () => {
      const { resources } = parse(readFileSync(join(dir, "values.yaml"), "utf8")) as {
        resources: { requests: { memory: string }; limits: { memory: string } };
      };
      const mib = (q: string) => {
        const m = /^(\d+)(Mi|Gi)$/.exec(q);
        if (!m) throw new Error(`${chart}: memory ${q} not in Mi or Gi`);
        return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1);
      };
      expect(mib(resources.requests.memory)).toBeLessThanOrEqual(mib(resources.limits.memory));
      const nodeOptions = (objs: K8sObject[]) => envVar(objs, "NODE_OPTIONS")?.value;
      expect(nodeOptions(render())).toBe(
        `--max-old-space-size=${Math.floor((mib(resources.limits.memory) * 5) / 8)}`,
      );
      expect(nodeOptions(render(["resources.limits.memory=1Gi"]))).toBe("--max-old-space-size=640");
      expect(nodeOptions(render(["resources.limits.memory=300M"]))).toBe("--max-old-space-size=178");
      expect(nodeOptions(render(["resources.limits.memory=268435456"]))).toBe("--max-old-space-size=160");
      expect(nodeOptions(render(["resources.limits=null"]))).toBeUndefined();
      // The user's NODE_OPTIONS (extraEnv) comes later in the list, so it is the one the container gets.
      const names = operator(
        helmTemplate(helm!, dir, {
          values: { extraEnv: [{ name: "NODE_OPTIONS", value: "--max-old-space-size=900" }] },
        }),
      ).env.map((e) => e.name);
      expect(names.lastIndexOf("NODE_OPTIONS")).toBeGreaterThan(names.indexOf("NODE_OPTIONS"));
      expect(refused("resources.limits.memory=12Qi")).toMatch(
        /resources\.limits\.memory: "12Qi" is not a memory quantity/,
      );
    });

    it("takes cert-manager's set of values: registry, digest, extras, spread, contexts, globals", () => {
      const objs = helmTemplate(helm!, dir, {
        values: {
          global: {
            imageRegistry: "mirror.example.com",
            imagePullSecrets: [{ name: "global-pull" }],
            priorityClassName: "global-priority",
            commonLabels: { team: "platform" },
          },
          image: { digest: `sha256:${"a".repeat(64)}` },
          imagePullSecrets: [{ name: "own-pull" }],
          extraArgs: ["--log-level=debug"],
          extraEnv: [{ name: "HTTPS_PROXY", value: "http://proxy:3128" }],
          extraVolumes: [{ name: "ca", configMap: { name: "ca-bundle" } }],
          extraVolumeMounts: [{ name: "ca", mountPath: "/etc/ssl/extra" }],
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone" }],
          // Helm merges maps: null removes a default key (here seccompProfile, e.g. for an older OpenShift SCC).
          podSecurityContext: { seccompProfile: null, fsGroup: 2000 },
          terminationGracePeriodSeconds: 90,
        },
      });
      const spec = pod(objs, chart);
      const c = spec.containers[0]!;
      // global.imageRegistry replaces the chart's registry (ghcr.io): a mirror of the same repository paths.
      expect(c.image).toBe(`mirror.example.com/capstan-dev/capstan/${chart}@sha256:${"a".repeat(64)}`);
      // ... of every image the chart runs: those it passes to the operator (the reloader sidecar's, the backup Jobs')
      // too, each in a <NAME>_IMAGE variable.
      const images = (c.env ?? []).filter((e) => e.name.endsWith("_IMAGE"));
      expect(images.length, "the chart passes the operator at least one image").toBeGreaterThan(0);
      for (const e of images) expect(e.value, e.name).toMatch(/^mirror\.example\.com\//);
      expect(c.args).toEqual(["--log-level=debug"]);
      expect(c.env?.at(-1)).toEqual({ name: "HTTPS_PROXY", value: "http://proxy:3128" });
      expect(c.env?.map((e) => e.name)).toContain("LEADER_ELECTION_NAME");
      expect(c.volumeMounts).toEqual([{ name: "ca", mountPath: "/etc/ssl/extra" }]);
      expect(spec.volumes).toEqual([{ name: "ca", configMap: { name: "ca-bundle" } }]);
      expect(spec.topologySpreadConstraints).toHaveLength(1);
      expect(spec.securityContext).toEqual({ runAsNonRoot: true, fsGroup: 2000 });
      expect(spec.priorityClassName).toBe("global-priority");
      expect(spec.imagePullSecrets).toEqual([{ name: "global-pull" }, { name: "own-pull" }]);
      expect(spec.terminationGracePeriodSeconds).toBe(90);
      // Every object, the CRDs too (capstan crd gives the chart's copies capstan-operator.crdLabels).
      expect(objs.length).toBeGreaterThan(5);
      expect(ofKind(objs, "CustomResourceDefinition").length).toBeGreaterThan(0);
      for (const o of objs) expect(o.metadata.labels?.team, `${o.kind} ${o.metadata.name}`).toBe("platform");
      for (const crd of ofKind(objs, "CustomResourceDefinition")) {
        expect(crd.metadata.labels, crd.metadata.name).toMatchObject({
          "app.kubernetes.io/name": chart,
          "app.kubernetes.io/instance": "ops",
          "app.kubernetes.io/component": "crds",
          "app.kubernetes.io/managed-by": "Helm",
        });
      }
    });

    it("keeps the metrics certificate volume beside extra volumes, and the chart's own priority over the global", () => {
      const spec = pod(
        helmTemplate(helm!, dir, {
          values: {
            metrics: { certSecret: "metrics-tls" },
            extraVolumes: [{ name: "tmp", emptyDir: {} }],
            extraVolumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            priorityClassName: "own",
            global: { priorityClassName: "global-priority" },
            image: { registry: "r.example.com", tag: "1.2.3" },
          },
        }),
        chart,
      );
      expect(spec.volumes?.map((v) => v.name)).toEqual(["metrics-certs", "tmp"]);
      expect(spec.containers[0]?.volumeMounts?.map((m) => m.name)).toEqual(["metrics-certs", "tmp"]);
      expect(spec.priorityClassName).toBe("own");
      expect(spec.containers[0]?.image).toBe(`r.example.com/capstan-dev/capstan/${chart}:1.2.3`);
    });

    it("refuses values that cannot work, naming them", () => {
      expect(helmTemplateError(helm!, dir, { values: { image: { digest: "latest" } } })).toMatch(/digest/);
      expect(helmTemplateError(helm!, dir, { values: { extraArgs: ["log-level=debug"] } })).toMatch(
        /extraArgs/,
      );
      expect(helmTemplateError(helm!, dir, { values: { terminationGracePeriodSeconds: 10 } })).toMatch(
        /terminationGracePeriodSeconds/,
      );
      expect(helmTemplateError(helm!, dir, { values: { extraEnvs: [] } })).toMatch(/extraEnvs/);
    });

    it("runs one replica by default that elects a leader on the release's Lease, probed on its health port", () => {
      const objs = render();
      const deployment = named(objs, "Deployment", full) as K8sObject & {
        spec: { replicas: number; template: { spec: { containers: ProbedContainer[] } } };
      };
      expect(deployment.spec.replicas).toBe(1);
      const c = operator(objs);
      expect(envVar(objs, "WATCH_NAMESPACE")).toBeUndefined();
      expect(envVar(objs, "LEADER_ELECT")?.value).toBe("true");
      expect(envVar(objs, "LEADER_ELECTION_NAME")?.value).toBe(`${full}-leader`);
      expect(c.env.map((e) => e.name)).toEqual(expect.arrayContaining(["POD_NAME", "POD_NAMESPACE"]));
      expect(c.ports.map((p) => [p.name, p.containerPort])).toEqual([
        ["metrics", 8080],
        ["health", 8081],
      ]);
      const probed = deployment.spec.template.spec.containers[0]!;
      expect(probed.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
      expect(probed.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
      // watchNamespace reaches the operator (the Role it needs there is each chart's own RBAC).
      expect(envVar(render(["watchNamespace=apps"]), "WATCH_NAMESPACE")?.value).toBe("apps");
    });

    it("takes a termination grace longer than the operator's shutdown, and refuses a shorter one", () => {
      // The manager's shutdown: 30 s in all, in-flight reconciles included (packages/core's Manager).
      expect(deploymentPodSpec(render()).terminationGracePeriodSeconds).toBeGreaterThan(30);
      expect(
        deploymentPodSpec(render(["terminationGracePeriodSeconds=120"])).terminationGracePeriodSeconds,
      ).toBe(120);
      expect(refused("terminationGracePeriodSeconds=30")).toMatch(/terminationGracePeriodSeconds/);
    });

    it("renders two replicas with leader election and its Lease Role", () => {
      const objs = render(["replicas=2"]);
      expect((named(objs, "Deployment", full).spec as { replicas: number }).replicas).toBe(2);
      expect(envVar(objs, "LEADER_ELECT")?.value).toBe("true");
      expect(leaseRoles(objs).map((r) => r.metadata.namespace)).toEqual(["ops-ns"]);
    });

    it("names the Lease after the release, so two releases in one namespace do not fight over it", () => {
      for (const release of ["ops", "other"]) {
        const objs = render([], release);
        const lease = `${release}-${chart}-leader`;
        expect(envVar(objs, "LEADER_ELECTION_NAME")?.value, release).toBe(lease);
        // Cluster-wide (the default), the only Role is leader election's, in the release namespace, on that Lease.
        const [role, ...others] = ofKind(objs, "Role") as (K8sObject & { rules?: RuleLike[] })[];
        expect(others, release).toEqual([]);
        expect(role?.metadata.namespace, release).toBe("ops-ns");
        expect(grantList(role?.rules), release).toEqual([
          "coordination.k8s.io/leases: create",
          `coordination.k8s.io/leases[${lease}]: get,update`,
        ]);
        expect(
          role?.rules?.flatMap((r) => r.resources),
          release,
        ).toEqual(["leases", "leases"]);
      }
    });

    it("renders no Lease Role without leader election, and refuses two replicas without it", () => {
      const objs = render(["leaderElection.enabled=false"]);
      expect(ofKind(objs, "Role")).toEqual([]);
      expect(envVar(objs, "LEADER_ELECT")?.value).toBe("false");
      expect(refused("replicas=2", "leaderElection.enabled=false")).toMatch(
        /more than one operator replica needs leaderElection.enabled=true/,
      );
    });

    it("renders an optional PodDisruptionBudget and priorityClassName for the operator", () => {
      expect(ofKind(render(), "PodDisruptionBudget")).toEqual([]);
      const objs = render(["podDisruptionBudget.enabled=true", "priorityClassName=system-cluster-critical"]);
      expect(named(objs, "PodDisruptionBudget", full).spec).toMatchObject({
        minAvailable: 1,
        selector: { matchLabels: { "app.kubernetes.io/instance": "ops" } },
      });
      expect(pod(objs, chart).priorityClassName).toBe("system-cluster-critical");
      // maxUnavailable, when set, replaces minAvailable.
      const max = named(
        render(["podDisruptionBudget.enabled=true", "podDisruptionBudget.maxUnavailable=1"]),
        "PodDisruptionBudget",
        full,
      ).spec as Record<string, unknown>;
      expect(max).toMatchObject({ maxUnavailable: 1 });
      expect(max).not.toHaveProperty("minAvailable");
    });

    it("serves secure metrics by default: the operator may review tokens, scrapers get a reader role", () => {
      const objs = render();
      expect(envVar(objs, "METRICS_SECURE")?.value).toBe("true");
      expect(envVar(objs, "METRICS_CERT_DIR")).toBeUndefined();
      expect(named(objs, "ClusterRole", `${rbac}-metrics-auth`).rules).toEqual([
        { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
        { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
      ]);
      expect(named(objs, "ClusterRoleBinding", `${rbac}-metrics-auth`)).toMatchObject({
        roleRef: { kind: "ClusterRole", name: `${rbac}-metrics-auth` },
        subjects: [{ kind: "ServiceAccount", name: full, namespace: "ops-ns" }],
      });
      expect(named(objs, "ClusterRole", `${rbac}-metrics-reader`).rules).toEqual([
        { nonResourceURLs: ["/metrics"], verbs: ["get"] },
      ]);
      expect(named(objs, "Service", `${full}-metrics`).spec).toMatchObject({
        ports: [{ name: "metrics", port: 8080, targetPort: "metrics" }],
      });
    });

    it("mounts metrics.certSecret as the metrics server's certificate directory", () => {
      const objs = render(["metrics.certSecret=metrics-tls"]);
      expect(envVar(objs, "METRICS_CERT_DIR")?.value).toBe("/etc/capstan/metrics-certs");
      expect(operator(objs).volumeMounts).toEqual([
        { name: "metrics-certs", mountPath: "/etc/capstan/metrics-certs", readOnly: true },
      ]);
      expect(deploymentPodSpec(objs).volumes).toEqual([
        { name: "metrics-certs", secret: { secretName: "metrics-tls" } },
      ]);
    });

    it("serves plain HTTP metrics with metrics.secure=false, with no review permissions", () => {
      // The chart's own ClusterRoles stay; the secure metrics' two go.
      const secure = namesOf(render(), "ClusterRole");
      expect(secure).toEqual(expect.arrayContaining([`${rbac}-metrics-auth`, `${rbac}-metrics-reader`]));
      // A certificate Secret is ignored without secure metrics.
      for (const set of [["metrics.secure=false"], ["metrics.secure=false", "metrics.certSecret=ignored"]]) {
        const objs = render(set);
        const mode = set.join(" ");
        expect(envVar(objs, "METRICS_SECURE")?.value, mode).toBe("false");
        expect(envVar(objs, "METRICS_CERT_DIR"), mode).toBeUndefined();
        expect(deploymentPodSpec(objs).volumes, mode).toBeUndefined();
        expect(namesOf(objs, "ClusterRole"), mode).toEqual(
          secure.filter((n) => !n.startsWith(`${rbac}-metrics-`)),
        );
        expect(namesOf(objs, "ClusterRoleBinding"), mode).not.toContain(`${rbac}-metrics-auth`);
        expect(JSON.stringify(objs), mode).not.toMatch(/tokenreviews|subjectaccessreviews/);
        // No metrics-reader: a non-resource URL stays only where the operator grants it on to its operands (the
        // Prometheus operator's ClusterRole holds /metrics for its servers' spec.clusterMetrics.apiServer).
        const urls = objs.filter((o) => JSON.stringify(o.rules ?? []).includes("nonResourceURLs"));
        expect(
          urls.map((o) => o.metadata.name),
          mode,
        ).toEqual(chart === "prometheus-operator" ? [`${rbac}-cluster`] : []);
      }
    });

    it("renders the ServiceMonitor (monitoring.coreos.com/v1) only when asked, selecting the metrics Service", () => {
      expect(ofKind(render(), "ServiceMonitor")).toEqual([]);
      const objs = render(["serviceMonitor.enabled=true", "serviceMonitor.labels.release=prom"]);
      const m = monitor(objs);
      expect(m.apiVersion).toBe("monitoring.coreos.com/v1");
      expect(m.metadata.labels?.release).toBe("prom");
      const [service, ...others] = ofKind(objs, "Service") as (K8sObject & {
        spec: { ports: { name: string; port: number }[] };
      })[];
      expect(others).toEqual([]);
      expect(service?.spec.ports).toMatchObject([{ name: "metrics", port: 8080 }]);
      expect(service?.metadata.labels).toMatchObject(m.spec.selector.matchLabels);
    });

    it("renders the ServiceMonitor and PrometheusRule only where the cluster serves their API, else says so in NOTES", () => {
      const both = ["serviceMonitor.enabled=true", "prometheusRule.enabled=true"];
      const kinds = (objs: K8sObject[]) => [
        ...namesOf(objs, "ServiceMonitor").map((n) => `ServiceMonitor ${n}`),
        ...namesOf(objs, "PrometheusRule").map((n) => `PrometheusRule ${n}`),
      ];
      const skipped = (kind: string, value: string) =>
        `${value}.enabled is true, but no ${kind} was created: the cluster has no monitoring.coreos.com/v1 ${kind} API.`;
      // A cluster with prometheus-operator's CRDs (helmTemplate's default --api-versions): both, and no such line.
      expect(kinds(render(both))).toEqual([`ServiceMonitor ${full}`, `PrometheusRule ${full}`]);
      expect(helmNotes(helm!, dir, { set: both })).not.toMatch(/no monitoring\.coreos\.com\/v1 \w+ API/);
      // A cluster without them (a fresh one: helm install would fail mapping the kinds): neither, and NOTES says
      // which value was skipped, why, and what to do.
      const fresh = { set: both, apiVersions: [] };
      expect(kinds(helmTemplate(helm!, dir, fresh))).toEqual([]);
      const notes = helmNotes(helm!, dir, fresh);
      for (const [kind, value] of [
        ["ServiceMonitor", "serviceMonitor"],
        ["PrometheusRule", "prometheusRule"],
      ] as const) {
        expect(notes, kind).toContain(skipped(kind, value));
        expect(notes, kind).toContain(`--api-versions monitoring.coreos.com/v1/${kind}`);
      }
      expect(notes).toContain("then run helm upgrade with the same values");
      // One served, the other not: each follows its own API.
      const smOnly = { set: both, apiVersions: ["monitoring.coreos.com/v1/ServiceMonitor"] };
      expect(kinds(helmTemplate(helm!, dir, smOnly))).toEqual([`ServiceMonitor ${full}`]);
      const smOnlyNotes = helmNotes(helm!, dir, smOnly);
      expect(smOnlyNotes).toContain(skipped("PrometheusRule", "prometheusRule"));
      expect(smOnlyNotes).not.toContain(skipped("ServiceMonitor", "serviceMonitor"));
      // Not asked for: nothing to say, API or not.
      expect(helmNotes(helm!, dir, { apiVersions: [] })).not.toMatch(
        /no monitoring\.coreos\.com\/v1 \w+ API/,
      );
    });

    it("renders a ServiceMonitor scraping HTTPS with Prometheus' token, skipping the self-signed certificate", () => {
      for (const interval of ["30s", "15s"]) {
        const set = [
          "serviceMonitor.enabled=true",
          ...(interval === "30s" ? [] : [`serviceMonitor.interval=${interval}`]),
        ];
        expect(monitor(render(set)).spec.endpoints, interval).toEqual([
          {
            port: "metrics",
            path: "/metrics",
            interval,
            scheme: "https",
            bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
            tlsConfig: { insecureSkipVerify: true },
          },
        ]);
      }
    });

    it("renders a ServiceMonitor verifying metrics.certSecret's CA, with a token from a Secret", () => {
      const objs = render([
        "serviceMonitor.enabled=true",
        "metrics.certSecret=metrics-tls",
        "serviceMonitor.bearerTokenSecret.name=prometheus-token",
      ]);
      expect(monitor(objs).spec.endpoints).toEqual([
        {
          port: "metrics",
          path: "/metrics",
          interval: "30s",
          scheme: "https",
          authorization: { type: "Bearer", credentials: { name: "prometheus-token", key: "token" } },
          tlsConfig: {
            ca: { secret: { name: "metrics-tls", key: "ca.crt" } },
            serverName: `${full}-metrics.ops-ns.svc`,
          },
        },
      ]);
      // The name the certificate must carry is the metrics Service's.
      expect(namesOf(objs, "Service")).toEqual([`${full}-metrics`]);
    });

    it("renders a ServiceMonitor scraping plain HTTP with metrics.secure=false", () => {
      expect(monitor(render(["serviceMonitor.enabled=true", "metrics.secure=false"])).spec.endpoints).toEqual(
        [{ port: "metrics", path: "/metrics", interval: "30s", scheme: "http" }],
      );
    });

    it("renders the dashboard ConfigMap only when asked, labelled for Grafana's sidecar, with its JSON", () => {
      expect(ofKind(render(), "ConfigMap")).toEqual([]);
      const objs = render([
        "dashboard.enabled=true",
        "dashboard.labels.team=ops",
        "dashboard.annotations.grafana_folder=Capstan",
      ]);
      const { configMap, json } = renderedDashboard(objs, chart);
      expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: "1", team: "ops" });
      expect(configMap.metadata.annotations).toEqual({ grafana_folder: "Capstan" });
      const model = JSON.parse(json) as {
        uid: string;
        templating: { list: { name: string; type: string; query?: unknown }[] };
      };
      expect(model.uid).toBe(`capstan-${chart}`);
      expect(model.templating.list.find((v) => v.name === "datasource")).toMatchObject({
        type: "datasource",
        query: "prometheus",
      });
      // Every panel, target and variable reads the data source variable.
      expect(dashboardDatasourceProblems(json)).toEqual([]);
    });

    it("rejects values the schema does not allow, naming them", () => {
      expect(refused("replicas=x")).toMatch(/replicas.*(integer|number)/i);
      expect(refused("replicas=0")).toMatch(/replicas.*(minimum|greater)/i);
      expect(refused("unknownKey=1")).toMatch(/unknownKey/);
      expect(refused("image.pullPolicy=Sometimes")).toMatch(/pullPolicy/);
      expect(refused("logLevel=loud")).toMatch(/logLevel/);
      expect(refused("metrics.secure=maybe")).toMatch(/secure/);
      expect(refused("metrics.certSecret=Not_A_Name")).toMatch(/certSecret/);
      expect(refused("metrics.port=8443")).toMatch(/port/);
      expect(refused("watchNamespace=Not_A_Namespace")).toMatch(/watchNamespace/);
      expect(refused("prometheusRule.for=soon")).toMatch(/for/);
      expect(refused("prometheusRule.extra=1")).toMatch(/extra/);
    });
  });
});
