// The VaultCluster controller: TLS and the fixed objects -> observe -> label pods -> plan one step -> act ->
// status, conditions, events and metrics.
import {
  annotatePods,
  applyClaimRetention,
  type CacheSelector,
  ConfigMap,
  type Controller,
  controller,
  findCondition,
  generationChanged,
  isApiError,
  Job,
  managedBySelectors,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  type PodObject,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  Role,
  RoleBinding,
  requestFromLabel,
  Secret,
  Service,
  ServiceAccount,
  statusMergePatch,
  watch,
} from "@capstan/core";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { RECOVERY_FINALIZER, recoveryEnded, VaultRecoveryKind } from "../api/vault-recovery.ts";
import {
  CLAIM_UID_LABEL,
  clusterRef,
  keysSecretName,
  MANAGED_BY,
  POD_STATES,
  type PodState,
  STATE_LABEL,
  selectorLabels,
} from "../desired/names.ts";
import {
  activeService,
  CERTIFICATE_ANNOTATION,
  CLUSTER_ID_ANNOTATION,
  clientService,
  configMap,
  DEFAULT_RELOADER_IMAGE,
  internalService,
  mountedTlsSecret,
  type PodSettings,
  podDisruptionBudget,
} from "../desired/objects.ts";
import {
  chooseActiveSelector,
  liveActiveSelector,
  registrationPodNames,
  registrationRole,
  registrationRoleBinding,
  serviceAccount,
} from "../desired/service-registration.ts";
import { type PlanOptions, planNext, type Step } from "../plan/plan.ts";
import { judgeUnsealOutcome } from "../plan/unseal.ts";
import { VaultError } from "../vault/vault-client.ts";
import { act, keysNotStored } from "./act.ts";
import type { KeysKeeper } from "./keys-keeper.ts";
import type { VaultOperatorMetrics } from "./metrics.ts";
import { defaultVaultClient, type Observation, observe, type VaultClientFactory } from "./observe.ts";
import {
  activeRecovery,
  holdOthers,
  type RecoveryOutcome,
  reconcileRecovery,
  releaseRecoveries,
} from "./recovery.ts";
import { DEFAULT_OPERATOR_IMAGE, reconcileRestore, restoring } from "./restore.ts";
import { podState, statusOf } from "./status.ts";
import { ensureTls, servedTlsSecrets, TLS_SWITCHING, type TlsState, tlsSwitchStatus } from "./tls.ts";

/** When to look again (milliseconds). */
export const REQUEUE = {
  /** After a step: soon, to take the next one. */
  afterStep: 1_000,
  /** Waiting for something that is moving (a pod starting, a join finishing). */
  waiting: 3_000,
  /** In sync: Vault's state (which pod is active) is not in any Kubernetes object, so it is polled. */
  inSync: 15_000,
  /** Something only a human can fix (a spec edit triggers a reconcile at once). */
  degraded: 30_000,
} as const;

/** Only the objects the operator created (labelled managed-by) are cached, not every one in the cluster. */
export function vaultClusterCacheSelectors(): CacheSelector[] {
  return managedBySelectors(MANAGED_BY, [
    Pod,
    PersistentVolumeClaim,
    Service,
    PodDisruptionBudget,
    ConfigMap,
    Secret,
    ServiceAccount,
    Role,
    RoleBinding,
    Job,
  ]);
}

/** Options of {@link vaultClusterController}. */
export interface VaultClusterControllerOptions {
  metrics: VaultOperatorMetrics;
  /**
   * Holds an init's keys until they are in their Secret: one per process, with a client no Lease aborts
   * (main.ts makes it and waits for it before the process exits).
   */
  keys: KeysKeeper;
  /** Image of the certificate reloader sidecar (default busybox:1.37). */
  reloaderImage?: string;
  /** The operator's own image, whose Job steps a restore Job runs (spec.restore). */
  operatorImage?: string;
  /** Default 4: different clusters in parallel, one cluster never by two workers. */
  maxConcurrentReconciles?: number;
  /** Creates Vault clients (tests replace it). */
  vaultClient?: VaultClientFactory;
  plan?: PlanOptions;
}

/** The controller that reconciles VaultClusters. */
export function vaultClusterController(options: VaultClusterControllerOptions): Controller<VaultCluster> {
  return controller({
    name: "vaultcluster",
    for: VaultClusterKind,
    // The field manager of every object the operator applies (in users' managedFields: never renamed).
    fieldManager: "capstan-vault-operator",
    owns: [Pod, Service, PodDisruptionBudget, ConfigMap, ServiceAccount, Role, RoleBinding],
    // Claims kept when the cluster is deleted (storage.whenDeleted Retain) have no owner reference: their events
    // reach the cluster their instance label names (owned ones carry it too).
    watches: [
      watch(PersistentVolumeClaim, requestFromLabel("app.kubernetes.io/instance")),
      // A VaultRecovery is performed by its cluster's reconcile (one writer of the server pods).
      watch(VaultRecoveryKind, (r) => [{ namespace: r.metadata.namespace ?? "", name: r.spec.clusterName }]),
    ],
    predicates: [generationChanged()],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
    reconcile: (req, ctx) => reconcileVaultCluster(req, ctx, options),
  });
}

/** One reconcile of one VaultCluster. */
export async function reconcileVaultCluster(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: VaultClusterControllerOptions,
): Promise<Result | undefined> {
  const cluster = await ctx.cache.get(VaultClusterKind, req.name, req.namespace);
  if (cluster === undefined || cluster.metadata.deletionTimestamp !== undefined) {
    // Deleted: what it owned goes with it (owner references); the data claims (storage.whenDeleted Retain) and the
    // keys Secret (unseal.retainKeysOnDelete) stay unless they were owned.
    options.metrics.forget(req.namespace ?? "", req.name);
    // Nothing of it is left to give back or to finish: no VaultRecovery naming it is held by the recovery finalizer,
    // and one that never ran says why.
    await endOrphanRecoveries(ctx, req.namespace ?? "", req.name, cluster !== undefined);
    return undefined;
  }
  const { namespace, name } = clusterRef(cluster);
  const signal = ctx.signal;
  const now = new Date();
  let settings: PodSettings = { reloaderImage: options.reloaderImage ?? DEFAULT_RELOADER_IMAGE };
  const vaultClient = options.vaultClient ?? defaultVaultClient;
  const paused = cluster.spec.paused === true;

  // Paused: no action on Vault, its pods or its fixed objects; but the listener certificate is still renewed (a
  // renewal only writes its Secret; the reloader sidecar hands it to Vault) and Vault is still observed, so
  // status and the gauges behind the chart's alerts stay true.
  // The pods' registration objects refused (the operator's RBAC lags its version): pods are built as before.
  const refused = paused ? undefined : await applyFixedObjects(ctx, cluster);
  if (refused !== undefined) settings = { ...settings, serviceRegistration: false };
  // What the pods serve (the Secret each mounts): during a switch of spec.tls.secretName, the old CA is trusted too.
  const served = await servedTlsSecrets(ctx.cache, cluster);
  const tls: TlsState = await ensureTls(
    ctx.client,
    cluster,
    (n) => ctx.cache.get(Secret, n, namespace),
    now,
    signal,
    served,
  );
  for (const issued of tls.issued) {
    ctx.log.info({ reason: issued.reason }, issued.message);
    ctx.recorder.event(cluster, "Normal", issued.reason, "IssueCertificate", issued.message);
  }
  const tlsStatus = {
    ready: tls.tls.ready,
    message: tls.tls.ready
      ? `the listener certificate is in Secret ${cluster.spec.tls.secretName ?? `${name}-tls`}`
      : tls.tls.message,
    ...(tls.notAfter === undefined ? {} : { notAfter: tls.notAfter }),
    ...tlsSwitchStatus(tls),
  };
  // The start and the end of a switch of the certificate's source, once each (TLSReady's reason says which).
  const wasSwitching = findCondition(cluster.status?.conditions, "TLSReady")?.reason === TLS_SWITCHING;
  const switching = tlsStatus.reason === TLS_SWITCHING;
  if (switching ? !wasSwitching : wasSwitching && tls.tls.ready) {
    const [reason, message] = switching
      ? ["TLSSwitchStarted", tlsStatus.message]
      : [
          "TLSSwitchDone",
          `every pod serves the listener certificate of Secret ${cluster.spec.tls.secretName ?? `${name}-tls`}: only its CA is trusted now`,
        ];
    ctx.log.info({ reason }, message);
    ctx.recorder.event(cluster, "Normal", reason, "SwitchCertificate", message);
  }
  const obs = await observe(cluster, {
    cache: ctx.cache,
    client: ctx.client,
    settings,
    vaultClient,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    tls: tls.tls,
    ...(signal === undefined ? {} : { signal }),
  });
  if (refused !== undefined) obs.observed.registrationRefused = refused;
  if (!paused) {
    await labelPods(ctx, cluster, obs);
    // Each data claim as storage.whenDeleted says (Retain: no owner reference, so deleting the VaultCluster keeps
    // the raft data; Delete: owned): claims of an older operator, a changed policy, a claim kept from an earlier
    // VaultCluster of this name (its uid label takes this one's). No write when they match.
    const whenDeleted = cluster.spec.storage.whenDeleted ?? "Retain";
    for (const claim of await applyClaimRetention(
      ctx.client,
      cluster,
      VaultClusterKind,
      obs.claims.values(),
      whenDeleted,
      CLAIM_UID_LABEL,
      signal,
    ))
      ctx.log.info({ claim, whenDeleted }, "data claim set to storage.whenDeleted");
    // Each pod stamped with the certificate of the Secret it mounts: the kubelet refreshes the mounted Secret at once
    // after a renewal instead of at its next periodic sync (written once per certificate and pod).
    for (const [secret, fingerprint] of tls.fingerprints) {
      const mounting = [...obs.pods.values()].filter((p) => mountedTlsSecret(p) === secret);
      await annotatePods(ctx.client, mounting, CERTIFICATE_ANNOTATION, fingerprint);
    }
    // Not while restoring: the first server answers the temporary Vault's cluster_id until the snapshot is in.
    if (!restoring(cluster, obs)) await recordClusterID(ctx, cluster, obs);
    const voters =
      "servers" in obs.observed.raft ? obs.observed.raft.servers.filter((s) => s.voter).length : 0;
    const pdb = podDisruptionBudget(cluster, voters);
    await ctx.apply(PodDisruptionBudget, pdb, await ctx.cache.get(PodDisruptionBudget, name, namespace));
  }
  recordMetrics(options.metrics, cluster, obs);

  // Keys of an init still only in memory: nothing else is done (the planner would read the Secret without them
  // as a lost init answer) until the keeper has written them.
  const pendingKeys = options.keys.pending(namespace, name) !== undefined;

  // spec.restore under way: its reconcile plans and acts instead of the membership planner, until it is confirmed.
  if (!paused && !pendingKeys && tls.ca !== undefined && restoring(cluster, obs)) {
    const restored = await reconcileRestore(ctx, {
      cluster,
      obs,
      settings,
      vaultClient,
      keys: options.keys,
      ca: tls.ca,
      ...(tls.fingerprint === undefined ? {} : { certificate: tls.fingerprint }),
      operatorImage: options.operatorImage ?? DEFAULT_OPERATOR_IMAGE,
      tlsStatus,
    });
    if (restored !== undefined) return restored;
  }

  // A VaultRecovery under way: it plans and acts instead of the membership planner (which must not fight it), until
  // it hands the cluster back (Rejoin) for the cluster's own steps to make the other servers again and join them.
  // VaultRecoveries that ended without their finalizer released (the operator stopped between the two writes) are
  // released first. spec.paused holds a recovery back too.
  await releaseRecoveries(ctx, namespace, name);
  let recovered: RecoveryOutcome | undefined;
  const recovery = paused || pendingKeys ? undefined : await activeRecovery(cluster, ctx.cache);
  if (recovery !== undefined && tls.ca !== undefined) {
    await holdOthers(ctx, cluster, recovery);
    recovered = await reconcileRecovery(ctx, recovery, {
      cluster,
      obs,
      settings,
      vaultClient,
      keys: options.keys,
      metrics: options.metrics,
      ca: tls.ca,
      ...(tls.fingerprint === undefined ? {} : { certificate: tls.fingerprint }),
      tlsStatus,
    });
    if ("result" in recovered) return recovered.result;
  }

  const step: Step = pendingKeys
    ? toStep(keysNotStored({ cluster, keys: options.keys }))
    : planNext(name, cluster.spec, obs.observed, now, options.plan);
  let reported: Step = step;
  let requeueAfter = pendingKeys ? REQUEUE.waiting : requeueFor(step);
  if (isAction(step) && tls.ca !== undefined) {
    try {
      const result = await act(step, {
        client: ctx.client,
        cluster,
        obs,
        settings,
        vaultClient,
        keys: options.keys,
        ca: tls.ca,
        ...(tls.fingerprint === undefined ? {} : { certificate: tls.fingerprint }),
        now,
        onUnseal: () => options.metrics.countUnseal(namespace, name),
        ...(signal === undefined ? {} : { signal }),
      });
      if (result.done) {
        ctx.log.info({ step: step.type }, step.message);
        ctx.recorder.event(cluster, "Normal", step.type, step.type, step.message);
        options.metrics.countStep(namespace, name, step.type);
        if (options.keys.pending(namespace, name) !== undefined) {
          reported = toStep(keysNotStored({ cluster, keys: options.keys }));
          requeueAfter = REQUEUE.waiting;
        }
      } else {
        reported = toStep(result);
        requeueAfter = result.degraded ? REQUEUE.degraded : REQUEUE.waiting;
        const judged =
          step.type === "Unseal" && result.reason === "UnsealIncomplete"
            ? unsealJudged(cluster, obs, step.pod, { stillSealed: true, message: result.message })
            : undefined;
        if (judged !== undefined) {
          // Keys that cannot unseal: Degraded (one event when it starts, below), tried again at the Degraded pace.
          reported = judged;
          requeueAfter = REQUEUE.degraded;
        }
      }
    } catch (err) {
      if (!(err instanceof VaultError)) throw err;
      const judged =
        step.type === "Unseal"
          ? unsealJudged(cluster, obs, step.pod, { error: { status: err.status, errors: err.errors } })
          : undefined;
      // Vault refused or did not answer: not a bug, so no backoff storm; report it and look again shortly. Caught
      // here, not by an error policy: the reconcile goes on to write the status of what it just observed (and keys
      // Vault refuses are judged Degraded from it), and to end a recovery handed back.
      const message = `${step.message}: Vault answered: ${err.message}`;
      if (judged === undefined) {
        ctx.log.warn({ step: step.type, err: err.message }, "Vault step failed; will retry");
        ctx.recorder.event(cluster, "Warning", `${step.type}Failed`, step.type, message);
      }
      // Keys Vault refuses: Degraded (one event when it starts, below), retried at the Degraded pace.
      reported = judged ?? { type: "Wait", reason: `${step.type}Failed`, message };
      requeueAfter = judged === undefined ? REQUEUE.waiting : REQUEUE.degraded;
    }
  }
  if (reported.type === "Degraded") {
    const before = findCondition(cluster.status?.conditions, "Degraded");
    if (before?.status !== "True" || before.reason !== reported.reason) {
      ctx.log.warn({ reason: reported.reason }, reported.message);
      ctx.recorder.event(cluster, "Warning", reported.reason, "Reconcile", reported.message);
    }
  }

  const patch = statusMergePatch(cluster.status, statusOf(cluster, obs, reported, tlsStatus, new Date()));
  if (patch !== undefined) {
    await ctx.client.patchStatus(VaultClusterKind, req.name, req.namespace, patch, "merge", { signal });
  }
  // A recovery handed back: it ends once the cluster is in sync again (the other servers joined).
  if (recovered !== undefined && "finish" in recovered) await recovered.finish(reported);
  return requeueAfter === undefined ? undefined : { requeueAfter };
}

/**
 * The VaultCluster is gone (or being deleted): every VaultRecovery naming it has its finalizer released, and one not
 * ended is marked Failed (ClusterNotFound) when no such cluster exists.
 */
async function endOrphanRecoveries(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  exists: boolean,
): Promise<void> {
  for (const r of await ctx.cache.list(VaultRecoveryKind, { namespace })) {
    if (r.spec.clusterName !== name) continue;
    if (!exists && !recoveryEnded(r.status?.phase)) {
      const message = `VaultCluster ${name} does not exist in namespace ${namespace}: nothing to recover`;
      ctx.recorder.event(r, "Warning", "ClusterNotFound", "Recover", message);
      await ctx.client.patchStatus(
        VaultRecoveryKind,
        r.metadata.name ?? "",
        namespace,
        {
          status: {
            phase: "Failed",
            reason: "ClusterNotFound",
            message,
            completionTime: new Date().toISOString(),
          },
        },
        "merge",
        { signal: ctx.signal },
      );
    }
  }
  const released = await releaseRecoveries(ctx, namespace, name, true);
  for (const r of released)
    ctx.log.info(
      { recovery: r, finalizer: RECOVERY_FINALIZER },
      "recovery finalizer released: the VaultCluster is gone",
    );
}

/** An Unseal that failed because of the keys, as Degraded (else undefined: it is retried). */
function unsealJudged(
  cluster: VaultCluster,
  obs: Observation,
  pod: string,
  outcome: Parameters<typeof judgeUnsealOutcome>[1],
): Step | undefined {
  const threshold =
    obs.observed.pods.find((p) => p.name === pod)?.seal?.threshold ?? cluster.spec.unseal.threshold;
  return judgeUnsealOutcome(pod, outcome, obs.keys.unsealKeys.length, threshold);
}

/**
 * The pods' ServiceAccount, Role and RoleBinding (Vault's service registration), the three Services and the
 * ConfigMap; no request when they already match. The registration's objects come first: a pod naming a
 * ServiceAccount that does not exist is refused, and a new pod's name must be in the Role before it starts.
 * Returns the API server's answer when it refuses them (RBAC, an admission policy), else undefined: the caller then
 * builds pods without registration, and the -active Service keeps (or gets) the operator's label.
 */
async function applyFixedObjects(ctx: ReconcileContext, cluster: VaultCluster): Promise<string | undefined> {
  const { namespace } = clusterRef(cluster);
  const uid = cluster.metadata.uid;
  const pods = (await ctx.cache.list(Pod, { namespace, labels: selectorLabels(cluster) })).filter(
    (p: PodObject) =>
      p.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true,
  );
  let refused: string | undefined;
  try {
    const sa = serviceAccount(cluster);
    await ctx.apply(
      ServiceAccount,
      sa,
      await ctx.cache.get(ServiceAccount, sa.metadata.name ?? "", namespace),
    );
    const role = registrationRole(
      cluster,
      registrationPodNames(
        cluster,
        pods.map((p) => p.metadata.name ?? ""),
      ),
    );
    await ctx.apply(Role, role, await ctx.cache.get(Role, role.metadata.name ?? "", namespace));
    const binding = registrationRoleBinding(cluster);
    await ctx.apply(
      RoleBinding,
      binding,
      await ctx.cache.get(RoleBinding, binding.metadata.name ?? "", namespace),
    );
  } catch (err) {
    // Refused, not failed: RBAC (the operator's own grants lag its version) or an admission policy. Anything else
    // (the API server unreachable) is retried as any reconcile error.
    if (!(isApiError(err) && [400, 403, 422].includes(err.code))) throw err;
    refused = err.message;
    ctx.log.warn({ err: err.message }, "the pods' ServiceAccount, Role or RoleBinding was refused");
  }
  const liveActive = await ctx.cache.get(Service, activeService(cluster).metadata.name ?? "", namespace);
  const by = chooseActiveSelector(liveActiveSelector(liveActive), pods, refused === undefined);
  if (liveActiveSelector(liveActive) === "operator" && by === "vault") {
    const message = `every pod runs Vault's service registration: Service ${activeService(cluster).metadata.name} now selects vault-active=true, which Vault sets itself (the operator is no longer in the failover path)`;
    ctx.log.info(message);
    ctx.recorder.event(cluster, "Normal", "ActiveServiceFollowsVault", "ApplyService", message);
  }
  for (const svc of [internalService(cluster), clientService(cluster), activeService(cluster, by)]) {
    await ctx.apply(Service, svc, await ctx.cache.get(Service, svc.metadata.name ?? "", namespace));
  }
  let cm: ReturnType<typeof configMap> | undefined;
  try {
    cm = configMap(cluster);
  } catch {
    cm = undefined; // an operator-owned key in spec.config: the planner reports it as Degraded
  }
  if (cm !== undefined) {
    await ctx.apply(ConfigMap, cm, await ctx.cache.get(ConfigMap, cm.metadata.name ?? "", namespace));
  }
  return refused;
}

/** Keeps each pod's vault.capstan.dev/state label on what /v1/sys/health said (no write when unchanged). */
async function labelPods(ctx: ReconcileContext, cluster: VaultCluster, obs: Observation): Promise<void> {
  const { namespace } = clusterRef(cluster);
  for (const p of obs.observed.pods) {
    if (p.terminatingSince !== undefined) continue;
    const state = podState(p);
    const pod = obs.pods.get(p.name);
    const current = pod?.metadata.labels?.[STATE_LABEL];
    // A pod that does not answer loses "active" (the -active Service must not point at it); other labels stay.
    const next: PodState | null | undefined = state ?? (current === "active" ? null : undefined);
    if (next === undefined || next === current || (next === null && current === undefined)) continue;
    await ctx.client
      .patch(Pod, p.name, namespace, { metadata: { labels: { [STATE_LABEL]: next } } }, "merge", {
        signal: ctx.signal,
      })
      .catch((err: unknown) => ctx.log.warn({ pod: p.name, err: String(err) }, "could not label the pod"));
  }
}

/** Records the cluster_id beside the keys once Vault answers with it (status can be lost; the Secret is kept). */
async function recordClusterID(
  ctx: ReconcileContext,
  cluster: VaultCluster,
  obs: Observation,
): Promise<void> {
  const secret = obs.keysSecret;
  const id = obs.clusterID;
  if (secret === undefined || id === undefined || obs.keys.unsealKeys.length === 0) return;
  if (secret.metadata.annotations?.[CLUSTER_ID_ANNOTATION] !== undefined) return;
  await ctx.client.patch(
    Secret,
    keysSecretName(cluster),
    clusterRef(cluster).namespace,
    { metadata: { annotations: { [CLUSTER_ID_ANNOTATION]: id } } },
    "merge",
    { signal: ctx.signal },
  );
}

/** A step that did not go on, as the step reported in status: Degraded when only a human can help, else Wait. */
function toStep(result: { reason: string; message: string; degraded?: boolean }): Step {
  return { type: result.degraded ? "Degraded" : "Wait", reason: result.reason, message: result.message };
}

function isAction(step: Step): boolean {
  return !["Wait", "InSync", "Degraded"].includes(step.type);
}

function requeueFor(step: Step): number | undefined {
  switch (step.type) {
    case "InSync":
      return REQUEUE.inSync;
    case "Degraded":
      return REQUEUE.degraded;
    case "Wait":
      // Paused: nothing to do, but Vault's state is still observed as often as in sync.
      return step.reason === "Paused" ? REQUEUE.inSync : REQUEUE.waiting;
    default:
      return REQUEUE.afterStep;
  }
}

function recordMetrics(metrics: VaultOperatorMetrics, cluster: VaultCluster, obs: Observation): void {
  const { namespace, name } = clusterRef(cluster);
  const counts = Object.fromEntries(POD_STATES.map((s) => [s, 0])) as Record<PodState, number>;
  for (const p of obs.observed.pods) {
    const s = podState(p);
    if (s !== undefined && p.terminatingSince === undefined) counts[s]++;
  }
  metrics.observe(
    namespace,
    name,
    counts,
    "servers" in obs.observed.raft ? obs.observed.raft.servers.length : undefined,
    obs.autopilot,
  );
}
