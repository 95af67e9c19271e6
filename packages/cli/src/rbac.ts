// `capstan rbac`'s model: what an operator declares about its access (OperatorAccess, in one module next to its
// controller), and the RBAC rules derived from it and from what its controllers watch and the manager does
// (leader election, events, secure metrics), each with the scope it is needed in and why.
import type { Controller, Kind } from "@capstan/core";

/** A Kubernetes API verb. */
export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "deletecollection"
  | "bind"
  | "escalate"
  | "impersonate";

/** The order verbs are printed in. */
export const VERB_ORDER: readonly Verb[] = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "bind",
  "escalate",
  "impersonate",
];

/** Reading through the cache (an informer): get, list and watch. */
export const READ: readonly Verb[] = ["get", "list", "watch"];

/**
 * Access a reconciler needs beyond reading what its controller watches: the write verbs it uses on a kind (server-side
 * apply is `create` + `patch`), reads of kinds it does not watch (a cache read starts an informer: get, list,
 * watch; a client read is `get`), or a subresource (`pods/exec`).
 */
export interface AccessRule {
  /** The kind, as a core descriptor (`Pod`, `defineKind(...)`); its group, plural and scope name the resource. */
  kind: Kind;
  /** A subresource, e.g. "exec" or "status". */
  subresource?: string;
  verbs: readonly Verb[];
  /** Only these objects (the rule then says nothing about the others). */
  resourceNames?: readonly string[];
  /** Why the operator needs it: `capstan rbac` prints it above the rule, `--check` when the chart lacks it. */
  why: string;
}

/**
 * Access to non-resource URLs (e.g. get on /metrics), always cluster-wide: an operator needs it itself only to grant it
 * to others (Kubernetes refuses a grant of more than the granter holds).
 */
export interface NonResourceAccessRule {
  /** e.g. ["/metrics"]. */
  nonResourceURLs: readonly string[];
  verbs: readonly Verb[];
  /** Why the operator needs it, as for {@link AccessRule}. */
  why: string;
}

/**
 * What an operator may do in the cluster: the one place it declares its access (e.g. src/reconcile/rbac.ts, named by
 * "capstan.rbac" in package.json, exporting `access`). Read rules of the watched kinds, status and finalizers of each
 * `for` kind, Events, the leader-election Lease and the metrics reviews are derived; `rules` adds the rest.
 */
export interface OperatorAccess {
  /** The controllers main.ts adds, built as main.ts builds them (nothing is started; only their kinds are read). */
  // biome-ignore lint/suspicious/noExplicitAny: each controller has its own object type.
  controllers: () => readonly Controller<any>[];
  /** The write verbs per kind and any other access the reconcilers need. */
  rules: readonly AccessRule[];
  /** Non-resource URLs the operator needs, cluster-wide. */
  nonResourceRules?: readonly NonResourceAccessRule[];
}

/**
 * Where a rule is needed. `watch`: where the operator watches (cluster-wide, or the --watch-namespace);
 * `cluster`: cluster-wide whatever the operator watches (cluster-scoped kinds, the metrics reviews);
 * `leader-election`: the Lease's namespace.
 */
export type Scope = "watch" | "cluster" | "leader-election";

/** One derived rule: verbs on one resource (or subresource) of one API group, in one scope. */
export interface DerivedRule {
  scope: Scope;
  apiGroup: string;
  /** The plural, or "plural/subresource"; the URL of a non-resource rule. */
  resource: string;
  /** A non-resource URL rule (apiGroup ""; scope cluster). */
  nonResourceURL?: true;
  /** Only these objects; absent: any object. */
  resourceNames?: string[];
  verbs: Verb[];
  /** Why: one entry per source that needs it. */
  why: string[];
}

/** What the manager does with the API that needs RBAC, as the operator's command line configures it. */
export interface ManagerAccess {
  /** The Lease's name when leader election is on. */
  leaseName?: string;
  /** /metrics over HTTPS behind TokenReview and SubjectAccessReview (core's default). */
  metricsSecure: boolean;
}

/** The manager as `capstan rbac` prints it by default: leader election on (the Lease named so), secure metrics. */
export const DEFAULT_MANAGER_ACCESS: ManagerAccess = {
  leaseName: "<leader-election-id>",
  metricsSecure: true,
};

const sortVerbs = (verbs: Iterable<Verb>): Verb[] =>
  [...new Set(verbs)].sort((a, b) => VERB_ORDER.indexOf(a) - VERB_ORDER.indexOf(b));

/** The name of a kind's resource, e.g. "pods" or "pods/exec". */
function resourceOf(kind: Kind, subresource?: string): string {
  return subresource === undefined ? kind.plural : `${kind.plural}/${subresource}`;
}

/** Checks a declared rule; throws naming it and what to fix. */
function checkRule(rule: AccessRule, index: number): void {
  const at = `access.rules[${index}] (${rule.kind?.kind ?? "no kind"})`;
  if (typeof rule.kind?.plural !== "string" || typeof rule.kind.group !== "string") {
    throw new Error(`${at}: "kind" must be a kind descriptor from @capstan/core (Pod, defineKind(...))`);
  }
  if (!Array.isArray(rule.verbs) || rule.verbs.length === 0) {
    throw new Error(`${at}: "verbs" must list at least one verb`);
  }
  for (const v of rule.verbs) {
    if (!VERB_ORDER.includes(v))
      throw new Error(`${at}: unknown verb "${v}" (known: ${VERB_ORDER.join(", ")})`);
  }
  if (typeof rule.why !== "string" || rule.why.trim() === "") {
    throw new Error(`${at}: "why" must say what the operator does with it`);
  }
  if (rule.resourceNames !== undefined && rule.resourceNames.length === 0) {
    throw new Error(`${at}: "resourceNames" must name at least one object, or be left out`);
  }
}

/**
 * The rules an operator needs: read (get, list, watch) on every kind its controllers are `for`, `owns` or `watches`;
 * get, update and patch on each `for` kind's status and update on its finalizers (owner references with
 * blockOwnerDeletion); create and patch on events.k8s.io Events (the recorder); the declared rules; with leader
 * election, create on Leases and get and update on the manager's own Lease; with secure metrics, create on
 * TokenReviews and SubjectAccessReviews. Rules on one resource, scope and resourceNames are merged, in the order
 * first met.
 */
export function deriveRules(access: OperatorAccess, manager: ManagerAccess): DerivedRule[] {
  const out = new Map<string, DerivedRule>();
  const add = (
    scope: Scope,
    apiGroup: string,
    resource: string,
    verbs: readonly Verb[],
    why: string,
    resourceNames?: readonly string[],
    nonResourceURL = false,
  ) => {
    const names = resourceNames === undefined ? undefined : [...new Set(resourceNames)].sort();
    const key = JSON.stringify([scope, apiGroup, resource, names ?? null, nonResourceURL]);
    const rule = out.get(key);
    if (rule === undefined) {
      out.set(key, {
        scope,
        apiGroup,
        resource,
        ...(nonResourceURL ? { nonResourceURL: true as const } : {}),
        ...(names === undefined ? {} : { resourceNames: names }),
        verbs: sortVerbs(verbs),
        why: [why],
      });
      return;
    }
    rule.verbs = sortVerbs([...rule.verbs, ...verbs]);
    if (!rule.why.includes(why)) rule.why.push(why);
  };
  const scopeOf = (kind: Kind): Scope => (kind.namespaced ? "watch" : "cluster");

  const controllers = access.controllers();
  if (controllers.length === 0) throw new Error("access.controllers() must return at least one controller");
  for (const c of controllers) {
    if (typeof c?.watchedKinds !== "function") {
      throw new Error(
        "access.controllers() must return controllers made with controller() from @capstan/core",
      );
    }
    const kinds = c.watchedKinds();
    const f = kinds.for;
    add(scopeOf(f), f.group, f.plural, READ, `controller ${c.name} reconciles ${f.kind}`);
    add(
      scopeOf(f),
      f.group,
      `${f.plural}/status`,
      ["get", "update", "patch"],
      `controller ${c.name} writes ${f.kind} status`,
    );
    add(
      scopeOf(f),
      f.group,
      `${f.plural}/finalizers`,
      ["update"],
      `controller ${c.name} sets owner references (blockOwnerDeletion) to ${f.kind}`,
    );
    for (const k of kinds.owns)
      add(scopeOf(k), k.group, k.plural, READ, `controller ${c.name} owns ${k.kind}`);
    for (const k of kinds.watches)
      add(scopeOf(k), k.group, k.plural, READ, `controller ${c.name} watches ${k.kind}`);
  }
  access.rules.forEach((rule, i) => {
    checkRule(rule, i);
    add(
      scopeOf(rule.kind),
      rule.kind.group,
      resourceOf(rule.kind, rule.subresource),
      rule.verbs,
      rule.why,
      rule.resourceNames,
    );
  });
  (access.nonResourceRules ?? []).forEach((rule, i) => {
    const at = `access.nonResourceRules[${i}]`;
    if (!Array.isArray(rule.nonResourceURLs) || rule.nonResourceURLs.some((u) => !u.startsWith("/"))) {
      throw new Error(`${at}: "nonResourceURLs" must list URL paths starting with "/"`);
    }
    if (
      !Array.isArray(rule.verbs) ||
      rule.verbs.length === 0 ||
      rule.verbs.some((v) => !VERB_ORDER.includes(v))
    ) {
      throw new Error(`${at}: "verbs" must list at least one verb of ${VERB_ORDER.join(", ")}`);
    }
    for (const url of rule.nonResourceURLs) add("cluster", "", url, rule.verbs, rule.why, undefined, true);
  });
  add("watch", "events.k8s.io", "events", ["create", "patch"], "the event recorder");
  if (manager.leaseName !== undefined) {
    add("leader-election", "coordination.k8s.io", "leases", ["create"], "leader election creates the Lease");
    add(
      "leader-election",
      "coordination.k8s.io",
      "leases",
      ["get", "update"],
      "leader election reads and renews its Lease",
      [manager.leaseName],
    );
  }
  if (manager.metricsSecure) {
    const why = "secure metrics: the API server authenticates and authorizes each scrape";
    add("cluster", "authentication.k8s.io", "tokenreviews", ["create"], why);
    add("cluster", "authorization.k8s.io", "subjectaccessreviews", ["create"], why);
  }
  return [...out.values()];
}

/** What each scope means, as `capstan rbac` prints it. */
export const SCOPE_TITLES: Record<Scope, string> = {
  watch:
    "where the operator watches: a ClusterRole (bound cluster-wide) when it watches every namespace, else a Role in its --watch-namespace",
  cluster: "cluster-wide whatever the operator watches: a ClusterRole with a ClusterRoleBinding",
  "leader-election": "in the leader-election Lease's namespace: a Role",
};

/** A YAML scalar in flow style: bare when it is plain, else double-quoted. */
function scalar(value: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9.\-/*]*$/.test(value) ? value : JSON.stringify(value);
}

const flow = (values: readonly string[]) => `[${values.map(scalar).join(", ")}]`;

/**
 * The rules as YAML: one document per scope that has rules, each a `rules:` list a Role or ClusterRole takes, with a
 * comment saying where it belongs and, above each rule, why it is needed.
 */
export function formatRules(rules: readonly DerivedRule[]): string {
  const docs: string[] = [];
  for (const scope of ["watch", "cluster", "leader-election"] as const) {
    const inScope = rules.filter((r) => r.scope === scope);
    if (inScope.length === 0) continue;
    const lines = [`# Needed ${SCOPE_TITLES[scope]}.`, "rules:"];
    for (const r of inScope) {
      for (const why of r.why) lines.push(`  # ${why.replace(/\s+/g, " ")}`);
      if (r.nonResourceURL) {
        lines.push(`  - nonResourceURLs: ${flow([r.resource])}`);
        lines.push(`    verbs: ${flow(r.verbs)}`);
        continue;
      }
      lines.push(`  - apiGroups: ${flow([r.apiGroup])}`);
      lines.push(`    resources: ${flow([r.resource])}`);
      if (r.resourceNames !== undefined) lines.push(`    resourceNames: ${flow(r.resourceNames)}`);
      lines.push(`    verbs: ${flow(r.verbs)}`);
    }
    docs.push(`${lines.join("\n")}\n`);
  }
  return docs.join("---\n");
}
