// The I/O of spec.bootstrap.restore: what the planner needs (the named EtcdBackup, the restore Job, the seed's claim
// and its mark), the two restore steps (make the claim and the Job; mark the claim restored), and status.restore.
import {
  type Cache,
  isAlreadyExists,
  Job,
  PersistentVolumeClaim,
  type PersistentVolumeClaimObject,
} from "@capstan/core";
import { EtcdBackupKind } from "../../api/backup.ts";
import type { EtcdCluster, EtcdClusterRestoreStatus } from "../../api/etcd-cluster.ts";
import { DEFAULT_BUMP_REVISION } from "../../api/restore-source.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { clusterRef, dataClaimName } from "../../desired/names.ts";
import {
  RESTORE_CLAIM_ANNOTATION,
  RESTORE_REQUEST_ANNOTATION,
  RESTORE_TIME_ANNOTATION,
  type RestoreFrom,
  resolveRestoreSource,
  restoreJob,
  restoreJobName,
  restoreJobSeed,
  restoreSourceName,
} from "../../desired/restore-job.ts";
import type { ObservedRestore } from "../../plan/restore.ts";
import type { ActContext, ActResult, RestoreObservation } from "../cluster/act-context.ts";
import { observeJob } from "../job.ts";

export type { RestoreObservation } from "../cluster/act-context.ts";

/**
 * Reads the restore's objects from the cache; undefined when spec.bootstrap.restore is unset. An EtcdRestore from a
 * backup passes the cluster with its spec.source as spec.bootstrap.restore, its own Job's name, and its name: only
 * the claims it marked count then.
 */
export async function observeRestore(
  cluster: EtcdCluster,
  cache: Cache,
  claims: Map<string, PersistentVolumeClaimObject>,
  operatorImage: string | undefined,
  request: { jobName: string; name: string } | undefined = undefined,
): Promise<RestoreObservation | undefined> {
  const restore = cluster.spec.bootstrap?.restore;
  if (restore === undefined) return undefined;
  const { namespace } = clusterRef(cluster);
  const marked: ObservedRestore["claims"] = [];
  for (const [name, claim] of claims) {
    if (request !== undefined && claim.metadata.annotations?.[RESTORE_REQUEST_ANNOTATION] !== request.name) {
      continue;
    }
    const state = claim.metadata.annotations?.[RESTORE_CLAIM_ANNOTATION];
    if (state === "pending" || state === "done") marked.push({ name, state });
  }
  const backup =
    restore.backup === undefined
      ? undefined
      : await cache.get(EtcdBackupKind, restore.backup.name, namespace);
  const liveJob = await cache.get(Job, request?.jobName ?? restoreJobName(cluster), namespace);
  const job = liveJob === undefined ? undefined : observeJob(liveJob);
  const jobSeed = liveJob === undefined ? undefined : restoreJobSeed(liveJob);
  let from: RestoreFrom | undefined;
  let sourceError: string | undefined;
  if (restore.backup === undefined || backup?.status?.phase === "Succeeded") {
    try {
      from = resolveRestoreSource(restore, backup);
    } catch (err) {
      sourceError = err instanceof Error ? err.message : String(err);
    }
  }
  const s = backup?.status;
  return {
    observed: {
      claims: marked,
      operatorImage: operatorImage !== undefined && operatorImage !== "",
      ...(backup === undefined
        ? {}
        : {
            backup: {
              ...(s?.phase === undefined ? {} : { phase: s.phase }),
              ...(s?.etcdVersion === undefined ? {} : { etcdVersion: s.etcdVersion }),
              ...(s?.sha256 === undefined ? {} : { sha256: s.sha256 }),
              ...(s?.revision === undefined ? {} : { revision: s.revision }),
            },
          }),
      ...(job === undefined
        ? {}
        : {
            job: {
              succeeded: job.succeeded,
              ...(job.failed === undefined ? {} : { failed: job.failed }),
              ...(jobSeed === undefined ? {} : { seed: jobSeed }),
            },
          }),
      ...(sourceError === undefined ? {} : { sourceError }),
    },
    ...(backup === undefined ? {} : { backup }),
    ...(from === undefined ? {} : { from }),
    ...(operatorImage === undefined ? {} : { operatorImage }),
  };
}

/** How an EtcdRestore from a backup makes its own restore: its Job's name, its bump, a mark on the seed's claim. */
export interface StartRestoreOptions {
  jobName?: string;
  bumpRevision?: number;
  claimAnnotations?: Record<string, string>;
}

/** StartRestore: the seed's claim (marked pending) if missing, then the restore Job if missing. */
export async function startRestore(
  ctx: ActContext,
  restore: RestoreObservation | undefined,
  seed: string,
  options: StartRestoreOptions = {},
): Promise<ActResult> {
  if (restore?.from === undefined || restore.operatorImage === undefined) {
    return {
      done: false,
      reason: "RestoreSourceUnknown",
      message: "the restore source or the operator image is not known yet",
    };
  }
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  if (!ctx.obs.claims.has(seed)) {
    const claim = memberDataClaim(ctx.cluster, seed, { seed: true });
    if (claim === undefined) {
      return {
        done: false,
        reason: "RestoreNeedsStorage",
        message: "spec.bootstrap.restore needs persistent storage (storage.size)",
      };
    }
    claim.metadata.annotations = {
      ...claim.metadata.annotations,
      ...options.claimAnnotations,
      [RESTORE_CLAIM_ANNOTATION]: "pending",
    };
    await ctx.client.create(PersistentVolumeClaim, claim, call).catch(ignoreExists);
  }
  const job = restoreJob({
    cluster: ctx.cluster,
    seed,
    from: restore.from,
    operatorImage: restore.operatorImage,
    ...(options.jobName === undefined ? {} : { name: options.jobName }),
    ...(options.bumpRevision === undefined ? {} : { bumpRevision: options.bumpRevision }),
  });
  await ctx.client.create(Job, job, call).catch(ignoreExists);
  return { done: true };
}

/** FinishRestore: the seed's claim is marked done; CreateSeed starts the seed on it next. */
export async function finishRestore(ctx: ActContext, seed: string, now = new Date()): Promise<ActResult> {
  await ctx.client.patch(
    PersistentVolumeClaim,
    dataClaimName(seed),
    clusterRef(ctx.cluster).namespace,
    {
      metadata: {
        annotations: { [RESTORE_CLAIM_ANNOTATION]: "done", [RESTORE_TIME_ANNOTATION]: now.toISOString() },
      },
    },
    "merge",
    ctx.signal === undefined ? {} : { signal: ctx.signal },
  );
  return { done: true };
}

/**
 * status.restore: set once a claim is marked restored, kept after (a wiped status is rebuilt from the claim's
 * mark, and from the backup while it exists). The cluster ID is the restored cluster's, once its seed answered.
 */
export function restoreStatusOf(
  cluster: EtcdCluster,
  previous: EtcdClusterRestoreStatus | undefined,
  restore: RestoreObservation | undefined,
  claims: Map<string, PersistentVolumeClaimObject>,
  clusterID: string | undefined,
): EtcdClusterRestoreStatus | undefined {
  const spec = cluster.spec.bootstrap?.restore;
  if (spec === undefined) return previous;
  const done = restore?.observed.claims.find((c) => c.state === "done");
  if (previous === undefined && done === undefined) return undefined;
  const bumpRevision = previous?.bumpRevision ?? spec.bumpRevision ?? DEFAULT_BUMP_REVISION;
  const snapshotRevision = previous?.snapshotRevision ?? restore?.backup?.status?.revision;
  const completionTime =
    previous?.completionTime ??
    (done === undefined ? undefined : claims.get(done.name)?.metadata.annotations?.[RESTORE_TIME_ANNOTATION]);
  const id = previous?.clusterID ?? clusterID;
  return {
    source: previous?.source ?? restoreSourceName(spec),
    ...(snapshotRevision === undefined
      ? {}
      : { snapshotRevision, revision: snapshotRevision + bumpRevision }),
    bumpRevision,
    ...(completionTime === undefined ? {} : { completionTime }),
    ...(id === undefined ? {} : { clusterID: id }),
  };
}

function ignoreExists(err: unknown): undefined {
  if (!isAlreadyExists(err)) throw err;
  return undefined;
}
