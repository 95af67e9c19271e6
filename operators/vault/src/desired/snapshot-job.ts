// Builds what takes one VaultSnapshot: the Job (named after the snapshot, owned by it) whose init container runs the
// operator image's `vault-snapshot-save` against the cluster's -active Service (the token Secret and the cluster's
// CA mounted, nothing else), and whose container runs @capstan/backup's `backup-upload` (the S3 credentials or the
// destination claim, no token); the Secret holding the Job's token; and where the snapshot is stored
// (`<prefix>/<namespace>/<cluster>/<snapshot>-<uid>.snap`). Pure.
import {
  DESTINATION_MOUNT,
  type SnapshotRef,
  s3CaMounts,
  s3CaVolumes,
  s3CredentialsEnv,
  snapshotDeleteJob,
  snapshotLocation,
  uploadArgs,
  uploadTargetOf,
} from "@capstan/backup";
import {
  type JobObject,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  type SecretObject,
  setControllerReference,
} from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import {
  DEFAULT_SNAPSHOT_DEADLINE_SECONDS,
  type VaultSnapshot,
  VaultSnapshotKind,
} from "../api/vault-snapshot.ts";
import { API_PORT, activeServiceName, clusterRef, MANAGED_BY, tlsSecretName } from "./names.ts";
import { saveArgs } from "./snapshot-args.ts";

type PodSpec = NonNullable<NonNullable<JobObject["spec"]>["template"]["spec"]>;

/** Label carrying the VaultSnapshot's name on its Job, pod and token Secret. */
export const SNAPSHOT_LABEL = "vault.capstan.dev/snapshot";
/** Annotation on the Job: where it stores the snapshot. */
export const SNAPSHOT_LOCATION_ANNOTATION = "vault.capstan.dev/location";
/** Where the snapshot is written inside the Job's pod. */
export const SNAPSHOT_FILE = "/scratch/snapshot.snap";
/** The Job's containers, in the order they run. */
export const SAVE_CONTAINER = "snapshot";
export const UPLOAD_CONTAINER = "upload";
/** Attempts of the Job's pod after the first (each takes a fresh snapshot); the token has one use per attempt. */
export const SNAPSHOT_BACKOFF_LIMIT = 2;
/** Where the Job's token is mounted, and its file. */
export const TOKEN_DIR = "/etc/capstan/vault-token";
export const TOKEN_FILE = `${TOKEN_DIR}/token`;
/** Where the cluster's CA certificate (only it) is mounted, and its file. */
export const VAULT_CA_DIR = "/etc/capstan/vault-ca";
export const VAULT_CA_FILE = `${VAULT_CA_DIR}/ca.crt`;
/** The user the operator image runs as. */
export const OPERATOR_UID = 1000;

/** Name and namespace of the snapshot; throws when the object lacks them. */
function snapshotName(snapshot: VaultSnapshot): { name: string; namespace: string } {
  const { name, namespace } = snapshot.metadata;
  if (!name || !namespace)
    throw new Error("VaultSnapshot: metadata.name and metadata.namespace are required");
  return { name, namespace };
}

/** The snapshot as @capstan/backup's location helpers name it. */
export function snapshotRef(snapshot: VaultSnapshot): SnapshotRef {
  const { name, namespace } = snapshotName(snapshot);
  return {
    kind: "VaultSnapshot",
    name,
    namespace,
    cluster: snapshot.spec.clusterName,
    uid: snapshot.metadata.uid,
    destination: snapshot.spec.destination,
    recorded: snapshot.status?.location,
    extension: "snap",
  };
}

/** Where the snapshot is stored: status.location once recorded, else where its Job stores it. */
export function vaultSnapshotLocation(snapshot: VaultSnapshot): string {
  return snapshotLocation(snapshotRef(snapshot));
}

/** The Secret holding the Job's Vault token: `<snapshot>-vault-token`. */
export function snapshotTokenSecretName(snapshot: VaultSnapshot): string {
  return `${snapshotName(snapshot).name}-vault-token`;
}

/** Labels of the Job, its pod and its token Secret; never the servers' selector (name vault-snapshot). */
export function snapshotLabels(snapshot: VaultSnapshot): Record<string, string> {
  return {
    "app.kubernetes.io/name": "vault-snapshot",
    "app.kubernetes.io/instance": snapshot.spec.clusterName,
    "app.kubernetes.io/managed-by": MANAGED_BY,
    [SNAPSHOT_LABEL]: snapshotName(snapshot).name,
  };
}

/** The Secret with the Job's token (key `token`), owned by the VaultSnapshot, deleted when the Job ends. */
export function snapshotTokenSecret(snapshot: VaultSnapshot, token: string): SecretObject {
  const { namespace } = snapshotName(snapshot);
  const secret: SecretObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: snapshotTokenSecretName(snapshot), namespace, labels: snapshotLabels(snapshot) },
    type: "Opaque",
    data: { token: Buffer.from(token, "utf8").toString("base64") },
  };
  setControllerReference(snapshot, VaultSnapshotKind, secret);
  return secret;
}

/** The cluster's CA certificate, the only key mounted of its TLS Secret (never a private key). */
export function vaultCaVolume(cluster: VaultCluster): NonNullable<PodSpec["volumes"]>[number] {
  return {
    name: "vault-ca",
    secret: {
      secretName: tlsSecretName(cluster),
      defaultMode: 0o440,
      items: [{ key: "ca.crt", path: "ca.crt" }],
    },
  };
}

/** The URL of the cluster's active node, through its -active Service. */
export function activeAddress(cluster: VaultCluster): string {
  const { namespace } = clusterRef(cluster);
  return `https://${activeServiceName(cluster)}.${namespace}.svc:${API_PORT}`;
}

const SMALL = { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } };

/** The Job taking `snapshot` of `cluster`, controlled by the VaultSnapshot. */
export function snapshotJob(input: {
  snapshot: VaultSnapshot;
  cluster: VaultCluster;
  operatorImage: string;
}): JobObject {
  const { snapshot, cluster, operatorImage } = input;
  const { name, namespace } = snapshotName(snapshot);
  if (cluster.metadata.name !== snapshot.spec.clusterName || cluster.metadata.namespace !== namespace) {
    throw new Error(
      `VaultSnapshot ${namespace}/${name}: spec.clusterName is ${snapshot.spec.clusterName}, not the VaultCluster ${cluster.metadata.namespace}/${cluster.metadata.name} given`,
    );
  }
  const deadline = snapshot.spec.activeDeadlineSeconds ?? DEFAULT_SNAPSHOT_DEADLINE_SECONDS;
  const { s3, pvc } = snapshot.spec.destination;
  const scratch = { name: "scratch", mountPath: "/scratch" };
  const spec: PodSpec = {
    restartPolicy: "Never",
    enableServiceLinks: false,
    automountServiceAccountToken: false,
    securityContext: restrictedPodSecurityContext(OPERATOR_UID),
    initContainers: [
      {
        name: SAVE_CONTAINER,
        image: operatorImage,
        args: [
          "vault-snapshot-save",
          ...saveArgs({
            address: activeAddress(cluster),
            caFile: VAULT_CA_FILE,
            tokenFile: TOKEN_FILE,
            to: SNAPSHOT_FILE,
          }),
        ],
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          scratch,
          { name: "vault-ca", mountPath: VAULT_CA_DIR, readOnly: true },
          { name: "vault-token", mountPath: TOKEN_DIR, readOnly: true },
        ],
      },
    ],
    containers: [
      {
        name: UPLOAD_CONTAINER,
        image: operatorImage,
        args: ["backup-upload", ...uploadArgs(uploadTargetOf(snapshotRef(snapshot), SNAPSHOT_FILE))],
        ...s3CredentialsEnv(s3),
        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          { ...scratch, readOnly: true },
          ...(pvc === undefined ? [] : [{ name: "destination", mountPath: DESTINATION_MOUNT }]),
          ...s3CaMounts(s3),
        ],
      },
    ],
    volumes: [
      // A snapshot is at most the raft data, which the claims' size bounds.
      { name: "scratch", emptyDir: { sizeLimit: cluster.spec.storage.size ?? "1Gi" } },
      vaultCaVolume(cluster),
      {
        name: "vault-token",
        secret: {
          secretName: snapshotTokenSecretName(snapshot),
          defaultMode: 0o440,
          items: [{ key: "token", path: "token" }],
        },
      },
      ...(pvc === undefined
        ? []
        : [{ name: "destination", persistentVolumeClaim: { claimName: pvc.claimName } }]),
      ...s3CaVolumes(s3),
    ],
  };
  const labels = snapshotLabels(snapshot);
  const job: JobObject = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace,
      labels,
      annotations: { [SNAPSHOT_LOCATION_ANNOTATION]: vaultSnapshotLocation(snapshot) },
    },
    spec: {
      backoffLimit: SNAPSHOT_BACKOFF_LIMIT,
      activeDeadlineSeconds: deadline,
      template: { metadata: { labels }, spec },
    },
  };
  setControllerReference(snapshot, VaultSnapshotKind, job);
  return job;
}

/** Label on the Job (and pod) that removes a deleted snapshot's file from its claim; carries the snapshot's name. */
export const SNAPSHOT_DELETE_LABEL = "vault.capstan.dev/snapshot-delete";

/**
 * The Job removing a deleted PVC snapshot's file (and a leftover .partial) with the operator image's `backup-delete`,
 * as the user the snapshot Job wrote it as. Not owned by the VaultSnapshot (a foreground deletion would delete it
 * before it ran).
 */
export function snapshotFileDeleteJob(snapshot: VaultSnapshot, operatorImage: string): JobObject {
  const { name, namespace } = snapshotName(snapshot);
  const pvc = snapshot.spec.destination.pvc;
  const target = uploadTargetOf(snapshotRef(snapshot), SNAPSHOT_FILE).target;
  if (pvc === undefined || target.kind !== "file")
    throw new Error(`VaultSnapshot ${name}: only a pvc destination is removed by a Job`);
  return snapshotDeleteJob({
    name,
    namespace,
    labels: {
      "app.kubernetes.io/name": "vault-snapshot-delete",
      "app.kubernetes.io/instance": snapshot.spec.clusterName,
      "app.kubernetes.io/managed-by": MANAGED_BY,
      [SNAPSHOT_DELETE_LABEL]: name,
    },
    operatorImage,
    claimName: pvc.claimName,
    file: target.path,
    runAsUser: OPERATOR_UID,
    backoffLimit: SNAPSHOT_BACKOFF_LIMIT,
  });
}
