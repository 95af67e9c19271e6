// The VaultSnapshot controller: observe the snapshot's cluster, destination claim and S3 Secrets, its Job and what the
// Job's containers reported -> plan (plan/snapshot.ts) -> make the Job's token through the active node (against the
// snapshot token role, with the operator's own token) and the Job -> delete the token's Secret once the Job ended ->
// write status, conditions and events. With deletionPolicy Delete, a finalizer holds a deleted snapshot until its
// stored file is gone (@capstan/backup's deletion planner and reconcile, shared with the etcd operator's EtcdBackup).
import {
  type DeletionDefinition,
  deletionErrorAction,
  failedStepMessage,
  jobOutcome,
  parseUploadResult,
  reconcileBackupDeletion,
  type S3ObjectDeleter,
  s3SecretsProblem,
  succeededPodMessages,
} from "@capstan/backup";
import {
  addFinalizer,
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
  secretData,
  setCondition,
  statusMergePatch,
} from "@capstan/core";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import {
  DEFAULT_SNAPSHOT_DEADLINE_SECONDS,
  type VaultSnapshot,
  VaultSnapshotKind,
  type VaultSnapshotStatus,
} from "../api/vault-snapshot.ts";
import { clusterRef, keysSecretName, MANAGED_BY, podHost, tlsSecretName } from "../desired/names.ts";
import { parseSnapshotResult } from "../desired/snapshot-args.ts";
import {
  SAVE_CONTAINER,
  SNAPSHOT_BACKOFF_LIMIT,
  SNAPSHOT_LABEL,
  SNAPSHOT_LOCATION_ANNOTATION,
  snapshotFileDeleteJob,
  snapshotJob,
  snapshotTokenSecret,
  snapshotTokenSecretName,
  UPLOAD_CONTAINER,
} from "../desired/snapshot-job.ts";
import {
  type ObservedSnapshotJob,
  planSnapshot,
  planTokenFailed,
  SNAPSHOT_REQUEUE,
  type SnapshotJobResults,
  type SnapshotPlan,
} from "../plan/snapshot.ts";
import {
  planSnapshotDeletion,
  SNAPSHOT_FINALIZER,
  snapshotDeletionSubject,
} from "../plan/snapshot-deletion.ts";
import { SNAPSHOT_ROLE } from "../vault/policy.ts";
import { VaultError } from "../vault/vault-client.ts";
import { defaultVaultClient, readKeys, type VaultClientFactory } from "./observe.ts";
import { observeSnapshotsInUse } from "./snapshot-schedule.ts";

/** Options of {@link vaultSnapshotController}. */
export interface VaultSnapshotControllerOptions {
  /** The operator's own image: the Job's steps run its `vault-snapshot-save` and `backup-upload`. */
  operatorImage: string;
  /** Creates Vault clients (tests replace it). */
  vaultClient?: VaultClientFactory;
  /** Deletes S3 objects (tests replace it). */
  deleteObject?: S3ObjectDeleter;
}

/** The controller that reconciles VaultSnapshots. */
export function vaultSnapshotController(options: VaultSnapshotControllerOptions): Controller<VaultSnapshot> {
  return controller({
    name: "vaultsnapshot",
    for: VaultSnapshotKind,
    owns: [Job],
    // Creation and spec edits (refused by CEL) and deletion; not its own status writes.
    predicates: [
      {
        update: (o, n) =>
          o.metadata.generation !== n.metadata.generation ||
          o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp,
      },
    ],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileVaultSnapshot(req, ctx, options),
    errorPolicy: vaultSnapshotErrorPolicy,
  });
}

/**
 * A stored file that could not be deleted (@capstan/backup's DeletionError: its credentials gone, the storage
 * unreachable or refusing): Progressing False and Degraded with the reason, a Warning, a retry at the Degraded pace;
 * the finalizer stays. Any other error is retried with backoff.
 */
export function vaultSnapshotErrorPolicy(err: Error, snapshot: VaultSnapshot): ErrorAction | undefined {
  return deletionErrorAction(err, snapshotDeletionSubject(snapshot), SNAPSHOT_REQUEUE);
}

/** The VaultSnapshot's deletion as @capstan/backup's deletion reconcile takes it. */
function deletionDefinition(
  options: VaultSnapshotControllerOptions,
  ctx: ReconcileContext,
): DeletionDefinition<VaultSnapshot> {
  return {
    kind: VaultSnapshotKind,
    subject: snapshotDeletionSubject,
    requeue: SNAPSHOT_REQUEUE,
    deleteJob: (snapshot) => snapshotFileDeleteJob(snapshot, options.operatorImage),
    inUse: (c, namespace) => observeSnapshotsInUse(c.cache, namespace),
    writeConditions: (snapshot, conditions) =>
      writeStatus(ctx, snapshot, { status: {}, conditions }, new Date()),
    deleteObject: options.deleteObject,
  };
}

/** The snapshot's Job as the planner sees it, a failure's message ending with the failed step's own words. */
async function observeSnapshotJob(
  ctx: ReconcileContext,
  snapshot: VaultSnapshot,
): Promise<{ job?: ObservedSnapshotJob; results?: SnapshotJobResults }> {
  const namespace = snapshot.metadata.namespace ?? "";
  const name = snapshot.metadata.name ?? "";
  const live = await ctx.cache.get(Job, name, namespace);
  if (live === undefined) return {};
  const location = live.metadata.annotations?.[SNAPSHOT_LOCATION_ANNOTATION];
  let job: ObservedSnapshotJob = { ...jobOutcome(live), ...(location === undefined ? {} : { location }) };
  if (!job.succeeded && job.failed === undefined) return { job };
  const pods = await ctx.cache.list(Pod, { namespace, labels: { [SNAPSHOT_LABEL]: name } });
  if (job.failed !== undefined) {
    const said = failedStepMessage(pods);
    if (said !== undefined)
      job = { ...job, failed: { ...job.failed, message: `${job.failed.message}; ${said}` } };
    return { job };
  }
  const messages = succeededPodMessages(pods);
  if (messages === undefined) return { job };
  const save = parseSnapshotResult(messages.get(SAVE_CONTAINER));
  const upload = parseUploadResult(messages.get(UPLOAD_CONTAINER));
  return {
    job,
    results: { ...(save === undefined ? {} : { save }), ...(upload === undefined ? {} : { upload }) },
  };
}

/** The destination claim of a PVC snapshot (read live: the cache holds only the operator's own claims). */
async function observeClaim(
  ctx: ReconcileContext,
  snapshot: VaultSnapshot,
): Promise<{ vaultCluster?: string } | undefined> {
  const pvc = snapshot.spec.destination.pvc;
  if (pvc === undefined) return undefined;
  try {
    const claim = await ctx.client.get(
      PersistentVolumeClaim,
      pvc.claimName,
      snapshot.metadata.namespace,
      ctx.signal,
    );
    const labels = claim.metadata?.labels ?? {};
    const owner = claim.metadata?.ownerReferences?.find((r) => r.kind === VaultClusterKind.kind);
    const vaultCluster =
      owner?.name ??
      (labels["app.kubernetes.io/managed-by"] === MANAGED_BY
        ? labels["app.kubernetes.io/instance"]
        : undefined);
    return vaultCluster === undefined ? {} : { vaultCluster };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A Secret's data read live (undefined when it does not exist): the operator's cache holds only its own. */
function secretReader(ctx: ReconcileContext, namespace: string) {
  return (name: string) =>
    ctx.client.get(Secret, name, namespace, ctx.signal).then(
      (s) => s.data ?? {},
      (err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      },
    );
}

/**
 * Makes the Job's token through the cluster's active pod with the operator's own token, against the snapshot role:
 * its TTL the snapshot's deadline, one use per attempt of the Job. Throws VaultError when Vault refuses.
 */
async function makeToken(
  ctx: ReconcileContext,
  snapshot: VaultSnapshot,
  cluster: VaultCluster,
  vaultClient: VaultClientFactory,
): Promise<string> {
  const { namespace } = clusterRef(cluster);
  const keysSecret =
    (await ctx.cache.get(Secret, keysSecretName(cluster), namespace)) ??
    (await ctx.client.get(Secret, keysSecretName(cluster), namespace, ctx.signal).catch(() => undefined));
  const token = readKeys(keysSecret).material;
  const operatorToken = token.operatorToken ?? token.rootToken;
  const active = cluster.status?.active ?? "";
  const ip = (await ctx.cache.get(Pod, active, namespace))?.status?.podIP;
  const ca = secretData(
    (await ctx.cache.get(Secret, tlsSecretName(cluster), namespace)) ??
      (await ctx.client.get(Secret, tlsSecretName(cluster), namespace, ctx.signal).catch(() => undefined)),
  )["ca.crt"];
  if (operatorToken === undefined || ip === undefined || ca === undefined) {
    const missing =
      operatorToken === undefined
        ? `no token in Secret ${keysSecretName(cluster)}`
        : ip === undefined
          ? `no IP for ${active}`
          : `no ca.crt in Secret ${tlsSecretName(cluster)}`;
    throw new VaultError("/v1/auth/token/create", 0, [missing]);
  }
  const v = vaultClient({
    address: `https://${ip}:8200`,
    servername: podHost(cluster, active),
    ca,
    token: operatorToken,
    timeoutMs: 15_000,
  });
  try {
    const deadline = snapshot.spec.activeDeadlineSeconds ?? DEFAULT_SNAPSHOT_DEADLINE_SECONDS;
    return await v.createLimitedToken(
      {
        role: SNAPSHOT_ROLE,
        ttl: `${deadline}s`,
        numUses: SNAPSHOT_BACKOFF_LIMIT + 1,
        displayName: `vault-snapshot-${snapshot.metadata.name ?? ""}`,
      },
      ctx.signal === undefined ? {} : { signal: ctx.signal },
    );
  } finally {
    await v.close();
  }
}

/** One reconcile of one VaultSnapshot. */
export async function reconcileVaultSnapshot(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: VaultSnapshotControllerOptions,
): Promise<Result | undefined> {
  const found = await ctx.cache.get(VaultSnapshotKind, req.name, req.namespace);
  if (found === undefined) return undefined;
  let snapshot = found;
  const namespace = snapshot.metadata.namespace ?? "";
  const { job, results } = await observeSnapshotJob(ctx, snapshot);
  if (snapshot.metadata.deletionTimestamp !== undefined)
    return reconcileBackupDeletion(ctx, deletionDefinition(options, ctx), snapshot, job);
  if (planSnapshotDeletion({ snapshot, job }).action?.type === "AddFinalizer") {
    // Before the Job: no file of a Delete snapshot is stored without the finalizer.
    snapshot = await addFinalizer(ctx.client, VaultSnapshotKind, snapshot, SNAPSHOT_FINALIZER);
  }
  const ended = snapshot.status?.phase === "Succeeded" || snapshot.status?.phase === "Failed";
  const cluster = await ctx.cache.get(VaultClusterKind, snapshot.spec.clusterName, namespace);
  const claim = job === undefined && !ended ? await observeClaim(ctx, snapshot) : undefined;
  const s3 = snapshot.spec.destination.s3;
  const secretsProblem =
    job === undefined && !ended && s3 !== undefined
      ? await s3SecretsProblem(secretReader(ctx, namespace), s3, namespace, "spec.destination.s3")
      : undefined;
  const now = new Date();
  let plan: SnapshotPlan = planSnapshot({ snapshot, cluster, claim, secretsProblem, job, results, now });

  if (plan.action?.type === "CreateJob" && cluster !== undefined) {
    let token: string | undefined;
    try {
      token = await makeToken(ctx, snapshot, cluster, options.vaultClient ?? defaultVaultClient);
    } catch (err) {
      if (!(err instanceof VaultError)) throw err;
      plan = planTokenFailed(snapshot, now, err.status === 403, err.message);
    }
    if (token !== undefined) {
      const secret = snapshotTokenSecret(snapshot, token);
      await ctx.client.create(Secret, secret, { signal: ctx.signal }).catch(async (err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
        // Left by an attempt that stopped before its Job: its token is replaced by this one.
        await ctx.client.patch(
          Secret,
          secret.metadata.name ?? "",
          namespace,
          { data: secret.data },
          "merge",
          {
            signal: ctx.signal,
          },
        );
      });
      const obj = snapshotJob({ snapshot, cluster, operatorImage: options.operatorImage });
      await ctx.client.create(Job, obj, { signal: ctx.signal }).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    }
  }
  // The Job ended: its token's Secret goes (no write when it is already gone).
  if (
    plan.dropToken === true &&
    (await ctx.cache.get(Secret, snapshotTokenSecretName(snapshot), namespace))
  ) {
    await ctx.client
      .delete(Secret, snapshotTokenSecretName(snapshot), namespace, { signal: ctx.signal })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
  if (plan.event !== undefined) {
    ctx.recorder.event(snapshot, plan.event.type, plan.event.reason, "Snapshot", plan.event.message);
  }
  await writeStatus(ctx, snapshot, plan, now);
  return plan.requeueAfter === undefined ? undefined : { requeueAfter: plan.requeueAfter };
}

async function writeStatus(
  ctx: ReconcileContext,
  snapshot: VaultSnapshot,
  plan: Pick<SnapshotPlan, "status" | "conditions">,
  now: Date,
): Promise<void> {
  if (plan.conditions.length === 0 && Object.keys(plan.status).length === 0) return;
  const generation = snapshot.metadata.generation;
  let conditions = snapshot.status?.conditions;
  for (const c of plan.conditions) {
    conditions = setCondition(
      conditions,
      { ...c, ...(generation === undefined ? {} : { observedGeneration: generation }) },
      now,
    );
  }
  const next: VaultSnapshotStatus = {
    ...snapshot.status,
    ...plan.status,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    ...(conditions === undefined ? {} : { conditions }),
  };
  const patch = statusMergePatch(snapshot.status, next);
  if (patch !== undefined) {
    await ctx.client.patchStatus(
      VaultSnapshotKind,
      snapshot.metadata.name ?? "",
      snapshot.metadata.namespace,
      patch,
      "merge",
      {
        signal: ctx.signal,
      },
    );
  }
}
