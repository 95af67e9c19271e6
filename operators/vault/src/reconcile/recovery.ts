// The I/O of a VaultRecovery: while one is active for a cluster, the VaultCluster controller observes each server
// (its claim and the recovery's marks on it, its pod, what its Vault says of itself, its own raft indexes), plans with
// plan/recovery.ts instead of the membership planner, and acts: marks the survivor's claim, stops the other servers
// (their claims kept), forks (the survivor restarted with the peers.json init container), unseals, verifies it leads
// alone, deletes the replaced claims, then hands the cluster back to its own planner, which makes the others again on
// new claims and joins them; the request succeeds once the cluster is in sync. Every choice is written on the
// survivor's claim before it is acted on (keyed by the request's uid), so an operator that dies or loses its Lease
// mid-way is resumed from the objects. A finalizer, added before the request's first write and released once it has
// ended, lets a deletion before the fork give back what it took, and holds one after the fork.
import {
  addFinalizer,
  type Cache,
  hasFinalizer,
  isAlreadyExists,
  isNotFound,
  oldestOpenRequest,
  PersistentVolumeClaim,
  type PersistentVolumeClaimObject,
  Pod,
  type PodObject,
  quorum,
  type ReconcileContext,
  type Result,
  removeFinalizer,
  statusMergePatch,
} from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import {
  RECOVERY_FINALIZER,
  recoveryEnded,
  type VaultRecovery,
  VaultRecoveryKind,
  type VaultRecoveryStage,
  type VaultRecoveryStatus,
} from "../api/vault-recovery.ts";
import { claimName, clusterRef, podHost, selectorLabels } from "../desired/names.ts";
import { CERTIFICATE_ANNOTATION, type PodSettings } from "../desired/objects.ts";
import { RECOVERY_INIT_CONTAINER, RECOVERY_POD_ANNOTATION, recoveryPod } from "../desired/recovery-pod.ts";
import { ordinalOf, type Step } from "../plan/plan.ts";
import {
  deletionHeld,
  planRecovery,
  type RecoveryObserved,
  type RecoveryServer,
  type RecoveryStep,
  type ReplacedClaim,
} from "../plan/recovery.ts";
import { VaultError } from "../vault/vault-client.ts";
import { act } from "./act.ts";
import type { KeysKeeper } from "./keys-keeper.ts";
import type { VaultOperatorMetrics } from "./metrics.ts";
import type { Observation, VaultClientFactory } from "./observe.ts";
import { statusOf } from "./status.ts";

/** Annotation on the survivor's claim: the uid of the VaultRecovery that chose it. */
export const SURVIVOR_ANNOTATION = "vault.capstan.dev/recovery-survivor";
/** Annotation on the survivor's claim: "fork" (written before its pod is replaced), then "rejoin" (it leads alone). */
export const RECOVERY_PHASE_ANNOTATION = "vault.capstan.dev/recovery-phase";
/** Annotation on the survivor's claim, written with "fork": the claims to replace, as JSON [{claim, uid}]. */
export const REPLACED_CLAIMS_ANNOTATION = "vault.capstan.dev/recovery-replaces";

/** The oldest VaultRecovery of `cluster` that has not ended, if any. */
export async function activeRecovery(
  cluster: VaultCluster,
  cache: Cache,
): Promise<VaultRecovery | undefined> {
  const { namespace, name } = clusterRef(cluster);
  const all = await cache.list(VaultRecoveryKind, { namespace });
  return oldestOpenRequest(all, (r) => r.spec.clusterName === name && !recoveryEnded(r.status?.phase));
}

/** The other VaultRecoveries of the cluster wait for the active one: Pending, saying which (written once). */
export async function holdOthers(
  ctx: ReconcileContext,
  cluster: VaultCluster,
  active: VaultRecovery,
): Promise<void> {
  const { namespace, name } = clusterRef(cluster);
  for (const r of await ctx.cache.list(VaultRecoveryKind, { namespace })) {
    if (
      r.spec.clusterName !== name ||
      r.metadata.uid === active.metadata.uid ||
      recoveryEnded(r.status?.phase)
    )
      continue;
    const message = `waits for VaultRecovery ${active.metadata.name} of the same cluster to end`;
    const patch = statusMergePatch(r.status, {
      ...r.status,
      phase: "Pending",
      reason: "AnotherRecovery",
      message,
    });
    if (patch === undefined) continue;
    await ctx.client.patchStatus(VaultRecoveryKind, r.metadata.name ?? "", namespace, patch, "merge", {
      signal: ctx.signal,
    });
  }
}

/**
 * Releases the recovery finalizer of `clusterName`'s VaultRecoveries that have ended (the operator stopped between
 * the status write and the release), or of every one (`all`: the VaultCluster is gone). Returns their names.
 */
export async function releaseRecoveries(
  ctx: ReconcileContext,
  namespace: string,
  clusterName: string,
  all = false,
): Promise<string[]> {
  const released: string[] = [];
  for (const r of await ctx.cache.list(VaultRecoveryKind, { namespace })) {
    if (r.spec.clusterName !== clusterName || !hasFinalizer(r, RECOVERY_FINALIZER)) continue;
    if (!all && !recoveryEnded(r.status?.phase)) continue;
    await removeFinalizer(ctx.client, VaultRecoveryKind, r, RECOVERY_FINALIZER);
    released.push(r.metadata.name ?? "");
  }
  return released;
}

/** An active node answers with a majority of the raft voters it reports unsealed. */
export function hasQuorum(obs: Observation): boolean {
  const raft = obs.observed.raft;
  if (obs.active === undefined || !("servers" in raft)) return false;
  const voters = raft.servers.filter((s) => s.voter).map((s) => s.nodeID);
  const unsealed = voters.filter((id) => {
    const p = obs.observed.pods.find((x) => x.name === id);
    return (
      p !== undefined &&
      p.terminatingSince === undefined &&
      p.vault.reachable &&
      p.vault.initialized &&
      !p.vault.sealed
    );
  });
  return voters.length > 0 && unsealed.length >= quorum(voters.length);
}

/** What the reconcile needs to observe and act. */
export interface RecoveryContext {
  cluster: VaultCluster;
  obs: Observation;
  settings: PodSettings;
  vaultClient: VaultClientFactory;
  keys: KeysKeeper;
  metrics: VaultOperatorMetrics;
  /** The cluster CA (PEM). */
  ca: string;
  /** The listener certificate's fingerprint, stamped on the survivor's new pod. */
  certificate?: string;
  /** The listener certificate's state, for the cluster's status. */
  tlsStatus: { ready: boolean; message: string; reason?: string; notAfter?: Date };
}

function parseReplaced(value: string | undefined): ReplacedClaim[] {
  if (value === undefined) return [];
  try {
    const parsed = JSON.parse(value) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (r): r is ReplacedClaim =>
        typeof r === "object" && r !== null && typeof r.claim === "string" && typeof r.uid === "string",
    );
  } catch {
    return [];
  }
}

/** What the recovery planner reads: each server's claim, marks, pod and Vault, and (before the choice) its indexes. */
export async function observeRecovery(
  recovery: VaultRecovery,
  rc: RecoveryContext,
  cache: Cache,
  signal?: AbortSignal,
): Promise<RecoveryObserved> {
  const { cluster, obs } = rc;
  const { namespace, name } = clusterRef(cluster);
  const uid = recovery.metadata.uid ?? recovery.metadata.name ?? "";
  // Every claim of the cluster, being deleted or not (the marks are read off the survivor's either way).
  const claims = new Map<string, PersistentVolumeClaimObject>();
  for (const c of await cache.list(PersistentVolumeClaim, { namespace, labels: selectorLabels(cluster) })) {
    if (
      c.metadata.name !== undefined &&
      (obs.claims.has(c.metadata.name) || c.metadata.deletionTimestamp !== undefined)
    )
      claims.set(c.metadata.name, c);
  }
  const names = new Set<string>();
  for (const n of obs.pods.keys()) names.add(n);
  for (const c of claims.keys()) names.add(c.replace(/^data-/, ""));
  let survivorMark: string | undefined;
  let phase: RecoveryObserved["phase"];
  let replaced: ReplacedClaim[] = [];
  const servers: RecoveryServer[] = [];
  for (const server of [...names].sort()) {
    const ordinal = ordinalOf(name, server);
    if (ordinal === undefined) continue;
    const claim = claims.get(claimName(server));
    const annotations = claim?.metadata.annotations ?? {};
    if (annotations[SURVIVOR_ANNOTATION] === uid) {
      survivorMark = server;
      const p = annotations[RECOVERY_PHASE_ANNOTATION];
      if (p === "fork" || p === "rejoin") phase = p;
      replaced = parseReplaced(annotations[REPLACED_CLAIMS_ANNOTATION]);
    }
    const pod = obs.pods.get(server);
    const observed = obs.observed.pods.find((p) => p.name === server);
    const podPhase = pod?.status?.phase;
    const state: RecoveryServer["pod"] =
      pod === undefined
        ? "none"
        : pod.metadata.deletionTimestamp !== undefined
          ? "terminating"
          : podPhase === "Failed" || podPhase === "Succeeded"
            ? "ended"
            : "live";
    const live = claim !== undefined && claim.metadata.deletionTimestamp === undefined;
    servers.push({
      name: server,
      ordinal,
      claim: live,
      ...(claim !== undefined && !live ? { claimTerminating: true } : {}),
      ...(live && claim.metadata.uid !== undefined ? { claimUID: claim.metadata.uid } : {}),
      pod: state,
      ...(pod?.metadata.deletionTimestamp === undefined
        ? {}
        : { terminatingSince: new Date(pod.metadata.deletionTimestamp) }),
      ...(pod?.spec?.nodeName === undefined ? {} : { node: pod.spec.nodeName }),
      ...(observed === undefined ? {} : { ready: observed.ready }),
      ...(state === "live" && pod?.metadata.annotations?.[RECOVERY_POD_ANNOTATION] === recovery.metadata.name
        ? { recoveryPod: true }
        : {}),
      ...(state === "live" && observed !== undefined ? { vault: observed.vault } : {}),
      ...(state === "live" && pod !== undefined ? initFailureOf(pod) : {}),
    });
  }
  // Before the survivor is chosen (by the operator), each unsealed server of the cluster is asked its own indexes.
  if (survivorMark === undefined) {
    await Promise.all(
      servers.map(async (s) => {
        const v = s.vault;
        const ip = obs.pods.get(s.name)?.status?.podIP;
        if (v === undefined || !v.reachable || !v.initialized || v.sealed || ip === undefined) return;
        const client = rc.vaultClient({
          address: `https://${ip}:8200`,
          servername: podHost(cluster, s.name),
          ca: rc.ca,
        });
        try {
          const leader = await client.leader(signal === undefined ? {} : { signal });
          s.index =
            typeof leader.raft_applied_index === "number"
              ? { applied: leader.raft_applied_index, committed: leader.raft_committed_index ?? 0 }
              : { error: "sys/leader reports no raft_applied_index" };
        } catch (err) {
          signal?.throwIfAborted();
          s.index = { error: err instanceof Error ? err.message : String(err) };
        } finally {
          await client.close();
        }
      }),
    );
  }
  const raft = obs.observed.raft;
  const voters =
    "servers" in raft
      ? raft.servers.filter((s) => s.voter).map((s) => s.nodeID)
      : (cluster.status?.raftPeers ?? []).filter((p) => p.voter).map((p) => p.nodeID);
  const knownClusterID = cluster.status?.clusterID ?? obs.observed.keys?.clusterID;
  return {
    request: recovery.metadata.name ?? "",
    cluster: name,
    ...(recovery.spec.survivor === undefined ? {} : { named: recovery.spec.survivor }),
    ...(knownClusterID === undefined ? {} : { knownClusterID }),
    quorum: hasQuorum(obs),
    ...(obs.active === undefined ? {} : { active: obs.active }),
    voters,
    servers,
    ...(survivorMark === undefined ? {} : { survivorMark }),
    ...(phase === undefined ? {} : { phase }),
    replaced,
    raft,
    ...(recovery.metadata.deletionTimestamp === undefined ? {} : { deleting: true }),
    ...(hasFinalizer(recovery, RECOVERY_FINALIZER) ? { finalizer: true } : {}),
  };
}

/** How the peers.json init container fails, when it does (its exit and message, or why it is waiting). */
function initFailureOf(pod: PodObject): { initFailure?: string } {
  const st = pod.status?.initContainerStatuses?.find((c) => c.name === RECOVERY_INIT_CONTAINER);
  if (st === undefined) return {};
  const last = st.state?.terminated ?? st.lastState?.terminated;
  if (last !== undefined && last.exitCode !== 0) {
    const why = (last.message ?? last.reason ?? "").trim();
    return { initFailure: `exit ${last.exitCode}${why === "" ? "" : `: ${why}`}` };
  }
  const waiting = st.state?.waiting?.reason;
  if (waiting !== undefined && waiting !== "PodInitializing") {
    return { initFailure: `${waiting}${st.state?.waiting?.message ? `: ${st.state.waiting.message}` : ""}` };
  }
  return {};
}

/** Steps that write nothing but the VaultRecovery's status: no finalizer is needed before them. */
const STATUS_ONLY = new Set<RecoveryStep["type"]>(["Wait", "Refuse", "CallOff", "Rejoin"]);

/** The stage a step belongs to. */
function stageOf(step: RecoveryStep, observed: RecoveryObserved): VaultRecoveryStage | undefined {
  switch (step.type) {
    case "MarkSurvivor":
    case "StopServer":
      return observed.phase === undefined
        ? "Fencing"
        : observed.phase === "fork"
          ? "StartingSurvivor"
          : "Rejoining";
    case "Fork":
      return "Forking";
    case "StartSurvivor":
    case "Verified":
      return step.type === "Verified" ? "Rejoining" : "StartingSurvivor";
    case "WipeServer":
    case "Rejoin":
      return "Rejoining";
    case "Unseal":
    case "Wait":
      return observed.survivorMark === undefined
        ? undefined
        : observed.phase === undefined
          ? "Fencing"
          : observed.phase === "fork"
            ? "StartingSurvivor"
            : "Rejoining";
    default:
      return undefined;
  }
}

/** Performs one recovery step; returns the status fields it sets (a step that could not go on says why). */
async function actRecovery(
  step: RecoveryStep,
  recovery: VaultRecovery,
  rc: RecoveryContext,
  ctx: ReconcileContext,
  now: Date,
): Promise<VaultRecoveryStatus> {
  const { namespace } = clusterRef(rc.cluster);
  const uid = recovery.metadata.uid ?? recovery.metadata.name ?? "";
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  const patchClaim = (server: string, annotations: Record<string, string | null>) =>
    ctx.client.patch(
      PersistentVolumeClaim,
      claimName(server),
      namespace,
      { metadata: { annotations } },
      "merge",
      call,
    );
  const deletePod = (server: string) => ctx.client.delete(Pod, server, namespace, call).catch(ignoreNotFound);
  const started = recovery.status?.startTime ?? now.toISOString();
  const running = { phase: "Running" as const, startTime: started, message: step.message };
  switch (step.type) {
    case "Refuse":
      return {
        phase: "Failed",
        reason: step.reason,
        message: step.message,
        completionTime: now.toISOString(),
      };
    case "CallOff":
      return {
        phase: "Cancelled",
        reason: step.reason,
        message: step.message,
        completionTime: now.toISOString(),
      };
    case "MarkSurvivor":
      await patchClaim(step.server, { [SURVIVOR_ANNOTATION]: uid });
      return {
        ...running,
        reason: step.type,
        survivor: step.server,
        ...(step.appliedIndex === undefined ? {} : { raftIndex: step.appliedIndex }),
        candidates: step.candidates,
      };
    case "StopServer":
      await deletePod(step.server);
      return { ...running, reason: step.type };
    case "Fork":
      // The point of no return, written before the survivor's pod is replaced (a restart goes on from it).
      await patchClaim(step.server, {
        [RECOVERY_PHASE_ANNOTATION]: "fork",
        [REPLACED_CLAIMS_ANNOTATION]: JSON.stringify(step.replaced),
      });
      await deletePod(step.server);
      return { ...running, reason: step.type, survivor: step.server };
    case "StartSurvivor": {
      const old = rc.obs.pods.get(step.server);
      if (old !== undefined) {
        // The old pod (made without peers.json, or ended) must be gone before the survivor starts on its data.
        if (old.metadata.deletionTimestamp === undefined) await deletePod(step.server);
        return {
          ...running,
          reason: "SurvivorPodTerminating",
          message: `waiting for the old pod of ${step.server} to go away`,
        };
      }
      const pod = recoveryPod(rc.cluster, step.server, rc.settings, {
        name: recovery.metadata.name ?? "",
        uid,
      });
      if (rc.certificate !== undefined) {
        pod.metadata.annotations = { ...pod.metadata.annotations, [CERTIFICATE_ANNOTATION]: rc.certificate };
      }
      // Made by a reconcile whose answer was lost (the cache has not seen it yet): the next one goes on with it.
      await ctx.client.create(Pod, pod, call).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
      return { ...running, reason: step.type, survivor: step.server };
    }
    case "Unseal": {
      const result = await act(
        { type: "Unseal", pod: step.server, message: step.message },
        {
          client: ctx.client,
          cluster: rc.cluster,
          obs: rc.obs,
          settings: rc.settings,
          vaultClient: rc.vaultClient,
          keys: rc.keys,
          ca: rc.ca,
          now,
          ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
        },
      ).catch((err: unknown) => {
        if (!(err instanceof VaultError)) throw err;
        return {
          done: false as const,
          reason: "UnsealFailed",
          message: `${step.message}: Vault answered: ${err.message}`,
        };
      });
      return result.done
        ? { ...running, reason: step.type }
        : { ...running, reason: result.reason, message: result.message };
    }
    case "Verified":
      await patchClaim(step.server, { [RECOVERY_PHASE_ANNOTATION]: "rejoin" });
      return { ...running, reason: step.type };
    case "WipeServer": {
      const replaced = step.claim;
      const claimUID = rc.obs.claims.get(replaced)?.metadata.uid;
      // Only the claim recorded at the fork: a new claim of the same name (another uid) is never deleted.
      await ctx.client
        .delete(PersistentVolumeClaim, replaced, namespace, {
          ...call,
          ...(claimUID === undefined ? {} : { preconditions: { uid: claimUID } }),
        })
        .catch(ignoreNotFound);
      return {
        ...running,
        reason: step.type,
        replacedClaims: [...new Set([...(recovery.status?.replacedClaims ?? []), replaced])].sort(),
      };
    }
    case "RemoveSurvivorMark":
      await patchClaim(step.server, {
        [SURVIVOR_ANNOTATION]: null,
        [RECOVERY_PHASE_ANNOTATION]: null,
        [REPLACED_CLAIMS_ANNOTATION]: null,
      });
      return { ...running, reason: step.type };
    case "Rejoin":
      return { ...running, reason: step.type };
    case "Wait":
      return { ...running, reason: step.reason };
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (!isNotFound(err)) throw err;
  return undefined;
}

/**
 * What the controller does after one reconcile of a recovery: `result` (the recovery acted and wrote both statuses),
 * or `rejoin` (the cluster is handed back: the controller plans as usual, then calls `finish` with its step).
 */
export type RecoveryOutcome = { result: Result } | { rejoin: true; finish: (step: Step) => Promise<void> };

/** One reconcile of `cluster` while `recovery` is active: observe, plan one recovery step, act, write both statuses. */
export async function reconcileRecovery(
  ctx: ReconcileContext,
  recovery: VaultRecovery,
  rc: RecoveryContext,
): Promise<RecoveryOutcome> {
  const { cluster, obs } = rc;
  const { namespace, name } = clusterRef(cluster);
  const request = recovery.metadata.name ?? "";
  const observed = await observeRecovery(recovery, rc, ctx.cache, ctx.signal);
  const step = planRecovery(observed);
  const deleting = recovery.metadata.deletionTimestamp !== undefined;
  if (!STATUS_ONLY.has(step.type) && !deleting && !hasFinalizer(recovery, RECOVERY_FINALIZER)) {
    // Before the request's first write: a deletion is then seen, and what was taken is given back (or the deletion
    // waits after the fork). An object being deleted takes no new finalizer.
    await addFinalizer(ctx.client, VaultRecoveryKind, recovery, RECOVERY_FINALIZER);
  }
  const now = new Date();
  const fields = await actRecovery(step, recovery, rc, ctx, now);
  const stage = stageOf(step, observed);
  if (stage !== undefined && !recoveryEnded(fields.phase)) fields.stage = stage;
  if (step.type !== "Wait" && step.type !== "Rejoin") {
    const warning = step.type === "Refuse";
    ctx.log.info({ recovery: request, step: step.type }, step.message);
    ctx.recorder.event(recovery, warning ? "Warning" : "Normal", step.type, "Recover", step.message);
    if (["MarkSurvivor", "Fork", "Verified", "CallOff"].includes(step.type) || warning) {
      ctx.recorder.event(
        cluster,
        warning ? "Warning" : "Normal",
        `Recovery${step.type}`,
        "Recover",
        `VaultRecovery ${request}: ${step.message}`,
      );
    }
    rc.metrics.countStep(namespace, name, `Recovery${step.type}`);
  }
  // Deleted after the fork: the recovery goes on, and says why the VaultRecovery is still there.
  const held = recoveryEnded(fields.phase) ? undefined : deletionHeld(observed);
  if (held !== undefined) {
    fields.message = `${fields.message ?? step.message}; ${held}`;
    if (recovery.status?.message?.includes(held) !== true) {
      ctx.log.warn({ recovery: request }, held);
      ctx.recorder.event(recovery, "Warning", "DeletionHeld", "Recover", held);
    }
  }
  const writeRecovery = async (f: VaultRecoveryStatus, release: boolean) => {
    const patch = statusMergePatch(recovery.status, { ...recovery.status, ...f });
    if (patch !== undefined) {
      await ctx.client.patchStatus(VaultRecoveryKind, request, namespace, patch, "merge", {
        signal: ctx.signal,
      });
    }
    // Ended (its status written first): a restart between the two writes is caught by releaseRecoveries.
    if (release) await removeFinalizer(ctx.client, VaultRecoveryKind, recovery, RECOVERY_FINALIZER);
  };

  if (step.type === "Rejoin") {
    // Handed back: the cluster's own planner makes the others again and joins them; the request ends once in sync,
    // or at once when it is deleted now (nothing is left to undo).
    return {
      rejoin: true,
      finish: async (clusterStep: Step) => {
        if (deleting || clusterStep.type === "InSync") {
          const message = deleting
            ? `VaultRecovery ${request} deleted while the other servers rejoin: ${observed.survivorMark} serves alone and the cluster's own steps rejoin the others`
            : `recovered from ${observed.survivorMark}: ${clusterStep.message}`;
          ctx.log.info({ recovery: request }, message);
          ctx.recorder.event(recovery, "Normal", "Recovered", "Recover", message);
          ctx.recorder.event(
            cluster,
            "Normal",
            "Recovered",
            "Recover",
            `VaultRecovery ${request}: ${message}`,
          );
          await writeRecovery(
            { phase: "Succeeded", reason: "Recovered", message, completionTime: new Date().toISOString() },
            true,
          );
          return;
        }
        await writeRecovery(
          { ...fields, message: `${step.message}; the cluster: ${clusterStep.message}` },
          false,
        );
      },
    };
  }

  // The cluster's status says what the recovery does (a fenced recovery shows WaitingForFence, naming the pods).
  const reason =
    step.type === "Wait" && step.reason === "WaitingForFence" ? step.reason : `Recovery${step.type}`;
  const shown: Step = {
    type: "Wait",
    reason,
    message: `VaultRecovery ${request}: ${fields.message ?? step.message}`,
  };
  const clusterPatch = statusMergePatch(cluster.status, statusOf(cluster, obs, shown, rc.tlsStatus, now));
  if (clusterPatch !== undefined) {
    await ctx.client.patchStatus(VaultClusterKind, name, namespace, clusterPatch, "merge", {
      signal: ctx.signal,
    });
  }
  await writeRecovery(fields, recoveryEnded(fields.phase));
  return { result: { requeueAfter: step.type === "Wait" ? 3_000 : 1_000 } };
}
