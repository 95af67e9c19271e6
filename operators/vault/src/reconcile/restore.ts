// The I/O of spec.restore: while a new VaultCluster restores a snapshot, its reconcile observes the objects the restore
// made (the first claim's mark, the snapshot's keys and the temporary ones, the token's Secret, the Job) and the first
// server's Vault, plans with plan/restore.ts instead of the membership planner, performs the one step, and writes the
// cluster's status (phase Restoring, status.restore). Once confirmed it hands the cluster back to its own planner.
import { failedStepMessage, jobOutcome, type StoredSnapshot, s3SecretsProblem } from "@capstan/backup";
import {
  isAlreadyExists,
  isNotFound,
  Job,
  PersistentVolumeClaim,
  Pod,
  type ReconcileContext,
  type Result,
  Secret,
  secretData,
  statusMergePatch,
} from "@capstan/core";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import type { VaultRestore } from "../api/vault-restore.ts";
import { VaultSnapshotKind } from "../api/vault-snapshot.ts";
import { claimName, clusterRef, keysSecretName, podHost, podName } from "../desired/names.ts";
import {
  base64Values,
  CERTIFICATE_ANNOTATION,
  CLUSTER_ID_ANNOTATION,
  dataClaim,
  INIT_STARTED_ANNOTATION,
  keysSecret,
  type PodSettings,
  vaultPod,
} from "../desired/objects.ts";
import {
  RESTORE_ANNOTATION,
  RESTORE_BACKOFF_LIMIT,
  RESTORE_DEADLINE_SECONDS,
  resolveRestoreSource,
  restoreJob,
  restoreJobName,
  restoreKeysSource,
  restoreLabels,
  restoreSecret,
  restoreSourceName,
  restoreTokenSecretName,
  TEMPORARY_CLUSTER_ID_ANNOTATION,
  temporaryKeysSecretName,
} from "../desired/restore-job.ts";
import { ordinalOf, type Step } from "../plan/plan.ts";
import { planRestore, type RestoreObserved, type RestoreStep } from "../plan/restore.ts";
import { RESTORE_POLICY, RESTORE_POLICY_NAME } from "../vault/policy.ts";
import { type VaultClient, VaultError } from "../vault/vault-client.ts";
import type { KeysKeeper } from "./keys-keeper.ts";
import { type Observation, readKeys, type VaultClientFactory } from "./observe.ts";
import { statusOf } from "./status.ts";

/** Annotation on the first server's claim: the restore Job (its uid) the server was restarted after, once. */
export const RESTARTED_ANNOTATION = "vault.capstan.dev/restore-restarted";

/** The operator image a restore Job runs unless the options say (main.ts passes --operator-image). */
export const DEFAULT_OPERATOR_IMAGE = "ghcr.io/capstan-dev/capstan/vault-operator:0.1.0";

/** Everything a restore step needs. */
export interface RestoreContext {
  cluster: VaultCluster;
  obs: Observation;
  settings: PodSettings;
  vaultClient: VaultClientFactory;
  keys: KeysKeeper;
  /** The cluster CA (PEM). */
  ca: string;
  /** The listener certificate's fingerprint, stamped on a new pod. */
  certificate?: string;
  operatorImage: string;
  tlsStatus: Parameters<typeof statusOf>[3];
}

/** True while spec.restore is set and the first claim is not marked done (nor status says it was restored). */
export function restoring(cluster: VaultCluster, obs: Observation): boolean {
  if (cluster.spec.restore === undefined || cluster.status?.restore?.completionTime !== undefined)
    return false;
  const claim = obs.claims.get(claimName(podName(cluster, 0)));
  return claim?.metadata.annotations?.[RESTORE_ANNOTATION] !== "done";
}

/** A Secret read from the cache (the operator's own) or else live; undefined when it does not exist. */
async function readSecret(ctx: ReconcileContext, name: string, namespace: string) {
  return (
    (await ctx.cache.get(Secret, name, namespace)) ??
    (await ctx.client.get(Secret, name, namespace, ctx.signal).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    }))
  );
}

/** The first server as the restore planner reads it. */
function restorePod(
  seen: Observation["observed"]["pods"][number] | undefined,
  health: { cluster_id?: string; sealed: boolean } | undefined,
): RestoreObserved["pod0"] {
  if (seen === undefined) return { exists: false, reachable: false };
  const terminating = seen.terminatingSince === undefined ? {} : { terminating: true };
  const id = health?.cluster_id && !health.sealed ? { clusterID: health.cluster_id } : {};
  const v = seen.vault;
  if (!v.reachable) return { exists: true, ...terminating, reachable: false, error: v.error };
  return {
    exists: true,
    ...terminating,
    reachable: true,
    initialized: v.initialized,
    sealed: v.sealed,
    ...id,
  };
}

interface RestoreMaterial {
  observed: RestoreObserved;
  from?: StoredSnapshot;
  sourceData: Record<string, string>;
  sourceAnnotations: Record<string, string>;
  temporaryKeys: string[];
  temporaryRoot?: string;
  /** What the first server was last restarted for (see RESTARTED_ANNOTATION), and what it would be now. */
  restartedFor?: string;
  restartFor: string;
}

async function observeRestore(ctx: ReconcileContext, rc: RestoreContext): Promise<RestoreMaterial> {
  const { cluster, obs } = rc;
  const { namespace, name } = clusterRef(cluster);
  const restore: VaultRestore = cluster.spec.restore ?? {};
  const snapshot =
    restore.snapshot === undefined
      ? undefined
      : await ctx.cache.get(VaultSnapshotKind, restore.snapshot.name, namespace);
  const from = resolveRestoreSource(restore, snapshot);
  const sourceName = restoreKeysSource(cluster);
  const sourceSecret = await readSecret(ctx, sourceName, namespace);
  const sourceData = secretData(sourceSecret);
  const sourceKeys = readKeys(sourceSecret).material.unsealKeys;
  const own = sourceName === keysSecretName(cluster) ? undefined : obs.keys.unsealKeys;
  const temp = await readSecret(ctx, temporaryKeysSecretName(cluster), namespace);
  const tempKeys = readKeys(temp);
  const tempID = temp?.metadata.annotations?.[TEMPORARY_CLUSTER_ID_ANNOTATION];
  const liveJob = await ctx.cache.get(Job, restoreJobName(cluster), namespace);
  let job = liveJob === undefined ? undefined : jobOutcome(liveJob);
  if (job?.failed !== undefined) {
    const pods = await ctx.cache.list(Pod, { namespace, labels: restoreLabels(cluster) });
    const said = failedStepMessage(pods);
    if (said !== undefined)
      job = { ...job, failed: { ...job.failed, message: `${job.failed.message}; ${said}` } };
  }
  const pod0 = podName(cluster, 0);
  const seen = obs.observed.pods.find((p) => p.name === pod0);
  const health = obs.health.get(pod0);
  const claims = [...obs.claims.values()].flatMap((c) => {
    const n = c.metadata.name ?? "";
    const ordinal = ordinalOf(name, n.replace(/^data-/, ""));
    if (ordinal === undefined) return [];
    const mark = c.metadata.annotations?.[RESTORE_ANNOTATION];
    return [{ name: n, ordinal, ...(mark === undefined ? {} : { mark }) }];
  });
  const started = obs.claims.get(claimName(pod0))?.metadata.annotations?.[INIT_STARTED_ANNOTATION];
  const observed: RestoreObserved = {
    cluster: name,
    version: cluster.spec.version,
    source: restoreSourceName(restore),
    ...(restore.snapshot === undefined
      ? {}
      : {
          snapshot:
            snapshot === undefined
              ? ("missing" as const)
              : {
                  readable: from !== undefined,
                  ...(snapshot.status?.phase === undefined ? {} : { phase: snapshot.status.phase }),
                  ...(snapshot.status?.sha256 === undefined ? {} : { sha256: snapshot.status.sha256 }),
                  ...(snapshot.status?.vaultVersion === undefined
                    ? {}
                    : { vaultVersion: snapshot.status.vaultVersion }),
                },
        }),
    ...(restore.sha256 === undefined ? {} : { expectedSha256: restore.sha256 }),
    keysSource:
      sourceSecret === undefined
        ? { name: sourceName, missing: true as const }
        : { name: sourceName, unsealKeys: sourceKeys.length },
    ...(own === undefined
      ? {}
      : {
          ownKeys: {
            unsealKeys: own.length,
            sameAsSource:
              own.length > 0 && own.length === sourceKeys.length && own.every((k, i) => k === sourceKeys[i]),
          },
        }),
    claims,
    pod0: restorePod(seen, health),
    ...(started === undefined ? {} : { initStartedAt: new Date(started) }),
    ...(temp === undefined
      ? {}
      : {
          temporaryKeys: {
            unsealKeys: tempKeys.material.unsealKeys.length,
            rootToken: tempKeys.material.rootToken !== undefined,
            ...(tempID === undefined ? {} : { clusterID: tempID }),
          },
        }),
    tokenSecret: (await ctx.cache.get(Secret, restoreTokenSecretName(cluster), namespace)) !== undefined,
    ...(job === undefined ? {} : { job }),
    now: new Date(),
  };
  const restartedFor = obs.claims.get(claimName(pod0))?.metadata.annotations?.[RESTARTED_ANNOTATION];
  if (from?.kind === "s3") {
    const read = async (n: string) => {
      const secret = await readSecret(ctx, n, namespace);
      return secret === undefined ? undefined : (secret.data ?? {});
    };
    const field =
      restore.snapshot === undefined
        ? "spec.restore.s3"
        : `VaultSnapshot ${restore.snapshot.name}'s spec.destination.s3`;
    const problem = await s3SecretsProblem(read, from.s3, namespace, field);
    if (problem !== undefined) observed.secretsProblem = problem;
  }
  return {
    observed,
    ...(restartedFor === undefined ? {} : { restartedFor }),
    restartFor: liveJob?.metadata.uid ?? "no-job",
    ...(from === undefined ? {} : { from }),
    sourceData,
    sourceAnnotations: sourceSecret?.metadata.annotations ?? {},
    temporaryKeys: tempKeys.material.unsealKeys,
    ...(tempKeys.material.rootToken === undefined ? {} : { temporaryRoot: tempKeys.material.rootToken }),
  };
}

/** What a step did: nothing more to say, or why it did not go on (degraded: only a human can help). */
type Acted = { done: true } | { done: false; reason: string; message: string; degraded?: boolean };
const DONE: Acted = { done: true };

async function withPod0<T>(
  rc: RestoreContext,
  token: string | undefined,
  fn: (v: VaultClient) => Promise<T>,
) {
  const pod = podName(rc.cluster, 0);
  const ip = rc.obs.pods.get(pod)?.status?.podIP;
  if (ip === undefined) throw new VaultError("/v1/sys/health", 0, [`${pod} has no IP address yet`]);
  const v = rc.vaultClient({
    address: `https://${ip}:8200`,
    servername: podHost(rc.cluster, pod),
    ca: rc.ca,
    timeoutMs: 15_000,
    ...(token === undefined ? {} : { token }),
  });
  try {
    return await fn(v);
  } finally {
    await v.close();
  }
}

const ignore =
  (test: (err: unknown) => boolean) =>
  (err: unknown): undefined => {
    if (!test(err)) throw err;
    return undefined;
  };

async function actRestore(
  ctx: ReconcileContext,
  rc: RestoreContext,
  step: RestoreStep,
  m: RestoreMaterial,
): Promise<Acted> {
  const { cluster } = rc;
  const { namespace } = clusterRef(cluster);
  const pod0 = podName(cluster, 0);
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  const markClaim = (annotations: Record<string, string | null>) =>
    ctx.client.patch(
      PersistentVolumeClaim,
      claimName(pod0),
      namespace,
      { metadata: { annotations } },
      "merge",
      call,
    );
  switch (step.type) {
    case "CopyKeys": {
      const data: Record<string, string> = {};
      for (const [k, v] of Object.entries(m.sourceData)) {
        if (/^unseal-key-[0-9]+$/.test(k) || k === "operator-token" || k === "root-token") data[k] = v;
      }
      const id = m.sourceAnnotations[CLUSTER_ID_ANNOTATION];
      const secret = keysSecret(cluster, data, id === undefined ? {} : { [CLUSTER_ID_ANNOTATION]: id });
      await ctx.client.create(Secret, secret, call).catch(async (err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
        // An empty keys Secret (made before an init that never came): the keys go into it.
        await ctx.client.patch(
          Secret,
          keysSecretName(cluster),
          namespace,
          { data: base64Values(data) },
          "merge",
          call,
        );
      });
      return DONE;
    }
    case "CreateFirstPod": {
      if (!rc.obs.claims.has(claimName(pod0))) {
        const claim = dataClaim(cluster, pod0);
        claim.metadata.annotations = { ...claim.metadata.annotations, [RESTORE_ANNOTATION]: "pending" };
        await ctx.client.create(PersistentVolumeClaim, claim, call).catch(ignore(isAlreadyExists));
      }
      const pod = vaultPod(cluster, pod0, rc.settings);
      if (rc.certificate !== undefined) {
        pod.metadata.annotations = { ...pod.metadata.annotations, [CERTIFICATE_ANNOTATION]: rc.certificate };
      }
      await ctx.client.create(Pod, pod, call).catch(ignore(isAlreadyExists));
      return DONE;
    }
    case "InitTemporary": {
      // Whatever a lost earlier attempt left goes first: its Job, its token, its temporary cluster_id.
      await ctx.client
        .delete(Job, restoreJobName(cluster), namespace, { ...call, propagationPolicy: "Background" })
        .catch(ignore(isNotFound));
      await ctx.client
        .delete(Secret, restoreTokenSecretName(cluster), namespace, call)
        .catch(ignore(isNotFound));
      const tempName = temporaryKeysSecretName(cluster);
      await ctx.client
        .create(Secret, restoreSecret(cluster, tempName, {}), call)
        .catch(ignore(isAlreadyExists));
      await ctx.client.patch(
        Secret,
        tempName,
        namespace,
        { metadata: { annotations: { [TEMPORARY_CLUSTER_ID_ANNOTATION]: null } } },
        "merge",
        call,
      );
      await markClaim({
        [INIT_STARTED_ANNOTATION]: new Date().toISOString(),
        [RESTORE_ANNOTATION]: "pending",
      });
      return withPod0(rc, undefined, async (v) => {
        const { written } = await rc.keys.whileInit(
          cluster,
          async () => {
            const init = await v.init(1, 1);
            return { "root-token": init.root_token, "unseal-key-0": init.keys_base64[0] ?? "" };
          },
          { name: tempName, make: (d) => restoreSecret(cluster, tempName, d) },
        );
        await Promise.race([written, new Promise<void>((r) => setTimeout(r, rc.keys.stepWaitMs).unref())]);
        return DONE;
      });
    }
    case "UnsealTemporary":
      return withPod0(rc, undefined, async (v) => {
        const st = await v.unsealWith(m.temporaryKeys, call);
        return st.sealed
          ? {
              done: false,
              reason: "RestoreUnsealIncomplete",
              message: `${pod0} is still sealed after the temporary keys`,
            }
          : DONE;
      });
    case "MakeToken":
      return withPod0(rc, m.temporaryRoot, async (v) => {
        const health = await v.health(call);
        if (!health.cluster_id) throw new VaultError("/v1/sys/health", 0, [`${pod0} answered no cluster_id`]);
        await ctx.client.patch(
          Secret,
          temporaryKeysSecretName(cluster),
          namespace,
          { metadata: { annotations: { [TEMPORARY_CLUSTER_ID_ANNOTATION]: health.cluster_id } } },
          "merge",
          call,
        );
        await v.writePolicy(RESTORE_POLICY_NAME, RESTORE_POLICY, call);
        const token = await v.createLimitedToken(
          {
            policies: [RESTORE_POLICY_NAME],
            ttl: `${RESTORE_DEADLINE_SECONDS}s`,
            numUses: RESTORE_BACKOFF_LIMIT + 1,
            displayName: "vault-restore",
          },
          call,
        );
        const secret = restoreSecret(cluster, restoreTokenSecretName(cluster), { token });
        await ctx.client.create(Secret, secret, call).catch(async (err: unknown) => {
          if (!isAlreadyExists(err)) throw err;
          await ctx.client.patch(
            Secret,
            restoreTokenSecretName(cluster),
            namespace,
            { data: secret.data },
            "merge",
            call,
          );
        });
        return DONE;
      });
    case "CreateJob": {
      if (m.from === undefined) {
        return {
          done: false,
          degraded: true,
          reason: "RestoreSnapshotUnreadable",
          message: "no source to restore from",
        };
      }
      // The mark first: from here on the first server is unsealed with the snapshot's keys first.
      await markClaim({ [RESTORE_ANNOTATION]: "forced" });
      const job = restoreJob({ cluster, from: m.from, operatorImage: rc.operatorImage });
      await ctx.client.create(Job, job, call).catch(ignore(isAlreadyExists));
      return DONE;
    }
    case "UnsealRestored":
      return withPod0(rc, undefined, async (v) => {
        const tried = await v.unsealWith(rc.obs.keys.unsealKeys, call).catch((err: unknown) => {
          if (err instanceof VaultError && err.status >= 400 && err.status < 500) return err;
          throw err;
        });
        if (!(tried instanceof VaultError) && !tried.sealed) return DONE;
        // Not the snapshot's keys: a first server restarted before the snapshot was applied opens with the temporary ones.
        await v.resetUnseal(call);
        const temp = await v.unsealWith(m.temporaryKeys, call).catch(() => undefined);
        if (temp !== undefined && !temp.sealed) {
          return {
            done: false,
            reason: "RestoreNotApplied",
            message: `${pod0} opened with the temporary keys: the snapshot was not applied; the restore goes on`,
          };
        }
        await v.resetUnseal(call).catch(() => undefined);
        // Vault keeps the temporary Vault's seal configuration (one share) in memory after snapshot-force: the
        // snapshot's keys are refused until the server restarts and reads the restored one (snapshot.real.test.ts).
        // Restarted once per restore Job; the claim, and the data on it, stay.
        if (m.restartedFor !== m.restartFor) {
          await markClaim({ [RESTARTED_ANNOTATION]: m.restartFor });
          await ctx.client.delete(Pod, pod0, namespace, call).catch(ignore(isNotFound));
          return {
            done: false,
            reason: "RestoreRestarting",
            message: `restarting ${pod0} on its data: after a restore Vault keeps the temporary seal configuration in memory and refuses the snapshot's keys until it reads the restored one`,
          };
        }
        const why =
          tried instanceof VaultError
            ? tried.message
            : `still sealed after ${tried.progress} of ${tried.t} keys`;
        return {
          done: false,
          degraded: true,
          reason: "RestoreKeysMismatch",
          message: `the keys of Secret ${restoreKeysSource(cluster)} (spec.restore.unsealKeysSecret) do not open the restored data on ${pod0} (${why}): they must be the unseal keys of the cluster the snapshot was taken from. Both key sets are kept and nothing is deleted; put the right keys in the Secret and the unseal is tried again`,
        };
      });
    case "Confirm": {
      await markClaim({ [RESTORE_ANNOTATION]: "done" });
      const status = {
        restore: {
          source: restoreSourceName(cluster.spec.restore ?? {}),
          completionTime: new Date().toISOString(),
          clusterID: step.clusterID,
        },
      };
      await ctx.client.patchStatus(
        VaultClusterKind,
        clusterRef(cluster).name,
        namespace,
        { status },
        "merge",
        call,
      );
      // Only now: the temporary keys, the token and the Job.
      await ctx.client
        .delete(Job, restoreJobName(cluster), namespace, { ...call, propagationPolicy: "Background" })
        .catch(ignore(isNotFound));
      await ctx.client
        .delete(Secret, restoreTokenSecretName(cluster), namespace, call)
        .catch(ignore(isNotFound));
      await ctx.client
        .delete(Secret, temporaryKeysSecretName(cluster), namespace, call)
        .catch(ignore(isNotFound));
      return DONE;
    }
    default:
      return DONE;
  }
}

/**
 * One reconcile of a restoring cluster: plan one restore step, act, write the cluster's status. Resolves with the
 * Result to return, or undefined when the restore is done (the controller plans as usual).
 */
export async function reconcileRestore(
  ctx: ReconcileContext,
  rc: RestoreContext,
): Promise<Result | undefined> {
  const { cluster, obs } = rc;
  const { namespace, name } = clusterRef(cluster);
  const material = await observeRestore(ctx, rc);
  const step = planRestore(material.observed);
  if (step.type === "Done") return undefined;
  let shown: Step;
  let requeueAfter = 3_000;
  if (step.type === "Refuse") {
    shown = { type: "Degraded", reason: step.reason, message: step.message };
    requeueAfter = 30_000;
  } else if (step.type === "Wait") {
    shown = {
      type: "Wait",
      reason: step.reason.startsWith("Restore") ? step.reason : `Restore${step.reason}`,
      message: step.message,
    };
  } else {
    let acted: Acted;
    try {
      acted = await actRestore(ctx, rc, step, material);
    } catch (err) {
      if (!(err instanceof VaultError)) throw err;
      acted = {
        done: false,
        reason: `Restore${step.type}Failed`,
        message: `${step.message}: Vault answered: ${err.message}`,
      };
    }
    if (acted.done) {
      ctx.log.info({ step: step.type }, step.message);
      ctx.recorder.event(
        cluster,
        "Normal",
        step.type === "Confirm" ? "Restored" : `Restore${step.type}`,
        "Restore",
        step.message,
      );
      if (step.type === "Confirm") return { requeueAfter: 1_000 };
      shown = { type: "Wait", reason: `Restore${step.type}`, message: step.message };
      requeueAfter = 1_000;
    } else if (acted.degraded === true) {
      shown = { type: "Degraded", reason: acted.reason, message: acted.message };
      requeueAfter = 30_000;
    } else {
      shown = {
        type: "Wait",
        reason: acted.reason.startsWith("Restore") ? acted.reason : `Restore${acted.reason}`,
        message: acted.message,
      };
    }
  }
  if (
    shown.type === "Degraded" &&
    cluster.status?.conditions?.find((c) => c.type === "Degraded")?.reason !== shown.reason
  ) {
    ctx.log.warn({ reason: shown.reason }, shown.message);
    ctx.recorder.event(cluster, "Warning", shown.reason, "Restore", shown.message);
  }
  // The temporary Vault's cluster_id is never recorded as the cluster's.
  const { clusterID: _temporary, ...withoutID } = obs;
  const next = {
    ...statusOf(cluster, withoutID, shown, rc.tlsStatus, new Date()),
    restore: cluster.status?.restore ?? { source: restoreSourceName(cluster.spec.restore ?? {}) },
  };
  const patch = statusMergePatch(cluster.status, next);
  if (patch !== undefined) {
    await ctx.client.patchStatus(VaultClusterKind, name, namespace, patch, "merge", { signal: ctx.signal });
  }
  return { requeueAfter };
}
