// `capstan rbac --check`'s work: loads an operator's OperatorAccess (package.json "capstan.rbac"), renders its chart
// in each of RBAC_MODES (helm template), reads from the rendered Deployment how the operator is configured
// (watch namespace, leader election, secure metrics: core's command line), and compares what the ServiceAccount is
// granted with what the code needs: every needed permission the chart lacks, and every granted one it does not need.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseCommandLine } from "@capstan/core";
import { helmTemplate, type K8sObject } from "./chart.ts";
import { type OperatorConfig, readOperatorConfig } from "./config.ts";
import { type DerivedRule, deriveRules, type ManagerAccess, type OperatorAccess } from "./rbac.ts";

/** Imports the module named by "capstan.rbac" and returns its `access` export. */
export async function loadAccess(config: OperatorConfig): Promise<OperatorAccess> {
  if (config.rbacModule === undefined) {
    throw new Error(
      `${resolve(config.packageDir, "package.json")} names no "capstan.rbac": add "rbac": "./src/reconcile/rbac.ts", a module exporting "access" (an OperatorAccess from @capstan/cli)`,
    );
  }
  const file = resolve(config.packageDir, config.rbacModule);
  let mod: { access?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as typeof mod;
  } catch (err) {
    if ((err as { code?: unknown }).code === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw new Error(
        `Node ${process.versions.node} cannot import ${config.rbacModule}: capstan rbac needs Node 24 or later, which runs .ts modules (run it through npm run or npx in the repository)`,
      );
    }
    throw err;
  }
  const access = mod.access as Partial<OperatorAccess> | undefined;
  if (typeof access?.controllers !== "function" || !Array.isArray(access.rules)) {
    throw new Error(
      `${config.rbacModule} must export "access": { controllers: () => [the controllers main.ts adds], rules: [...] }`,
    );
  }
  return access as OperatorAccess;
}

/** One permission: a verb on a resource (or a non-resource URL) of a group, for one object or any, in one place. */
interface Atom {
  /** "*": cluster-wide; else a namespace. */
  where: string;
  apiGroup: string;
  resource: string;
  /** "" for any object. */
  name: string;
  verb: string;
  /** A non-resource URL rule (resource holds the URL). */
  url?: boolean;
}

/** A rendering the check compares: its label and the values it sets. */
export interface RbacMode {
  label: string;
  set: string[];
}

/**
 * The renderings `capstan rbac --check` compares: the chart's defaults (cluster-wide), a watchNamespace, and one
 * without leader election and secure metrics (whose rules must go with them).
 */
export const RBAC_MODES: RbacMode[] = [
  { label: "cluster-wide (default values)", set: [] },
  { label: "namespaced (watchNamespace=apps)", set: ["watchNamespace=apps"] },
  {
    label: "leaderElection.enabled=false metrics.secure=false",
    set: ["leaderElection.enabled=false", "metrics.secure=false"],
  },
];

const RELEASE = "ops";
const NAMESPACE = "ops-ns";

interface Container {
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[];
}

/** The operator's configuration as the rendered Deployment gives it: core's command line over its args and env. */
function managerOf(objects: K8sObject[], operatorName: string, where: string) {
  const deployments = objects.filter((o) => o.kind === "Deployment");
  if (deployments.length !== 1) {
    throw new Error(
      `${where}: the chart must render one Deployment (the operator), rendered ${deployments.length}`,
    );
  }
  const spec = (
    deployments[0]?.spec as {
      template?: { spec?: { serviceAccountName?: string; containers?: Container[] } };
    }
  )?.template?.spec;
  const container = spec?.containers?.[0];
  if (container === undefined) throw new Error(`${where}: the Deployment has no container`);
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === "metadata.namespace") env[e.name] = NAMESPACE;
    if (field === "metadata.name") env[e.name] = `${RELEASE}-pod`;
  }
  const cli = parseCommandLine({ name: operatorName, args: container.args ?? [], env });
  if (cli === "help") throw new Error(`${where}: the operator container's args ask for --help`);
  const manager: ManagerAccess = {
    metricsSecure: cli.metricsSecure,
    ...(cli.manager.leaderElection?.name === undefined ? {} : { leaseName: cli.manager.leaderElection.name }),
  };
  return {
    manager,
    watchNamespace: cli.watchNamespace,
    leaseNamespace: cli.manager.leaderElection?.namespace,
    serviceAccount: spec?.serviceAccountName ?? "default",
  };
}

interface RuleLike {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs?: string[];
}

/** Every permission the chart grants the ServiceAccount, with the Role or ClusterRole that grants it. */
function grantedAtoms(
  objects: K8sObject[],
  serviceAccount: string,
  where: string,
): { atom: Atom; by: string }[] {
  const out: { atom: Atom; by: string }[] = [];
  for (const b of objects.filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")) {
    const subjects = (b.subjects as { kind?: string; name?: string; namespace?: string }[] | undefined) ?? [];
    const bound = subjects.some(
      (s) =>
        s.kind === "ServiceAccount" &&
        s.name === serviceAccount &&
        (s.namespace ?? b.metadata.namespace) === NAMESPACE,
    );
    if (!bound) continue;
    const ref = b.roleRef as { kind?: string; name?: string } | undefined;
    const bindingNs = b.kind === "RoleBinding" ? (b.metadata.namespace ?? NAMESPACE) : "*";
    const role = objects.find(
      (o) =>
        o.kind === ref?.kind &&
        o.metadata.name === ref?.name &&
        (o.kind === "ClusterRole" || (o.metadata.namespace ?? NAMESPACE) === bindingNs),
    );
    if (role === undefined) {
      throw new Error(
        `${where}: ${b.kind} ${b.metadata.name} refers to ${ref?.kind} ${ref?.name}, which the chart does not render`,
      );
    }
    const by = `${role.kind} ${role.metadata.name}`;
    for (const r of (role.rules as RuleLike[] | undefined) ?? []) {
      for (const verb of r.verbs ?? []) {
        for (const url of r.nonResourceURLs ?? []) {
          out.push({
            atom: { where: bindingNs, apiGroup: "", resource: url, name: "", verb, url: true },
            by,
          });
        }
        for (const apiGroup of r.apiGroups ?? []) {
          for (const resource of r.resources ?? []) {
            for (const name of r.resourceNames?.length ? r.resourceNames : [""]) {
              out.push({ atom: { where: bindingNs, apiGroup, resource, name, verb }, by });
            }
          }
        }
      }
    }
  }
  return out;
}

/** The permissions `rules` need, placed by the configuration the chart gives the operator. */
function neededAtoms(
  rules: DerivedRule[],
  places: { watch: string; leaseNamespace: string | undefined },
): { atom: Atom; why: string[] }[] {
  return rules.flatMap((r) => {
    const where =
      r.scope === "cluster" ? "*" : r.scope === "watch" ? places.watch : (places.leaseNamespace ?? "default");
    return r.verbs.flatMap((verb) =>
      (r.resourceNames ?? [""]).map((name) => ({
        atom: {
          where,
          apiGroup: r.apiGroup,
          resource: r.resource,
          name,
          verb,
          ...(r.nonResourceURL ? { url: true } : {}),
        },
        why: r.why,
      })),
    );
  });
}

const wild = (granted: string, needed: string) => granted === "*" || granted === needed;

function covers(g: Atom, n: Atom): boolean {
  return (
    (g.url ?? false) === (n.url ?? false) &&
    wild(g.where, n.where) &&
    wild(g.apiGroup, n.apiGroup) &&
    wild(g.resource, n.resource) &&
    (g.name === "" || g.name === n.name) &&
    wild(g.verb, n.verb)
  );
}

const same = (a: Atom, b: Atom) =>
  a.where === b.where &&
  a.apiGroup === b.apiGroup &&
  a.resource === b.resource &&
  a.name === b.name &&
  a.verb === b.verb &&
  (a.url ?? false) === (b.url ?? false);

/** "policy/poddisruptionbudgets", "core/pods [my-lease]", "URL /metrics". */
function target(a: Atom): string {
  if (a.url) return `URL ${a.resource}`;
  return `${a.apiGroup === "" ? "core" : a.apiGroup}/${a.resource}${a.name === "" ? "" : ` [${a.name}]`}`;
}

const place = (where: string) => (where === "*" ? "cluster-wide" : `in namespace ${where}`);

/** Atoms grouped by everything but the verb: one line per resource, verbs in the order met. */
function grouped<T extends { atom: Atom }>(items: T[]): { atom: Atom; verbs: string[]; items: T[] }[] {
  const groups = new Map<string, { atom: Atom; verbs: string[]; items: T[] }>();
  for (const item of items) {
    const a = item.atom;
    const key = JSON.stringify([a.where, a.apiGroup, a.resource, a.name, a.url ?? false]);
    const group = groups.get(key) ?? { atom: a, verbs: [], items: [] };
    if (!group.verbs.includes(a.verb)) group.verbs.push(a.verb);
    group.items.push(item);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** What the chart renders in one mode, compared with what the code needs: one message per problem. */
export function compareRbac(
  access: OperatorAccess,
  objects: K8sObject[],
  operatorName: string,
  mode: string,
): string[] {
  const cfg = managerOf(objects, operatorName, mode);
  const rules = deriveRules(access, cfg.manager);
  const needed = neededAtoms(rules, { watch: cfg.watchNamespace ?? "*", leaseNamespace: cfg.leaseNamespace });
  const granted = grantedAtoms(objects, cfg.serviceAccount, mode);
  const problems: string[] = [];
  for (const g of grouped(needed.filter((n) => !granted.some((gr) => covers(gr.atom, n.atom))))) {
    const why = [...new Set(g.items.flatMap((i) => i.why))].join("; ");
    problems.push(
      `${mode}: the chart lacks ${g.verbs.join(", ")} on ${target(g.atom)} ${place(g.atom.where)} (the operator needs it: ${why})`,
    );
  }
  for (const g of grouped(granted.filter((gr) => !needed.some((n) => same(n.atom, gr.atom))))) {
    const by = [...new Set(g.items.map((i) => i.by))].join(", ");
    problems.push(
      `${mode}: the chart grants ${g.verbs.join(", ")} on ${target(g.atom)} ${place(g.atom.where)} (${by}), which the operator does not need: remove it, or declare why in its OperatorAccess`,
    );
  }
  return problems;
}

/** The operator's name as its command line gives it: the package name without its scope ("etcd-operator"). */
export function operatorNameOf(config: OperatorConfig): string {
  return config.packageName.replace(/^@[^/]+\//, "");
}

/**
 * `capstan rbac --check` for the operator in `packageDir`: every problem of every rendering of its chart (see
 * {@link compareRbac}); empty when the chart grants exactly what the code needs.
 */
export async function rbacDrift(
  packageDir: string,
  helm: string,
  modes: RbacMode[] = RBAC_MODES,
): Promise<string[]> {
  const config = readOperatorConfig(packageDir);
  if (config.chart === undefined) {
    throw new Error(
      `${resolve(packageDir, "package.json")} names no "capstan.chart": capstan rbac --check compares the chart's RBAC`,
    );
  }
  const access = await loadAccess(config);
  return modes.flatMap((mode) =>
    compareRbac(
      access,
      helmTemplate(helm, config.chart!, { release: RELEASE, namespace: NAMESPACE, set: mode.set }),
      operatorNameOf(config),
      mode.label,
    ),
  );
}
