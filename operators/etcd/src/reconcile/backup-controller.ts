// The EtcdBackup controller: observe the backup's cluster, destination claim, Job and the Job's results -> plan
// (plan/backup.ts) -> create the Job -> write status, conditions and events. Not yet registered in main.ts: the
// operator's image reference and the `backup-upload` subcommand come first.
import {
  type Condition,
  type Controller,
  controller,
  generationChanged,
  isAlreadyExists,
  isNotFound,
  Job,
  PersistentVolumeClaim,
  Pod,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  setCondition,
  statusMergePatch,
} from "@capstan/core";
import { type EtcdBackup, EtcdBackupKind, type EtcdBackupStatus } from "../api/backup.ts";
import { EtcdClusterKind } from "../api/etcd-cluster.ts";
import {
  BACKUP_LABEL,
  BACKUP_MEMBER_ANNOTATION,
  backupJob,
  type JobObject,
  parseSnapshotStatus,
  parseUploadResult,
  UPLOAD_CONTAINER,
  VERIFY_CONTAINER,
} from "../desired/backup-job.ts";
import { CLUSTER_LABEL, MANAGED_BY } from "../desired/names.ts";
import {
  type BackupPlan,
  type JobResults,
  type ObservedClaim,
  type ObservedJob,
  planBackup,
} from "../plan/backup.ts";
import { defaultEtcdClient, type EtcdClientFactory, observe } from "./observe.ts";
import { readClientTLS } from "./tls.ts";

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
}

/** The controller that reconciles EtcdBackups. */
export function etcdBackupController(options: EtcdBackupControllerOptions): Controller<EtcdBackup> {
  return controller({
    name: "etcdbackup",
    for: EtcdBackupKind,
    owns: [Job],
    predicates: [generationChanged()],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileEtcdBackup(req, ctx, options),
  });
}

/** The API server's pods/log of `container`, the last 50 lines. */
function apiLogReader(ctx: ReconcileContext): ContainerLogReader {
  return async (namespace, pod, container, signal) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log?container=${encodeURIComponent(container)}&tailLines=50`;
    const body = await ctx.client.raw(path, signal);
    return typeof body === "string" ? body : JSON.stringify(body);
  };
}

/** The Job as the planner sees it. */
export function observeJob(job: JobObject): ObservedJob {
  const conditions = job.status?.conditions ?? [];
  const isTrue = (type: string) => conditions.find((c) => c.type === type && c.status === "True");
  const failed = isTrue("Failed");
  const complete = isTrue("Complete");
  const member = job.metadata?.annotations?.[BACKUP_MEMBER_ANNOTATION];
  const start = job.status?.startTime;
  const end = job.status?.completionTime ?? failed?.lastTransitionTime;
  return {
    succeeded: complete !== undefined,
    ...(member === undefined ? {} : { member }),
    ...(start === undefined ? {} : { startTime: new Date(start) }),
    ...(end === undefined ? {} : { completionTime: new Date(end) }),
    ...(failed === undefined
      ? {}
      : { failed: { reason: failed.reason ?? "Failed", message: failed.message ?? "" } }),
  };
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
  const backup = await ctx.cache.get(EtcdBackupKind, req.name, req.namespace);
  if (backup === undefined || backup.metadata.deletionTimestamp !== undefined) return undefined;
  const phase = backup.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return undefined;

  const namespace = backup.metadata.namespace ?? "";
  const cluster = await ctx.cache.get(EtcdClusterKind, backup.spec.clusterName, namespace);
  const liveJob = await ctx.cache.get(Job, backup.metadata.name ?? "", namespace);
  const job = liveJob === undefined ? undefined : observeJob(liveJob);
  const claim = job === undefined ? await observeClaim(ctx, backup) : undefined;
  let members: Parameters<typeof planBackup>[0]["members"];
  if (job === undefined && cluster !== undefined) {
    const tls = await readClientTLS(ctx.client, cluster, ctx.signal);
    const obs = await observe(cluster, ctx.cache, options.etcdClient ?? defaultEtcdClient, ctx.signal, tls);
    members = obs.observed.etcd.reachable ? obs.observed.etcd.members : undefined;
  }
  const results =
    job?.succeeded === true
      ? await readResults(ctx, backup, options.readLog ?? apiLogReader(ctx))
      : undefined;

  const now = new Date();
  const plan = planBackup({ backup, cluster, members, claim, job, results, now });

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
  return plan.requeueAfter === undefined ? undefined : { requeueAfter: plan.requeueAfter };
}

async function writeStatus(
  ctx: ReconcileContext,
  backup: EtcdBackup,
  plan: BackupPlan,
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
