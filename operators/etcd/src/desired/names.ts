// Names, labels, URLs and ports of everything the operator creates for an EtcdCluster.
import type { EtcdCluster } from "../api/etcd-cluster.ts";

/** etcd's client port. */
export const CLIENT_PORT = 2379;
/** etcd's peer port. */
export const PEER_PORT = 2380;
/** Port of etcd's --listen-metrics-urls (also serves /livez and /readyz). */
export const METRICS_PORT = 2381;

/** Label carrying the EtcdCluster's name on every object the operator creates. */
export const CLUSTER_LABEL = "etcd.capstan.dev/cluster";
/** Label carrying the member's name on its pod and volume claim. */
export const MEMBER_LABEL = "etcd.capstan.dev/member";
/** On a data claim made for a seed member: if the operator stops before the seed's pod exists, CreateSeed resumes on it. */
export const SEED_CLAIM_ANNOTATION = "etcd.capstan.dev/seed";

/** The app.kubernetes.io/managed-by value on every object the operator creates. */
export const MANAGED_BY = "capstan-etcd-operator";
/** Label on a member's claim kept when the cluster is deleted (storage.whenDeleted Retain): the uid it was made for. */
export const CLAIM_UID_LABEL = "etcd.capstan.dev/cluster-uid";

/** Name and namespace of the cluster; throws when the object lacks them. */
export function clusterRef(cluster: EtcdCluster): { name: string; namespace: string } {
  const { name, namespace } = cluster.metadata;
  if (!name || !namespace) throw new Error("EtcdCluster: metadata.name and metadata.namespace are required");
  return { name, namespace };
}

/** Name of a member: `<cluster>-<suffix>`; the suffix must never repeat for a cluster. */
export function memberName(cluster: EtcdCluster, suffix: string): string {
  return `${clusterRef(cluster).name}-${suffix}`;
}

/** The headless Service giving each member a stable DNS name (`<member>.<cluster>-peer.<ns>.svc`). */
export function peerServiceName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-peer`;
}

/** The Service clients connect to. */
export function clientServiceName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-client`;
}

/** The PersistentVolumeClaim holding a member's data. */
export function dataClaimName(member: string): string {
  return `${member}-data`;
}

/** The member whose data claim `claim` is (the inverse of dataClaimName), or undefined for another claim. */
export function memberOfDataClaim(claim: string): string | undefined {
  return claim.endsWith("-data") && claim.length > "-data".length
    ? claim.slice(0, -"-data".length)
    : undefined;
}

function memberHost(cluster: EtcdCluster, member: string): string {
  return `${member}.${peerServiceName(cluster)}.${clusterRef(cluster).namespace}.svc`;
}

/** The peer URL a member advertises; its first DNS label is the member's name. */
export function peerURL(cluster: EtcdCluster, member: string): string {
  return `${cluster.spec.tls?.peer === undefined ? "http" : "https"}://${memberHost(cluster, member)}:${PEER_PORT}`;
}

/** The client URL a member advertises. */
export function clientURL(cluster: EtcdCluster, member: string): string {
  return `${clientScheme(cluster)}://${memberHost(cluster, member)}:${CLIENT_PORT}`;
}

/** "https" when the client port has TLS (spec.tls.client), else "http". */
export function clientScheme(cluster: EtcdCluster): "http" | "https" {
  return cluster.spec.tls?.client === undefined ? "http" : "https";
}

/** The URL clients use for the whole cluster (status.clientEndpoint). */
export function clientEndpoint(cluster: EtcdCluster): string {
  return `${clientScheme(cluster)}://${clientServiceName(cluster)}.${clusterRef(cluster).namespace}.svc:${CLIENT_PORT}`;
}

/**
 * The member name in a peer URL (its host's first DNS label), or undefined when the URL is not one the
 * operator wrote. etcd reports an empty name for a member added but not yet started; this recovers it.
 */
export function memberNameFromPeerURL(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  const [first, second] = host.split(".");
  return first && second?.endsWith("-peer") ? first : undefined;
}

/** Labels that select the cluster's member pods. */
export function selectorLabels(cluster: EtcdCluster): Record<string, string> {
  return { "app.kubernetes.io/name": "etcd", [CLUSTER_LABEL]: clusterRef(cluster).name };
}

/** {@link selectorLabels} as a label selector string (status.selector, for the scale subresource). */
export function selectorString(cluster: EtcdCluster): string {
  return Object.entries(selectorLabels(cluster))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** Labels on every object of the cluster. */
export function clusterLabels(cluster: EtcdCluster): Record<string, string> {
  return {
    ...selectorLabels(cluster),
    "app.kubernetes.io/instance": clusterRef(cluster).name,
    "app.kubernetes.io/managed-by": MANAGED_BY,
  };
}

/** Labels on a member's pod and volume claim. */
export function memberLabels(cluster: EtcdCluster, member: string): Record<string, string> {
  return { ...clusterLabels(cluster), "app.kubernetes.io/component": "member", [MEMBER_LABEL]: member };
}
