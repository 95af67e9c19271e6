// Performs the planner's one step against the API server and Vault. Each step is safe to repeat: the next
// reconcile re-observes and plans again, so an interrupted step is finished or refused (never repeated blindly:
// init is guarded by the marker the planner reads).
import {
  type Client,
  isAlreadyExists,
  isApiError,
  isNotFound,
  PersistentVolumeClaim,
  Pod,
  Secret,
} from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { claimName, clusterRef, keysSecretName, podApiAddr, podHost } from "../desired/names.ts";
import {
  base64Values,
  CERTIFICATE_ANNOTATION,
  dataClaim,
  INIT_STARTED_ANNOTATION,
  keysSecret,
  type PodSettings,
  vaultPod,
} from "../desired/objects.ts";
import { autopilotForbiddenMessage } from "../plan/autopilot.ts";
import { type Step, vaultImage } from "../plan/plan.ts";
import { SNAPSHOT_POLICY, SNAPSHOT_POLICY_NAME, SNAPSHOT_ROLE, SNAPSHOT_ROLE_BODY } from "../vault/policy.ts";
import {
  OPERATOR_POLICY,
  OPERATOR_POLICY_NAME,
  OPERATOR_TOKEN_PERIOD,
  type VaultClient,
  VaultError,
} from "../vault/vault-client.ts";
import type { KeysKeeper } from "./keys-keeper.ts";
import type { Observation, VaultClientFactory } from "./observe.ts";

/** Timeout of the calls of a step (PUT /v1/sys/init has none: see VaultClient.init). */
export const STEP_TIMEOUT_MS = 15_000;

/**
 * What a step did: `done` when it changed something, else why it waits; `degraded` when only a human can make it
 * go on (reported as the Degraded condition, not as progress).
 */
export type ActResult = { done: true } | Blocked;
/** A step that could not go on. */
export type Blocked = { done: false; reason: string; message: string; degraded?: boolean };

const DONE: ActResult = { done: true };

/** Everything a step needs. */
export interface ActContext {
  client: Client;
  cluster: VaultCluster;
  obs: Observation;
  settings: PodSettings;
  vaultClient: VaultClientFactory;
  /** Holds an init's keys until they are in their Secret, whatever happens to the API server or the Lease. */
  keys: KeysKeeper;
  /** The cluster CA (PEM). */
  ca: string;
  /** The fingerprint of the listener certificate, stamped on a new pod (CERTIFICATE_ANNOTATION). */
  certificate?: string;
  now: Date;
  /** Counts a successful unseal (capstan_vault_unseal_total). */
  onUnseal?: () => void;
  signal?: AbortSignal;
}

/** Performs `step`. Steps that only report (Wait, InSync, Degraded) do nothing. */
export async function act(step: Step, ctx: ActContext): Promise<ActResult> {
  const { namespace } = clusterRef(ctx.cluster);
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  switch (step.type) {
    case "CreatePod": {
      const old = ctx.obs.pods.get(step.pod);
      if (old !== undefined) {
        return {
          done: false,
          reason: "PodTerminating",
          message: `waiting for the old pod ${step.pod} to go away`,
        };
      }
      if (!ctx.obs.claims.has(claimName(step.pod))) {
        await ctx.client
          .create(PersistentVolumeClaim, dataClaim(ctx.cluster, step.pod), call)
          .catch(ignore(isAlreadyExists));
      }
      const pod = vaultPod(ctx.cluster, step.pod, ctx.settings);
      if (ctx.certificate !== undefined) {
        pod.metadata.annotations = { ...pod.metadata.annotations, [CERTIFICATE_ANNOTATION]: ctx.certificate };
      }
      await ctx.client.create(Pod, pod, call).catch(ignore(isAlreadyExists));
      return DONE;
    }
    case "InitVault":
      return initVault(ctx, step.pod);
    case "Unseal":
      return withVault(ctx, step.pod, undefined, async (v) => {
        const status = await v.unsealWith(ctx.obs.keys.unsealKeys, call).catch((err: unknown) => {
          // A node that just joined answers so until it has fetched the leader's challenge: not a failure.
          if (err instanceof VaultError && err.errors.some((e) => e.includes("invalid key size 0")))
            return undefined;
          throw err;
        });
        if (status === undefined) {
          return {
            done: false,
            reason: "JoinInProgress",
            message: `${step.pod} is still joining the raft cluster`,
          };
        }
        if (status.sealed) {
          return {
            done: false,
            reason: "UnsealIncomplete",
            message: `${step.pod} is still sealed after ${status.progress} of ${status.t} keys: the keys Secret holds ${ctx.obs.keys.unsealKeys.length} keys`,
          };
        }
        ctx.onUnseal?.();
        return DONE;
      });
    case "JoinRaft":
      return withVault(ctx, step.pod, undefined, async (v) => {
        await v.raftJoin(
          {
            apiAddr: podApiAddr(ctx.cluster, step.leader),
            caCert: ctx.ca,
            tlsServerName: podHost(ctx.cluster, step.leader),
          },
          call,
        );
        // The joined node needs the keys to answer the leader's challenge: try to unseal it now. Right after the
        // join Vault may not have the challenge yet (HTTP 500 "invalid key size 0"): the Unseal step retries.
        const status = await v.unsealWith(ctx.obs.keys.unsealKeys, call).catch((err: unknown) => {
          if (err instanceof VaultError) return undefined;
          throw err;
        });
        if (status !== undefined && !status.sealed) ctx.onUnseal?.();
        return DONE;
      });
    case "RemovePeer":
      return withVault(ctx, step.via, operatorToken(ctx), async (v) => {
        await v.raftRemovePeer(step.nodeID, call);
        return DONE;
      });
    case "DeletePod":
      await ctx.client.delete(Pod, step.pod, namespace, call).catch(ignore(isNotFound));
      if (step.deleteClaim) {
        await ctx.client
          .delete(PersistentVolumeClaim, claimName(step.pod), namespace, call)
          .catch(ignore(isNotFound));
      }
      return DONE;
    case "StepDown":
      return withVault(ctx, step.pod, operatorToken(ctx), async (v) => {
        await v.stepDown(call);
        return DONE;
      });
    case "UpgradePod":
      return upgradePod(ctx, step.pod);
    case "BootstrapToken":
      return withVault(ctx, step.pod, ctx.obs.keys.rootToken, async (v) => {
        await v.writePolicy(OPERATOR_POLICY_NAME, OPERATOR_POLICY, call);
        // What VaultSnapshot Jobs' tokens are made from: a policy that reads snapshots, a role the operator may
        // create orphan tokens against (its own policy allows that role and nothing else of auth/token).
        await v.writePolicy(SNAPSHOT_POLICY_NAME, SNAPSHOT_POLICY, call);
        await v.writeTokenRole(SNAPSHOT_ROLE, { ...SNAPSHOT_ROLE_BODY }, call);
        const token = await v.createOrphanToken(
          {
            policies: [OPERATOR_POLICY_NAME],
            period: OPERATOR_TOKEN_PERIOD,
            displayName: "capstan-vault-operator",
          },
          call,
        );
        await writeKeys(ctx, { "operator-token": token });
        return DONE;
      });
    case "RevokeRootToken":
      return withVault(ctx, step.pod, ctx.obs.keys.rootToken, async (v) => {
        await v.revokeSelf(call).catch((err: unknown) => {
          // Already revoked (an interrupted step): only the Secret's copy is left to drop.
          if (!(err instanceof VaultError && err.status === 403)) throw err;
        });
        await ctx.client.patch(
          Secret,
          keysSecretName(ctx.cluster),
          namespace,
          { data: { "root-token": null } },
          "merge",
          call,
        );
        return DONE;
      });
    case "RegenerateRootToken":
      return withVault(ctx, step.pod, undefined, async (v) => {
        const root = await v.generateRoot(ctx.obs.keys.unsealKeys, call);
        // Kept at once: the next steps make the operator token with it, then revoke it (unless keepRootToken).
        await writeKeys(ctx, { "root-token": root }, 10);
        return DONE;
      });
    case "ConfigureAutopilot":
      return withVault(ctx, step.pod, operatorToken(ctx), async (v) => {
        try {
          await v.setAutopilotConfiguration(step.config, call);
        } catch (err) {
          // A policy that lets the operator read but not write the configuration: reported, never retried as progress.
          if (!(err instanceof VaultError && err.status === 403)) throw err;
          return {
            done: false,
            degraded: true,
            reason: "AutopilotForbidden",
            message: autopilotForbiddenMessage(err.message),
          };
        }
        return DONE;
      });
    case "RenewToken":
      return withVault(ctx, step.pod, operatorToken(ctx), async (v) => {
        await v.renewSelf(call);
        return DONE;
      });
    default:
      return { done: false, reason: step.type, message: step.message };
  }
}

function operatorToken(ctx: ActContext): string | undefined {
  return ctx.obs.keys.operatorToken ?? ctx.obs.keys.rootToken;
}

/** Runs `fn` with a client for `pod` (by its IP, verified as its DNS name); waits when the pod has no IP. */
async function withVault(
  ctx: ActContext,
  pod: string,
  token: string | undefined,
  fn: (v: VaultClient) => Promise<ActResult>,
  timeoutMs = STEP_TIMEOUT_MS,
): Promise<ActResult> {
  const ip = ctx.obs.pods.get(pod)?.status?.podIP;
  if (ip === undefined) return { done: false, reason: "PodNoIP", message: `${pod} has no IP address yet` };
  const v = ctx.vaultClient({
    address: `https://${ip}:8200`,
    servername: podHost(ctx.cluster, pod),
    ca: ctx.ca,
    timeoutMs,
    ...(token === undefined ? {} : { token }),
  });
  try {
    return await fn(v);
  } finally {
    await v.close();
  }
}

/**
 * Init, once:
 *  1. the keys Secret is proven writable first (made empty when absent, then a dry-run write of data shaped like
 *     the keys): RBAC, a quota or an admission policy that would refuse the keys refuses them before Vault makes
 *     any (Degraded KeysSecretNotWritable, nothing sent to Vault);
 *  2. the marker on pod 0's data claim, so a lost answer is recognized and never followed by a second init;
 *  3. PUT /v1/sys/init, never aborted: neither the reconcile's signal nor a deadline ends it (its answer is the
 *     only copy of the keys);
 *  4. the keys and root token go to the KeysKeeper, which writes them through a client no Lease aborts and retries
 *     until written. The step waits stepWaitMs (15 s) for that; past it, the step is done and the keeper goes on
 *     (the controller reports KeysNotStored while it does). The process waits for the keeper before it exits (main.ts); a process killed before the write leaves
 *     the marker without keys: InitResponseLost, never a second init.
 */
async function initVault(ctx: ActContext, pod: string): Promise<ActResult> {
  const { namespace } = clusterRef(ctx.cluster);
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  const refused = await proveKeysWritable(ctx);
  if (refused !== undefined) return refused;
  const marker = { [INIT_STARTED_ANNOTATION]: ctx.now.toISOString() };
  await ctx.client.patch(
    PersistentVolumeClaim,
    claimName(pod),
    namespace,
    { metadata: { annotations: marker } },
    "merge",
    call,
  );
  const { shares, threshold } = ctx.cluster.spec.unseal;
  return withVault(ctx, pod, undefined, async (v) => {
    const { written } = await ctx.keys.whileInit(ctx.cluster, async () => {
      const init = await v.init(shares, threshold);
      const data: Record<string, string> = { "root-token": init.root_token };
      init.keys_base64.forEach((k, i) => {
        data[`unseal-key-${i}`] = k;
      });
      return data;
    });
    // Done either way (Vault is initialized): while the keeper still writes, the controller reports KeysNotStored.
    await Promise.race([
      written,
      new Promise<void>((resolve) => setTimeout(resolve, ctx.keys.stepWaitMs).unref()),
    ]);
    return DONE;
  });
}

/** The Degraded result while an init's keys are only in the operator's memory. */
export function keysNotStored(ctx: Pick<ActContext, "cluster" | "keys">): Blocked {
  const { namespace, name } = clusterRef(ctx.cluster);
  const p = ctx.keys.pending(namespace, name);
  const why = p?.lastError === undefined ? "" : ` (last error: ${p.lastError})`;
  return {
    done: false,
    degraded: true,
    reason: "KeysNotStored",
    message: `Vault is initialized; its unseal keys are held in the operator's memory until Secret ${keysSecretName(ctx.cluster)} takes them${why}: the operator retries until it does; do not restart it meanwhile`,
  };
}

/**
 * Step 1 of init: makes the keys Secret when absent and dry-runs a write of key-shaped data into it. A refusal
 * (400, 403, 422: RBAC, a quota, an admission webhook or policy) is returned as Degraded; a transient failure
 * (5xx, no answer) is thrown, so the reconcile is retried with backoff.
 */
async function proveKeysWritable(ctx: ActContext): Promise<ActResult | undefined> {
  const { namespace } = clusterRef(ctx.cluster);
  const secret = keysSecretName(ctx.cluster);
  const call = ctx.signal === undefined ? {} : { signal: ctx.signal };
  const refusal = (what: string) => (err: unknown) => {
    if (!isApiError(err) || ![400, 403, 422].includes(err.code)) throw err;
    return {
      done: false as const,
      degraded: true,
      reason: "KeysSecretNotWritable",
      message: `Vault is not initialized: the operator could not ${what} Secret ${secret} that will hold the unseal keys (${err.message}); fix the operator's RBAC, the namespace's ResourceQuota or the admission policy that refused it`,
    };
  };
  if (ctx.obs.keysSecret === undefined) {
    const made = await ctx.client
      .create(Secret, keysSecret(ctx.cluster, {}, {}), call)
      .then(() => undefined, ignore(isAlreadyExists))
      .catch(refusal("create"));
    if (made !== undefined) return made;
  }
  return ctx.client
    .patch(Secret, secret, namespace, { data: base64Values(keyShapedData(ctx.cluster)) }, "merge", {
      ...call,
      dryRun: true,
    })
    .then(() => undefined, refusal("write"));
}

/** Data of the size and keys init's answer will have (Vault's keys are 32 bytes; tokens are under 100 characters). */
function keyShapedData(cluster: VaultCluster): Record<string, string> {
  const data: Record<string, string> = { "root-token": `hvs.${"x".repeat(96)}` };
  for (let i = 0; i < cluster.spec.unseal.shares; i++) data[`unseal-key-${i}`] = "A".repeat(44);
  return data;
}

/** Merges `data` into the keys Secret, retrying (the init answer exists only here). */
async function writeKeys(ctx: ActContext, data: Record<string, string>, attempts = 3): Promise<void> {
  const { namespace } = clusterRef(ctx.cluster);
  for (let i = 1; ; i++) {
    try {
      await ctx.client.patch(
        Secret,
        keysSecretName(ctx.cluster),
        namespace,
        { data: base64Values(data) },
        "merge",
      );
      return;
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500 * i));
    }
  }
}

/** Moves one pod to spec's image in place: the kubelet restarts vault on its data (it comes back sealed). */
async function upgradePod(ctx: ActContext, name: string): Promise<ActResult> {
  const pod = ctx.obs.pods.get(name);
  const image = vaultImage(ctx.cluster.spec);
  if (pod === undefined) return { done: false, reason: "PodMissing", message: `${name} has no pod` };
  const index = pod.spec?.containers.findIndex((c) => c.name === "vault") ?? -1;
  if (index < 0) throw new Error(`pod ${name} has no vault container`);
  if (pod.spec?.containers[index]?.image === image) {
    return { done: false, reason: "PodRestarting", message: `${name} is restarting on ${image}` };
  }
  await ctx.client.patch(
    Pod,
    name,
    clusterRef(ctx.cluster).namespace,
    [
      { op: "test", path: `/spec/containers/${index}/name`, value: "vault" },
      { op: "replace", path: `/spec/containers/${index}/image`, value: image },
    ],
    "json",
    ctx.signal === undefined ? {} : { signal: ctx.signal },
  );
  return DONE;
}

function ignore(test: (err: unknown) => boolean): (err: unknown) => undefined {
  return (err) => {
    if (!test(err)) throw err;
    return undefined;
  };
}
