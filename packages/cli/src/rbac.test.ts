// deriveRules: a table of controllers (for, owns in both forms, metadata-only kinds, watches of namespaced and
// cluster-scoped kinds) and declared rules, with and without leader election and secure metrics; formatRules against
// its golden file (testdata/rbac-rules.golden.yaml; CAPSTAN_UPDATE_GOLDEN=1 rewrites it), parsing back to the rules.
import { readFileSync, writeFileSync } from "node:fs";
import {
  ConfigMap,
  controller,
  defineKind,
  labelsChanged,
  metadataOnly,
  Namespace,
  owns,
  Pod,
  Secret,
  Service,
  StatefulSet,
  watch,
} from "@capstan/core";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  type AccessRule,
  type DerivedRule,
  deriveRules,
  formatRules,
  type ManagerAccess,
  type OperatorAccess,
} from "./rbac.ts";

const Widget = defineKind({
  group: "example.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
});
const Cluster = defineKind({
  group: "example.dev",
  version: "v1",
  kind: "Cluster",
  plural: "clusters",
  namespaced: false,
});
const reconcile = async () => undefined;
const none: ManagerAccess = { metricsSecure: false };

/** The rules as "scope group/resource[names]: verbs" lines, in derivation order. */
function lines(rules: DerivedRule[]): string[] {
  return rules.map((r) =>
    r.nonResourceURL
      ? `${r.scope} URL ${r.resource}: ${r.verbs.join()}`
      : `${r.scope} ${r.apiGroup}/${r.resource}${r.resourceNames ? `[${r.resourceNames.join()}]` : ""}: ${r.verbs.join()}`,
  );
}

const forWidget = [
  "watch example.dev/widgets: get,list,watch",
  "watch example.dev/widgets/status: get,update,patch",
  "watch example.dev/widgets/finalizers: update",
];
const events = "watch events.k8s.io/events: create,patch";

const cases: { name: string; access: OperatorAccess; manager?: ManagerAccess; want: string[] }[] = [
  {
    name: "a for kind alone: read it, its status and finalizers, and Events",
    access: { controllers: () => [controller({ name: "w", for: Widget, reconcile })], rules: [] },
    want: [...forWidget, events],
  },
  {
    name: "owns as kinds, owns(kind, predicates) and a metadata-only kind: read each",
    access: {
      controllers: () => [
        controller({
          name: "w",
          for: Widget,
          owns: [Service, owns(Pod, [labelsChanged()]), { kind: ConfigMap }, metadataOnly(Secret)],
          reconcile,
        }),
      ],
      rules: [],
    },
    want: [
      ...forWidget,
      "watch /services: get,list,watch",
      "watch /pods: get,list,watch",
      "watch /configmaps: get,list,watch",
      "watch /secrets: get,list,watch",
      events,
    ],
  },
  {
    name: "watches of a namespaced and a cluster-scoped kind: the Namespace read is cluster-wide",
    access: {
      controllers: () => [
        controller({
          name: "w",
          for: Widget,
          watches: [watch(Namespace, () => []), watch(metadataOnly(Pod), () => [])],
          reconcile,
        }),
      ],
      rules: [],
    },
    want: [...forWidget, "cluster /namespaces: get,list,watch", "watch /pods: get,list,watch", events],
  },
  {
    name: "a cluster-scoped for kind: its rules are cluster-wide",
    access: { controllers: () => [controller({ name: "c", for: Cluster, reconcile })], rules: [] },
    want: [
      "cluster example.dev/clusters: get,list,watch",
      "cluster example.dev/clusters/status: get,update,patch",
      "cluster example.dev/clusters/finalizers: update",
      events,
    ],
  },
  {
    name: "declared writes merge into the read rule of the same kind; a subresource and named objects are rules of their own",
    access: {
      controllers: () => [controller({ name: "w", for: Widget, owns: [StatefulSet], reconcile })],
      rules: [
        { kind: StatefulSet, verbs: ["patch", "create"], why: "apply" },
        { kind: StatefulSet, verbs: ["delete"], why: "scale to nothing" },
        { kind: Pod, subresource: "exec", verbs: ["create"], why: "a backup runs in the pod" },
        { kind: Secret, verbs: ["get"], resourceNames: ["b", "a"], why: "two Secrets by name" },
        { kind: Widget, verbs: ["patch"], why: "a finalizer" },
      ],
    },
    want: [
      "watch example.dev/widgets: get,list,watch,patch",
      "watch example.dev/widgets/status: get,update,patch",
      "watch example.dev/widgets/finalizers: update",
      "watch apps/statefulsets: get,list,watch,create,patch,delete",
      "watch /pods/exec: create",
      "watch /secrets[a,b]: get",
      events,
    ],
  },
  {
    name: "two controllers: each one's kinds, once",
    access: {
      controllers: () => [
        controller({ name: "w", for: Widget, owns: [Pod], reconcile }),
        controller({ name: "c", for: Cluster, owns: [Pod], reconcile }),
      ],
      rules: [],
    },
    want: [
      ...forWidget,
      "watch /pods: get,list,watch",
      "cluster example.dev/clusters: get,list,watch",
      "cluster example.dev/clusters/status: get,update,patch",
      "cluster example.dev/clusters/finalizers: update",
      events,
    ],
  },
  {
    name: "non-resource URLs: cluster-wide, one rule per URL, apart from any resource",
    access: {
      controllers: () => [controller({ name: "w", for: Widget, reconcile })],
      rules: [],
      nonResourceRules: [
        { nonResourceURLs: ["/metrics", "/metrics/slis"], verbs: ["get"], why: "granted on" },
      ],
    },
    want: [...forWidget, "cluster URL /metrics: get", "cluster URL /metrics/slis: get", events],
  },
  {
    name: "leader election and secure metrics: the Lease (create, and get and update on its own) and the reviews",
    access: { controllers: () => [controller({ name: "w", for: Widget, reconcile })], rules: [] },
    manager: { leaseName: "my-lease", metricsSecure: true },
    want: [
      ...forWidget,
      events,
      "leader-election coordination.k8s.io/leases: create",
      "leader-election coordination.k8s.io/leases[my-lease]: get,update",
      "cluster authentication.k8s.io/tokenreviews: create",
      "cluster authorization.k8s.io/subjectaccessreviews: create",
    ],
  },
];

describe("deriveRules", () => {
  it.each(cases)("$name", ({ access, manager, want }) => {
    expect(lines(deriveRules(access, manager ?? none))).toEqual(want);
  });

  it("keeps why each rule is needed, every source once", () => {
    const rules = deriveRules(
      {
        controllers: () => [controller({ name: "w", for: Widget, owns: [Pod], reconcile })],
        rules: [
          { kind: Pod, verbs: ["create"], why: "members" },
          { kind: Pod, verbs: ["delete"], why: "members" },
        ],
      },
      none,
    );
    expect(rules.find((r) => r.resource === "pods")?.why).toEqual(["controller w owns Pod", "members"]);
  });

  it.each([
    [{ kind: Pod, verbs: ["destroy"], why: "x" }, /access.rules\[0\] \(Pod\): unknown verb "destroy"/],
    [{ kind: Pod, verbs: [], why: "x" }, /"verbs" must list at least one verb/],
    [{ kind: Pod, verbs: ["get"], why: " " }, /"why" must say/],
    [{ kind: Pod, verbs: ["get"], why: "x", resourceNames: [] }, /"resourceNames" must name at least one/],
    [{ kind: { kind: "Pod" }, verbs: ["get"], why: "x" }, /must be a kind descriptor/],
  ])("refuses a malformed declared rule: %j", (rule, message) => {
    const access = {
      controllers: () => [controller({ name: "w", for: Widget, reconcile })],
      rules: [rule as unknown as AccessRule],
    };
    expect(() => deriveRules(access, none)).toThrow(message);
  });

  it.each([
    [{ nonResourceURLs: ["metrics"], verbs: ["get"], why: "x" }, /URL paths starting with "\/"/],
    [{ nonResourceURLs: ["/metrics"], verbs: [], why: "x" }, /"verbs" must list at least one verb/],
  ])("refuses a malformed non-resource rule: %j", (rule, message) => {
    const access = {
      controllers: () => [controller({ name: "w", for: Widget, reconcile })],
      rules: [],
      nonResourceRules: [rule as never],
    };
    expect(() => deriveRules(access, none)).toThrow(message);
  });

  it("prints a non-resource rule as nonResourceURLs", () => {
    const text = formatRules(
      deriveRules(
        {
          controllers: () => [controller({ name: "w", for: Widget, reconcile })],
          rules: [],
          nonResourceRules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"], why: "granted on" }],
        },
        none,
      ),
    );
    expect(text).toContain('  # granted on\n  - nonResourceURLs: ["/metrics"]\n    verbs: [get]\n');
    // It parses back to a rule a ClusterRole takes.
    const docs = parseAllDocuments(text).map((d) => d.toJS() as { rules: unknown[] });
    expect(docs.at(-1)?.rules).toContainEqual({ nonResourceURLs: ["/metrics"], verbs: ["get"] });
  });

  it("refuses an access with no controller, or something that is not one", () => {
    expect(() => deriveRules({ controllers: () => [], rules: [] }, none)).toThrow(/at least one controller/);
    expect(() => deriveRules({ controllers: () => [{}] as never, rules: [] }, none)).toThrow(
      /controllers made with controller\(\)/,
    );
  });
});

describe("formatRules", () => {
  const rules = deriveRules(
    {
      controllers: () => [
        controller({ name: "w", for: Widget, owns: [Pod], watches: [watch(Namespace, () => [])], reconcile }),
      ],
      rules: [{ kind: Pod, verbs: ["create", "patch"], why: 'pods: "apply"' }],
    },
    { leaseName: "w-leader", metricsSecure: true },
  );
  const text = formatRules(rules);
  const golden = new URL("../testdata/rbac-rules.golden.yaml", import.meta.url);

  it("prints one commented rules list per scope, as the golden file", () => {
    if (process.env.CAPSTAN_UPDATE_GOLDEN === "1") writeFileSync(golden, text);
    expect(text).toBe(readFileSync(golden, "utf8"));
  });

  it("parses back to the derived rules, scope by scope", () => {
    const docs = parseAllDocuments(text).map((d) => d.toJSON() as { rules: unknown[] });
    const byScope = ["watch", "cluster", "leader-election"].map((scope) =>
      rules
        .filter((r) => r.scope === scope)
        .map((r) => ({
          apiGroups: [r.apiGroup],
          resources: [r.resource],
          ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
          verbs: r.verbs,
        })),
    );
    expect(docs.map((d) => d.rules)).toEqual(byScope);
  });
});
