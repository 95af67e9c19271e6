// Pure builders of everything a Prometheus server owns: its ServiceAccount and discovery RBAC, the config Secret
// (prometheus.yml gzipped, asset files), the rule shards (Secrets holding the rule files, see rule-shards.ts), the
// governing and client Services, the StatefulSet (restricted Pod Security, probes, one projected volume of the config
// Secret and the rule shards, a reloader sidecar that reloads Prometheus when it changes) and the
// PodDisruptionBudget, and the last-good copies of the config Secret and the rule shards (what a starting pod loads:
// see reloader.ts). No client imports: the reconciler applies what these return.
import { gzipSync } from "node:zlib";
import {
  defineKind,
  type KubeObject,
  type ObjectOf,
  type PodDisruptionBudget,
  type Role,
  type RoleBinding,
  resourceRequirements,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  type Secret,
  type Service,
  type ServiceAccount,
  type StatefulSet,
  setControllerReference,
  spreadOverNodes,
} from "@capstan/core";
import { DEFAULT_STORAGE_SIZE, type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { CONFIG_FILE } from "./assets.ts";
import { POD_NAME_ENV, type RenderedConfig } from "./config.ts";
import { CHECKSUM_KEYS, generationOf } from "./generation.ts";
import {
  CANDIDATE_DIR,
  CONFIG_KEY,
  LAST_GOOD_DIR,
  LIVE_DIR,
  RELOADER_SCRIPT,
  RELOADER_STATE_DIR,
  VERSION_KEY,
  WEB_PORT,
} from "./reloader.ts";
import { effectiveRetentionSize } from "./retention.ts";

export {
  CONFIG_KEY,
  RELOAD_CHECK_SECONDS,
  RELOADER_SCRIPT,
  WEB_PORT,
} from "./reloader.ts";

export type SecretObject = ObjectOf<typeof Secret>;
export type ServiceObject = ObjectOf<typeof Service>;
export type ServiceAccountObject = ObjectOf<typeof ServiceAccount>;
export type StatefulSetObject = ObjectOf<typeof StatefulSet>;
export type PodDisruptionBudgetObject = ObjectOf<typeof PodDisruptionBudget>;
export type RoleObject = ObjectOf<typeof Role>;
export type RoleBindingObject = ObjectOf<typeof RoleBinding>;
type PodSpec = NonNullable<NonNullable<StatefulSetObject["spec"]>["template"]["spec"]>;
type Affinity = NonNullable<PodSpec["affinity"]>;
type PolicyRule = NonNullable<RoleObject["rules"]>[number];

/** A ClusterRole (rbac.authorization.k8s.io/v1), for servers whose monitors look in every namespace. */
export interface ClusterRoleObject extends KubeObject {
  rules?: PolicyRule[];
}
/** A ClusterRoleBinding (rbac.authorization.k8s.io/v1). */
export interface ClusterRoleBindingObject extends KubeObject {
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}
/** The ClusterRole kind (core defines the namespaced RBAC kinds only). */
export const ClusterRole = defineKind<ClusterRoleObject>({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
});
/** The ClusterRoleBinding kind. */
export const ClusterRoleBinding = defineKind<ClusterRoleBindingObject>({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRoleBinding",
  plural: "clusterrolebindings",
  namespaced: false,
});

/** The app.kubernetes.io/managed-by value on every object the operator creates (and the cache's selector). */
export const MANAGED_BY = "capstan-prometheus-operator";
/** Label on RBAC objects outside the server's namespace (no owner reference possible): the server's namespace. */
export const SERVER_NAMESPACE_LABEL = "monitoring.capstan.dev/prometheus-namespace";
/** Label on RBAC objects outside the server's namespace: the server's name. */
export const SERVER_NAME_LABEL = "monitoring.capstan.dev/prometheus-name";
/** Finalizer on a Prometheus while RBAC objects it cannot own (other namespaces, cluster-wide) exist. */
export const RBAC_FINALIZER = "monitoring.capstan.dev/rbac-cleanup";
/** Annotation on the config Secret: the hash of the configuration and rule files it holds. */
export const CONFIG_HASH_ANNOTATION = "monitoring.capstan.dev/config-hash";

/** Annotation on the config Secret and the last-good Secret: the id of the generation they hold (generation.ts). */
export const GENERATION_ANNOTATION = "monitoring.capstan.dev/generation";
/** Annotation on the last-good Secret: the Prometheus version whose pods all accepted that generation. */
export const LAST_GOOD_VERSION_ANNOTATION = "monitoring.capstan.dev/prometheus-version";
/** Where each pod keeps its TSDB (the data volume). */
export const DATA_DIR = "/prometheus";
/** UID/GID of the nobody user the Prometheus image runs as. */
export const PROMETHEUS_UID = 65534;
/** The app.kubernetes.io/component label of the rule shards (the cache finds a server's shards by it). */
export const RULE_SHARD_COMPONENT = "rules";
/** The app.kubernetes.io/component label of the last-good Secret. */
export const LAST_GOOD_COMPONENT = "last-good";
/** The app.kubernetes.io/component label of the last-good rule shards. */
export const LAST_GOOD_SHARD_COMPONENT = "last-good-rules";
/**
 * The pods mount rule shard slots in blocks of this many (each an optional projected source, empty until its Secret
 * exists): the shard count changing within the slots never touches the pod template, so never restarts Prometheus.
 */
export const RULE_SLOT_BLOCK = 8;
/** Default image of the reloader sidecar and init container (operator flag --reloader-image). */
export const DEFAULT_RELOADER_IMAGE = "docker.io/library/busybox:1.37";
/** Requests of the prometheus container when spec.resources is unset (never BestEffort). */
export const DEFAULT_RESOURCES = { requests: { cpu: "100m", memory: "400Mi" } };

/** Settings of the operator process that shape the pods. */
export interface PodSettings {
  /** Image of the reloader sidecar and the init container (busybox: sh, gunzip, md5sum, wget). */
  reloaderImage: string;
}

// ---- names and labels ----

/** `prometheus-<name>`: the StatefulSet, client Service, config Secret, ServiceAccount, PDB and home RBAC. */
export function serverName(p: Prometheus): string {
  return `prometheus-${p.metadata.name ?? ""}`;
}
/** `prometheus-<name>-rules-<i>`: rule shard i. */
export function ruleShardName(p: Prometheus, i: number): string {
  return `${serverName(p)}-rules-${i}`;
}
/** `prometheus-<name>-last-good`: the last generation every pod accepted (config, assets, checksums, version). */
export function lastGoodName(p: Prometheus): string {
  return `${serverName(p)}-last-good`;
}
/** `prometheus-<name>-last-good-rules-<i>`: the copy of rule shard i in the last-good generation. */
export function lastGoodShardName(p: Prometheus, i: number): string {
  return `${serverName(p)}-last-good-rules-${i}`;
}
/** `prometheus-<name>-operated`: the governing headless Service of the StatefulSet. */
export function governingServiceName(p: Prometheus): string {
  return `${serverName(p)}-operated`;
}
/** The ServiceAccount the pods run as: spec.serviceAccountName, else `prometheus-<name>`. */
export function serviceAccountName(p: Prometheus): string {
  return p.spec.serviceAccountName ?? serverName(p);
}
/** Name of RBAC objects outside the server's namespace and of cluster-wide ones: `prometheus-<namespace>-<name>`. */
export function foreignRbacName(p: Prometheus): string {
  return `prometheus-${p.metadata.namespace ?? ""}-${p.metadata.name ?? ""}`;
}

/** Labels selecting the server's pods. */
export function selectorLabels(p: Prometheus): Record<string, string> {
  return { "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": p.metadata.name ?? "" };
}
/** Labels of every object the server owns. */
export function serverLabels(p: Prometheus): Record<string, string> {
  return { ...selectorLabels(p), "app.kubernetes.io/managed-by": MANAGED_BY };
}
/** The pods' label selector as a string (status.selector, for the scale subresource). */
export function selectorString(p: Prometheus): string {
  return Object.entries(selectorLabels(p))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** The image `<repository>:v<version>`. */
export function prometheusImage(p: Prometheus): string {
  return `${p.spec.repository}:v${p.spec.version}`;
}

function owned<T extends KubeObject>(p: Prometheus, obj: T): T {
  setControllerReference(p, PrometheusKind, obj);
  return obj;
}

function meta(p: Prometheus, name: string) {
  return { name, namespace: p.metadata.namespace ?? "", labels: serverLabels(p) };
}

// ---- RBAC ----

/** What Prometheus's Kubernetes discovery (roles endpointslice and pod) reads. */
export const DISCOVERY_RULES: PolicyRule[] = [
  { apiGroups: [""], resources: ["pods", "services"], verbs: ["get", "list", "watch"] },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
];
/** Cluster-wide discovery also lists namespaces. */
export const CLUSTER_DISCOVERY_RULES: PolicyRule[] = [
  ...DISCOVERY_RULES,
  { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
];

/** The namespaces the server's discovery looks in: sorted names, or "all" when a monitor says `any`. */
export type DiscoveryScope = { all: true } | { all: false; namespaces: string[] };

/** The scope of a selection: the union of its monitors' namespaces (`undefined` on one of them: all). */
export function discoveryScope(monitors: readonly { namespaces?: string[] }[]): DiscoveryScope {
  const names = new Set<string>();
  for (const m of monitors) {
    if (m.namespaces === undefined) return { all: true };
    for (const n of m.namespaces) names.add(n);
  }
  return { all: false, namespaces: [...names].sort() };
}

/** The ServiceAccount `prometheus-<name>` (only when spec.serviceAccountName is unset). */
export function serviceAccount(p: Prometheus): ServiceAccountObject {
  return owned<ServiceAccountObject>(p, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(p, serverName(p)),
  });
}

/** Every RBAC object a server needs for `scope`, split into those it owns and those it cannot own. */
export interface DiscoveryRbac {
  /** In the server's namespace, with an owner reference (deleted with the server). */
  owned: (RoleObject | RoleBindingObject)[];
  /**
   * In other namespaces, or cluster-wide: labelled with the server's namespace and name; the reconciler deletes
   * them when no longer needed and, through RBAC_FINALIZER, when the server goes.
   */
  foreign: (RoleObject | RoleBindingObject | ClusterRoleObject | ClusterRoleBindingObject)[];
}

/** Labels of an RBAC object the server cannot own: its namespace and name (observe.ts finds them by these). */
export function foreignLabels(p: Prometheus): Record<string, string> {
  return {
    ...serverLabels(p),
    [SERVER_NAMESPACE_LABEL]: p.metadata.namespace ?? "",
    [SERVER_NAME_LABEL]: p.metadata.name ?? "",
  };
}

/**
 * The Roles and RoleBindings (one pair per namespace the monitors look in), or one ClusterRole and
 * ClusterRoleBinding when a monitor looks in every namespace, granting the ServiceAccount exactly what discovery
 * reads. A server with a user-provided spec.serviceAccountName gets the same bindings for that account.
 */
export function discoveryRbac(p: Prometheus, scope: DiscoveryScope): DiscoveryRbac {
  const home = p.metadata.namespace ?? "";
  const subject = { kind: "ServiceAccount", name: serviceAccountName(p), namespace: home };
  const out: DiscoveryRbac = { owned: [], foreign: [] };
  if (scope.all) {
    const name = foreignRbacName(p);
    const labels = foreignLabels(p);
    out.foreign.push(
      {
        apiVersion: ClusterRole.apiVersion,
        kind: ClusterRole.kind,
        metadata: { name, labels },
        rules: CLUSTER_DISCOVERY_RULES,
      },
      {
        apiVersion: ClusterRoleBinding.apiVersion,
        kind: ClusterRoleBinding.kind,
        metadata: { name, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [subject],
      },
    );
    return out;
  }
  for (const ns of scope.namespaces) {
    const isHome = ns === home;
    const name = isHome ? serverName(p) : foreignRbacName(p);
    const metadata = { name, namespace: ns, labels: isHome ? serverLabels(p) : foreignLabels(p) };
    const role: RoleObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { ...metadata },
      rules: DISCOVERY_RULES,
    };
    const binding: RoleBindingObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { ...metadata },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [subject],
    };
    if (isHome) out.owned.push(owned(p, role), owned(p, binding));
    else out.foreign.push(role, binding);
  }
  return out;
}

// ---- the config Secret ----

/** The config Secret's contents besides the asset files: prometheus.yml gzipped (the rule files are in shards). */
export function configData(config: RenderedConfig): Record<string, string> {
  // gzip output is deterministic for the same input (no name, mtime 0), so an unchanged config is no write.
  return { [CONFIG_KEY]: gzipSync(Buffer.from(config.yaml, "utf8"), { level: 9 }).toString("base64") };
}

/**
 * The Secret `prometheus-<name>`, the candidate generation: prometheus.yml gzipped (key CONFIG_KEY), one key per
 * asset file (`assets`: assetKey -> the referenced Secret/ConfigMap value, already base64), and the generation's
 * checksum files (generation.ts) covering those and the rule files in the shards. Annotated with the configuration
 * hash (which covers the rule files too) and the generation id. Projected with the rule shards at CANDIDATE_DIR in the
 * reloader, which installs it once complete.
 */
export function configSecret(
  p: Prometheus,
  config: RenderedConfig,
  assets: Record<string, string>,
): SecretObject {
  const data: Record<string, string> = { ...configData(config) };
  const sortedAssets: Record<string, string> = {};
  for (const key of Object.keys(assets).sort()) sortedAssets[key] = assets[key] ?? "";
  Object.assign(data, sortedAssets);
  const generation = generationOf(
    CONFIG_KEY,
    Buffer.from(data[CONFIG_KEY] ?? "", "base64"),
    config.rules,
    sortedAssets,
  );
  for (const k of CHECKSUM_KEYS) data[k] = b64(generation.checksums[k]);
  return owned<SecretObject>(p, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      ...meta(p, serverName(p)),
      annotations: { [CONFIG_HASH_ANNOTATION]: config.hash, [GENERATION_ANNOTATION]: generation.id },
    },
    type: "Opaque",
    data,
  });
}

/** The last-good generation: its Secret and rule shards (what {@link lastGoodSecrets} builds). */
export interface LastGood {
  secret: SecretObject;
  shards: SecretObject[];
}

/**
 * The last-good copy of a candidate generation that every pod of Prometheus `version` accepted: the Secret
 * `prometheus-<name>-last-good` (the config Secret's data, plus the key `version`) and `prometheus-<name>-last-good-
 * rules-<i>` (rule shard i's data), so the same sizes and limits hold as for the candidate. The copy is
 * content-addressed (annotated with the generation id): recording the same generation again is no write.
 */
export function lastGoodSecrets(
  p: Prometheus,
  candidate: SecretObject,
  shards: readonly SecretObject[],
  version: string,
): LastGood {
  const base = meta(p, lastGoodName(p));
  const secret = owned<SecretObject>(p, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      ...base,
      labels: { ...base.labels, "app.kubernetes.io/component": LAST_GOOD_COMPONENT },
      annotations: {
        [GENERATION_ANNOTATION]: candidate.metadata.annotations?.[GENERATION_ANNOTATION] ?? "",
        [LAST_GOOD_VERSION_ANNOTATION]: version,
      },
    },
    type: "Opaque",
    data: { ...candidate.data, [VERSION_KEY]: b64(version) },
  });
  const prefix = `${serverName(p)}-rules-`;
  const copies = shards.map((s) => {
    const index = Number((s.metadata.name ?? "").slice(prefix.length));
    const m = meta(p, lastGoodShardName(p, index));
    return owned<SecretObject>(p, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { ...m, labels: { ...m.labels, "app.kubernetes.io/component": LAST_GOOD_SHARD_COMPONENT } },
      type: "Opaque",
      data: { ...s.data },
    });
  });
  return { secret, shards: copies };
}

function b64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

/**
 * The rule shards `prometheus-<name>-rules-<i>` of `shards` (shardRuleFiles' answer: index -> file name -> YAML), one
 * Secret per shard that holds a file, each key a rule file (its name under RULES_DIR). Labelled with the component
 * `rules`, owned by the server.
 */
export function ruleShardSecrets(p: Prometheus, shards: readonly Record<string, string>[]): SecretObject[] {
  const out: SecretObject[] = [];
  shards.forEach((files, i) => {
    const names = Object.keys(files).sort();
    if (names.length === 0) return;
    const metadata = meta(p, ruleShardName(p, i));
    out.push(
      owned<SecretObject>(p, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          ...metadata,
          labels: { ...metadata.labels, "app.kubernetes.io/component": RULE_SHARD_COMPONENT },
        },
        type: "Opaque",
        data: Object.fromEntries(names.map((f) => [f, b64(files[f] ?? "")])),
      }),
    );
  });
  return out;
}

/**
 * How many rule shard slots the pods mount: `needed` (the highest shard index in use + 1) rounded up to a whole
 * RULE_SLOT_BLOCK, and never fewer than the live StatefulSet mounts (`live`), so that rules shrinking never rolls the
 * pods. Only rules outgrowing the slots change the pod template (and so roll the pods, once per block).
 */
export function ruleSlots(needed: number, live = 0): number {
  const blocks = Math.max(1, Math.ceil(needed / RULE_SLOT_BLOCK));
  return Math.max(blocks * RULE_SLOT_BLOCK, live);
}

/** The rule shard slots a StatefulSet's pods mount (0 for one from before the shards, or none). */
export function mountedRuleSlots(sts: StatefulSetObject | undefined): number {
  const volumes = sts?.spec?.template.spec?.volumes;
  const volume =
    volumes?.find((v) => v.name === "candidate") ?? volumes?.find((v) => v.name === "config-secret");
  return (volume?.projected?.sources ?? []).filter((s) => s.secret?.optional === true).length;
}

// ---- Services ----

/** The client Service `prometheus-<name>`: every ready pod on port 9090 ("web"). */
export function clientService(p: Prometheus): ServiceObject {
  return owned<ServiceObject>(p, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(p, serverName(p)),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(p),
      ports: [{ name: "web", port: WEB_PORT, targetPort: "web", protocol: "TCP" }],
    },
  });
}

/** The governing headless Service `prometheus-<name>-operated`: a DNS name per pod. */
export function governingService(p: Prometheus): ServiceObject {
  return owned<ServiceObject>(p, {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(p, governingServiceName(p)),
    spec: {
      clusterIP: "None",
      selector: selectorLabels(p),
      ports: [{ name: "web", port: WEB_PORT, targetPort: "web", protocol: "TCP" }],
    },
  });
}

// ---- the StatefulSet ----

/**
 * The StatefulSet `prometheus-<name>`: `spec.replicas` pods of `<repository>:v<version>`, each with its data claim
 * (unless ephemeral); Prometheus reads its configuration, rule files and credentials only from the live emptyDir
 * (LIVE_DIR), where the init container puts the last-good generation (else the candidate) and the reloader sidecar
 * each new candidate once Prometheus accepted it (never a restart for a configuration change; see reloader.ts);
 * `slots` rule shard slots mounted for the candidate and the last-good copy (see ruleSlots), restricted Pod
 * Security, and spec.podTemplate merged in (its labels never override the selector labels). `claimSize` is the size of
 * the claims (default spec.storage.size; the reconciler passes the live claim template's, which cannot change), from
 * which the retention size is derived when spec.retentionSize is unset (retention.ts).
 */
export function statefulSet(
  p: Prometheus,
  settings: PodSettings,
  slots = RULE_SLOT_BLOCK,
  claimSize = p.spec.storage.size ?? DEFAULT_STORAGE_SIZE,
): StatefulSetObject {
  const spec = p.spec;
  const template = spec.podTemplate ?? {};
  const ephemeral = spec.storage.ephemeral === true;
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: "web", scheme: "HTTP" },
    periodSeconds,
    timeoutSeconds: 3,
    failureThreshold,
  });
  const retentionSize = effectiveRetentionSize(spec, claimSize);
  const args = [
    `--config.file=${CONFIG_FILE}`,
    `--storage.tsdb.path=${DATA_DIR}`,
    `--storage.tsdb.retention.time=${spec.retention}`,
    ...(retentionSize === undefined ? [] : [`--storage.tsdb.retention.size=${retentionSize}`]),
    "--web.enable-lifecycle",
    "--web.route-prefix=/",
    `--web.listen-address=:${WEB_PORT}`,
    // The reloader's state (which generation Prometheus accepted or refused), for the operator at /user/state.
    `--web.user-assets=${RELOADER_STATE_DIR}`,
  ];
  // The live emptyDir is tmpfs (credentials never reach the node's disk), charged to the container writing it: the
  // reloader holds up to three copies of the rule files (accepted, candidate, the copy being checked).
  const reloaderResources = { requests: { cpu: "5m", memory: "16Mi" }, limits: { memory: "64Mi" } };
  const liveMount = { name: "live", mountPath: LIVE_DIR };
  const candidateMount = { name: "candidate", mountPath: CANDIDATE_DIR, readOnly: true };
  const lastGoodMount = { name: "last-good", mountPath: LAST_GOOD_DIR, readOnly: true };
  const podSpec: PodSpec = {
    serviceAccountName: serviceAccountName(p),
    // Kubernetes discovery authenticates with the ServiceAccount token.
    automountServiceAccountToken: true,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 120,
    securityContext: restrictedPodSecurityContext(PROMETHEUS_UID),
    initContainers: [
      {
        name: "init-config",
        image: settings.reloaderImage,
        command: ["sh", "-c", RELOADER_SCRIPT, "reloader", "once"],
        // Which Prometheus the last-good generation must have been accepted by (else the candidate goes first).
        env: [{ name: "PROMETHEUS_VERSION", value: spec.version }],
        resources: reloaderResources,
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [liveMount, candidateMount, lastGoodMount],
      },
    ],
    containers: [
      {
        name: "prometheus",
        image: prometheusImage(p),
        args,
        env: [{ name: POD_NAME_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
        ports: [{ name: "web", containerPort: WEB_PORT, protocol: "TCP" }],
        resources: resourceRequirements(spec.resources ?? DEFAULT_RESOURCES),
        terminationMessagePolicy: "FallbackToLogsOnError",
        // Replaying a large WAL takes a while: up to 15 minutes before liveness applies.
        startupProbe: probe("/-/ready", 15, 60),
        readinessProbe: probe("/-/ready", 5, 3),
        livenessProbe: probe("/-/healthy", 10, 6),
        securityContext: restrictedContainerSecurityContext(),
        // Only the live generation: config (CONFIG_FILE), rules and assets are links into it.
        volumeMounts: [
          { ...liveMount, readOnly: true },
          { name: "data", mountPath: DATA_DIR },
        ],
      },
      {
        name: "reloader",
        image: settings.reloaderImage,
        command: ["sh", "-c", RELOADER_SCRIPT, "reloader"],
        resources: reloaderResources,
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [liveMount, candidateMount],
      },
    ],
    volumes: [
      { name: "live", emptyDir: { medium: "Memory" } },
      {
        // The candidate: the config Secret and every rule shard slot in one directory; a slot whose Secret does not
        // exist (yet, or any more) is empty, and the kubelet fills it when it appears, without touching the pod.
        name: "candidate",
        projected: {
          defaultMode: 0o440,
          sources: [
            { secret: { name: serverName(p) } },
            ...Array.from({ length: slots }, (_, i) => ({
              secret: { name: ruleShardName(p, i), optional: true },
            })),
          ],
        },
      },
      {
        // The last generation every pod accepted (absent before the first one, or deleted by hand: then empty).
        name: "last-good",
        projected: {
          defaultMode: 0o440,
          sources: [
            { secret: { name: lastGoodName(p), optional: true } },
            ...Array.from({ length: slots }, (_, i) => ({
              secret: { name: lastGoodShardName(p, i), optional: true },
            })),
          ],
        },
      },
      ...(ephemeral ? [{ name: "data", emptyDir: {} }] : []),
    ],
    affinity: (template.affinity as Affinity | undefined) ?? spreadOverNodes(selectorLabels(p)),
    ...(template.tolerations === undefined ? {} : { tolerations: template.tolerations }),
    ...(template.nodeSelector === undefined ? {} : { nodeSelector: template.nodeSelector }),
  };
  return owned<StatefulSetObject>(p, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: meta(p, serverName(p)),
    spec: {
      replicas: spec.replicas,
      serviceName: governingServiceName(p),
      podManagementPolicy: "Parallel",
      updateStrategy: { type: "RollingUpdate" },
      selector: { matchLabels: selectorLabels(p) },
      template: {
        metadata: {
          labels: { ...template.labels, ...serverLabels(p), "app.kubernetes.io/component": "server" },
          ...(template.annotations === undefined ? {} : { annotations: { ...template.annotations } }),
        },
        spec: podSpec,
      },
      ...(ephemeral
        ? {}
        : {
            persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
            volumeClaimTemplates: [
              {
                apiVersion: "v1",
                kind: "PersistentVolumeClaim",
                metadata: { name: "data", labels: serverLabels(p) },
                spec: {
                  accessModes: ["ReadWriteOnce"],
                  resources: { requests: { storage: claimSize } },
                  ...(spec.storage.storageClassName === undefined
                    ? {}
                    : { storageClassName: spec.storage.storageClassName }),
                },
              },
            ],
          }),
    },
  });
}

/** The PodDisruptionBudget `prometheus-<name>` (maxUnavailable 1) when spec.replicas > 1, else undefined. */
export function podDisruptionBudget(p: Prometheus): PodDisruptionBudgetObject | undefined {
  if (p.spec.replicas <= 1) return undefined;
  return owned<PodDisruptionBudgetObject>(p, {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta(p, serverName(p)),
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(p) } },
  });
}
