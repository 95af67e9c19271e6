// Builds what a restore (spec.restore) makes: the names and marks of its objects, the temporary keys Secret, the
// restore token's Secret, and the Job (`<name>-restore`, owned by the VaultCluster): @capstan/backup's `backup-fetch`
// downloads the snapshot into a scratch volume and checks its size and SHA-256, then `vault-snapshot-restore` checks
// the archive and force-restores it into the first server (its DNS name through the headless Service). The S3
// credentials reach the fetch alone, the token the restore step alone. Pure.
import {
  fetchArgs,
  fetchSourceOf,
  SOURCE_MOUNT,
  type StoredSnapshot,
  s3CaMounts,
  s3CaVolumes,
  s3CredentialsEnv,
  sourceLocation,
  storedSnapshotAt,
} from "@capstan/backup";
import {
  type JobObject,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  type SecretObject,
  setControllerReference,
} from "@capstan/core";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import type { VaultRestore } from "../api/vault-restore.ts";
import type { VaultSnapshot } from "../api/vault-snapshot.ts";
import { API_PORT, clusterRef, keysSecretName, MANAGED_BY, podHost, podName } from "./names.ts";
import { base64Values } from "./objects.ts";
import { restoreArgs } from "./snapshot-args.ts";
import {
  OPERATOR_UID,
  TOKEN_DIR,
  TOKEN_FILE,
  VAULT_CA_DIR,
  VAULT_CA_FILE,
  vaultCaVolume,
} from "./snapshot-job.ts";

type PodSpec = NonNullable<NonNullable<JobObject["spec"]>["template"]["spec"]>;

/** Annotation on the first server's claim: "pending" (made for the restore), "forced" (the Job made), "done". */
export const RESTORE_ANNOTATION = "vault.capstan.dev/restore";
/** The values of {@link RESTORE_ANNOTATION}. */
export type RestoreMark = "pending" | "forced" | "done";
/** Annotation on the temporary keys Secret: the temporary Vault's cluster_id (the restored data answers another). */
export const TEMPORARY_CLUSTER_ID_ANNOTATION = "vault.capstan.dev/temporary-cluster-id";
/** The restore Job's containers, in the order they run. */
export const FETCH_CONTAINER = "fetch";
export const RESTORE_CONTAINER = "restore";
/** Attempts of the restore Job's pod after the first; the token has one use per attempt. */
export const RESTORE_BACKOFF_LIMIT = 2;
/** Seconds the restore Job may run; also its token's lifetime. */
export const RESTORE_DEADLINE_SECONDS = 3600;
/** Where the snapshot is fetched to in the Job's pod. */
export const RESTORE_FILE = "/scratch/snapshot.snap";

/** The Secret the keys of the cluster the snapshot was taken from are read from. */
export function restoreKeysSource(cluster: VaultCluster): string {
  return cluster.spec.restore?.unsealKeysSecret ?? keysSecretName(cluster);
}

/** The temporary Vault's keys and root token: `<name>-restore-keys`. */
export function temporaryKeysSecretName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-restore-keys`;
}

/** The restore Job's token: `<name>-restore-token`. */
export function restoreTokenSecretName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-restore-token`;
}

/** The restore Job: `<name>-restore`. */
export function restoreJobName(cluster: VaultCluster): string {
  return `${clusterRef(cluster).name}-restore`;
}

/** Labels of the restore's Job, pod and Secrets; never the servers' selector (name vault-restore). */
export function restoreLabels(cluster: VaultCluster): Record<string, string> {
  return {
    "app.kubernetes.io/name": "vault-restore",
    "app.kubernetes.io/instance": clusterRef(cluster).name,
    "app.kubernetes.io/managed-by": MANAGED_BY,
  };
}

/** A Secret of the restore (`data` plain), owned by the VaultCluster: it is no use without the cluster. */
export function restoreSecret(
  cluster: VaultCluster,
  name: string,
  data: Record<string, string>,
  annotations: Record<string, string> = {},
): SecretObject {
  const secret: SecretObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: clusterRef(cluster).namespace, labels: restoreLabels(cluster), annotations },
    type: "Opaque",
    data: base64Values(data),
  };
  setControllerReference(cluster, VaultClusterKind, secret);
  return secret;
}

/** spec.restore's source as one string: snapshot/<name>, s3://<bucket>/<key> or pvc://<claim>/<path>. */
export function restoreSourceName(restore: VaultRestore): string {
  if (restore.snapshot !== undefined) return `snapshot/${restore.snapshot.name}`;
  return sourceLocation(restore) ?? "(no source)";
}

/**
 * Where to read the snapshot: spec.restore's s3 or pvc, or the location the VaultSnapshot it names recorded (with
 * its size and sha256). Undefined when it names a VaultSnapshot whose location does not name its destination.
 */
export function resolveRestoreSource(
  restore: VaultRestore,
  snapshot?: VaultSnapshot,
): StoredSnapshot | undefined {
  const expect = restore.sha256 === undefined ? {} : { sha256: restore.sha256 };
  if (restore.s3 !== undefined) return { kind: "s3", s3: restore.s3, ...expect };
  if (restore.pvc !== undefined) return { kind: "pvc", ...restore.pvc, ...expect };
  if (snapshot === undefined) return undefined;
  return storedSnapshotAt(snapshot.status?.location ?? "", snapshot.spec.destination, {
    sha256: restore.sha256 ?? snapshot.status?.sha256,
    size: snapshot.status?.size,
  });
}

/** The first server's URL through the headless Service (its certificate names it). */
export function firstServerAddress(cluster: VaultCluster): string {
  return `https://${podHost(cluster, podName(cluster, 0))}:${API_PORT}`;
}

const SMALL = { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } };

/** The restore Job, controlled by the VaultCluster. */
export function restoreJob(input: {
  cluster: VaultCluster;
  from: StoredSnapshot;
  operatorImage: string;
}): JobObject {
  const { cluster, from, operatorImage } = input;
  const { namespace } = clusterRef(cluster);
  const s3 = from.kind === "s3" ? from.s3 : undefined;
  const scratch = { name: "scratch", mountPath: "/scratch" };
  const spec: PodSpec = {
    restartPolicy: "Never",
    enableServiceLinks: false,
    automountServiceAccountToken: false,
    securityContext: restrictedPodSecurityContext(OPERATOR_UID),
    initContainers: [
      {
        name: FETCH_CONTAINER,
        image: operatorImage,
        args: [
          "backup-fetch",
          ...fetchArgs({
            to: RESTORE_FILE,
            ...(from.sha256 === undefined ? {} : { sha256: from.sha256 }),
            ...(from.size === undefined ? {} : { size: from.size }),
            from: fetchSourceOf(from),
          }),
        ],
        ...s3CredentialsEnv(s3),
        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          scratch,
          ...(from.kind === "pvc" ? [{ name: "source", mountPath: SOURCE_MOUNT, readOnly: true }] : []),
          ...s3CaMounts(s3),
        ],
      },
    ],
    containers: [
      {
        name: RESTORE_CONTAINER,
        image: operatorImage,
        args: [
          "vault-snapshot-restore",
          ...restoreArgs({
            address: firstServerAddress(cluster),
            caFile: VAULT_CA_FILE,
            tokenFile: TOKEN_FILE,
            file: RESTORE_FILE,
          }),
        ],
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          { ...scratch, readOnly: true },
          { name: "vault-ca", mountPath: VAULT_CA_DIR, readOnly: true },
          { name: "vault-token", mountPath: TOKEN_DIR, readOnly: true },
        ],
      },
    ],
    volumes: [
      { name: "scratch", emptyDir: { sizeLimit: cluster.spec.storage.size ?? "1Gi" } },
      vaultCaVolume(cluster),
      {
        name: "vault-token",
        secret: {
          secretName: restoreTokenSecretName(cluster),
          defaultMode: 0o440,
          items: [{ key: "token", path: "token" }],
        },
      },
      ...(from.kind === "pvc"
        ? [{ name: "source", persistentVolumeClaim: { claimName: from.claimName, readOnly: true } }]
        : []),
      ...s3CaVolumes(s3),
    ],
  };
  const labels = restoreLabels(cluster);
  const job: JobObject = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: restoreJobName(cluster), namespace, labels },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds: RESTORE_DEADLINE_SECONDS,
      template: { metadata: { labels }, spec },
    },
  };
  setControllerReference(cluster, VaultClusterKind, job);
  return job;
}
