// Tests of the chart-test helpers: Pod Security "restricted" checks, RBAC coverage, standard labels, finding pod
// specs, and (when helm is installed) rendering the fixture chart with its CRD copies.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import {
  chartCrdDrift,
  crdPermissions,
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
  type PodSpecLike,
  podSpecs,
  restrictedViolations,
  single,
} from "./chart.ts";
import { runCli } from "./cli.ts";

const fixture = fileURLToPath(new URL("../testdata/widget-operator/", import.meta.url));

const restrictedPod = (): PodSpecLike => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  volumes: [{ name: "tmp", emptyDir: {} }],
  containers: [
    {
      name: "manager",
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    },
  ],
});

describe("restrictedViolations", () => {
  it("passes a pod that meets the restricted profile", () => {
    expect(restrictedViolations("Deployment op", restrictedPod())).toEqual([]);
  });

  it.each<[string, (p: PodSpecLike) => void, string]>([
    ["host network", (p) => (p.hostNetwork = true), "Deployment op: spec.hostNetwork must be false"],
    [
      "a hostPath volume",
      (p) => p.volumes!.push({ name: "root", hostPath: { path: "/" } }),
      "volume root is of type hostPath",
    ],
    [
      "no runAsNonRoot",
      (p) => delete p.securityContext!.runAsNonRoot,
      "runAsNonRoot (or the pod's) must be true",
    ],
    ["root user", (p) => (p.securityContext!.runAsUser = 0), "spec.securityContext.runAsUser must not be 0"],
    [
      "privilege escalation",
      (p) => delete p.containers![0]!.securityContext!.allowPrivilegeEscalation,
      "container manager: securityContext.allowPrivilegeEscalation must be false",
    ],
    [
      "an unconfined container",
      (p) => (p.containers![0]!.securityContext!.seccompProfile = { type: "Unconfined" }),
      "container manager: securityContext.seccompProfile (or the pod's) must be RuntimeDefault or Localhost",
    ],
    ["no pod seccomp", (p) => delete p.securityContext!.seccompProfile, "seccompProfile (or the pod's)"],
    [
      "capabilities kept",
      (p) => (p.containers![0]!.securityContext!.capabilities = { add: ["NET_ADMIN"], drop: ["ALL"] }),
      "capabilities.add may hold only NET_BIND_SERVICE, not NET_ADMIN",
    ],
    [
      "an init container without drop ALL",
      (p) => (p.initContainers = [{ name: "init", securityContext: { allowPrivilegeEscalation: false } }]),
      "container init: securityContext.capabilities.drop must contain ALL",
    ],
    ["a host port", (p) => (p.containers![0]!.ports = [{ hostPort: 80 }]), "hostPort 80 is not allowed"],
    [
      "a privileged container",
      (p) => (p.containers![0]!.securityContext!.privileged = true),
      "securityContext.privileged must be false",
    ],
  ])("names %s", (_name, mutate, message) => {
    const pod = restrictedPod();
    mutate(pod);
    const violations = restrictedViolations("Deployment op", pod);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toContain(message);
  });
});

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.dev" },
  spec: {
    group: "example.dev",
    scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets" },
    versions: [],
  },
} as CustomResourceDefinitionObject;

const role = (kind: string, rules: unknown[]): K8sObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: { name: "op" },
  rules,
});

describe("missingPermissions and crdPermissions", () => {
  const full = [
    { apiGroups: ["example.dev"], resources: ["widgets"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["example.dev"], resources: ["widgets/status"], verbs: ["get", "update", "patch"] },
    { apiGroups: ["example.dev"], resources: ["widgets/finalizers"], verbs: ["update"] },
  ];

  it("finds nothing missing when a ClusterRole or a Role grants the kinds", () => {
    expect(missingPermissions([role("ClusterRole", full)], crdPermissions([crd]))).toEqual([]);
    expect(
      missingPermissions(
        [role("Role", full.slice(0, 2)), role("Role", full.slice(2))],
        crdPermissions([crd]),
      ),
    ).toEqual([]);
    expect(
      missingPermissions(
        [role("ClusterRole", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }])],
        crdPermissions([crd]),
      ),
    ).toEqual([]);
  });

  it("names each verb not granted, ignoring rules limited by resourceNames and non-role objects", () => {
    const objs = [
      role("ClusterRole", [full[0], { ...full[1], verbs: ["get"] }]),
      role("Role", [{ ...full[2], resourceNames: ["one"] }]),
      { ...role("ClusterRoleBinding", full) },
    ];
    expect(missingPermissions(objs, crdPermissions([crd]))).toEqual([
      "update example.dev/widgets/status",
      "patch example.dev/widgets/status",
      "update example.dev/widgets/finalizers",
    ]);
    expect(missingPermissions([], [{ apiGroup: "", resource: "pods", verbs: ["get"] }])).toEqual([
      "get core/pods",
    ]);
  });
});

describe("missingStandardLabels", () => {
  const labels = {
    "app.kubernetes.io/name": "widget-operator",
    "app.kubernetes.io/instance": "ops",
    "app.kubernetes.io/managed-by": "Helm",
  };
  const obj = (kind: string, l: Record<string, string>): K8sObject => ({
    apiVersion: "v1",
    kind,
    metadata: { name: "x", labels: l },
  });

  it("names objects lacking a standard label, skipping CRDs", () => {
    const expected = { name: "widget-operator", instance: "ops" };
    expect(
      missingStandardLabels([obj("Service", labels), obj("CustomResourceDefinition", {})], expected),
    ).toEqual([]);
    expect(
      missingStandardLabels([obj("Service", { ...labels, "app.kubernetes.io/instance": "other" })], expected),
    ).toEqual(["Service x: needs app.kubernetes.io/instance=ops"]);
    expect(missingStandardLabels([obj("Service", labels)], { ...expected, chart: "w-0.1.0" })).toEqual([
      "Service x: needs helm.sh/chart=w-0.1.0",
    ]);
  });
});

describe("podSpecs", () => {
  it("finds the pod spec of each workload kind", () => {
    const pod = restrictedPod();
    const objs: K8sObject[] = [
      { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: pod },
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "s" },
        spec: { template: { spec: pod } },
      },
      {
        apiVersion: "batch/v1",
        kind: "CronJob",
        metadata: { name: "c" },
        spec: { jobTemplate: { spec: { template: { spec: pod } } } },
      },
      { apiVersion: "v1", kind: "Service", metadata: { name: "svc" }, spec: {} },
    ];
    expect(podSpecs(objs).map((p) => p.owner)).toEqual(["Pod p", "StatefulSet s", "CronJob c"]);
    expect(podSpecs(objs)[1]!.spec).toBe(pod);
  });
});

const helm = findHelm();

describe.skipIf(helm === undefined)("the fixture chart with helm", () => {
  it("renders the generated CRD copies behind crds.enabled, and the chart-level checks pass on it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-chart-"));
    try {
      cpSync(fixture, dir, { recursive: true });
      expect((await chartCrdDrift(dir)).map((d) => d.state)).toEqual(["missing", "missing"]);
      expect(await runCli(["crd"], { cwd: dir, out: () => {}, err: () => {} })).toBe(0);
      expect(await chartCrdDrift(dir)).toEqual([]);

      const chart = join(dir, "chart");
      expect(helmLint(helm!, chart)).toMatch(/0 chart\(s\) failed/);
      const objs = helmTemplate(helm!, chart);
      const crds = objs.filter((o) => o.kind === "CustomResourceDefinition");
      expect(crds.map((c) => [c.metadata.name, c.metadata.annotations])).toEqual([
        ["gadgets.example.dev", { "helm.sh/resource-policy": "keep" }],
        ["widgets.example.dev", { "helm.sh/resource-policy": "keep" }],
      ]);
      expect(helmTemplate(helm!, chart, { set: ["crds.enabled=false"] }).map((o) => o.kind)).toEqual([
        "Deployment",
      ]);
      const pods = podSpecs(objs);
      expect(pods.flatMap((p) => restrictedViolations(p.owner, p.spec))).toEqual([]);
      expect(missingStandardLabels(objs, { name: "widget-operator", instance: "ops" })).toEqual([]);

      mkdirSync(join(chart, "templates", "bad"));
      writeFileSync(join(chart, "templates", "bad", "x.yaml"), '{{ fail "no" }}\n');
      expect(helmTemplateError(helm!, chart)).toContain("no");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the chart tests' readers", () => {
  const deployment: K8sObject = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "op" },
    spec: {
      template: {
        spec: {
          terminationGracePeriodSeconds: 45,
          serviceAccountName: "op",
          securityContext: {},
          containers: [
            {
              name: "operator",
              image: "x",
              env: [{ name: "A", value: "1" }, { name: "B" }],
              securityContext: {},
              ports: [],
            },
          ],
        },
      },
    },
  };

  it("grantList: one sorted line per resource with its sorted verbs", () => {
    expect(
      grantList([
        { apiGroups: ["apps"], resources: ["statefulsets", "deployments"], verbs: ["watch", "get"] },
        {
          apiGroups: ["coordination.k8s.io"],
          resources: ["leases"],
          resourceNames: ["x"],
          verbs: ["update"],
        },
        { nonResourceURLs: ["/metrics"], verbs: ["get"] },
      ]),
    ).toEqual([
      "//metrics: get",
      "apps/deployments: get,watch",
      "apps/statefulsets: get,watch",
      "coordination.k8s.io/leases[x]: update",
    ]);
    expect(grantList()).toEqual([]);
  });

  it("single: the one object of a kind (and name), else an error saying how many", () => {
    const svc = { apiVersion: "v1", kind: "Service", metadata: { name: "a" } };
    const objs = [deployment, svc, { ...svc, metadata: { name: "b" } }];
    expect(single(objs, "Deployment")).toBe(deployment);
    expect(single(objs, "Service", "b").metadata.name).toBe("b");
    expect(() => single(objs, "Service")).toThrow("want one Service , rendered 2");
    expect(() => single(objs, "Secret", "s")).toThrow("want one Secret s, rendered 0");
  });

  it("deploymentPodSpec and envValue read the operator's pod", () => {
    const pod = deploymentPodSpec([deployment]);
    expect(pod.terminationGracePeriodSeconds).toBe(45);
    expect(envValue(pod.containers[0]!, "A")).toBe("1");
    expect(envValue(pod.containers[0]!, "B")).toBeUndefined();
    expect(envValue(pod.containers[0]!, "C")).toBeUndefined();
  });
});
