// The I/O of an EtcdRestore (disaster recovery): while one is active for a cluster, the EtcdCluster controller
// observes each member with a claim (its marks, its pod, what its etcd answers alone), plans with plan/recovery.ts
// instead of the membership planner, and acts: marks and keeps claims (never deletes one), stops replaced members,
// restarts the survivor with and then without --force-new-cluster, or (from a backup) restores a new seed with
// bootstrap-restore.ts's steps and starts it as a new cluster; then writes both statuses and Events. Every choice is
// written on an object before it is acted on; the seed's name is derived from the EtcdRestore's uid. A finalizer,
// added before the request's first write and released once it has ended, lets a deletion before the fork give back
// what it took (plan/recovery-calloff.ts), and holds one after the fork until the recovery has finished.
import { createHash } from "node:crypto";
import {
  addFinalizer,
  type Cache,
  claimRetentionPatch,
  hasFinalizer,
  isNotFound,
  oldestOpenRequest,
  PersistentVolumeClaim,
  Pod,
  quorum,
  type ReconcileContext,
  type Result,
  removeFinalizer,
  statusMergePatch,
} from "@capstan/core";
import type { EtcdClusterRestoreStatus } from "../../api/etcd-cluster.ts";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import {
  type EtcdRestore,
  EtcdRestoreKind,
  type EtcdRestoreStatus,
  KEPT_BY_RESTORE_LABEL,
  RECOVERY_FINALIZER,
  restoreEnded,
} from "../../api/etcd-restore.ts";
import { DEFAULT_BUMP_REVISION } from "../../api/restore-source.ts";
import { FORCE_NEW_CLUSTER_ANNOTATION, memberPod, withForceNewCluster } from "../../desired/member-pod.ts";
import {
  CLAIM_UID_LABEL,
  CLIENT_PORT,
  clientScheme,
  clusterRef,
  dataClaimName,
  MEMBER_LABEL,
  memberName,
  peerURL,
  selectorLabels,
} from "../../desired/names.ts";
import { RESTORE_REQUEST_ANNOTATION, restoreSourceName } from "../../desired/restore-job.ts";
import { type EtcdClientTLS, memberIdToHex } from "../../etcd/etcd-client.ts";
import type { Step } from "../../plan/plan.ts";
import { judgeQuorum } from "../../plan/quorum-evidence.ts";
import {
  planRecovery,
  type RecoveryFromBackup,
  type RecoveryMember,
  type RecoveryObserved,
  type RecoveryStep,
} from "../../plan/recovery.ts";
import { deletionHeld } from "../../plan/recovery-calloff.ts";
import { type ActContext, act } from "../cluster/act.ts";
import { type EtcdClientFactory, type Observation, podGone } from "../cluster/observe.ts";
import { statusOf } from "../cluster/status.ts";
import { finishRestore, observeRestore, type RestoreObservation, startRestore } from "./bootstrap-restore.ts";

/** Annotation on the survivor's claim: the EtcdRestore that chose it. */
export const SURVIVOR_ANNOTATION = "etcd.capstan.dev/restore-survivor";
/** Annotation on the survivor's claim: "force" or "unforce", written before its pod is deleted. */
export const RECOVERY_PHASE_ANNOTATION = "etcd.capstan.dev/restore-phase";

/** The oldest EtcdRestore of `cluster` that has not ended, if any. */
export async function activeRestore(cluster: EtcdCluster, cache: Cache): Promise<EtcdRestore | undefined> {
  const { namespace, name } = clusterRef(cluster);
  const all = await cache.list(EtcdRestoreKind, { namespace });
  return oldestOpenRequest(all, (r) => r.spec.clusterName === name && !restoreEnded(r.status?.phase));
}

/** The members as the recovery planner sees them; their own etcd is asked alone (no quorum needed). */
export async function observeRecoveryMembers(
  cluster: EtcdCluster,
  request: string,
  cache: Cache,
  obs: Observation,
  etcdClient: EtcdClientFactory,
  signal?: AbortSignal,
  tls?: EtcdClientTLS,
): Promise<RecoveryMember[]> {
  const { namespace } = clusterRef(cluster);
  const kept = await cache.list(PersistentVolumeClaim, {
    namespace,
    labels: { ...selectorLabels(cluster), [KEPT_BY_RESTORE_LABEL]: request },
  });
  const keptNames = new Set(
    kept.map((c) => c.metadata.labels?.[MEMBER_LABEL]).filter((n) => n !== undefined),
  );
  // Members with a pod but no claim too (their claim was deleted): a recovery from a backup stops them.
  const names = [...new Set([...obs.claims.keys(), ...keptNames, ...obs.pods.keys()])].sort();
  const call = signal === undefined ? {} : { signal };
  return Promise.all(
    names.map(async (name): Promise<RecoveryMember> => {
      const claim = obs.claims.get(name);
      const pod = obs.pods.get(name);
      const live = pod !== undefined && !podGone(pod);
      const ip = live ? pod.status?.podIP : undefined;
      const deleting = pod?.metadata.deletionTimestamp;
      const node = pod?.spec?.nodeName;
      const member: RecoveryMember = {
        name,
        claimOwned: claim !== undefined,
        pod: live,
        // A pod being deleted is not gone (plan/fence.ts): its etcd may still run behind a partition.
        ...(deleting === undefined
          ? {}
          : { terminating: { since: new Date(deleting), ...(node === undefined ? {} : { node }) } }),
        ...(pod !== undefined && deleting === undefined && !live ? { podEnded: true } : {}),
        ...(keptNames.has(name) ? { claimKept: true } : {}),
        ...(claim?.metadata.annotations?.[SURVIVOR_ANNOTATION] === request ? { survivorMark: true } : {}),
        ...(live && pod.metadata.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION] === request
          ? { forceNewCluster: true }
          : {}),
      };
      const phase = claim?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION];
      if (member.survivorMark === true && (phase === "force" || phase === "unforce"))
        member.recoveryPhase = phase;
      if (ip === undefined) return member;
      const endpoint = `${clientScheme(cluster)}://${ip}:${CLIENT_PORT}`;
      const client = etcdClient([endpoint], tls);
      const [status, list, health] = await Promise.all([
        client.status(endpoint, call).catch(() => undefined),
        client.memberList(call).catch(() => undefined),
        client.health(endpoint, call).catch(() => undefined),
      ]);
      const self = status === undefined ? undefined : list?.members.find((x) => x.id === status.memberId);
      const learners = (list?.members ?? [])
        .filter((x) => x.isLearner && x.id !== status?.memberId)
        .map((x) => ({ id: x.id, name: x.name }));
      return {
        ...member,
        ...(status?.isLearner === true || self?.isLearner === true ? { learner: true } : {}),
        ...(list === undefined ? {} : { learnersListed: learners }),
        ...(status === undefined
          ? {}
          : {
              status: {
                raftIndex: status.raftIndex,
                revision: status.header.revision,
                clusterID: memberIdToHex(status.header.clusterId),
              },
            }),
        ...(list === undefined ? {} : { membersListed: list.members.length }),
        healthy: health?.healthy === true,
      };
    }),
  );
}

/** A quorum of healthy voters answers, as the membership observation saw it. */
export function hasQuorum(obs: Observation): boolean {
  const { etcd } = obs.observed;
  if (!etcd.reachable) return false;
  const voters = etcd.members.filter((m) => !m.isLearner);
  return voters.length > 0 && voters.filter((m) => m.healthy).length >= quorum(voters.length);
}

/** What the recovery planner reads of `restore` for `cluster`. */
export function observedRequest(
  restore: EtcdRestore,
  obs: Observation,
  members: RecoveryMember[],
  backup?: BackupRecovery,
): RecoveryObserved {
  // The loss is judged from independent evidence, never from the operator's calls alone.
  const judged = judgeQuorum(obs.observed);
  return {
    request: restore.metadata.name ?? "",
    from: restore.spec.from,
    quorum: hasQuorum(obs),
    ...(judged.state === "Unconfirmed"
      ? { unconfirmed: { reason: judged.reason, message: judged.message } }
      : {}),
    members,
    ...(backup === undefined ? {} : { backup: backup.planned }),
    ...(restore.metadata.deletionTimestamp === undefined ? {} : { deleting: true }),
    ...(hasFinalizer(restore, RECOVERY_FINALIZER) ? { finalizer: true } : {}),
  };
}

/** Steps that write nothing but the EtcdRestore's status: no finalizer is needed before them. */
const STATUS_ONLY = new Set<RecoveryStep["type"]>(["Wait", "Refuse", "Recovered", "CallOff"]);

/**
 * Releases the recovery finalizer of `cluster`'s EtcdRestores (from the cache) that have ended, or of every one
 * (`all`: the EtcdCluster is gone, so nothing of it is left to give back or to finish). Returns their names.
 */
export async function releaseRestores(
  ctx: ReconcileContext,
  namespace: string,
  clusterName: string,
  all = false,
): Promise<string[]> {
  const released: string[] = [];
  for (const r of await ctx.cache.list(EtcdRestoreKind, { namespace })) {
    if (r.spec.clusterName !== clusterName || !hasFinalizer(r, RECOVERY_FINALIZER)) continue;
    if (!all && !restoreEnded(r.status?.phase)) continue;
    await removeFinalizer(ctx.client, EtcdRestoreKind, r, RECOVERY_FINALIZER);
    released.push(r.metadata.name ?? "");
  }
  return released;
}

/** A recovery from a backup as observed: the planner's view and what its restore steps need. */
export interface BackupRecovery {
  planned: RecoveryFromBackup;
  /** The cluster with the EtcdRestore's spec.source as spec.bootstrap.restore (what the restore Job is built from). */
  cluster: EtcdCluster;
  observation: RestoreObservation;
  jobName: string;
  bumpRevision: number;
}

/** Five characters of [a-z0-9] from the EtcdRestore's uid: every leader derives the same seed, never a second one. */
export function recoverySuffix(restore: EtcdRestore): string {
  const digest = createHash("sha256")
    .update(restore.metadata.uid ?? `${restore.metadata.namespace}/${restore.metadata.name}`)
    .digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(digest.subarray(0, 5), (b) => alphabet[b % alphabet.length]).join("");
}

/** The seed member an EtcdRestore from a backup restores into. */
export function recoverySeedName(cluster: EtcdCluster, restore: EtcdRestore): string {
  return memberName(cluster, recoverySuffix(restore));
}

/** The restore Job of an EtcdRestore from a backup (within 63 characters: cluster names are at most 50). */
export function recoveryJobName(cluster: EtcdCluster, restore: EtcdRestore): string {
  return `${clusterRef(cluster).name}-dr-${recoverySuffix(restore)}`;
}

/** What a recovery from a backup reads: the source (spec.source), its restore Job, the seed's claim. */
export async function observeBackupRecovery(
  cluster: EtcdCluster,
  restore: EtcdRestore,
  cache: Cache,
  obs: Observation,
  operatorImage: string | undefined,
): Promise<BackupRecovery | undefined> {
  const source = restore.spec.source;
  if (restore.spec.from !== "Backup" || source === undefined) return undefined;
  const withSource: EtcdCluster = { ...cluster, spec: { ...cluster.spec, bootstrap: { restore: source } } };
  const jobName = recoveryJobName(cluster, restore);
  const request = restore.metadata.name ?? "";
  const observation = await observeRestore(withSource, cache, obs.claims, operatorImage, {
    jobName,
    name: request,
  });
  if (observation === undefined) return undefined;
  return {
    planned: {
      spec: withSource.spec,
      seed: recoverySeedName(cluster, restore),
      source: restoreSourceName(source),
      restore: observation.observed,
    },
    cluster: withSource,
    observation,
    jobName,
    bumpRevision: source.bumpRevision ?? DEFAULT_BUMP_REVISION,
  };
}

/** Performs one recovery step; returns the EtcdRestore status fields it sets. */
export async function actRecovery(
  step: RecoveryStep,
  ctx: ActContext,
  restore: EtcdRestore,
  now: Date,
  backup?: BackupRecovery,
): Promise<EtcdRestoreStatus> {
  const { namespace } = clusterRef(ctx.cluster);
  const request = restore.metadata.name ?? "";
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  const patchClaim = (name: string, metadata: Record<string, unknown>) =>
    ctx.client.patch(PersistentVolumeClaim, dataClaimName(name), namespace, { metadata }, "merge", call);
  const deletePod = (name: string) => ctx.client.delete(Pod, name, namespace, call).catch(ignoreNotFound);
  const started = restore.status?.startTime ?? now.toISOString();
  switch (step.type) {
    case "Refuse":
      return { phase: "Failed", message: step.message, completionTime: now.toISOString() };
    case "MarkSurvivor":
      await patchClaim(step.name, { annotations: { [SURVIVOR_ANNOTATION]: request } });
      return {
        phase: "Running",
        message: step.message,
        survivor: step.name,
        raftIndex: step.raftIndex,
        startTime: started,
      };
    case "KeepClaim":
      // Ownership removed (null in a merge patch), the uid label too: neither the garbage collector nor the planner
      // takes it.
      await patchClaim(step.name, {
        labels: { [KEPT_BY_RESTORE_LABEL]: request, [CLAIM_UID_LABEL]: null },
        ownerReferences: null,
      });
      return {
        phase: "Running",
        message: step.message,
        startTime: started,
        keptClaims: [...new Set([...(restore.status?.keptClaims ?? []), dataClaimName(step.name)])].sort(),
      };
    case "StopMember":
      await deletePod(step.name);
      return { phase: "Running", message: step.message, startTime: started };
    case "GiveBackClaim": {
      // The cluster's again, as storage.whenDeleted wants a claim of it (core's claim retention: Delete, its controller
      // reference; Retain, none), with the uid label observe.ts reads; never deleted.
      const policy = ctx.cluster.spec.storage.whenDeleted ?? "Retain";
      const owned = claimRetentionPatch(
        ctx.cluster,
        EtcdClusterKind,
        { metadata: {} },
        policy,
        CLAIM_UID_LABEL,
      );
      await patchClaim(step.name, {
        ...owned?.metadata,
        labels: { [KEPT_BY_RESTORE_LABEL]: null, [CLAIM_UID_LABEL]: ctx.cluster.metadata.uid ?? null },
      });
      const claim = dataClaimName(step.name);
      return {
        phase: "Running",
        message: step.message,
        startTime: started,
        keptClaims: (restore.status?.keptClaims ?? []).filter((c) => c !== claim),
      };
    }
    case "RemoveSurvivorMark":
      await patchClaim(step.name, { annotations: { [SURVIVOR_ANNOTATION]: null } });
      return { phase: "Running", message: step.message, startTime: started };
    case "CallOff":
      return { phase: "Cancelled", message: step.message, completionTime: now.toISOString() };
    case "RemoveLearner": {
      // Through the survivor alone: after --force-new-cluster it is the only voter, so it commits the removal.
      const ip = ctx.obs.pods.get(step.name)?.status?.podIP;
      if (ip === undefined || ctx.etcdClient === undefined) {
        return {
          phase: "Running",
          message: `${step.message}: ${step.name} has no address yet`,
          startTime: started,
        };
      }
      const endpoint = `${clientScheme(ctx.cluster)}://${ip}:${CLIENT_PORT}`;
      await ctx.etcdClient([endpoint], ctx.tls, ctx.auth).memberRemove(step.memberId, call);
      return { phase: "Running", message: step.message, startTime: started };
    }
    case "ForceNewCluster":
    case "RemoveForceFlag":
      await patchClaim(step.name, {
        annotations: { [RECOVERY_PHASE_ANNOTATION]: step.type === "ForceNewCluster" ? "force" : "unforce" },
      });
      await deletePod(step.name);
      return { phase: "Running", message: step.message, startTime: started };
    case "StartSurvivor": {
      if (ctx.obs.pods.has(step.name)) {
        // The old pod is still terminating (or failed): it must be gone before the survivor starts again.
        const old = ctx.obs.pods.get(step.name);
        if (old?.metadata.deletionTimestamp === undefined) await deletePod(step.name);
        return {
          phase: "Running",
          message: `waiting for the old pod of ${step.name} to go away`,
          startTime: started,
        };
      }
      const pod = memberPod({
        cluster: ctx.cluster,
        member: step.name,
        initialCluster: [{ name: step.name, peerURL: peerURL(ctx.cluster, step.name) }],
        initialClusterState: "existing",
      });
      await ctx.client.create(Pod, step.forceNewCluster ? withForceNewCluster(pod, request) : pod, call);
      return { phase: "Running", message: step.message, startTime: started };
    }
    case "Recovered":
      return {
        phase: "Succeeded",
        message: step.message,
        ...(step.survivor === undefined ? {} : { survivor: step.survivor }),
        ...(step.seed === undefined ? {} : { seed: step.seed }),
        ...(step.source === undefined ? {} : { source: step.source }),
        ...(step.snapshotRevision === undefined ? {} : { snapshotRevision: step.snapshotRevision }),
        revision: step.revision,
        clusterID: step.clusterID,
        startTime: started,
        completionTime: now.toISOString(),
      };
    case "StartRestore":
    case "FinishRestore":
    case "StartSeed": {
      const running = {
        phase: "Running" as const,
        startTime: started,
        ...(backup === undefined ? {} : { source: backup.planned.source, seed: backup.planned.seed }),
        ...(backup?.planned.restore.backup?.revision === undefined
          ? {}
          : { snapshotRevision: backup.planned.restore.backup.revision }),
      };
      if (backup === undefined) {
        return { ...running, message: `${step.type}: the backup was not observed; trying again` };
      }
      const restoreCtx: ActContext = { ...ctx, cluster: backup.cluster };
      const result =
        step.type === "StartRestore"
          ? await startRestore(restoreCtx, backup.observation, step.name, {
              jobName: backup.jobName,
              bumpRevision: backup.bumpRevision,
              claimAnnotations: { [RESTORE_REQUEST_ANNOTATION]: request },
            })
          : step.type === "FinishRestore"
            ? await finishRestore(restoreCtx, step.name, now)
            : await act({ type: "CreateSeed", name: step.name, message: step.message }, restoreCtx);
      return { ...running, message: result.done ? step.message : result.message };
    }
    case "Wait":
      return { phase: "Running", message: step.message, startTime: started };
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (!isNotFound(err)) throw err;
  return undefined;
}

/** What a recovery from a backup needs from the controller. */
export interface RecoveryOptions {
  /** The operator's own image (the restore Job's download and finish steps run it). */
  operatorImage?: string;
  /** Issues a member's certificates before its pod is created (TLS clusters); returns annotations for the pod. */
  beforePod?: (member: string) => Promise<Record<string, string>>;
  /** Waits for a member's cert-manager certificates before its pod is created. */
  memberPending?: (member: string) => Promise<{ reason: string; message: string } | undefined>;
}

/** One reconcile of `cluster` while `restore` is active: observe, plan one recovery step, act, write both statuses. */
export async function reconcileRecovery(
  ctx: ReconcileContext,
  cluster: EtcdCluster,
  obs: Observation,
  restore: EtcdRestore,
  etcdClient: EtcdClientFactory,
  tls?: EtcdClientTLS,
  options: RecoveryOptions = {},
): Promise<Result> {
  const { namespace, name } = clusterRef(cluster);
  const request = restore.metadata.name ?? "";
  const members = await observeRecoveryMembers(cluster, request, ctx.cache, obs, etcdClient, ctx.signal, tls);
  const backup = await observeBackupRecovery(cluster, restore, ctx.cache, obs, options.operatorImage);
  const observed = observedRequest(restore, obs, members, backup);
  const step = planRecovery(observed);
  const deleting = restore.metadata.deletionTimestamp !== undefined;
  if (!STATUS_ONLY.has(step.type) && !deleting && !hasFinalizer(restore, RECOVERY_FINALIZER)) {
    // Before the request's first write: a deletion is then seen, and what was taken is given back (or the
    // deletion waits for the end after the fork). An object being deleted takes no new finalizer.
    await addFinalizer(ctx.client, EtcdRestoreKind, restore, RECOVERY_FINALIZER);
  }
  const now = new Date();
  const fields = await actRecovery(
    step,
    {
      client: ctx.client,
      cluster,
      obs,
      etcdClient,
      signal: ctx.signal,
      ...(tls === undefined ? {} : { tls }),
      ...(options.beforePod === undefined ? {} : { beforePod: options.beforePod }),
      ...(options.memberPending === undefined ? {} : { memberPending: options.memberPending }),
    },
    restore,
    now,
    backup,
  );
  if (step.type !== "Wait") {
    const warning = step.type === "Refuse";
    ctx.log.info({ restore: request, step: step.type }, step.message);
    ctx.recorder.event(restore, warning ? "Warning" : "Normal", step.type, "Recover", step.message);
    if (step.type === "Recovered" || step.type === "CallOff" || warning) {
      ctx.recorder.event(cluster, warning ? "Warning" : "Normal", step.type, "Recover", step.message);
    }
  }
  // Deleted after the fork: the recovery runs to its end, and says why the EtcdRestore is still there.
  const held = restoreEnded(fields.phase) ? undefined : deletionHeld(observed);
  if (held !== undefined) {
    fields.message = `${fields.message ?? step.message}; ${held}`;
    if (restore.status?.message?.includes(held) !== true) {
      ctx.log.warn({ restore: request }, held);
      ctx.recorder.event(restore, "Warning", "DeletionHeld", "Recover", held);
    }
  }
  // A fenced recovery shows its own reason (WaitingForFence), naming the pods it waits for.
  const reason =
    step.type === "Wait" && step.reason === "WaitingForFence" ? step.reason : `Restore${step.type}`;
  const shown: Step =
    step.type === "Refuse" || step.type === "Recovered"
      ? { type: "Wait", reason, message: step.message }
      : { type: "Wait", reason, message: `EtcdRestore ${request}: ${step.message}` };
  const clusterStatus = statusOf(cluster, obs, shown, now);
  if (step.type === "Recovered" && step.seed !== undefined && backup !== undefined) {
    // A new cluster: its ID replaces the old one (kept for ever otherwise), and status.restore says what was
    // restored. Written before the EtcdRestore ends, so a restart in between recovers (idempotently) again.
    clusterStatus.clusterID = step.clusterID;
    clusterStatus.restore = recoveredStatus(step, backup, cluster.status?.restore, now);
  }
  // The cluster's status first: once the EtcdRestore has ended the ordinary planner takes over and must see the
  // new cluster ID.
  const clusterPatch = statusMergePatch(cluster.status, clusterStatus);
  if (clusterPatch !== undefined) {
    await ctx.client.patchStatus(EtcdClusterKind, name, namespace, clusterPatch, "merge", {
      signal: ctx.signal,
    });
  }
  const restorePatch = statusMergePatch(restore.status, { ...restore.status, ...fields });
  if (restorePatch !== undefined) {
    await ctx.client.patchStatus(EtcdRestoreKind, request, namespace, restorePatch, "merge", {
      signal: ctx.signal,
    });
  }
  // Ended (its status written first): nothing more to give back or to finish, so a deletion may go through. A
  // restart between the two writes is caught by the sweep in the cluster's reconcile (releaseRestores).
  if (restoreEnded(fields.phase))
    await removeFinalizer(ctx.client, EtcdRestoreKind, restore, RECOVERY_FINALIZER);
  return { requeueAfter: step.type === "Wait" ? 5_000 : 1_000 };
}

/** The cluster's status.restore after a recovery from a backup (kept once written: a replay changes nothing). */
export function recoveredStatus(
  step: Extract<RecoveryStep, { type: "Recovered" }>,
  backup: BackupRecovery,
  previous: EtcdClusterRestoreStatus | undefined,
  now: Date,
): EtcdClusterRestoreStatus {
  if (previous !== undefined && previous.clusterID === step.clusterID) return previous;
  return {
    source: backup.planned.source,
    ...(step.snapshotRevision === undefined
      ? { revision: step.revision }
      : { snapshotRevision: step.snapshotRevision, revision: step.snapshotRevision + backup.bumpRevision }),
    bumpRevision: backup.bumpRevision,
    completionTime: now.toISOString(),
    clusterID: step.clusterID,
  };
}
