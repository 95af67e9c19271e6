// Names, labels, DNS names, URLs and ports of everything the operator creates for a VaultCluster.
import type { VaultCluster } from "../api/vault-cluster.ts";

/** Vault's API port. */
export const API_PORT = 8200;
/** Vault's cluster (request forwarding and raft) port. */
export const CLUSTER_PORT = 8201;
/** Largest spec.replicas: the server certificate names this many pods, so scaling never re-issues it. */
export const MAX_REPLICAS = 5;

/** Label on each pod with its state from /v1/sys/health: active, standby, sealed or uninitialized. */
export const STATE_LABEL = "vault.capstan.dev/state";
/** The values of {@link STATE_LABEL}. */
export const POD_STATES = ["active", "standby", "sealed", "uninitialized"] as const;
/** One of {@link POD_STATES}. */
export type PodState = (typeof POD_STATES)[number];

/** The app.kubernetes.io/managed-by value on every object the operator creates. */
export const MANAGED_BY = "capstan-vault-operator";
/** Label on a data claim kept when the cluster is deleted (storage.whenDeleted Retain): the uid it was made for. */
export const CLAIM_UID_LABEL = "vault.capstan.dev/cluster-uid";

/** Name and namespace of the cluster; throws when the object lacks them. */
export function clusterRef(cluster: VaultCluster): { name: string; namespace: string } {
  const { name, namespace } = cluster.metadata;
  if (!name || !namespace) throw new Error("VaultCluster: metadata.name and metadata.namespace are required");
  return { name, namespace };
}

/** Pod `<cluster>-<ordinal>` (also its raft node ID). */
export function podName(cluster: VaultCluster, ordinal: number): string {
  return `${clusterRef(cluster).name}-${ordinal}`;
}

/** The data claim of a pod. */
export function claimName(pod: string): string {
  return `data-${pod}`;
}

/** The client Service: every unsealed pod. */
export function clientServiceName(cluster: VaultCluster): string {
  return clusterRef(cluster).name;
}

/** The Service of the active pod only. */
export function activeServiceName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-active`;
}

/** The headless Service giving each pod a DNS name, published before pods are ready. */
export function internalServiceName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-internal`;
}

/** The ConfigMap holding vault.json. */
export function configMapName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-config`;
}

/** The Secret with the unseal keys and the operator token. */
export function keysSecretName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-unseal-keys`;
}

/** The operator-managed CA Secret. */
export function caSecretName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-ca`;
}

/** The Secret the pods mount their listener certificate from (the user's, or the operator-managed one). */
export function tlsSecretName(cluster: VaultCluster): string {
  return cluster.spec.tls.secretName ?? `${clusterRef(cluster).name}-tls`;
}

/** A pod's stable DNS name: `<pod>.<cluster>-internal.<ns>.svc`. */
export function podHost(cluster: VaultCluster, pod: string): string {
  return `${pod}.${internalServiceName(cluster)}.${clusterRef(cluster).namespace}.svc`;
}

/** A pod's api_addr. */
export function podApiAddr(cluster: VaultCluster, pod: string): string {
  return `https://${podHost(cluster, pod)}:${API_PORT}`;
}

/** A pod's cluster_addr. */
export function podClusterAddr(cluster: VaultCluster, pod: string): string {
  return `https://${podHost(cluster, pod)}:${CLUSTER_PORT}`;
}

/** status.endpoint: `https://<name>.<ns>.svc:8200`. */
export function clientEndpoint(cluster: VaultCluster): string {
  const { name, namespace } = clusterRef(cluster);
  return `https://${name}.${namespace}.svc:${API_PORT}`;
}

/** Every name the server certificate carries: the Services' and the pods' DNS names, localhost, 127.0.0.1. */
export function tlsHosts(cluster: VaultCluster): string[] {
  const { namespace } = clusterRef(cluster);
  const services = [clientServiceName(cluster), activeServiceName(cluster), internalServiceName(cluster)];
  const forms = (svc: string) => [
    svc,
    `${svc}.${namespace}`,
    `${svc}.${namespace}.svc`,
    `${svc}.${namespace}.svc.cluster.local`,
  ];
  const pods = Array.from({ length: MAX_REPLICAS }, (_, i) => podHost(cluster, podName(cluster, i)));
  return [...services.flatMap(forms), ...pods, "localhost", "127.0.0.1"];
}

/** Labels that select the cluster's pods. */
export function selectorLabels(cluster: VaultCluster): Record<string, string> {
  return { "app.kubernetes.io/name": "vault", "app.kubernetes.io/instance": clusterRef(cluster).name };
}

/** {@link selectorLabels} as a label selector string (status.selector, for the scale subresource). */
export function selectorString(cluster: VaultCluster): string {
  return Object.entries(selectorLabels(cluster))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** Labels on every object of the cluster. */
export function clusterLabels(cluster: VaultCluster): Record<string, string> {
  return { ...selectorLabels(cluster), "app.kubernetes.io/managed-by": MANAGED_BY };
}
