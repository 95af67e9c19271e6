// Builds the Job that restores a new cluster's seed member from a snapshot (spec.bootstrap.restore), into the seed's
// data claim before the seed's pod exists: the operator image's `backup-download` fetches the snapshot (S3, or a
// read-only mounted claim) into a work directory on the claim, checking size and sha256, and refuses when the data
// directory already holds a member; `etcdutl snapshot restore` (revision bumped, old revisions marked compacted)
// writes a data directory next to it; `restore-finish` renames it into place. A Job killed at any point leaves
// only the work directory, which the next attempt clears: a partial restore is never taken for member data.
// Also the download arguments' contract, so builder, subcommand and tests cannot disagree.
import {
  FETCH_FLAGS,
  type FileOrS3,
  fetchSourceOf,
  fileOrS3Flags,
  parseExpectation,
  parseFileOrS3,
  parseFlags,
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
  setControllerReference,
} from "@capstan/core";
import type { EtcdBackup } from "../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import { DEFAULT_BUMP_REVISION, type EtcdBootstrapRestore } from "../api/restore-source.ts";
import { DATA_DIR, ETCD_UID, etcdImage } from "./member-pod.ts";
import { CLUSTER_LABEL, clusterRef, dataClaimName, MANAGED_BY, memberOfDataClaim, peerURL } from "./names.ts";

type PodSpec = NonNullable<NonNullable<JobObject["spec"]>["template"]["spec"]>;

/** Where the seed's claim is mounted (as in a member pod). */
export const DATA_MOUNT = "/var/lib/etcd";
/** The restore's work directory on the seed's claim: the snapshot and the data directory being written. */
export const RESTORE_WORK_DIR = `${DATA_MOUNT}/restore`;
/** The downloaded snapshot. */
export const RESTORE_SNAPSHOT = `${RESTORE_WORK_DIR}/snapshot.db`;
/** Where etcdutl writes the restored data directory, renamed to DATA_DIR when complete. */
export const RESTORE_DATA_DIR = `${RESTORE_WORK_DIR}/data`;
/** Where a PVC source is mounted (read-only): @capstan/backup's, named here too. */
export { SOURCE_MOUNT };
/** Annotation on the seed's claim: "pending" while the restore runs, "done" once its data directory is in place. */
export const RESTORE_CLAIM_ANNOTATION = "etcd.capstan.dev/restore";
/** Annotation on a seed's claim made by an EtcdRestore from a backup: the EtcdRestore's name. */
export const RESTORE_REQUEST_ANNOTATION = "etcd.capstan.dev/restore-request";
/** Annotation on the seed's claim: when the restore finished (RFC 3339). */
export const RESTORE_TIME_ANNOTATION = "etcd.capstan.dev/restore-time";
/** Names of the Job's containers, in the order they run. */
export const DOWNLOAD_CONTAINER = "download";
export const RESTORE_CONTAINER = "restore";
export const FINISH_CONTAINER = "finish";
/** Attempts of the Job's pod (a failed download is retried) before the restore is reported failed. */
export const RESTORE_BACKOFF_LIMIT = 3;
/** Seconds the restore Job may run. */
export const RESTORE_DEADLINE_SECONDS = 3600;

/** Where the snapshot is read from, resolved from spec.bootstrap.restore (and the EtcdBackup it names). */
export type RestoreFrom = StoredSnapshot;

/** The source as one string, for status and messages: backup/<name>, s3://<bucket>/<key>, pvc://<claim>/<path>. */
export function restoreSourceName(restore: EtcdBootstrapRestore): string {
  if (restore.backup !== undefined) return `backup/${restore.backup.name}`;
  return sourceLocation(restore) ?? "(no source)";
}

/**
 * Where to read the snapshot: spec.bootstrap.restore's s3 or pvc, or the location of the EtcdBackup it names
 * (which must be given when it names one). Throws naming the field when it cannot say.
 */
export function resolveRestoreSource(restore: EtcdBootstrapRestore, backup?: EtcdBackup): RestoreFrom {
  const expect = restore.sha256 === undefined ? {} : { sha256: restore.sha256 };
  if (restore.s3 !== undefined) return { kind: "s3", s3: restore.s3, ...expect };
  if (restore.pvc !== undefined) return { kind: "pvc", ...restore.pvc, ...expect };
  if (restore.backup === undefined || backup === undefined) {
    throw new Error("spec.bootstrap.restore: set one of backup (with the EtcdBackup given), s3 or pvc");
  }
  const location = backup.status?.location ?? "";
  const stored = storedSnapshotAt(location, backup.spec.destination, {
    sha256: restore.sha256 ?? backup.status?.sha256,
    size: backup.status?.size,
  });
  if (stored !== undefined) return stored;
  throw new Error(
    `EtcdBackup ${backup.metadata.name}: status.location "${location}" does not name its spec.destination; restore from spec.bootstrap.restore.s3 or pvc instead`,
  );
}

/** The arguments of `backup-download`. */
export interface DownloadArgs {
  /** Where the snapshot is written. */
  to: string;
  /** The data directory that must not hold a member yet. */
  dataDir: string;
  /** The work directory cleared before the download. */
  workDir: string;
  sha256?: string;
  size?: number;
  from: FileOrS3;
}

/** The download of `from`. */
export function downloadArgsOf(from: RestoreFrom): DownloadArgs {
  const base = {
    to: RESTORE_SNAPSHOT,
    dataDir: DATA_DIR,
    workDir: RESTORE_WORK_DIR,
    ...(from.sha256 === undefined ? {} : { sha256: from.sha256 }),
    ...(from.size === undefined ? {} : { size: from.size }),
  };
  return { ...base, from: fetchSourceOf(from) };
}

const DOWNLOAD_FLAGS = {
  "data-dir": { type: "string" },
  "work-dir": { type: "string" },
  ...FETCH_FLAGS,
} as const;

/** `backup-download`'s command line (after the subcommand name). */
export function downloadArgs(d: DownloadArgs): string[] {
  return [
    `--to=${d.to}`,
    `--data-dir=${d.dataDir}`,
    `--work-dir=${d.workDir}`,
    ...(d.sha256 === undefined ? [] : [`--sha256=${d.sha256}`]),
    ...(d.size === undefined ? [] : [`--size=${d.size}`]),
    ...fileOrS3Flags("from-file", d.from),
  ];
}

/** Reads `backup-download`'s command line back; throws naming the flag that is missing, unknown or malformed. */
export function parseDownloadArgs(args: string[]): DownloadArgs {
  const parsed = parseFlags("backup-download", args, DOWNLOAD_FLAGS);
  return {
    to: parsed.need("to"),
    dataDir: parsed.need("data-dir"),
    workDir: parsed.need("work-dir"),
    ...parseExpectation(parsed),
    from: parseFileOrS3(parsed, "from-file"),
  };
}

/** `etcdutl snapshot restore`'s arguments: the seed alone in a new cluster, the revision bumped. */
export function etcdutlRestoreArgs(cluster: EtcdCluster, seed: string, bumpRevision: number): string[] {
  const url = peerURL(cluster, seed);
  return [
    "snapshot",
    "restore",
    RESTORE_SNAPSHOT,
    `--data-dir=${RESTORE_DATA_DIR}`,
    `--name=${seed}`,
    `--initial-cluster=${seed}=${url}`,
    `--initial-advertise-peer-urls=${url}`,
    // The token the seed's own flags give (member-pod.ts): etcd ignores them on a restored data directory anyway.
    `--initial-cluster-token=${cluster.metadata.uid ?? clusterRef(cluster).name}`,
    ...(bumpRevision > 0 ? [`--bump-revision=${bumpRevision}`, "--mark-compacted"] : []),
  ];
}

/** `restore-finish`'s arguments. */
export function finishArgs(): string[] {
  return [`--from=${RESTORE_DATA_DIR}`, `--to=${DATA_DIR}`, `--work-dir=${RESTORE_WORK_DIR}`];
}

/** The restore Job's name: one per cluster. */
export function restoreJobName(cluster: EtcdCluster): string {
  return `${clusterRef(cluster).name}-restore`;
}

/** Labels of the restore Job and its pod; never the member selector (app.kubernetes.io/name is etcd-restore). */
export function restoreLabels(cluster: EtcdCluster): Record<string, string> {
  const { name } = clusterRef(cluster);
  return {
    "app.kubernetes.io/name": "etcd-restore",
    "app.kubernetes.io/instance": name,
    "app.kubernetes.io/managed-by": MANAGED_BY,
    [CLUSTER_LABEL]: name,
  };
}

/** What the restore Job is built from. */
export interface RestoreJobInput {
  /** The EtcdCluster as read from the API server (defaults applied, uid set). */
  cluster: EtcdCluster;
  /** The seed member whose claim receives the data. */
  seed: string;
  from: RestoreFrom;
  /** The operator's own image, which runs `backup-download` and `restore-finish`. */
  operatorImage: string;
  /** The Job's name; default restoreJobName(cluster) (an EtcdRestore from a backup names its own). */
  name?: string;
  /** Revisions added; default spec.bootstrap.restore.bumpRevision (an EtcdRestore passes its spec.source's). */
  bumpRevision?: number;
}

const SMALL = { requests: { cpu: "50m", memory: "64Mi" } };

/** The seed whose data claim a restore Job writes into (its "data" volume), or undefined when it has none. */
export function restoreJobSeed(job: JobObject): string | undefined {
  const data = job.spec?.template.spec?.volumes?.find((v) => v.name === "data");
  const claim = data?.persistentVolumeClaim?.claimName;
  return claim === undefined ? undefined : memberOfDataClaim(claim);
}

/** The Job restoring the seed's data, controlled by the EtcdCluster. */
export function restoreJob(input: RestoreJobInput): JobObject {
  const { cluster, seed, from, operatorImage } = input;
  const { namespace } = clusterRef(cluster);
  const bump = input.bumpRevision ?? cluster.spec.bootstrap?.restore?.bumpRevision ?? DEFAULT_BUMP_REVISION;
  const dataMount = [{ name: "data", mountPath: DATA_MOUNT }];
  const s3 = from.kind === "s3" ? from.s3 : undefined;
  const spec: PodSpec = {
    restartPolicy: "Never",
    enableServiceLinks: false,
    automountServiceAccountToken: false,
    // As etcd's user, like the member pod: the data directory it writes is etcd's.
    securityContext: restrictedPodSecurityContext(ETCD_UID),
    initContainers: [
      {
        name: DOWNLOAD_CONTAINER,
        image: operatorImage,
        args: ["backup-download", ...downloadArgs(downloadArgsOf(from))],
        ...s3CredentialsEnv(s3),
        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          ...dataMount,
          ...(from.kind === "pvc" ? [{ name: "source", mountPath: SOURCE_MOUNT, readOnly: true }] : []),
          ...s3CaMounts(s3),
        ],
      },
      {
        name: RESTORE_CONTAINER,
        image: etcdImage(cluster),
        command: ["/usr/local/bin/etcdutl"],
        args: etcdutlRestoreArgs(cluster, seed, bump),
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: dataMount,
      },
    ],
    containers: [
      {
        name: FINISH_CONTAINER,
        image: operatorImage,
        args: ["restore-finish", ...finishArgs()],
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: dataMount,
      },
    ],
    volumes: [
      { name: "data", persistentVolumeClaim: { claimName: dataClaimName(seed) } },
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
    metadata: { name: input.name ?? restoreJobName(cluster), namespace, labels },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds: RESTORE_DEADLINE_SECONDS,
      template: { metadata: { labels }, spec },
    },
  };
  setControllerReference(cluster, EtcdClusterKind, job);
  return job;
}
