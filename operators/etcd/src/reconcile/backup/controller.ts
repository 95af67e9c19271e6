// The EtcdBackup controller: observe the backup's cluster, destination claim, Job and the Job's results -> plan
// (plan/backup.ts) -> create the Job -> write status, conditions, events and the backup metrics. With
// deletionPolicy Delete, a finalizer holds a deleted backup until its snapshot is gone (plan/backup-deletion.ts):
// the operator deletes an S3 object itself, a Job removes a file from a claim.

import {
  deleteS3Object,
  failedStepMessage,
  type S3ObjectDeleter,
  s3SecretsProblem as sharedS3SecretsProblem,
} from "@capstan/backup";
import {
  ApiError,
  addFinalizer,
  type Condition,
  type Controller,
  controller,
  type ErrorAction,
  isAlreadyExists,
  isNotFound,
  Job,
  PersistentVolumeClaim,
  Pod,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  removeFinalizer,
  Secret,
  setCondition,
  statusMergePatch,
} from "@capstan/core";
import {
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_S3_REGION,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  type EtcdBackup,
  EtcdBackupKind,
  type EtcdBackupStatus,
} from "../../api/backup.ts";
import { EtcdClusterKind } from "../../api/etcd-cluster.ts";
import {
  BACKUP_LABEL,
  backupJob,
  deleteJob,
  deleteJobName,
  parseSnapshotStatus,
  parseUploadResult,
  UPLOAD_CONTAINER,
  uploadTarget,
  VERIFY_CONTAINER,
} from "../../desired/backup-job.ts";
import { CLUSTER_LABEL, MANAGED_BY } from "../../desired/names.ts";
import {
  type BackupPlan,
  type JobResults,
  type ObservedClaim,
  type ObservedJob,
  type PlannedCondition,
  planBackup,
} from "../../plan/backup.ts";
import {
  type DeletionPlan,
  planBackupDeletion,
  planDeletionFailure,
  planObjectDeleted,
  SNAPSHOT_FINALIZER,
} from "../../plan/backup-deletion.ts";
import { observeBackupsInUse } from "../backup-use.ts";
import { prepareAuth } from "../cluster/auth.ts";
import { defaultEtcdClient, type EtcdClientFactory, observe } from "../cluster/observe.ts";
import { readClientTLS } from "../cluster/tls.ts";
import { observeJob } from "../job.ts";
import type { EtcdOperatorMetrics } from "../metrics.ts";

/** Reads the log of one container of a pod (the verify step's etcdutl line). */
export type ContainerLogReader = (
  namespace: string,
  pod: string,
  container: string,
  signal: AbortSignal,
) => Promise<string>;

/** Options of {@link etcdBackupController}. */
export interface EtcdBackupControllerOptions {
  /** The operator's own image: the Job's upload step runs its `backup-upload` subcommand. */
  operatorImage: string;
  /** Creates etcd clients (tests replace it). */
  etcdClient?: EtcdClientFactory;
  /** Reads container logs (default: the API server's pods/log; tests replace it). */
  readLog?: ContainerLogReader;
  /** The last successful backup's time and the failures, per cluster. */
  metrics?: EtcdOperatorMetrics;
  /** Deletes S3 objects (tests replace it). */
  deleteObject?: S3ObjectDeleter;
}

/** The controller that reconciles EtcdBackups. */
export function etcdBackupController(options: EtcdBackupControllerOptions): Controller<EtcdBackup> {
  return controller({
    name: "etcdbackup",
    for: EtcdBackupKind,
    owns: [Job],
    // Spec edits, creation and deletion (a deletion request is a metadata change only); not status writes.
    predicates: [
      {
        update: (o, n) =>
          o.metadata.generation !== n.metadata.generation ||
          o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp,
      },
    ],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileEtcdBackup(req, ctx, options),
    errorPolicy: etcdBackupErrorPolicy,
  });
}

/**
 * What the controller does with a snapshot that could not be deleted (a {@link DeletionError}: its credentials gone,
 * the storage unreachable or refusing): Progressing False and Degraded with the reason, a Warning, a retry at the
 * Degraded pace; the finalizer stays. Any other error is retried with backoff.
 */
export function etcdBackupErrorPolicy(err: Error, backup: EtcdBackup): ErrorAction | undefined {
  if (!(err instanceof DeletionError)) return undefined;
  const plan = planDeletionFailure(backup, err.reason, err.message);
  const event = plan.event;
  return {
    conditions: plan.conditions,
    ...(plan.requeueAfter === undefined ? {} : { requeueAfter: plan.requeueAfter }),
    ...(event === undefined
      ? {}
      : { event: { type: event.type, reason: event.reason, action: "Delete", note: event.message } }),
  };
}

/** The API server's pods/log of `container`, the last 50 lines. */
function apiLogReader(ctx: ReconcileContext): ContainerLogReader {
  return async (namespace, pod, container, signal) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log?container=${encodeURIComponent(container)}&tailLines=50`;
    const body = await ctx.client.raw(path, signal);
    return typeof body === "string" ? body : JSON.stringify(body);
  };
}

/**
 * A failed Job's reason with the step's own error (@capstan/backup's failedStepMessage: the first container of the
 * newest failed pod that exited non-zero, and its termination message, e.g. the upload's "NoSuchBucket: The
 * specified bucket does not exist", its tail when long).
 */
async function withPodError(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  job: ObservedJob,
): Promise<ObservedJob> {
  if (job.failed === undefined) return job;
  const pods = await ctx.cache.list(Pod, {
    namespace: backup.metadata.namespace ?? "",
    labels: { [BACKUP_LABEL]: backup.metadata.name ?? "" },
  });
  const said = failedStepMessage(pods);
  if (said === undefined) return job;
  return { ...job, failed: { ...job.failed, message: `${job.failed.message}; ${said}` } };
}

/** The results the succeeded pod left: the upload's termination message and the verify step's log line. */
async function readResults(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  readLog: ContainerLogReader,
): Promise<JobResults | undefined> {
  const namespace = backup.metadata.namespace ?? "";
  const pods = await ctx.cache.list(Pod, {
    namespace,
    labels: { [BACKUP_LABEL]: backup.metadata.name ?? "" },
  });
  const pod = pods.find((p) => p.status?.phase === "Succeeded");
  if (pod === undefined) return undefined;
  const upload = pod.status?.containerStatuses?.find((c) => c.name === UPLOAD_CONTAINER);
  let log: string;
  try {
    log = await readLog(namespace, pod.metadata?.name ?? "", VERIFY_CONTAINER, ctx.signal);
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, "reading the verify step's log failed; will retry");
    return undefined;
  }
  const uploadResult = parseUploadResult(upload?.state?.terminated?.message);
  const snapshot = parseSnapshotStatus(log);
  return {
    ...(uploadResult === undefined ? {} : { upload: uploadResult }),
    ...(snapshot === undefined ? {} : { snapshot }),
  };
}

/** The destination claim of a PVC backup (read live: the cache holds only the operator's own claims). */
async function observeClaim(ctx: ReconcileContext, backup: EtcdBackup): Promise<ObservedClaim | undefined> {
  const pvc = backup.spec.destination.pvc;
  if (pvc === undefined) return undefined;
  try {
    const claim = await ctx.client.get(
      PersistentVolumeClaim,
      pvc.claimName,
      backup.metadata.namespace,
      ctx.signal,
    );
    const labels = claim.metadata?.labels ?? {};
    const owner = claim.metadata?.ownerReferences?.find((r) => r.kind === EtcdClusterKind.kind);
    const etcdCluster =
      owner?.name ??
      (labels["app.kubernetes.io/managed-by"] === MANAGED_BY ? labels[CLUSTER_LABEL] : undefined);
    return etcdCluster === undefined ? {} : { etcdCluster };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** One reconcile of one EtcdBackup. */
export async function reconcileEtcdBackup(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: EtcdBackupControllerOptions,
): Promise<Result | undefined> {
  const found = await ctx.cache.get(EtcdBackupKind, req.name, req.namespace);
  if (found === undefined) return undefined;
  let backup = found;
  const namespace = backup.metadata.namespace ?? "";
  const liveJob = await ctx.cache.get(Job, backup.metadata.name ?? "", namespace);
  const observedJob = liveJob === undefined ? undefined : observeJob(liveJob);
  const job = observedJob?.failed === undefined ? observedJob : await withPodError(ctx, backup, observedJob);

  if (backup.metadata.deletionTimestamp !== undefined) return reconcileDeletion(ctx, backup, job, options);
  const deletion = planBackupDeletion({ backup, backupJob: job });
  if (deletion.action?.type === "AddFinalizer") {
    // Before the Job: no snapshot of a Delete backup is stored without the finalizer.
    backup = await addFinalizer(ctx.client, EtcdBackupKind, backup, SNAPSHOT_FINALIZER);
  }

  const phase = backup.status?.phase;
  // The backup metrics are series of the cluster: none for one that does not exist (deleted, its series forgotten).
  const cluster = await ctx.cache.get(EtcdClusterKind, backup.spec.clusterName, namespace);
  const metrics = cluster === undefined ? undefined : options.metrics;
  if (phase === "Succeeded" || phase === "Failed") {
    // Every succeeded backup is reconciled after a restart: the gauge comes back with the newest one's time.
    const done = backup.status?.completionTime;
    if (phase === "Succeeded" && done !== undefined)
      metrics?.backupSucceeded(namespace, backup.spec.clusterName, new Date(done));
    return undefined;
  }

  const claim = job === undefined ? await observeClaim(ctx, backup) : undefined;
  let members: Parameters<typeof planBackup>[0]["members"];
  if (job === undefined && cluster !== undefined) {
    const tls = await readClientTLS(ctx.client, cluster, ctx.signal);
    // With etcd auth the members' status needs the root password (read only: the cluster controller makes it).
    const { credentials } = await prepareAuth(ctx.client, cluster, { create: false, signal: ctx.signal });
    const factory = options.etcdClient ?? defaultEtcdClient;
    const obs = await observe(cluster, ctx.cache, factory, ctx.signal, tls, credentials);
    members = obs.observed.etcd.reachable ? obs.observed.etcd.members : undefined;
  }
  const results =
    job?.succeeded === true
      ? await readResults(ctx, backup, options.readLog ?? apiLogReader(ctx))
      : undefined;

  const secretsProblem = job === undefined ? await s3SecretsProblem(ctx, backup) : undefined;
  const now = new Date();
  const plan = planBackup({ backup, cluster, members, claim, job, results, now, secretsProblem });

  if (plan.action?.type === "CreateJob" && cluster !== undefined) {
    const obj = backupJob({
      backup,
      cluster,
      member: plan.action.member,
      operatorImage: options.operatorImage,
    });
    try {
      await ctx.client.create(Job, obj, { signal: ctx.signal });
    } catch (err) {
      // Created by an earlier reconcile whose status write was lost: the next reconcile reads it.
      if (!isAlreadyExists(err)) throw err;
    }
  }
  if (plan.event !== undefined) {
    ctx.recorder.event(backup, plan.event.type, plan.event.reason, "Backup", plan.event.message);
  }
  await writeStatus(ctx, backup, plan, now);
  if (plan.status.phase === "Succeeded")
    metrics?.backupSucceeded(namespace, backup.spec.clusterName, new Date(plan.status.completionTime ?? now));
  if (plan.status.phase === "Failed") metrics?.backupFailed(namespace, backup.spec.clusterName);
  return plan.requeueAfter === undefined ? undefined : { requeueAfter: plan.requeueAfter };
}

/** Reads the live claim of a PVC destination for the deletion planner (undefined: it does not exist). */
async function observeClaimForDeletion(
  ctx: ReconcileContext,
  backup: EtcdBackup,
): Promise<{ deleting?: boolean } | undefined> {
  const pvc = backup.spec.destination.pvc;
  if (pvc === undefined) return undefined;
  try {
    const claim = await ctx.client.get(
      PersistentVolumeClaim,
      pvc.claimName,
      backup.metadata.namespace,
      ctx.signal,
    );
    return claim.metadata?.deletionTimestamp === undefined ? {} : { deleting: true };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * What the backup Job's S3 Secrets lack (the credentials and the CA bundle, read live), naming the spec field; undefined
 * when they hold every key the Job reads, or for a PVC destination.
 */
async function s3SecretsProblem(ctx: ReconcileContext, backup: EtcdBackup): Promise<string | undefined> {
  const s3 = backup.spec.destination.s3;
  if (s3 === undefined) return undefined;
  const namespace = backup.metadata.namespace ?? "";
  const read = (name: string) =>
    ctx.client.get(Secret, name, namespace, ctx.signal).then(
      (s) => s.data ?? {},
      (err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      },
    );
  return sharedS3SecretsProblem(read, s3, namespace, "spec.destination.s3");
}

/** A key of a Secret in the backup's namespace, read live (the cache holds no Secrets); throws naming what is missing. */
async function secretKey(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  key: string,
): Promise<string> {
  let data: Record<string, string> | undefined;
  try {
    data = (await ctx.client.get(Secret, name, namespace, ctx.signal)).data;
  } catch (err) {
    if (isNotFound(err))
      throw new DeletionError("CredentialsNotFound", `Secret ${namespace}/${name} does not exist`);
    throw err;
  }
  const value = data?.[key];
  if (value === undefined)
    throw new DeletionError("CredentialsNotFound", `Secret ${namespace}/${name} has no key ${key}`);
  return Buffer.from(value, "base64").toString("utf8");
}

/** A deletion failure with the reason the Degraded condition and the Event carry. */
class DeletionError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Deletes the backup's S3 object with its credentials Secret; throws a DeletionError saying why it could not. */
async function deleteStoredObject(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  deleter: S3ObjectDeleter,
): Promise<void> {
  const s3 = backup.spec.destination.s3;
  const target = uploadTarget(backup).target;
  if (s3 === undefined || target.kind !== "s3") return;
  const namespace = backup.metadata.namespace ?? "";
  const creds = s3.credentialsSecret;
  const accessKeyId = await secretKey(
    ctx,
    namespace,
    creds.name,
    creds.accessKeyIDKey ?? DEFAULT_ACCESS_KEY_ID_KEY,
  );
  const secretAccessKey = await secretKey(
    ctx,
    namespace,
    creds.name,
    creds.secretAccessKeyKey ?? DEFAULT_SECRET_ACCESS_KEY_KEY,
  );
  const ca =
    s3.caSecret === undefined
      ? undefined
      : await secretKey(ctx, namespace, s3.caSecret.name, s3.caSecret.key ?? DEFAULT_CA_KEY);
  try {
    await deleter(
      {
        bucket: target.bucket,
        key: target.key,
        region: s3.region ?? DEFAULT_S3_REGION,
        ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
        forcePathStyle: s3.forcePathStyle === true,
        credentials: { accessKeyId, secretAccessKey },
        ...(ca === undefined ? {} : { ca }),
      },
      ctx.signal,
    );
  } catch (err) {
    const e = err as Error & { name?: string; $metadata?: { httpStatusCode?: number } };
    const code = e.$metadata?.httpStatusCode;
    const reason = code === 401 || code === 403 ? "StorageAccessDenied" : "StorageUnreachable";
    throw new DeletionError(reason, `${s3.endpoint ?? "S3"}: ${e.name ?? "Error"}: ${e.message}`);
  }
}

/** One reconcile of a backup being deleted: the deletion planner's step, its conditions and event. */
async function reconcileDeletion(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  job: ObservedJob | undefined,
  options: EtcdBackupControllerOptions,
): Promise<Result | undefined> {
  const namespace = backup.metadata.namespace ?? "";
  const name = backup.metadata.name ?? "";
  const pvc = backup.spec.destination.pvc !== undefined;
  const liveDeleteJob = pvc ? await ctx.cache.get(Job, deleteJobName(backup), namespace) : undefined;
  const claim = pvc ? await observeClaimForDeletion(ctx, backup) : undefined;
  const inUse = await observeBackupsInUse(ctx.cache, namespace);
  let plan: DeletionPlan = planBackupDeletion({
    backup,
    backupJob: job,
    deleteJob: liveDeleteJob === undefined ? undefined : observeJob(liveDeleteJob),
    claim,
    usedBy: inUse.get(name),
  });
  switch (plan.action?.type) {
    case "DeleteBackupJob":
      await ctx.client
        .delete(Job, name, namespace, { propagationPolicy: "Background", signal: ctx.signal })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      break;
    case "DeleteObject":
      // A DeletionError (why the object could not be deleted) is etcdBackupErrorPolicy's: Degraded, an Event.
      await deleteStoredObject(ctx, backup, options.deleteObject ?? deleteS3Object);
      plan = planObjectDeleted(backup);
      break;
    case "CreateDeleteJob":
      try {
        await ctx.client.create(Job, deleteJob(backup, options.operatorImage), { signal: ctx.signal });
      } catch (err) {
        if (isAlreadyExists(err)) break;
        // A namespace being deleted refuses new objects: its claims, and the file with them, go too.
        if (err instanceof ApiError && err.code === 403 && /terminat/i.test(err.message)) {
          plan = {
            action: { type: "RemoveFinalizer" },
            conditions: [],
            event: {
              type: "Normal",
              reason: "ClaimGone",
              message: `namespace ${namespace} is being deleted: the snapshot goes with its claim`,
            },
          };
          break;
        }
        throw err;
      }
      break;
    case "RetryDeleteJob":
      await ctx.client
        .delete(Job, deleteJobName(backup), namespace, {
          propagationPolicy: "Background",
          signal: ctx.signal,
        })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      break;
    default:
      break;
  }
  if (plan.event !== undefined) {
    ctx.recorder.event(backup, plan.event.type, plan.event.reason, "Delete", plan.event.message);
  }
  if (plan.action?.type === "RemoveFinalizer") {
    if (liveDeleteJob !== undefined) {
      await ctx.client
        .delete(Job, deleteJobName(backup), namespace, {
          propagationPolicy: "Background",
          signal: ctx.signal,
        })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }
    await removeFinalizer(ctx.client, EtcdBackupKind, backup, SNAPSHOT_FINALIZER).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    return undefined;
  }
  await writeConditions(ctx, backup, plan.conditions, new Date());
  return plan.requeueAfter === undefined ? undefined : { requeueAfter: plan.requeueAfter };
}

/** Sets `conditions` on the backup's status (nothing when they are already so). */
async function writeConditions(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  planned: PlannedCondition[],
  now: Date,
): Promise<void> {
  if (planned.length === 0) return;
  await writeStatus(ctx, backup, { status: {}, conditions: planned }, now);
}

async function writeStatus(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  plan: Pick<BackupPlan, "status" | "conditions">,
  now: Date,
): Promise<void> {
  if (plan.conditions.length === 0 && Object.keys(plan.status).length === 0) return;
  const generation = backup.metadata.generation;
  let conditions: Condition[] | undefined = backup.status?.conditions;
  for (const c of plan.conditions) {
    conditions = setCondition(
      conditions,
      { ...c, ...(generation === undefined ? {} : { observedGeneration: generation }) },
      now,
    );
  }
  const next: EtcdBackupStatus = {
    ...backup.status,
    ...plan.status,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    ...(conditions === undefined ? {} : { conditions }),
  };
  const patch = statusMergePatch(backup.status, next);
  if (patch !== undefined) {
    await ctx.client.patchStatus(
      EtcdBackupKind,
      backup.metadata.name ?? "",
      backup.metadata.namespace,
      patch,
      "merge",
      {
        signal: ctx.signal,
      },
    );
  }
}
