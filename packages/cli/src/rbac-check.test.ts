// `capstan rbac --check`: compareRbac on hand-made renderings (a missing verb, an unneeded grant, a grant too wide,
// wildcards, a RoleBinding to a ClusterRole, a binding to another ServiceAccount, the Lease by name), then, with helm,
// the command on a copy of the etcd chart with a rule taken out and one added (both fail, naming the rule, in both
// renderings), and on the three operators as committed (all pass).
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { controller, defineKind, Pod } from "@capstan/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findHelm, type K8sObject } from "./chart.ts";
import { type CliResult, runCliCaptured } from "./cli-captured.ts";
import type { OperatorAccess } from "./rbac.ts";
import { compareRbac } from "./rbac-check.ts";

const repo = fileURLToPath(new URL("../../../", import.meta.url));

const Widget = defineKind({
  group: "example.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});
const access: OperatorAccess = {
  controllers: () => [controller({ name: "w", for: Widget, owns: [Pod], reconcile: async () => undefined })],
  rules: [{ kind: Pod, verbs: ["create", "delete"], why: "members" }],
};

type Rule = {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
};

const exact: Rule[] = [
  { apiGroups: ["example.dev"], resources: ["widgets"], verbs: ["get", "list", "watch"] },
  { apiGroups: ["example.dev"], resources: ["widgets/status"], verbs: ["get", "update", "patch"] },
  { apiGroups: ["example.dev"], resources: ["widgets/finalizers"], verbs: ["update"] },
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "create", "delete"] },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
];
const lease: Rule[] = [
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
  {
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    resourceNames: ["w-leader"],
    verbs: ["get", "update"],
  },
];

/** A rendering: the operator's Deployment (env as a chart sets it) and its roles, each bound to the operator. */
function rendering(options: {
  rules: Rule[];
  watchNamespace?: string;
  leaseRules?: Rule[];
  boundTo?: string;
  clusterRoleInNamespace?: boolean;
}): K8sObject[] {
  const env = [
    { name: "METRICS_SECURE", value: "false" },
    ...(options.leaseRules
      ? [
          { name: "LEADER_ELECT", value: "true" },
          { name: "LEADER_ELECTION_NAME", value: "w-leader" },
          { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
        ]
      : []),
    ...(options.watchNamespace ? [{ name: "WATCH_NAMESPACE", value: options.watchNamespace }] : []),
  ];
  const subjects = [{ kind: "ServiceAccount", name: options.boundTo ?? "op", namespace: "ops-ns" }];
  const ns = options.watchNamespace;
  const roleKind = ns === undefined || options.clusterRoleInNamespace ? "ClusterRole" : "Role";
  const objects: K8sObject[] = [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "op", namespace: "ops-ns" },
      spec: { template: { spec: { serviceAccountName: "op", containers: [{ name: "op", env }] } } },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: roleKind,
      metadata: { name: "op", ...(roleKind === "Role" ? { namespace: ns } : {}) },
      rules: options.rules,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: ns === undefined ? "ClusterRoleBinding" : "RoleBinding",
      metadata: { name: "op", ...(ns === undefined ? {} : { namespace: ns }) },
      roleRef: { kind: roleKind, name: "op" },
      subjects,
    },
  ];
  if (options.leaseRules) {
    objects.push(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "op-le", namespace: "ops-ns" },
        rules: options.leaseRules,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "op-le", namespace: "ops-ns" },
        roleRef: { kind: "Role", name: "op-le" },
        subjects,
      },
    );
  }
  return objects;
}

const without = (rules: Rule[], resource: string, verb: string): Rule[] =>
  rules.map((r) =>
    r.resources?.includes(resource) ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r,
  );

describe("compareRbac", () => {
  it.each([
    { name: "exact rules, cluster-wide", objects: rendering({ rules: exact }), want: [] },
    {
      name: "exact rules, in the watch namespace",
      objects: rendering({ rules: exact, watchNamespace: "apps" }),
      want: [],
    },
    {
      name: "a ClusterRole bound by a RoleBinding in the watch namespace",
      objects: rendering({ rules: exact, watchNamespace: "apps", clusterRoleInNamespace: true }),
      want: [],
    },
    {
      name: "the Lease by name in the release namespace",
      objects: rendering({ rules: exact, leaseRules: lease }),
      want: [],
    },
    {
      name: "a missing verb",
      objects: rendering({ rules: without(exact, "pods", "delete") }),
      want: [
        /^m: the chart lacks delete on core\/pods cluster-wide \(the operator needs it: controller w owns Pod; members\)$/,
      ],
    },
    {
      name: "an unneeded verb and resource",
      objects: rendering({
        rules: [...exact, { apiGroups: [""], resources: ["secrets", "pods"], verbs: ["get", "update"] }],
      }),
      want: [
        /^m: the chart grants get, update on core\/secrets cluster-wide \(ClusterRole op\), which the operator does not need/,
        /^m: the chart grants update on core\/pods cluster-wide \(ClusterRole op\)/,
      ],
    },
    {
      name: "a wildcard covers what is needed, and is itself reported",
      objects: rendering({ rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }),
      want: [
        /^m: the chart grants \* on \*\/\* cluster-wide \(ClusterRole op\), which the operator does not need/,
      ],
    },
    {
      name: "the Lease's get and update for every Lease, not just the operator's",
      objects: rendering({
        rules: exact,
        leaseRules: [
          { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "update"] },
        ],
      }),
      want: [
        /^m: the chart grants get, update on coordination.k8s.io\/leases in namespace ops-ns \(Role op-le\)/,
      ],
    },
    {
      name: "leader election on but no Lease rules",
      objects: rendering({ rules: exact, leaseRules: [] }),
      want: [
        /^m: the chart lacks create on coordination.k8s.io\/leases in namespace ops-ns/,
        /^m: the chart lacks get, update on coordination.k8s.io\/leases \[w-leader\] in namespace ops-ns/,
      ],
    },
    {
      name: "rules bound to another ServiceAccount grant the operator nothing",
      objects: rendering({ rules: exact, boundTo: "someone-else" }),
      want: Array.from({ length: 5 }, () => /^m: the chart lacks /),
    },
    {
      name: "a non-resource URL bound to the operator is not needed",
      objects: rendering({ rules: [...exact, { nonResourceURLs: ["/metrics"], verbs: ["get"] }] }),
      want: [/^m: the chart grants get on URL \/metrics cluster-wide/],
    },
  ])("$name", ({ objects, want }) => {
    const problems = compareRbac(access, objects, "w", "m");
    expect(problems).toHaveLength(want.length);
    for (const [i, re] of want.entries()) expect(problems[i]).toMatch(re);
  });

  it("a non-resource URL the operator declares: needed, and a resource named like it does not cover it", () => {
    const withUrl: OperatorAccess = {
      ...access,
      nonResourceRules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"], why: "grants it" }],
    };
    expect(
      compareRbac(
        withUrl,
        rendering({ rules: [...exact, { nonResourceURLs: ["/metrics"], verbs: ["get"] }] }),
        "w",
        "m",
      ),
    ).toEqual([]);
    const lacking = compareRbac(withUrl, rendering({ rules: exact }), "w", "m");
    expect(lacking).toHaveLength(1);
    expect(lacking[0]).toMatch(
      /^m: the chart lacks get on URL \/metrics cluster-wide \(the operator needs it: grants it\)/,
    );
    const wrongKind = compareRbac(
      withUrl,
      rendering({ rules: [...exact, { apiGroups: [""], resources: ["/metrics"], verbs: ["get"] }] }),
      "w",
      "m",
    );
    expect(wrongKind.some((p) => p.includes("lacks get on URL /metrics"))).toBe(true);
  });

  it("says which binding refers to a role the chart does not render", () => {
    const objects = rendering({ rules: exact }).filter((o) => o.kind !== "ClusterRole");
    expect(() => compareRbac(access, objects, "w", "m")).toThrow(
      /ClusterRoleBinding op refers to ClusterRole op, which the chart does not render/,
    );
  });
});

const helm = findHelm();

describe.skipIf(helm === undefined)("capstan rbac --check with helm", () => {
  let dir = "";
  const rbacYaml = () => join(dir, "charts/etcd-operator/templates/rbac.yaml");
  const original = readFileSync(join(repo, "charts/etcd-operator/templates/rbac.yaml"), "utf8");

  beforeAll(() => {
    // The etcd chart (its library chart linked), and an operator package naming it and etcd's declaration.
    dir = mkdtempSync(join(tmpdir(), "capstan-rbac-"));
    cpSync(join(repo, "charts/etcd-operator"), join(dir, "charts/etcd-operator"), {
      recursive: true,
      verbatimSymlinks: true,
    });
    symlinkSync(join(repo, "charts/capstan-operator"), join(dir, "charts/capstan-operator"));
    const etcd = join(repo, "operators/etcd");
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name: "@capstan/etcd-operator",
        capstan: {
          crds: join(etcd, "src/api/crds.ts"),
          chart: "./charts/etcd-operator",
          rbac: join(etcd, "src/reconcile/rbac.ts"),
        },
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function check(operator: string): Promise<CliResult> {
    return runCliCaptured(["rbac", "--check", "--operator", operator], repo);
  }

  it("passes on the chart as committed", async () => {
    writeFileSync(rbacYaml(), original);
    const { code, out } = await check(dir);
    expect(code).toBe(0);
    expect(out).toMatch(/grants exactly what the operator needs \(3 renderings\)/);
  });

  it("fails naming a rule the chart lacks, cluster-wide and namespaced", async () => {
    const lacking = original.replace(
      "verbs: [get, list, watch, create, delete, patch]",
      "verbs: [get, list, watch, create, patch]",
    );
    expect(lacking).not.toBe(original);
    writeFileSync(rbacYaml(), lacking);
    const { code, err } = await check(dir);
    expect(code).toBe(1);
    expect(err).toMatch(
      /^cluster-wide \(default values\): the chart lacks delete on core\/pods cluster-wide \(the operator needs it: controller etcdcluster owns Pod; a member's pod/m,
    );
    expect(err).toMatch(
      /^namespaced \(watchNamespace=apps\): the chart lacks delete on core\/pods in namespace apps/m,
    );
    expect(err).toMatch(
      /^leaderElection.enabled=false metrics.secure=false: the chart lacks delete on core\/pods cluster-wide/m,
    );
    expect(err).toMatch(/3 difference\(s\)/);
  });

  it("fails naming a rule the operator does not need, cluster-wide and namespaced", async () => {
    const extra = original.replace(
      "  - apiGroups: [events.k8s.io]",
      '  - apiGroups: [""]\n    resources: [configmaps]\n    verbs: [get]\n  - apiGroups: [events.k8s.io]',
    );
    expect(extra).not.toBe(original);
    writeFileSync(rbacYaml(), extra);
    const { code, err } = await check(dir);
    expect(code).toBe(1);
    expect(err).toMatch(
      /^cluster-wide \(default values\): the chart grants get on core\/configmaps cluster-wide \(ClusterRole ops-ns-ops-etcd-operator\), which the operator does not need/m,
    );
    expect(err).toMatch(
      /^namespaced \(watchNamespace=apps\): the chart grants get on core\/configmaps in namespace apps \(Role ops-ns-ops-etcd-operator\)/m,
    );
  });

  it.each(["etcd", "vault", "prometheus"])("passes on the %s operator as committed", async (name) => {
    const { code, out, err } = await check(resolve(repo, "operators", name));
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain(`charts/${name}-operator grants exactly what the operator needs`);
  });
});
