// The EtcdBackup controller: observe the backup's cluster, destination claim, Job and the Job's results -> plan
// (plan/backup.ts) -> create the Job -> write status, conditions, events and the backup metrics. With
// deletionPolicy Delete, a finalizer holds a deleted backup until its snapshot is gone (@capstan/backup's deletion
// planner and reconcile, shared with the Vault operator's VaultSnapshot): the operator deletes an S3 object itself, a
// Job removes a file from a claim.

import {
  type DeletionDefinition,
  deletionErrorAction,
  failedStepMessage,
  reconcileBackupDeletion,
  type S3ObjectDeleter,
  s3SecretsProblem as sharedS3SecretsProblem,
} from "@capstan/backup";
import {
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
  Secret,
  setCondition,
  statusMergePatch,
} from "@capstan/core";
import { type EtcdBackup, EtcdBackupKind, type EtcdBackupStatus } from "../../api/backup.ts";
import { EtcdClusterKind } from "../../api/etcd-cluster.ts";
import {
  BACKUP_LABEL,
  backupJob,
  deleteJob,
  parseSnapshotStatus,
  parseUploadResult,
  UPLOAD_CONTAINER,
  VERIFY_CONTAINER,
} from "../../desired/backup-job.ts";
import { CLUSTER_LABEL, MANAGED_BY } from "../../desired/names.ts";
import {
  BACKUP_REQUEUE,
  type BackupPlan,
  type JobResults,
  type ObservedClaim,
  type ObservedJob,
  type PlannedCondition,
  planBackup,
} from "../../plan/backup.ts";
import { backupDeletionSubject, planBackupDeletion, SNAPSHOT_FINALIZER } from "../../plan/backup-deletion.ts";
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
 * What the controller does with a snapshot that could not be deleted (@capstan/backup's DeletionError: its credentials
 * gone, the storage unreachable or refusing): Progressing False and Degraded with the reason, a Warning, a retry at
 * the Degraded pace; the finalizer stays. Any other error is retried with backoff.
 */
export function etcdBackupErrorPolicy(err: Error, backup: EtcdBackup): ErrorAction | undefined {
  return deletionErrorAction(err, backupDeletionSubject(backup), BACKUP_REQUEUE);
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

  if (backup.metadata.deletionTimestamp !== undefined)
    return reconcileBackupDeletion(ctx, deletionDefinition(options, ctx), backup, job);
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

/** The EtcdBackup's deletion as @capstan/backup's deletion reconcile takes it. */
function deletionDefinition(
  options: EtcdBackupControllerOptions,
  ctx: ReconcileContext,
): DeletionDefinition<EtcdBackup> {
  return {
    kind: EtcdBackupKind,
    subject: backupDeletionSubject,
    requeue: BACKUP_REQUEUE,
    deleteJob: (backup) => deleteJob(backup, options.operatorImage),
    inUse: (c, namespace) => observeBackupsInUse(c.cache, namespace),
    writeConditions: (backup, conditions) => writeConditions(ctx, backup, conditions, new Date()),
    deleteObject: options.deleteObject,
  };
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
