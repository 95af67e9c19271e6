import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  CLUSTER_LABEL,
  DATA_DIR,
  DEFAULT_BUMP_REVISION,
  ETCD_UID,
  EtcdClusterKind,
  MANAGED_BY,
  S3_FLAGS,
  clusterRef,
  dataClaimName,
  etcdImage,
  fileOrS3Flags,
  memberOfDataClaim,
  parseFileOrS3,
  parseFlags,
  peerURL,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  s3CaMounts,
  s3CaVolumes,
  s3CredentialsEnv,
  s3ObjectOf,
  setControllerReference
} from "./chunk-27BPVPNY.js";

// src/desired/restore-job.ts
var DATA_MOUNT = "/var/lib/etcd";
var RESTORE_WORK_DIR = `${DATA_MOUNT}/restore`;
var RESTORE_SNAPSHOT = `${RESTORE_WORK_DIR}/snapshot.db`;
var RESTORE_DATA_DIR = `${RESTORE_WORK_DIR}/data`;
var SOURCE_MOUNT = "/source";
var RESTORE_CLAIM_ANNOTATION = "etcd.capstan.dev/restore";
var RESTORE_REQUEST_ANNOTATION = "etcd.capstan.dev/restore-request";
var RESTORE_TIME_ANNOTATION = "etcd.capstan.dev/restore-time";
var DOWNLOAD_CONTAINER = "download";
var RESTORE_CONTAINER = "restore";
var FINISH_CONTAINER = "finish";
var RESTORE_BACKOFF_LIMIT = 3;
var RESTORE_DEADLINE_SECONDS = 3600;
function restoreSourceName(restore) {
  if (restore.backup !== void 0) return `backup/${restore.backup.name}`;
  if (restore.s3 !== void 0) return `s3://${restore.s3.bucket}/${restore.s3.key}`;
  if (restore.pvc !== void 0) return `pvc://${restore.pvc.claimName}/${restore.pvc.path}`;
  return "(no source)";
}
function resolveRestoreSource(restore, backup) {
  const expect = restore.sha256 === void 0 ? {} : { sha256: restore.sha256 };
  if (restore.s3 !== void 0) return { kind: "s3", s3: restore.s3, ...expect };
  if (restore.pvc !== void 0) return { kind: "pvc", ...restore.pvc, ...expect };
  if (restore.backup === void 0 || backup === void 0) {
    throw new Error("spec.bootstrap.restore: set one of backup (with the EtcdBackup given), s3 or pvc");
  }
  const location = backup.status?.location ?? "";
  const m = /^(s3|pvc):\/\/([^/]+)\/(.+)$/.exec(location);
  const { s3, pvc } = backup.spec.destination;
  const known = {
    ...(restore.sha256 ?? backup.status?.sha256) === void 0 ? {} : { sha256: restore.sha256 ?? backup.status?.sha256 },
    ...backup.status?.size === void 0 ? {} : { size: backup.status.size }
  };
  if (m?.[1] === "s3" && s3 !== void 0 && m[2] === s3.bucket) {
    const { prefix: _prefix, ...rest } = s3;
    return { kind: "s3", s3: { ...rest, key: m[3] }, ...known };
  }
  if (m?.[1] === "pvc" && pvc !== void 0 && m[2] === pvc.claimName) {
    return { kind: "pvc", claimName: pvc.claimName, path: m[3], ...known };
  }
  throw new Error(
    `EtcdBackup ${backup.metadata.name}: status.location "${location}" does not name its spec.destination; restore from spec.bootstrap.restore.s3 or pvc instead`
  );
}
function downloadArgsOf(from) {
  const base = {
    to: RESTORE_SNAPSHOT,
    dataDir: DATA_DIR,
    workDir: RESTORE_WORK_DIR,
    ...from.sha256 === void 0 ? {} : { sha256: from.sha256 },
    ...from.size === void 0 ? {} : { size: from.size }
  };
  if (from.kind === "pvc") {
    return { ...base, from: { kind: "file", path: `${SOURCE_MOUNT}/${from.path}` } };
  }
  return { ...base, from: { kind: "s3", ...s3ObjectOf(from.s3, from.s3.key) } };
}
var DOWNLOAD_FLAGS = {
  to: { type: "string" },
  "data-dir": { type: "string" },
  "work-dir": { type: "string" },
  sha256: { type: "string" },
  size: { type: "string" },
  "from-file": { type: "string" },
  ...S3_FLAGS
};
function downloadArgs(d) {
  return [
    `--to=${d.to}`,
    `--data-dir=${d.dataDir}`,
    `--work-dir=${d.workDir}`,
    ...d.sha256 === void 0 ? [] : [`--sha256=${d.sha256}`],
    ...d.size === void 0 ? [] : [`--size=${d.size}`],
    ...fileOrS3Flags("from-file", d.from)
  ];
}
function parseDownloadArgs(args) {
  const parsed = parseFlags("backup-download", args, DOWNLOAD_FLAGS);
  const { sha256, size: sizeFlag } = parsed.values;
  if (sha256 !== void 0 && !/^[0-9a-f]{64}$/.test(sha256)) {
    parsed.fail("--sha256 must be 64 lowercase hexadecimal digits");
  }
  const size = sizeFlag === void 0 ? void 0 : Number(sizeFlag);
  if (size !== void 0 && !(sizeFlag !== "" && Number.isSafeInteger(size) && size >= 0)) {
    parsed.fail(`--size must be a byte count, not "${sizeFlag}"`);
  }
  return {
    to: parsed.need("to"),
    dataDir: parsed.need("data-dir"),
    workDir: parsed.need("work-dir"),
    ...sha256 === void 0 ? {} : { sha256 },
    ...size === void 0 ? {} : { size },
    from: parseFileOrS3(parsed, "from-file")
  };
}
function etcdutlRestoreArgs(cluster, seed, bumpRevision) {
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
    ...bumpRevision > 0 ? [`--bump-revision=${bumpRevision}`, "--mark-compacted"] : []
  ];
}
function finishArgs() {
  return [`--from=${RESTORE_DATA_DIR}`, `--to=${DATA_DIR}`, `--work-dir=${RESTORE_WORK_DIR}`];
}
function restoreJobName(cluster) {
  return `${clusterRef(cluster).name}-restore`;
}
function restoreLabels(cluster) {
  const { name } = clusterRef(cluster);
  return {
    "app.kubernetes.io/name": "etcd-restore",
    "app.kubernetes.io/instance": name,
    "app.kubernetes.io/managed-by": MANAGED_BY,
    [CLUSTER_LABEL]: name
  };
}
var SMALL = { requests: { cpu: "50m", memory: "64Mi" } };
function restoreJobSeed(job) {
  const data = job.spec?.template.spec?.volumes?.find((v) => v.name === "data");
  const claim = data?.persistentVolumeClaim?.claimName;
  return claim === void 0 ? void 0 : memberOfDataClaim(claim);
}
function restoreJob(input) {
  const { cluster, seed, from, operatorImage } = input;
  const { namespace } = clusterRef(cluster);
  const bump = input.bumpRevision ?? cluster.spec.bootstrap?.restore?.bumpRevision ?? DEFAULT_BUMP_REVISION;
  const dataMount = [{ name: "data", mountPath: DATA_MOUNT }];
  const s3 = from.kind === "s3" ? from.s3 : void 0;
  const spec = {
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
          ...from.kind === "pvc" ? [{ name: "source", mountPath: SOURCE_MOUNT, readOnly: true }] : [],
          ...s3CaMounts(s3)
        ]
      },
      {
        name: RESTORE_CONTAINER,
        image: etcdImage(cluster),
        command: ["/usr/local/bin/etcdutl"],
        args: etcdutlRestoreArgs(cluster, seed, bump),
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: dataMount
      }
    ],
    containers: [
      {
        name: FINISH_CONTAINER,
        image: operatorImage,
        args: ["restore-finish", ...finishArgs()],
        resources: SMALL,
        terminationMessagePolicy: "FallbackToLogsOnError",
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: dataMount
      }
    ],
    volumes: [
      { name: "data", persistentVolumeClaim: { claimName: dataClaimName(seed) } },
      ...from.kind === "pvc" ? [{ name: "source", persistentVolumeClaim: { claimName: from.claimName, readOnly: true } }] : [],
      ...s3CaVolumes(s3)
    ]
  };
  const labels = restoreLabels(cluster);
  const job = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: input.name ?? restoreJobName(cluster), namespace, labels },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds: RESTORE_DEADLINE_SECONDS,
      template: { metadata: { labels }, spec }
    }
  };
  setControllerReference(cluster, EtcdClusterKind, job);
  return job;
}

export {
  RESTORE_CLAIM_ANNOTATION,
  RESTORE_REQUEST_ANNOTATION,
  RESTORE_TIME_ANNOTATION,
  restoreSourceName,
  resolveRestoreSource,
  parseDownloadArgs,
  restoreJobName,
  restoreJobSeed,
  restoreJob
};
