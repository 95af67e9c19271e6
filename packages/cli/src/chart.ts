/**
 * @capstan/cli/chart: the checks every operator's chart test makes, whatever the operator: its CRD copies match
 * the schema, helm lint/template of each mode (when helm is installed), pods that pass Pod Security "restricted",
 * RBAC that covers the operator's kinds, standard labels, and the PromQL of its dashboard and alerts (chart-monitoring.ts).
 *
 * @module @capstan/cli/chart
 */

import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { parseAllDocuments } from "yaml";
import { type Drift, planCrdFiles, planDrift } from "./crd-files.ts";

export { chartImage } from "./chart-image.ts";
export * from "./chart-monitoring.ts";
export { findHelm, HELM_LOOKUP_HINT, requireHelm } from "./find-helm.ts";

import type { K8sObject } from "./k8s-object.ts";

export type { K8sObject } from "./k8s-object.ts";

/**
 * The drift of the chart's CRD copies (`templates/crds/`, and Helm's `crds/` for the CRDs installed only where
 * absent) of the operator in `packageDir`, whose package.json names the chart in "capstan.chart": empty when they
 * are what `capstan crd` writes. Throws when no chart is named.
 */
export async function chartCrdDrift(packageDir: string): Promise<Drift[]> {
  const plan = await planCrdFiles(packageDir);
  if (plan.config.chart === undefined) {
    throw new Error(`${join(packageDir, "package.json")} names no "capstan.chart"`);
  }
  const under = resolve(plan.config.chart) + sep;
  return planDrift(plan).filter((d) => d.path.startsWith(under));
}

/**
 * The API versions `helm template` passes by default (`--api-versions`): those of prometheus-operator's
 * ServiceMonitor and PrometheusRule, which the charts render only where the cluster serves them. `helm template`
 * has no cluster, so without them its Capabilities lack monitoring.coreos.com; with them it renders what an
 * install on a cluster with those CRDs does, which is what most tests look at.
 */
export const MONITORING_API_VERSIONS: readonly string[] = [
  "monitoring.coreos.com/v1/ServiceMonitor",
  "monitoring.coreos.com/v1/PrometheusRule",
];

/** How to render a chart: the release name (default "ops"), its namespace (default "ops-ns"), --set values. */
export interface RenderOptions {
  release?: string;
  namespace?: string;
  set?: string[];
  /** A values document (given to helm on stdin, `-f -`), for lists and objects --set cannot write well. */
  values?: Record<string, unknown>;
  /**
   * The API versions the cluster is taken to serve (`--api-versions`, e.g. "monitoring.coreos.com/v1/ServiceMonitor"),
   * besides Helm's built-in ones: default {@link MONITORING_API_VERSIONS}; `[]` renders as for a cluster with
   * none of the monitoring.coreos.com CRDs.
   */
  apiVersions?: readonly string[];
  /** Render the chart's `crds/` files too (`--include-crds`), as `helm install` creates them before the templates. */
  includeCrds?: boolean;
  /** Render only these templates (`--show-only`, e.g. "templates/servicemonitor.yaml"). */
  showOnly?: string[];
}

/** `helm lint --strict` of `chartDir` with --set values; helm's output, or throws with helm's stderr. */
export function helmLint(helm: string, chartDir: string, set: string[] = []): string {
  return runHelm(helm, ["lint", "--strict", chartDir, ...set.flatMap((s) => ["--set", s])]);
}

/** `helm template` of `chartDir`: the rendered objects; throws with helm's stderr when rendering fails. */
export function helmTemplate(helm: string, chartDir: string, options: RenderOptions = {}): K8sObject[] {
  const out = runHelm(
    helm,
    [
      "template",
      options.release ?? "ops",
      chartDir,
      "--namespace",
      options.namespace ?? "ops-ns",
      ...(options.apiVersions ?? MONITORING_API_VERSIONS).flatMap((v) => ["--api-versions", v]),
      ...(options.includeCrds === true ? ["--include-crds"] : []),
      ...(options.showOnly ?? []).flatMap((t) => ["--show-only", t]),
      ...(options.set ?? []).flatMap((s) => ["--set", s]),
      ...(options.values === undefined ? [] : ["--values", "-"]),
    ],
    options.values === undefined ? undefined : JSON.stringify(options.values),
  );
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** helm's error output for a `helm template` expected to fail; throws when it renders. */
export function helmTemplateError(helm: string, chartDir: string, options: RenderOptions = {}): string {
  try {
    helmTemplate(helm, chartDir, options);
  } catch (err) {
    return String((err as { stderr?: unknown }).stderr ?? err);
  }
  const values = options.values === undefined ? "" : ` --values ${JSON.stringify(options.values)}`;
  throw new Error(`helm template ${(options.set ?? []).join(" ")}${values} succeeded; expected it to fail`);
}

const NOTES_UNDER_TEST = "capstan-notes-under-test";

/**
 * The chart's `templates/NOTES.txt` as `helm install` would print it with these options (the API versions
 * included, as for {@link helmTemplate}). `helm template` never renders NOTES.txt (`--show-only
 * templates/NOTES.txt` finds no such template) and `helm install --dry-run=client` still needs a reachable
 * cluster, so this renders it through `helm template` of a copy of the chart in which NOTES.txt is a named
 * template, included verbatim by a ConfigMap. Throws with helm's stderr when rendering fails.
 */
export function helmNotes(helm: string, chartDir: string, options: RenderOptions = {}): string {
  const copy = mkdtempSync(join(tmpdir(), "capstan-notes-"));
  try {
    // dereference: the library chart is a link (charts/capstan-operator -> ../../capstan-operator).
    cpSync(chartDir, copy, { recursive: true, dereference: true });
    const templates = join(copy, "templates");
    const notes = readFileSync(join(templates, "NOTES.txt"), "utf8");
    rmSync(join(templates, "NOTES.txt"));
    writeFileSync(
      join(templates, `_${NOTES_UNDER_TEST}.tpl`),
      `{{- define "${NOTES_UNDER_TEST}" }}${notes}{{ end }}`,
    );
    writeFileSync(
      join(templates, `${NOTES_UNDER_TEST}.yaml`),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${NOTES_UNDER_TEST}\ndata:\n  NOTES.txt: {{ include "${NOTES_UNDER_TEST}" . | toJson }}\n`,
    );
    const [configMap] = helmTemplate(helm, copy, {
      ...options,
      showOnly: [`templates/${NOTES_UNDER_TEST}.yaml`],
    });
    const data = configMap?.data as Record<string, string> | undefined;
    return data?.["NOTES.txt"] ?? "";
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

function runHelm(helm: string, args: string[], input?: string): string {
  return execFileSync(helm, args, {
    encoding: "utf8",
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    ...(input === undefined ? {} : { input }),
  });
}

/** The objects of one kind. */
export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

/** The names of the objects of one kind, sorted. */
export function namesOf(objects: K8sObject[], kind: string): string[] {
  return ofKind(objects, kind)
    .map((o) => o.metadata.name)
    .sort();
}

/** The one object of a kind and name; throws listing the names there are. */
export function named(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = ofKind(objects, kind).find((o) => o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} among ${namesOf(objects, kind).join(", ")}`);
  return found;
}

/** The one object of a kind (and name, when given); throws saying how many there are. */
export function single<T extends K8sObject = K8sObject>(
  objects: K8sObject[],
  kind: string,
  name?: string,
): T {
  const found = ofKind(objects, kind).filter((o) => name === undefined || o.metadata.name === name);
  if (found.length !== 1) throw new Error(`want one ${kind} ${name ?? ""}, rendered ${found.length}`);
  return found[0] as T;
}

/** An RBAC rule as a chart renders it. */
export interface RuleLike {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

/**
 * A whole grant at a glance: "group/resource[names]: verbs" for every resource (or non-resource URL) of every rule,
 * verbs and lines sorted, e.g. "apps/statefulsets: create,get,list,patch,update,watch".
 */
export function grantList(rules: RuleLike[] = []): string[] {
  return rules
    .flatMap((r) =>
      (r.resources ?? r.nonResourceURLs ?? []).map(
        (res) =>
          `${r.apiGroups?.[0] ?? ""}/${res}${r.resourceNames ? `[${r.resourceNames.join()}]` : ""}: ${[...r.verbs].sort().join(",")}`,
      ),
    )
    .sort();
}

/** An operator container as the chart tests read it. */
export interface OperatorContainer {
  name: string;
  image: string;
  env: { name: string; value?: string }[];
  securityContext: Record<string, unknown>;
  ports: { name: string; containerPort: number }[];
  volumeMounts?: unknown[];
}

/** An operator pod spec as the chart tests read it. */
export interface OperatorPodSpec {
  terminationGracePeriodSeconds: number;
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  containers: OperatorContainer[];
  volumes?: unknown[];
}

/** The pod spec of the chart's one Deployment (the operator's). */
export function deploymentPodSpec(objects: K8sObject[]): OperatorPodSpec {
  return (single(objects, "Deployment").spec as { template: { spec: OperatorPodSpec } }).template.spec;
}

/** The value of a container's environment variable (undefined when unset or from a reference). */
export function envValue(container: OperatorContainer, name: string): string | undefined {
  return container.env.find((e) => e.name === name)?.value;
}

/** A pod spec as far as the checks read it. */
export interface PodSpecLike {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: SecurityContextLike;
  volumes?: Record<string, unknown>[];
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
  ephemeralContainers?: ContainerLike[];
}

interface SecurityContextLike {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  seccompProfile?: { type?: string };
  capabilities?: { add?: string[]; drop?: string[] };
  procMount?: string;
}

interface ContainerLike {
  name: string;
  securityContext?: SecurityContextLike;
  ports?: { hostPort?: number }[];
}

/** The pod specs of the workloads among `objects` (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob). */
export function podSpecs(objects: K8sObject[]): { owner: string; spec: PodSpecLike }[] {
  const found: { owner: string; spec: PodSpecLike }[] = [];
  for (const o of objects) {
    const spec = o.spec as Record<string, unknown> | undefined;
    let pod: unknown;
    if (o.kind === "Pod") pod = spec;
    else if (["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"].includes(o.kind)) {
      pod = (spec?.template as { spec?: unknown } | undefined)?.spec;
    } else if (o.kind === "CronJob") {
      pod = (spec?.jobTemplate as { spec?: { template?: { spec?: unknown } } } | undefined)?.spec?.template
        ?.spec;
    }
    if (pod !== undefined) found.push({ owner: `${o.kind} ${o.metadata.name}`, spec: pod as PodSpecLike });
  }
  return found;
}

/** Volume types Pod Security "restricted" allows. */
const RESTRICTED_VOLUMES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

/**
 * What keeps a pod from passing the Pod Security Standards' "restricted" profile (the baseline checks on host
 * namespaces, privileged containers, host ports and procMount, and restricted's volume types, non-root,
 * no privilege escalation, seccomp RuntimeDefault or Localhost, capabilities drop ALL): one message per
 * violation naming `owner`, the container and the field; empty when the pod passes.
 */
export function restrictedViolations(owner: string, pod: PodSpecLike): string[] {
  const out: string[] = [];
  const podSc = pod.securityContext ?? {};
  for (const field of ["hostNetwork", "hostPID", "hostIPC"] as const) {
    if (pod[field] === true) out.push(`${owner}: spec.${field} must be false`);
  }
  for (const v of pod.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (type === undefined || !RESTRICTED_VOLUMES.includes(type)) {
      out.push(
        `${owner}: volume ${String(v.name)} is of type ${type}; allowed: ${RESTRICTED_VOLUMES.join(", ")}`,
      );
    }
  }
  if (podSc.runAsUser === 0) out.push(`${owner}: spec.securityContext.runAsUser must not be 0`);
  const seccompOk = (sc: SecurityContextLike | undefined) =>
    sc?.seccompProfile?.type === "RuntimeDefault" || sc?.seccompProfile?.type === "Localhost";
  const all = [...(pod.initContainers ?? []), ...(pod.containers ?? []), ...(pod.ephemeralContainers ?? [])];
  for (const c of all) {
    const sc = c.securityContext ?? {};
    const at = `${owner}: container ${c.name}: securityContext`;
    if (sc.privileged === true) out.push(`${at}.privileged must be false`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${at}.allowPrivilegeEscalation must be false`);
    if (sc.runAsNonRoot === false || (sc.runAsNonRoot !== true && podSc.runAsNonRoot !== true)) {
      out.push(`${at}.runAsNonRoot (or the pod's) must be true`);
    }
    if (sc.runAsUser === 0) out.push(`${at}.runAsUser must not be 0`);
    if (sc.seccompProfile !== undefined ? !seccompOk(sc) : !seccompOk(podSc)) {
      out.push(`${at}.seccompProfile (or the pod's) must be RuntimeDefault or Localhost`);
    }
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) out.push(`${at}.capabilities.drop must contain ALL`);
    for (const cap of sc.capabilities?.add ?? []) {
      if (cap !== "NET_BIND_SERVICE")
        out.push(`${at}.capabilities.add may hold only NET_BIND_SERVICE, not ${cap}`);
    }
    if (sc.procMount !== undefined && sc.procMount !== "Default") out.push(`${at}.procMount must be Default`);
    for (const p of c.ports ?? []) {
      if ((p.hostPort ?? 0) !== 0)
        out.push(`${owner}: container ${c.name}: hostPort ${p.hostPort} is not allowed`);
    }
  }
  return out;
}

/** A permission the operator needs: `verbs` on `resource` (e.g. "etcdclusters/status") of `apiGroup`. */
export interface Permission {
  apiGroup: string;
  resource: string;
  verbs: string[];
}

/** What a controller needs on the kinds it is `for`: read them, write their status, set owner refs (finalizers). */
export function crdPermissions(crds: CustomResourceDefinitionObject[]): Permission[] {
  return crds.flatMap((crd) => {
    const { group, names } = crd.spec;
    return [
      { apiGroup: group, resource: names.plural, verbs: ["get", "list", "watch"] },
      { apiGroup: group, resource: `${names.plural}/status`, verbs: ["get", "update", "patch"] },
      { apiGroup: group, resource: `${names.plural}/finalizers`, verbs: ["update"] },
    ];
  });
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
}

/**
 * The permissions in `needed` that no rule of the Roles and ClusterRoles among `objects` grants (a rule limited
 * by resourceNames grants nothing here), as "verb group/resource" strings; empty when RBAC covers them all.
 */
export function missingPermissions(objects: K8sObject[], needed: Permission[]): string[] {
  const rules = objects
    .filter((o) => o.kind === "Role" || o.kind === "ClusterRole")
    .flatMap((o) => (o.rules as PolicyRule[] | undefined) ?? [])
    .filter((r) => (r.resourceNames ?? []).length === 0);
  const has = (list: string[] | undefined, value: string) =>
    (list ?? []).some((x) => x === value || x === "*");
  const missing: string[] = [];
  for (const need of needed) {
    for (const verb of need.verbs) {
      const granted = rules.some(
        (r) => has(r.apiGroups, need.apiGroup) && has(r.resources, need.resource) && has(r.verbs, verb),
      );
      if (!granted) missing.push(`${verb} ${need.apiGroup === "" ? "core" : need.apiGroup}/${need.resource}`);
    }
  }
  return missing;
}

/**
 * The objects (CRDs aside: they outlive a release) lacking the chart's standard labels: app.kubernetes.io/name,
 * app.kubernetes.io/instance, app.kubernetes.io/managed-by=Helm, and helm.sh/chart when `chart` is given; one
 * message per object naming the labels it lacks or has wrong.
 */
export function missingStandardLabels(
  objects: K8sObject[],
  expected: { name: string; instance: string; chart?: string },
): string[] {
  const want: Record<string, string> = {
    "app.kubernetes.io/name": expected.name,
    "app.kubernetes.io/instance": expected.instance,
    "app.kubernetes.io/managed-by": "Helm",
    ...(expected.chart === undefined ? {} : { "helm.sh/chart": expected.chart }),
  };
  const out: string[] = [];
  for (const o of objects) {
    if (o.kind === "CustomResourceDefinition") continue;
    const labels = o.metadata.labels ?? {};
    const wrong = Object.entries(want)
      .filter(([k, v]) => labels[k] !== v)
      .map(([k, v]) => `${k}=${v}`);
    if (wrong.length > 0) out.push(`${o.kind} ${o.metadata.name}: needs ${wrong.join(", ")}`);
  }
  return out;
}
