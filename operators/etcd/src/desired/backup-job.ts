// Builds the Job that takes one EtcdBackup: `etcdctl snapshot save` from the chosen member into a scratch volume,
// `etcdutl snapshot status` to verify the file (its JSON line in the container log gives revision and version),
// then the operator image's `backup-upload` subcommand, which stores the file (S3 multipart upload, or a copy on a
// PersistentVolumeClaim) and writes {location, size, sha256} as its termination message. The etcd image has no
// shell: each step is one binary, run as init containers in order. Also the parsers of the Job's results (the
// upload's contract and the snapshot's location are @capstan/backup's), and the Job that removes a PVC backup's
// file when the EtcdBackup is deleted with deletionPolicy Delete (`backup-delete`).
import {
  DELETE_CONTAINER,
  DESTINATION_MOUNT,
  deleteJobNameOf,
  joinPath,
  locationRoot,
  parseDeleteArgs,
  parseUploadArgs,
  parseUploadResult,
  type SnapshotRef,
  s3CaMounts,
  s3CaVolumes,
  s3CredentialsEnv,
  snapshotDeleteJob,
  snapshotLocation,
  snapshotPath,
  type UploadArgs,
  type UploadResult,
  type UploadTarget,
  uploadArgs,
  uploadTargetOf,
} from "@capstan/backup";
import {
  type JobObject,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  setControllerReference,
} from "@capstan/core";
import { DEFAULT_BACKUP_DEADLINE_SECONDS, type EtcdBackup, EtcdBackupKind } from "../api/backup.ts";
import { DEFAULT_STORAGE_SIZE, type EtcdCluster } from "../api/etcd-cluster.ts";
import { etcdctlAuthEnv } from "./auth.ts";
import { ETCD_UID, etcdImage } from "./member-pod.ts";
import { CLUSTER_LABEL, clientURL, MANAGED_BY } from "./names.ts";
import { backupTLS } from "./tls.ts";

// The upload's and the deletion's command lines are @capstan/backup's; named here too, as before.
export type { UploadArgs, UploadResult, UploadTarget };
export {
  DELETE_CONTAINER,
  DESTINATION_MOUNT,
  parseDeleteArgs,
  parseUploadArgs,
  parseUploadResult,
  uploadArgs,
};

type PodSpec = NonNullable<NonNullable<JobObject["spec"]>["template"]["spec"]>;

/** Label carrying the EtcdBackup's name on its Job and pod. */
export const BACKUP_LABEL = "etcd.capstan.dev/backup";
/** Annotation on the Job: the member the snapshot is taken from. */
export const BACKUP_MEMBER_ANNOTATION = "etcd.capstan.dev/member";
/** Where the snapshot is written inside the Job's pod. */
export const SNAPSHOT_PATH = "/scratch/snapshot.db";
/** Names of the Job's containers, in the order they run. */
export const SNAPSHOT_CONTAINER = "snapshot";
export const VERIFY_CONTAINER = "verify";
export const UPLOAD_CONTAINER = "upload";
/** Attempts of the Job's pod before the backup fails (each attempt takes a fresh snapshot). */
export const BACKUP_BACKOFF_LIMIT = 2;

/** What the backup Job is built from. */
export interface BackupJobInput {
  /** The EtcdBackup as read from the API server (defaults applied, uid set). */
  backup: EtcdBackup;
  /** The EtcdCluster it backs up (for the image, its storage size and the member's URL). */
  cluster: EtcdCluster;
  /** The member to snapshot (chooseBackupMember). */
  member: string;
  /** The operator's own image, which runs `backup-upload`. */
  operatorImage: string;
}

/** Name and namespace of the backup; throws when the object lacks them. */
function backupRef(backup: EtcdBackup): { name: string; namespace: string } {
  const { name, namespace } = backup.metadata;
  if (!name || !namespace) throw new Error("EtcdBackup: metadata.name and metadata.namespace are required");
  return { name, namespace };
}

/** The Job of a backup: named after it (a backup has exactly one Job). */
export function backupJobName(backup: EtcdBackup): string {
  return backupRef(backup).name;
}

/** Annotation on the backup Job: where it stores the snapshot, as {@link backupLocation} says it. */
export const BACKUP_LOCATION_ANNOTATION = "etcd.capstan.dev/location";

/** The backup as @capstan/backup's location helpers name it: its snapshot is `<namespace>/<cluster>/<backup>-<uid>.db`. */
function snapshotRef(backup: EtcdBackup): SnapshotRef {
  const { name, namespace } = backupRef(backup);
  return {
    kind: "EtcdBackup",
    name,
    namespace,
    cluster: backup.spec.clusterName,
    uid: backup.metadata.uid,
    destination: backup.spec.destination,
    recorded: backup.status?.location,
    extension: "db",
  };
}

/**
 * Where the backup's snapshot is stored, s3://<bucket>/<key> or pvc://<claim>/<path>: status.location once it
 * succeeded, else where its Job stores it (`<prefix>/<namespace>/<cluster>/<backup>-<uid>.db`: the uid keeps it
 * unique when Kubernetes clusters share a bucket).
 */
export function backupLocation(backup: EtcdBackup): string {
  return snapshotLocation(snapshotRef(backup));
}

/**
 * Where the backup's Job stored the snapshot: the Job's {@link BACKUP_LOCATION_ANNOTATION}, or, on a Job without one
 * (made by an operator before 2026-12-05), the path those Jobs used (`<namespace>/<cluster>/<backup>.db`).
 */
export function jobLocation(backup: EtcdBackup, annotation: string | undefined): string {
  if (annotation !== undefined && annotation !== "") return annotation;
  const ref = snapshotRef(backup);
  const { root, dir } = locationRoot(ref);
  return `${root}${joinPath(dir, snapshotPath(ref, true))}`;
}

/** The upload of `backup`'s snapshot. */
export function uploadTarget(backup: EtcdBackup): UploadArgs {
  return uploadTargetOf(snapshotRef(backup), SNAPSHOT_PATH);
}

/** `etcdutl snapshot status --write-out=json` of the snapshot. */
export interface SnapshotStatus {
  hash: number;
  revision: number;
  totalKey: number;
  totalSize: number;
  /** The storage version (etcd 3.6 writes it; a 3.5 snapshot has none). */
  version?: string;
}

/** The verify container's log: the last line that is etcdutl's JSON status, or undefined. */
export function parseSnapshotStatus(log: string): SnapshotStatus | undefined {
  for (const line of log.trim().split("\n").reverse()) {
    try {
      const v = JSON.parse(line) as Partial<SnapshotStatus>;
      if (typeof v.revision === "number" && typeof v.hash === "number" && typeof v.totalSize === "number") {
        return {
          hash: v.hash,
          revision: v.revision,
          totalKey: typeof v.totalKey === "number" ? v.totalKey : 0,
          totalSize: v.totalSize,
          ...(typeof v.version === "string" && v.version !== "" ? { version: v.version } : {}),
        };
      }
    } catch {
      // a log line of another shape
    }
  }
  return undefined;
}

/** Labels on a backup's Job and pod; never the member selector (app.kubernetes.io/name is etcd-backup). */
export function backupLabels(backup: EtcdBackup): Record<string, string> {
  return {
    "app.kubernetes.io/name": "etcd-backup",
    "app.kubernetes.io/instance": backup.spec.clusterName,
    "app.kubernetes.io/managed-by": MANAGED_BY,
    [CLUSTER_LABEL]: backup.spec.clusterName,
    [BACKUP_LABEL]: backupRef(backup).name,
  };
}

const SMALL = { requests: { cpu: "50m", memory: "64Mi" } };

/** The Job taking `backup`, controlled by the EtcdBackup. */
export function backupJob(input: BackupJobInput): JobObject {
  const { backup, cluster, member, operatorImage } = input;
  const { namespace } = backupRef(backup);
  if (cluster.metadata.name !== backup.spec.clusterName || cluster.metadata.namespace !== namespace) {
    throw new Error(
      `EtcdBackup ${namespace}/${backupRef(backup).name}: spec.clusterName is ${backup.spec.clusterName}, not the EtcdCluster ${cluster.metadata.namespace}/${cluster.metadata.name} given`,
    );
  }
  const deadline = backup.spec.activeDeadlineSeconds ?? DEFAULT_BACKUP_DEADLINE_SECONDS;
  const { s3, pvc } = backup.spec.destination;
  const upload = uploadTarget(backup);
  const scratchMount = [{ name: "scratch", mountPath: "/scratch" }];
  const { storage } = cluster.spec;
  const tls = backupTLS(cluster);
  const spec: PodSpec = {
    restartPolicy: "Never",
    enableServiceLinks: false,
    automountServiceAccountToken: false,
    // Every container runs as etcd's user: etcdctl writes the snapshot with mode 0600.
    securityContext: restrictedPodSecurityContext(ETCD_UID),
    initContainers: [
      {
        name: SNAPSHOT_CONTAINER,
        image: etcdImage(cluster),
        command: ["/usr/local/bin/etcdctl"],
        // etcdctl applies --command-timeout (default 5s) to the whole snapshot stream.
        args: [
          `--endpoints=${clientURL(cluster, member)}`,
          "--dial-timeout=10s",
          `--command-timeout=${deadline}s`,
          ...tls.args,
          "snapshot",
          "save",
          SNAPSHOT_PATH,
        ],
        // With spec.auth: the user and the password (from the root Secret) in etcdctl's environment, never in args.
        ...(cluster.spec.auth?.enabled === true ? { env: etcdctlAuthEnv(cluster) } : {}),
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [...scratchMount, ...tls.mounts],
      },
      {
        name: VERIFY_CONTAINER,
        image: etcdImage(cluster),
        command: ["/usr/local/bin/etcdutl"],
        args: ["snapshot", "status", SNAPSHOT_PATH, "--write-out=json"],
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [{ name: "scratch", mountPath: "/scratch", readOnly: true }],
      },
    ],
    containers: [
      {
        name: UPLOAD_CONTAINER,
        image: operatorImage,
        args: ["backup-upload", ...uploadArgs(upload)],
        ...s3CredentialsEnv(s3),
        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          { name: "scratch", mountPath: "/scratch", readOnly: true },
          ...(pvc === undefined ? [] : [{ name: "destination", mountPath: DESTINATION_MOUNT }]),
          ...s3CaMounts(s3),
        ],
      },
    ],
    volumes: [
      {
        name: "scratch",
        // The snapshot is at most the member's database, which the quota (from storage.size) bounds.
        emptyDir: storage.ephemeral === true ? {} : { sizeLimit: storage.size ?? DEFAULT_STORAGE_SIZE },
      },
      ...(pvc === undefined
        ? []
        : [{ name: "destination", persistentVolumeClaim: { claimName: pvc.claimName } }]),
      ...tls.volumes,
      ...s3CaVolumes(s3),
    ],
  };
  const labels = backupLabels(backup);
  const job: JobObject = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: backupJobName(backup),
      namespace,
      labels,
      annotations: {
        [BACKUP_MEMBER_ANNOTATION]: member,
        [BACKUP_LOCATION_ANNOTATION]: backupLocation(backup),
      },
    },
    spec: {
      backoffLimit: BACKUP_BACKOFF_LIMIT,
      activeDeadlineSeconds: deadline,
      template: { metadata: { labels }, spec },
    },
  };
  setControllerReference(backup, EtcdBackupKind, job);
  return job;
}

/** Label on the Job (and pod) that removes a backup's file from its claim; carries the backup's name. */
export const DELETE_LABEL = "etcd.capstan.dev/backup-delete";

/** The Job removing a PVC backup's file: `<backup>-delete`, shortened with a hash for long names (63 at most). */
export function deleteJobName(backup: EtcdBackup): string {
  return deleteJobNameOf(backupRef(backup).name);
}

/** `backup-delete`'s command line (after the subcommand name): the file to remove, below the claim's mount. */
export function deleteArgs(backup: EtcdBackup): string[] {
  const u = uploadTarget(backup);
  if (u.target.kind !== "file")
    throw new Error(`EtcdBackup ${backupRef(backup).name}: only a pvc destination is removed by a Job`);
  return [`--file=${u.target.path}`];
}

/** The Job removing a PVC backup's file (and a leftover .partial) with the operator image's `backup-delete`. */
export function deleteJob(backup: EtcdBackup, operatorImage: string): JobObject {
  const { namespace, name } = backupRef(backup);
  const pvc = backup.spec.destination.pvc;
  if (pvc === undefined) throw new Error(`EtcdBackup ${name}: only a pvc destination is removed by a Job`);
  const [file] = deleteArgs(backup);
  return snapshotDeleteJob({
    name,
    namespace,
    labels: {
      "app.kubernetes.io/name": "etcd-backup-delete",
      "app.kubernetes.io/instance": backup.spec.clusterName,
      "app.kubernetes.io/managed-by": MANAGED_BY,
      [CLUSTER_LABEL]: backup.spec.clusterName,
      [DELETE_LABEL]: name,
    },
    operatorImage,
    claimName: pvc.claimName,
    file: (file ?? "").slice("--file=".length),
    // The backup Job wrote the file as etcd's user.
    runAsUser: ETCD_UID,
    backoffLimit: BACKUP_BACKOFF_LIMIT,
  });
}
