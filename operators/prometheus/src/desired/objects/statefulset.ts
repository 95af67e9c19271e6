// The pods of a server: the StatefulSet (restricted Pod Security, probes, the candidate and last-good generations
// projected from the config Secret and the rule shards, a reloader sidecar that reloads Prometheus when they change:
// see reloader.ts) and its PodDisruptionBudget, and the rule shard slots the pods mount.
import {
  type PodDisruptionBudgetObject,
  resourceRequirements,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  type StatefulSetObject,
  spreadOverNodes,
} from "@capstan/core";
import { DEFAULT_STORAGE_SIZE, type Prometheus } from "../../api/prometheus.ts";
import { CONFIG_FILE } from "../assets.ts";
import { POD_NAME_ENV } from "../config.ts";
import { featureArgs } from "../feature-flags.ts";
import {
  governingServiceName,
  lastGoodName,
  lastGoodShardName,
  ruleShardName,
  selectorLabels,
  serverLabels,
  serverName,
  serviceAccountName,
} from "../objects.ts";
import {
  CANDIDATE_DIR,
  LAST_GOOD_DIR,
  LIVE_DIR,
  RELOADER_SCRIPT,
  RELOADER_STATE_DIR,
  WEB_PORT,
} from "../reloader.ts";
import { effectiveRetentionSize } from "../retention.ts";
import { meta, owned } from "./metadata.ts";

type PodSpec = NonNullable<NonNullable<StatefulSetObject["spec"]>["template"]["spec"]>;
type Affinity = NonNullable<PodSpec["affinity"]>;

/** Where each pod keeps its TSDB (the data volume). */
export const DATA_DIR = "/prometheus";
/** UID/GID of the nobody user the Prometheus image runs as. */
export const PROMETHEUS_UID = 65534;
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

/** The image `<repository>:v<version>`. */
export function prometheusImage(p: Prometheus): string {
  return `${p.spec.repository}:v${p.spec.version}`;
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
    ...featureArgs(spec),
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
