// Observation: what the cache says about a cluster's pods, claims and keys Secret, and what Vault says about
// each pod (/v1/sys/health), the raft configuration and the operator token (through the active pod).
import {
  type Cache,
  type Client,
  claimBelongsTo,
  isNotFound,
  PersistentVolumeClaim,
  type PersistentVolumeClaimObject,
  Pod,
  type PodObject,
  Secret,
  type SecretObject,
  secretData,
} from "@capstan/core";
import type { VaultAutopilotStatus, VaultCluster } from "../api/vault-cluster.ts";
import {
  CLAIM_UID_LABEL,
  claimName,
  clusterRef,
  keysSecretName,
  MANAGED_BY,
  podHost,
  podName,
  selectorLabels,
} from "../desired/names.ts";
import {
  CLUSTER_ID_ANNOTATION,
  INIT_STARTED_ANNOTATION,
  mountedTlsSecret,
  POD_TEMPLATE_HASH_ANNOTATION,
  type PodSettings,
  podTemplateHash,
} from "../desired/objects.ts";
import { podRegistered, podRegisters } from "../desired/service-registration.ts";
import type { ObservedAutopilot } from "../plan/autopilot.ts";
import {
  type Observed,
  type ObservedKeys,
  type ObservedPeer,
  type ObservedPod,
  type ObservedToken,
  ordinalOf,
  type PodVault,
} from "../plan/plan.ts";
import { CONTAINER_FAILURE_REASONS, type ContainerFailure } from "../plan/stalled.ts";
import type { SealProgress } from "../plan/unseal.ts";
import {
  certificateRejected,
  type VaultAutopilotState,
  VaultClient,
  VaultError,
  type VaultHealth,
} from "../vault/vault-client.ts";

/** Timeout of each Vault call made while observing: a dead pod must not stall the reconcile. */
export const OBSERVE_TIMEOUT_MS = 3_000;

/** How to reach one pod's Vault API. */
export interface VaultTarget {
  /** "https://<pod IP>:8200". */
  address: string;
  /** The pod's DNS name, which its certificate carries. */
  servername: string;
  /** The cluster CA (PEM). */
  ca: string;
  token?: string;
  timeoutMs?: number;
}

/** Creates a Vault client for one pod (tests replace it). */
export type VaultClientFactory = (target: VaultTarget) => VaultClient;

/** The default {@link VaultClientFactory}. */
export const defaultVaultClient: VaultClientFactory = (t) =>
  new VaultClient({
    address: t.address,
    ca: t.ca,
    servername: t.servername,
    timeoutMs: t.timeoutMs ?? OBSERVE_TIMEOUT_MS,
    ...(t.token === undefined ? {} : { token: t.token }),
  });

/** The keys Secret's contents. */
export interface KeysMaterial {
  unsealKeys: string[];
  rootToken?: string;
  operatorToken?: string;
}

/** Everything one reconcile knows about a cluster. */
export interface Observation {
  observed: Observed;
  /** Pods by name, including terminating ones. */
  pods: Map<string, PodObject>;
  claims: Map<string, PersistentVolumeClaimObject>;
  /** Health of each pod that answered. */
  health: Map<string, VaultHealth>;
  keysSecret?: SecretObject;
  keys: KeysMaterial;
  /** The active pod's name, when one answered as active. */
  active?: string;
  /** The cluster_id the pods answer with (the active's, else any). */
  clusterID?: string;
  /** Autopilot's health, when the active pod answered it (sys/storage/raft/autopilot/state). */
  autopilot?: VaultAutopilotStatus;
}

/** Autopilot's state as status.autopilot shows it: no moving values (last contact, indexes, times). */
export function autopilotStatus(state: VaultAutopilotState): VaultAutopilotStatus {
  const voters =
    state.voters ??
    Object.values(state.servers ?? {})
      .filter((s) => s.status === "voter" || s.status === "leader")
      .map((s) => s.id);
  return {
    healthy: state.healthy,
    failureTolerance: state.failure_tolerance,
    ...(state.optimistic_failure_tolerance === undefined
      ? {}
      : { optimisticFailureTolerance: state.optimistic_failure_tolerance }),
    voters: [...voters].sort(),
    ...(state.leader ? { leader: state.leader } : {}),
  };
}

/** A call's answer, or the error it failed with (a missing method of a scripted client counts as one). */
function settle<T>(call: () => Promise<T>): Promise<T | Error> {
  return Promise.resolve()
    .then(call)
    .then(
      (v) => v,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
}

/** The keys Secret as the planner and the steps need it. */
export function readKeys(secret: SecretObject | undefined): {
  observed?: ObservedKeys;
  material: KeysMaterial;
} {
  if (secret === undefined) return { material: { unsealKeys: [] } };
  const data = secretData(secret);
  const unsealKeys: string[] = [];
  for (let i = 0; data[`unseal-key-${i}`] !== undefined; i++) unsealKeys.push(data[`unseal-key-${i}`] ?? "");
  const clusterID = secret.metadata.annotations?.[CLUSTER_ID_ANNOTATION];
  const rootToken = data["root-token"] || undefined;
  const operatorToken = data["operator-token"] || undefined;
  return {
    observed: {
      unsealKeys: unsealKeys.length,
      rootToken: rootToken !== undefined,
      operatorToken: operatorToken !== undefined,
      ...(clusterID === undefined ? {} : { clusterID }),
    },
    material: {
      unsealKeys,
      ...(rootToken === undefined ? {} : { rootToken }),
      ...(operatorToken === undefined ? {} : { operatorToken }),
    },
  };
}

const IMAGE_PULL_REASONS = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
]);

/** True when the pod's Ready condition is True. */
export function podReady(pod: PodObject): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
}

/** What the kubelet says about a vault container it cannot keep running, or undefined. */
export function containerFailure(pod: PodObject): ContainerFailure | undefined {
  const container = pod.status?.containerStatuses?.find((c) => c.name === "vault");
  const waiting = container?.state?.waiting;
  if (
    container === undefined ||
    waiting?.reason === undefined ||
    !CONTAINER_FAILURE_REASONS.has(waiting.reason)
  ) {
    return undefined;
  }
  const last = container.lastState?.terminated;
  return {
    reason: waiting.reason,
    ...(waiting.message ? { message: waiting.message } : {}),
    restarts: container.restartCount ?? 0,
    ...(last === undefined
      ? {}
      : {
          lastExit: {
            exitCode: last.exitCode,
            ...(last.reason ? { reason: last.reason } : {}),
            ...(last.message ? { message: last.message } : {}),
          },
        }),
  };
}

/** The planner's view of a pod: Kubernetes' part, with `vault` (and `seal`, for a sealed pod) from Vault. */
export function observedPod(
  cluster: VaultCluster,
  pod: PodObject,
  templateHash: string,
  vault: PodVault,
  seal?: SealProgress,
): ObservedPod | undefined {
  const name = pod.metadata.name ?? "";
  const ordinal = ordinalOf(clusterRef(cluster).name, name);
  if (ordinal === undefined) return undefined;
  const container = pod.status?.containerStatuses?.find((c) => c.name === "vault");
  const image = pod.spec?.containers.find((c) => c.name === "vault")?.image ?? "";
  const waiting = container?.state?.waiting;
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  const unschedulableSince =
    scheduled?.status === "False" && scheduled.reason === "Unschedulable" && scheduled.lastTransitionTime
      ? new Date(scheduled.lastTransitionTime)
      : undefined;
  const pendingSince =
    (pod.status?.phase ?? "Pending") === "Pending" && pod.metadata.creationTimestamp
      ? new Date(pod.metadata.creationTimestamp)
      : undefined;
  const failure = containerFailure(pod);
  const tlsSecret = mountedTlsSecret(pod);
  const readyCondition = pod.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
  const readySince = readyCondition?.lastTransitionTime
    ? new Date(readyCondition.lastTransitionTime)
    : undefined;
  return {
    name,
    ordinal,
    ready: podReady(pod),
    ...(readySince === undefined ? {} : { readySince }),
    image,
    ...(container?.image ? { runningImage: container.image } : {}),
    vault,
    ...(tlsSecret === undefined ? {} : { tlsSecret }),
    ...(pod.metadata.annotations?.[POD_TEMPLATE_HASH_ANNOTATION] !== templateHash
      ? { templateOutdated: true }
      : {}),
    ...(pod.metadata.deletionTimestamp ? { terminatingSince: new Date(pod.metadata.deletionTimestamp) } : {}),
    ...(unschedulableSince === undefined ? {} : { unschedulableSince }),
    ...(pendingSince === undefined ? {} : { pendingSince }),
    ...(waiting?.reason !== undefined && IMAGE_PULL_REASONS.has(waiting.reason)
      ? { imagePullError: { image, reason: waiting.reason } }
      : {}),
    ...(failure === undefined ? {} : { containerFailure: failure }),
    ...(seal === undefined ? {} : { seal }),
    ...(podRegisters(pod) ? { registers: true } : {}),
    ...(podRegistered(pod) ? { registered: true } : {}),
  };
}

/** The storage each claim requests (spec.resources.requests.storage), by claim name. */
export function claimSizes(claims: Map<string, PersistentVolumeClaimObject>): Record<string, string> {
  return Object.fromEntries(
    [...claims].flatMap(([name, c]) => {
      const size = c.spec?.resources?.requests?.storage;
      return size === undefined ? [] : [[name, String(size)]];
    }),
  );
}

/** Inputs of {@link observe} besides the cluster. */
export interface ObserveInput {
  cache: Cache;
  /**
   * Reads the keys Secret when the cache lacks it: the cache holds only Secrets labelled managed-by, and a Secret
   * restored by hand from a backup may lack the label. Without it, only the cache is read.
   */
  client?: Client;
  settings: PodSettings;
  vaultClient: VaultClientFactory;
  /** The cluster CA, when the listener certificate is in place (else Vault is not asked). */
  ca?: string;
  tls: Observed["tls"];
  signal?: AbortSignal;
}

/** Reads the cluster's objects from the cache, then asks each pod's Vault about itself. */
export async function observe(cluster: VaultCluster, input: ObserveInput): Promise<Observation> {
  const { namespace } = clusterRef(cluster);
  const uid = cluster.metadata.uid;
  const mine = (o: PodObject) =>
    o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true;
  // A claim is ours when we control it (whenDeleted Delete) or when nothing does (Retain): also one kept from an
  // earlier VaultCluster of this name, whose raft data this one takes back. Never one another controller holds.
  const ours = (c: PersistentVolumeClaimObject) =>
    claimBelongsTo(cluster, c, CLAIM_UID_LABEL, { adoptRetained: true }) &&
    c.metadata.labels?.["app.kubernetes.io/managed-by"] === MANAGED_BY;
  const labels = selectorLabels(cluster);
  const pods = new Map<string, PodObject>();
  for (const pod of await input.cache.list(Pod, { namespace, labels })) {
    if (mine(pod) && pod.metadata.name !== undefined) pods.set(pod.metadata.name, pod);
  }
  const claims = new Map<string, PersistentVolumeClaimObject>();
  const claimsTerminating: string[] = [];
  for (const pvc of await input.cache.list(PersistentVolumeClaim, { namespace, labels })) {
    if (!ours(pvc) || pvc.metadata.name === undefined) continue;
    if (pvc.metadata.deletionTimestamp === undefined) claims.set(pvc.metadata.name, pvc);
    else claimsTerminating.push(pvc.metadata.name);
  }
  const started = claims.get(claimName(podName(cluster, 0)))?.metadata.annotations?.[INIT_STARTED_ANNOTATION];
  const keysSecret =
    (await input.cache.get(Secret, keysSecretName(cluster), namespace)) ??
    (await input.client
      ?.get(Secret, keysSecretName(cluster), namespace, input.signal)
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      }));
  const keys = readKeys(keysSecret);
  const call = input.signal === undefined ? {} : { signal: input.signal };

  // Ask every pod with an IP for its health, in parallel.
  const health = new Map<string, VaultHealth>();
  const vaultOf = new Map<string, PodVault>();
  const sealOf = new Map<string, SealProgress>();
  const target = (pod: PodObject, token?: string): VaultTarget | undefined =>
    pod.status?.podIP && input.ca !== undefined
      ? {
          address: `https://${pod.status.podIP}:8200`,
          servername: podHost(cluster, pod.metadata.name ?? ""),
          ca: input.ca,
          ...(token === undefined ? {} : { token }),
        }
      : undefined;
  await Promise.all(
    [...pods.values()].map(async (pod) => {
      const name = pod.metadata.name ?? "";
      const t = pod.metadata.deletionTimestamp === undefined ? target(pod) : undefined;
      if (t === undefined) {
        vaultOf.set(name, {
          reachable: false,
          error: input.ca === undefined ? "no TLS CA yet" : "the pod has no IP address yet",
        });
        return;
      }
      const client = input.vaultClient(t);
      try {
        const h = await client.health(call);
        health.set(name, h);
        if (h.initialized && h.sealed) {
          // Read-only: how many keys this node needs (an unseal that cannot succeed is then named, not retried).
          const st = await client.sealStatus(call).catch(() => undefined);
          if (st !== undefined) sealOf.set(name, { threshold: st.t, shares: st.n, progress: st.progress });
        }
        vaultOf.set(name, {
          reachable: true,
          initialized: h.initialized,
          sealed: h.sealed,
          standby: h.standby,
          version: h.version,
          ...(h.cluster_id ? { clusterID: h.cluster_id } : {}),
        });
      } catch (err) {
        input.signal?.throwIfAborted();
        vaultOf.set(name, {
          reachable: false,
          error: err instanceof Error ? err.message : String(err),
          ...(certificateRejected(err) ? { certificateRejected: true as const } : {}),
        });
      } finally {
        await client.close();
      }
    }),
  );

  const templateHash = podTemplateHash(cluster, input.settings);
  const observedPods = [...pods.values()]
    .map((p) =>
      observedPod(
        cluster,
        p,
        templateHash,
        vaultOf.get(p.metadata.name ?? "") ?? { reachable: false, error: "" },
        sealOf.get(p.metadata.name ?? ""),
      ),
    )
    .filter((p) => p !== undefined);
  const active = observedPods.find(
    (p) =>
      p.terminatingSince === undefined &&
      p.vault.reachable &&
      p.vault.initialized &&
      !p.vault.sealed &&
      !p.vault.standby,
  );

  // Through the active pod: the raft configuration, the operator token, autopilot's state and (when spec.autopilot
  // is set) its configuration.
  let raft: Observed["raft"] = { error: "no active pod" };
  let token: ObservedToken | undefined;
  let autopilot: VaultAutopilotStatus | undefined;
  let autopilotConfig: ObservedAutopilot | undefined;
  const activePod = active === undefined ? undefined : pods.get(active.name);
  const opToken = keys.material.operatorToken ?? keys.material.rootToken;
  if (activePod !== undefined && opToken !== undefined) {
    const t = target(activePod, opToken);
    if (t !== undefined) {
      const client = input.vaultClient(t);
      try {
        const [servers, self, state, config] = await Promise.all([
          settle(() => client.raftConfiguration(call)),
          keys.material.operatorToken === undefined ? undefined : settle(() => client.lookupSelf(call)),
          settle(() => client.autopilotState(call)),
          cluster.spec.autopilot === undefined
            ? undefined
            : settle(() => client.autopilotConfiguration(call)),
        ]);
        raft =
          servers instanceof Error
            ? { error: servers.message }
            : {
                servers: servers.map(
                  (s): ObservedPeer => ({
                    nodeID: s.node_id,
                    address: s.address,
                    voter: s.voter,
                    leader: s.leader,
                  }),
                ),
              };
        if (self instanceof VaultError && (self.status === 403 || self.status === 400)) {
          token = { valid: false, error: self.message };
        } else if (self !== undefined && !(self instanceof Error)) {
          token = { valid: true, ttlSeconds: self.ttl, periodSeconds: self.period ?? 0 };
        }
        if (!(state instanceof Error)) autopilot = autopilotStatus(state);
        if (config instanceof VaultError && config.status === 403) {
          autopilotConfig = { forbidden: true, error: config.message };
        } else if (config instanceof Error) {
          autopilotConfig = { error: config.message };
        } else if (config !== undefined) {
          autopilotConfig = { config };
        }
      } finally {
        await client.close();
      }
    }
  } else if (activePod !== undefined) {
    raft = { error: "no token in the keys Secret" };
  }

  const clusterID =
    (active?.vault.reachable ? active.vault.clusterID : undefined) ??
    [...health.values()].find((h) => h.initialized && h.cluster_id)?.cluster_id;
  const previousPeers = cluster.status?.raftPeers ?? [];
  const knownVoters = previousPeers.filter((p) => p.voter).length;
  return {
    pods,
    claims,
    health,
    keys: keys.material,
    ...(keysSecret === undefined ? {} : { keysSecret }),
    ...(active === undefined ? {} : { active: active.name }),
    ...(clusterID === undefined ? {} : { clusterID }),
    ...(autopilot === undefined ? {} : { autopilot }),
    observed: {
      pods: observedPods,
      claims: [...claims.keys()],
      ...(claimsTerminating.length === 0 ? {} : { claimsTerminating }),
      claimSizes: claimSizes(claims),
      namespace,
      ...(keys.observed === undefined ? {} : { keys: keys.observed }),
      ...(started === undefined ? {} : { initStartedAt: new Date(started) }),
      raft,
      ...(token === undefined ? {} : { token }),
      ...(cluster.status?.clusterID === undefined ? {} : { knownClusterID: cluster.status.clusterID }),
      ...(knownVoters > 0 ? { knownVoters } : {}),
      ...(cluster.status?.currentVersion === undefined
        ? {}
        : { knownVersion: cluster.status.currentVersion }),
      ...(autopilotConfig === undefined ? {} : { autopilot: autopilotConfig }),
      tls: input.tls,
    },
  };
}
