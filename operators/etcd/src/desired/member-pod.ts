// Builds a member's Pod: the etcd container, its flags, probes and a securityContext that passes Pod Security "restricted".
import {
  type Affinity,
  type PodObject,
  resourceRequirements,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  setControllerReference,
  spreadOverNodes,
  stableHash,
} from "@capstan/core";
import { DEFAULT_STORAGE_SIZE, type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import {
  CLIENT_PORT,
  clientScheme,
  clientURL,
  clusterRef,
  dataClaimName,
  METRICS_PORT,
  memberLabels,
  PEER_PORT,
  peerServiceName,
  peerURL,
  selectorLabels,
} from "./names.ts";
import { quotaBackendBytes } from "./quota.ts";
import { clientTLS, memberTLSVolumes, tlsArgs } from "./tls.ts";

type PodSpec = NonNullable<PodObject["spec"]>;

/** Where etcd keeps its data (a sub-directory, so etcd creates it with mode 0700). */
export const DATA_DIR = "/var/lib/etcd/data";
/** UID and GID etcd runs as (the distroless "nonroot" user). */
export const ETCD_UID = 65532;

/** What a member pod is built from. */
export interface MemberPodInput {
  /** The EtcdCluster as read from the API server (defaults applied, uid set). */
  cluster: EtcdCluster;
  /** The member's name, also the pod's name and hostname. */
  member: string;
  /** Members for --initial-cluster: the seed alone for a new cluster, else the members after MemberAdd. */
  initialCluster: { name: string; peerURL: string }[];
  /** "new" for the seed, "existing" for a member joining a running cluster. */
  initialClusterState: "new" | "existing";
  /** etcd version to run (default spec.version): a member not yet upgraded keeps its running version. */
  version?: string;
}

/** Annotation on a member pod: the {@link podTemplateHash} it was built from. */
export const POD_TEMPLATE_HASH_ANNOTATION = "etcd.capstan.dev/pod-template-hash";

/**
 * A short hash of what users set on member pods (spec.podTemplate and spec.repository). A member pod whose
 * annotation differs is recreated, one member at a time, on its data. The version is not part of it: a version
 * change is a rolling upgrade, made in place.
 */
export function podTemplateHash(cluster: EtcdCluster): string {
  const { spec } = cluster;
  return stableHash({
    podTemplate: spec.podTemplate ?? {},
    repository: spec.repository,
    // Flags and environment: a change restarts the members one at a time (undefined fields keep old hashes).
    ...(spec.extraArgs === undefined ? {} : { extraArgs: spec.extraArgs }),
    ...(spec.extraEnv === undefined ? {} : { extraEnv: spec.extraEnv }),
    ...(spec.maintenance === undefined ? {} : { maintenance: spec.maintenance }),
  });
}

/** Requests of the etcd container when spec.podTemplate.resources is unset (never BestEffort). */
export const DEFAULT_RESOURCES = { requests: { cpu: "100m", memory: "256Mi" } };

/** The etcd image for `version`, e.g. "gcr.io/etcd-development/etcd:v3.6.15". */
export function etcdImage(cluster: EtcdCluster, version = cluster.spec.version): string {
  return `${cluster.spec.repository}:v${version}`;
}

/** The etcd command-line flags of a member. */
export function etcdArgs(input: MemberPodInput): string[] {
  const { cluster, member } = input;
  if (!input.initialCluster.some((m) => m.name === member)) {
    throw new Error(
      `EtcdCluster ${clusterRef(cluster).name}: --initial-cluster must include member ${member} itself`,
    );
  }
  return [
    `--name=${member}`,
    `--data-dir=${DATA_DIR}`,
    `--listen-peer-urls=${cluster.spec.tls?.peer === undefined ? "http" : "https"}://0.0.0.0:${PEER_PORT}`,
    `--listen-client-urls=${clientScheme(cluster)}://0.0.0.0:${CLIENT_PORT}`,
    `--listen-metrics-urls=http://0.0.0.0:${METRICS_PORT}`,
    `--initial-advertise-peer-urls=${peerURL(cluster, member)}`,
    `--advertise-client-urls=${clientURL(cluster, member)}`,
    `--initial-cluster=${input.initialCluster.map((m) => `${m.name}=${m.peerURL}`).join(",")}`,
    `--initial-cluster-state=${input.initialClusterState}`,
    `--initial-cluster-token=${cluster.metadata.uid ?? clusterRef(cluster).name}`,
    ...diskArgs(cluster),
    ...tlsArgs(cluster),
    ...Object.entries(cluster.spec.extraArgs ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `--${k}=${v}`),
  ];
}

/** Quota (from the volume size; etcd's default with ephemeral storage) and automatic compaction. */
function diskArgs(cluster: EtcdCluster): string[] {
  const { storage, maintenance } = cluster.spec;
  const quota =
    storage.ephemeral === true ? undefined : quotaBackendBytes(storage.size ?? DEFAULT_STORAGE_SIZE);
  return [
    ...(quota === undefined ? [] : [`--quota-backend-bytes=${quota}`]),
    `--auto-compaction-mode=${maintenance?.autoCompactionMode ?? "periodic"}`,
    `--auto-compaction-retention=${maintenance?.autoCompactionRetention ?? "1h"}`,
  ];
}

/** The Pod of one member, controlled by the EtcdCluster. */
export function memberPod(input: MemberPodInput): PodObject {
  const { cluster, member } = input;
  const { namespace } = clusterRef(cluster);
  const template = cluster.spec.podTemplate ?? {};
  // With client TLS the client port wants a certificate the kubelet does not have: probe the metrics port
  // (plain HTTP, it serves /livez and /readyz too).
  const probePort = clientTLS(cluster) === undefined ? "client" : "metrics";
  const tls = memberTLSVolumes(cluster, member);
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: probePort },
    periodSeconds,
    timeoutSeconds: 5,
    failureThreshold,
  });
  const spec: PodSpec = {
    hostname: member,
    subdomain: peerServiceName(cluster),
    restartPolicy: "Always",
    enableServiceLinks: false,
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 30,
    securityContext: restrictedPodSecurityContext(ETCD_UID),
    containers: [
      {
        name: "etcd",
        image: etcdImage(cluster, input.version),
        command: ["/usr/local/bin/etcd"],
        args: etcdArgs(input),
        ports: [
          { name: "client", containerPort: CLIENT_PORT },
          { name: "peer", containerPort: PEER_PORT },
          { name: "metrics", containerPort: METRICS_PORT },
        ],
        ...(cluster.spec.extraEnv === undefined || cluster.spec.extraEnv.length === 0
          ? {}
          : { env: cluster.spec.extraEnv.map((e) => ({ name: e.name, value: e.value })) }),
        resources: resourceRequirements(template.resources ?? DEFAULT_RESOURCES),
        // etcd's last log lines become the termination message: the operator reads why it stopped (e.g. an
        // empty data directory) from the pod status.
        terminationMessagePolicy: "FallbackToLogsOnError",
        // A joining member may need a long time to receive a large snapshot before it is live: 30 minutes here;
        // the planner judges a learner by its progress, not by this.
        startupProbe: probe("/livez", 10, 180),
        livenessProbe: probe("/livez", 10, 3),
        readinessProbe: probe("/readyz", 5, 3),
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [{ name: "data", mountPath: "/var/lib/etcd" }, ...tls.mounts],
      },
    ],
    volumes: [
      cluster.spec.storage.ephemeral === true
        ? { name: "data", emptyDir: {} }
        : { name: "data", persistentVolumeClaim: { claimName: dataClaimName(member) } },
      ...tls.volumes,
    ],
    affinity: (template.affinity as Affinity | undefined) ?? spreadMembers(cluster),
    topologySpreadConstraints:
      (template.topologySpreadConstraints as PodSpec["topologySpreadConstraints"] | undefined) ??
      spreadAcrossTopology(cluster),
    ...(template.tolerations === undefined ? {} : { tolerations: template.tolerations }),
    ...(template.nodeSelector === undefined ? {} : { nodeSelector: template.nodeSelector }),
    ...(template.priorityClassName === undefined ? {} : { priorityClassName: template.priorityClassName }),
  };
  const pod: PodObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: member,
      namespace,
      labels: { ...template.labels, ...memberLabels(cluster, member) },
      annotations: { ...template.annotations, [POD_TEMPLATE_HASH_ANNOTATION]: podTemplateHash(cluster) },
    },
    spec,
  };
  setControllerReference(cluster, EtcdClusterKind, pod);
  return pod;
}

/** Default: spread members across zones and nodes, without blocking scheduling when it cannot. */
function spreadAcrossTopology(cluster: EtcdCluster): NonNullable<PodSpec["topologySpreadConstraints"]> {
  return ["topology.kubernetes.io/zone", "kubernetes.io/hostname"].map((topologyKey) => ({
    maxSkew: 1,
    topologyKey,
    whenUnsatisfiable: "ScheduleAnyway",
    labelSelector: { matchLabels: selectorLabels(cluster) },
  }));
}

/**
 * Default affinity: one member per node, so one node's loss costs one member: preferred, or required with
 * podTemplate.antiAffinity: Required.
 */
function spreadMembers(cluster: EtcdCluster): Affinity {
  return spreadOverNodes(
    selectorLabels(cluster),
    cluster.spec.podTemplate?.antiAffinity === "Required" ? "Required" : "Preferred",
  );
}

/** Annotation on a survivor's pod started with --force-new-cluster: the EtcdRestore that asked for it. */
export const FORCE_NEW_CLUSTER_ANNOTATION = "etcd.capstan.dev/force-new-cluster";

/**
 * `pod` (a member pod on its own data) started once with --force-new-cluster for the EtcdRestore `request`: etcd
 * rewrites the membership to itself alone, keeping its data and cluster ID. The recovery removes the flag again.
 */
export function withForceNewCluster(pod: PodObject, request: string): PodObject {
  const spec = pod.spec!;
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      annotations: { ...pod.metadata.annotations, [FORCE_NEW_CLUSTER_ANNOTATION]: request },
    },
    spec: {
      ...spec,
      containers: spec.containers.map((c) =>
        c.name === "etcd" ? { ...c, args: [...(c.args ?? []), "--force-new-cluster"] } : c,
      ),
    },
  };
}
