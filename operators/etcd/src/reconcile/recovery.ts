// The I/O of an EtcdRestore (disaster recovery from a survivor): while one is active for a cluster, the EtcdCluster
// controller observes each member with a claim (its marks, its pod, what its etcd answers alone), plans with
// plan/recovery.ts instead of the membership planner, and acts: marks and keeps claims (never deletes one), stops
// replaced members, restarts the survivor with and then without --force-new-cluster, and writes the EtcdRestore's
// status and Events. Every choice is written on an object before it is acted on.
import {
  type Cache,
  isNotFound,
  PersistentVolumeClaim,
  Pod,
  type ReconcileContext,
  type Result,
  statusMergePatch,
} from "@capstan/core";
import { type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import {
  type EtcdRestore,
  EtcdRestoreKind,
  type EtcdRestoreStatus,
  KEPT_BY_RESTORE_LABEL,
} from "../api/etcd-restore.ts";
import { FORCE_NEW_CLUSTER_ANNOTATION, memberPod, withForceNewCluster } from "../desired/member-pod.ts";
import {
  CLIENT_PORT,
  clusterRef,
  dataClaimName,
  MEMBER_LABEL,
  peerURL,
  selectorLabels,
} from "../desired/names.ts";
import { memberIdToHex } from "../etcd/etcd-client.ts";
import { quorum, type Step } from "../plan/plan.ts";
import { planRecovery, type RecoveryMember, type RecoveryStep } from "../plan/recovery.ts";
import type { ActContext } from "./act.ts";
import { type EtcdClientFactory, type Observation, podGone } from "./observe.ts";
import { statusOf } from "./status.ts";

/** Annotation on the survivor's claim: the EtcdRestore that chose it. */
export const SURVIVOR_ANNOTATION = "etcd.capstan.dev/restore-survivor";
/** Annotation on the survivor's claim: "force" or "unforce", written before its pod is deleted. */
export const RECOVERY_PHASE_ANNOTATION = "etcd.capstan.dev/restore-phase";

/** The oldest EtcdRestore of `cluster` that has not ended, if any. */
export async function activeRestore(cluster: EtcdCluster, cache: Cache): Promise<EtcdRestore | undefined> {
  const { namespace, name } = clusterRef(cluster);
  const all = await cache.list(EtcdRestoreKind, { namespace });
  return all
    .filter(
      (r) => r.spec.clusterName === name && r.status?.phase !== "Succeeded" && r.status?.phase !== "Failed",
    )
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
        (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
    )[0];
}

/** The members as the recovery planner sees them; their own etcd is asked alone (no quorum needed). */
export async function observeRecoveryMembers(
  cluster: EtcdCluster,
  request: string,
  cache: Cache,
  obs: Observation,
  etcdClient: EtcdClientFactory,
  signal?: AbortSignal,
): Promise<RecoveryMember[]> {
  const { namespace } = clusterRef(cluster);
  const kept = await cache.list(PersistentVolumeClaim, {
    namespace,
    labels: { ...selectorLabels(cluster), [KEPT_BY_RESTORE_LABEL]: request },
  });
  const keptNames = new Set(
    kept.map((c) => c.metadata.labels?.[MEMBER_LABEL]).filter((n) => n !== undefined),
  );
  const names = [...new Set([...obs.claims.keys(), ...keptNames])].sort();
  const call = signal === undefined ? {} : { signal };
  return Promise.all(
    names.map(async (name): Promise<RecoveryMember> => {
      const claim = obs.claims.get(name);
      const pod = obs.pods.get(name);
      const live = pod !== undefined && !podGone(pod);
      const ip = live ? pod.status?.podIP : undefined;
      const member: RecoveryMember = {
        name,
        claimOwned: claim !== undefined,
        pod: live,
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
      const endpoint = `http://${ip}:${CLIENT_PORT}`;
      const client = etcdClient([endpoint]);
      const [status, list, health] = await Promise.all([
        client.status(endpoint, call).catch(() => undefined),
        client.memberList(call).catch(() => undefined),
        client.health(endpoint, call).catch(() => undefined),
      ]);
      return {
        ...member,
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

/** The next step of `restore` for `cluster`. */
export function planRestoreRequest(
  restore: EtcdRestore,
  obs: Observation,
  members: RecoveryMember[],
): RecoveryStep {
  return planRecovery({
    request: restore.metadata.name ?? "",
    from: "Survivor",
    quorum: hasQuorum(obs),
    members,
  });
}

/** Performs one recovery step; returns the EtcdRestore status fields it sets. */
export async function actRecovery(
  step: RecoveryStep,
  ctx: ActContext,
  restore: EtcdRestore,
  now: Date,
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
      // Ownership removed (null in a merge patch): neither the garbage collector nor the planner takes it.
      await patchClaim(step.name, { labels: { [KEPT_BY_RESTORE_LABEL]: request }, ownerReferences: null });
      return {
        phase: "Running",
        message: step.message,
        startTime: started,
        keptClaims: [...new Set([...(restore.status?.keptClaims ?? []), dataClaimName(step.name)])].sort(),
      };
    case "StopMember":
      await deletePod(step.name);
      return { phase: "Running", message: step.message, startTime: started };
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
        survivor: step.survivor,
        revision: step.revision,
        clusterID: step.clusterID,
        startTime: started,
        completionTime: now.toISOString(),
      };
    case "RestoreFromBackup":
      return { phase: "Failed", message: "recovery from a backup is not supported by EtcdRestore yet" };
    case "Wait":
      return { phase: "Running", message: step.message, startTime: started };
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (!isNotFound(err)) throw err;
  return undefined;
}

/** One reconcile of `cluster` while `restore` is active: observe, plan one recovery step, act, write both statuses. */
export async function reconcileRecovery(
  ctx: ReconcileContext,
  cluster: EtcdCluster,
  obs: Observation,
  restore: EtcdRestore,
  etcdClient: EtcdClientFactory,
): Promise<Result> {
  const { namespace, name } = clusterRef(cluster);
  const request = restore.metadata.name ?? "";
  const members = await observeRecoveryMembers(cluster, request, ctx.cache, obs, etcdClient, ctx.signal);
  const step = planRestoreRequest(restore, obs, members);
  const now = new Date();
  const fields = await actRecovery(
    step,
    { client: ctx.client, cluster, obs, signal: ctx.signal },
    restore,
    now,
  );
  if (step.type !== "Wait") {
    const warning = step.type === "Refuse" || step.type === "RestoreFromBackup";
    ctx.log.info({ restore: request, step: step.type }, step.message);
    ctx.recorder.event(restore, warning ? "Warning" : "Normal", step.type, "Recover", step.message);
    if (step.type === "Recovered" || warning) {
      ctx.recorder.event(cluster, warning ? "Warning" : "Normal", step.type, "Recover", step.message);
    }
  }
  const restorePatch = statusMergePatch(restore.status, { ...restore.status, ...fields });
  if (restorePatch !== undefined) {
    await ctx.client.patchStatus(EtcdRestoreKind, request, namespace, restorePatch, "merge", {
      signal: ctx.signal,
    });
  }
  const shown: Step =
    step.type === "Refuse" || step.type === "Recovered"
      ? { type: "Wait", reason: `Restore${step.type}`, message: step.message }
      : { type: "Wait", reason: `Restore${step.type}`, message: `EtcdRestore ${request}: ${step.message}` };
  const clusterPatch = statusMergePatch(cluster.status, statusOf(cluster, obs, shown, now));
  if (clusterPatch !== undefined) {
    await ctx.client.patchStatus(EtcdClusterKind, name, namespace, clusterPatch, "merge", {
      signal: ctx.signal,
    });
  }
  return { requeueAfter: step.type === "Wait" ? 5_000 : 1_000 };
}
