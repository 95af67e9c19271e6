// etcd authentication's objects: the name of the root Secret, the Secret the operator makes when none is named
// (random password, deliberately not owned by the cluster), and the backup Job's etcdctl credentials (environment
// variables from the Secret, never arguments).
import type { Job, ObjectOf, SecretObject } from "@capstan/core";
import { type EtcdCluster, ROOT_PASSWORD_KEY, ROOT_USER } from "../api/etcd-cluster.ts";
import { CLUSTER_LABEL, clusterRef, MANAGED_BY } from "./names.ts";

type PodSpec = NonNullable<NonNullable<ObjectOf<typeof Job>["spec"]>["template"]["spec"]>;
type Container = PodSpec["containers"][number];

/** app.kubernetes.io/component of the Secret the operator makes for the root password. */
export const ROOT_SECRET_COMPONENT = "root-credentials";

/** The root Secret's name: spec.auth.rootSecretRef.name, else `<cluster>-root`. */
export function rootSecretName(cluster: EtcdCluster): string {
  return cluster.spec.auth?.rootSecretRef?.name ?? `${clusterRef(cluster).name}-root`;
}

/** The spec field a problem with the root Secret is reported on. */
export function rootSecretField(cluster: EtcdCluster): string {
  return cluster.spec.auth?.rootSecretRef === undefined
    ? "spec.auth.rootSecretRef"
    : "spec.auth.rootSecretRef.name";
}

/**
 * The Secret the operator creates when spec.auth names none. It has no owner reference: deleting the cluster
 * must not lose the password that every backup of it (and every cluster restored from one) still needs.
 */
export function rootSecret(cluster: EtcdCluster, password: string): SecretObject {
  const { name, namespace } = clusterRef(cluster);
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: rootSecretName(cluster),
      namespace,
      labels: {
        "app.kubernetes.io/name": "etcd",
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/component": ROOT_SECRET_COMPONENT,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        [CLUSTER_LABEL]: name,
      },
      annotations: {
        "etcd.capstan.dev/note":
          "etcd root password of this cluster and of every cluster restored from its backups; kept when the EtcdCluster is deleted",
      },
    },
    type: "Opaque",
    data: { [ROOT_PASSWORD_KEY]: Buffer.from(password, "utf8").toString("base64") },
  };
}

/**
 * etcdctl's credentials in a backup Job when auth is on: ETCDCTL_USER=root and ETCDCTL_PASSWORD from the root
 * Secret (etcdctl reads both from its environment), so the password is in no argument and no object's spec.
 */
export function etcdctlAuthEnv(cluster: EtcdCluster): NonNullable<Container["env"]> {
  if (cluster.spec.auth?.enabled !== true) return [];
  return [
    { name: "ETCDCTL_USER", value: ROOT_USER },
    {
      name: "ETCDCTL_PASSWORD",
      valueFrom: { secretKeyRef: { name: rootSecretName(cluster), key: ROOT_PASSWORD_KEY } },
    },
  ];
}
