// Builds the per-cluster objects: a member's data claim, the peer and client Services, and the PodDisruptionBudget.
import {
  type KubeObject,
  type PersistentVolumeClaimObject,
  type PodDisruptionBudgetObject,
  quorum,
  retainedClaim,
  type ServiceObject,
  setControllerReference,
} from "@capstan/core";
import { DEFAULT_STORAGE_SIZE, type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import {
  CLAIM_UID_LABEL,
  CLIENT_PORT,
  clientServiceName,
  clusterLabels,
  clusterRef,
  dataClaimName,
  memberLabels,
  PEER_PORT,
  peerServiceName,
  SEED_CLAIM_ANNOTATION,
  selectorLabels,
} from "./names.ts";

/** `obj`, controlled by the cluster. */
function owned<T extends KubeObject>(cluster: EtcdCluster, obj: T): T {
  setControllerReference(cluster, EtcdClusterKind, obj);
  return obj;
}

/**
 * The data claim of `member`, or undefined when the cluster uses ephemeral storage. With storage.whenDeleted Retain
 * (the default) it has no owner reference, so deleting the EtcdCluster never deletes a member's data; with Delete it
 * is garbage-collected with the cluster.
 */
export function memberDataClaim(
  cluster: EtcdCluster,
  member: string,
  options: { seed?: boolean } = {},
): PersistentVolumeClaimObject | undefined {
  const { storage } = cluster.spec;
  if (storage.ephemeral === true) return undefined;
  const claim: PersistentVolumeClaimObject = {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: dataClaimName(member),
      namespace: clusterRef(cluster).namespace,
      labels: memberLabels(cluster, member),
      ...(options.seed === true ? { annotations: { [SEED_CLAIM_ANNOTATION]: "true" } } : {}),
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: storage.size ?? DEFAULT_STORAGE_SIZE } },
      ...(storage.storageClassName === undefined ? {} : { storageClassName: storage.storageClassName }),
    },
  };
  return retainedClaim(cluster, EtcdClusterKind, claim, storage.whenDeleted ?? "Retain", CLAIM_UID_LABEL);
}

/** The headless Service that gives members stable DNS names, published before they are ready so peers can join. */
export function peerService(cluster: EtcdCluster): ServiceObject {
  return owned<ServiceObject>(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: peerServiceName(cluster),
      namespace: clusterRef(cluster).namespace,
      labels: clusterLabels(cluster),
    },
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: selectorLabels(cluster),
      ports: [
        { name: "peer", port: PEER_PORT, targetPort: "peer" },
        { name: "client", port: CLIENT_PORT, targetPort: "client" },
      ],
    },
  });
}

/** The Service clients use; only ready members receive traffic. */
export function clientService(cluster: EtcdCluster): ServiceObject {
  return owned<ServiceObject>(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: clientServiceName(cluster),
      namespace: clusterRef(cluster).namespace,
      labels: clusterLabels(cluster),
    },
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(cluster),
      ports: [{ name: "client", port: CLIENT_PORT, targetPort: "client" }],
    },
  });
}

/**
 * A PodDisruptionBudget keeping a quorum of members: minAvailable = quorum(max(spec.replicas, voters)), where
 * `voters` is the number of voting members that exist now. While scaling in from 5 to 3 the 5 voters still need 3
 * of them: a quorum of spec.replicas (2) would let a drain evict 3 of 5. With one replica this blocks every
 * voluntary eviction, which is the truth: a one-member cluster cannot lose its member.
 */
export function podDisruptionBudget(cluster: EtcdCluster, voters = 0): PodDisruptionBudgetObject {
  return owned<PodDisruptionBudgetObject>(cluster, {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: {
      name: clusterRef(cluster).name,
      namespace: clusterRef(cluster).namespace,
      labels: clusterLabels(cluster),
    },
    spec: {
      minAvailable: quorum(Math.max(cluster.spec.replicas, voters)),
      selector: { matchLabels: selectorLabels(cluster) },
    },
  });
}
