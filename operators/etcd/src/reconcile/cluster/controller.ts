// The EtcdCluster controller: observe -> plan one step -> act -> write status, conditions, events and metrics.
import { randomInt } from "node:crypto";
import {
  annotatePods,
  annotationsChanged,
  applyClaimRetention,
  type CacheSelector,
  Controller,
  type ControllerOptions,
  findCondition,
  generationChanged,
  isNotFound,
  Job,
  managedBySelectors,
  NetworkPolicy,
  or,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  quorum,
  type ReconcileContext,
  type ReconcileRequest,
  type Reconciler,
  type Result,
  requestFromLabel,
  Service,
  statusMergePatch,
  watch,
} from "@capstan/core";
import { EtcdBackupKind } from "../../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { clientService, peerService, podDisruptionBudget } from "../../desired/cluster-objects.ts";
import { CLAIM_UID_LABEL, CLUSTER_LABEL, clusterRef, MANAGED_BY, memberName } from "../../desired/names.ts";
import { networkPolicy, networkPolicyName, type OperatorPods } from "../../desired/network-policy.ts";
import { CERTIFICATES_ANNOTATION } from "../../desired/tls.ts";
import { EtcdError } from "../../etcd/etcd-client.ts";
import type { AutomaticRecoveryDecision } from "../../plan/automatic-recovery.ts";
import { automaticRecoveryMayRun, caRotationMayRun, planClusterStep } from "../../plan/cluster-step.ts";
import { planNext, type Step } from "../../plan/plan.ts";
import type { EtcdOperatorMetrics } from "../metrics.ts";
import { reconcileAutomaticRecovery } from "../restore/automatic-recovery.ts";
import { observeRestore, restoreStatusOf } from "../restore/bootstrap-restore.ts";
import { activeRestore, reconcileRecovery, releaseRestores } from "../restore/recovery.ts";
import { RestoringClusters } from "../restore/restore-index.ts";
import { type ActContext, act } from "./act.ts";
import { prepareAuth } from "./auth.ts";
import { judgeClusterCertificates, withCertificatesCondition } from "./certificate-expiry.ts";
import { defaultEtcdClient, type EtcdClientFactory, type Observation, observe } from "./observe.ts";
import { statusOf } from "./status.ts";
import { type ClusterTLS, isTLSProblem, prepareTLS, rotateCA, type TLSProblem } from "./tls.ts";

/** When to look again, by what the reconcile found (milliseconds). */
export const REQUEUE = {
  /** After a step: soon, to take the next one once the informers have seen this one. */
  afterStep: 1_000,
  /** Waiting for something that is moving (a pod starting, a learner catching up). */
  waiting: 5_000,
  /** Quorum lost: watch for it to come back. */
  quorumLost: 10_000,
  /** In sync: etcd's health is not in any Kubernetes object, so it is polled (no API writes). */
  inSync: 30_000,
  /** Refused spec: nothing changes until the spec does (a spec edit triggers a reconcile at once). */
  degraded: 60_000,
} as const;

/** The image backup Jobs run `backup-upload` from when none is given: the chart's default operator image. */
export const DEFAULT_BACKUP_IMAGE = "ghcr.io/capstan-dev/capstan/etcd-operator:0.1.0";

/**
 * What the manager's cache needs to hold for the operator's controllers: only the Pods, PVCs, Services,
 * PodDisruptionBudgets and Jobs the operator created (labelled managed-by), not every one in the cluster. The
 * backup Jobs' pods carry the same label.
 */
export function etcdClusterCacheSelectors(): CacheSelector[] {
  return managedBySelectors(MANAGED_BY, [
    Pod,
    PersistentVolumeClaim,
    Service,
    PodDisruptionBudget,
    Job,
    NetworkPolicy,
  ]);
}

/** Options of {@link etcdClusterController}. */
export interface EtcdClusterControllerOptions {
  metrics: EtcdOperatorMetrics;
  /** Default 4: different clusters are reconciled in parallel, one cluster never by two workers. */
  maxConcurrentReconciles?: number;
  /** How long a voting member's pod may stay not ready before it is replaced (default 5 minutes). */
  deadAfterMs?: number;
  /** Creates etcd clients (tests replace it). */
  etcdClient?: EtcdClientFactory;
  /** The operator's own image: a restore Job's download and finish steps run it (spec.bootstrap.restore). */
  operatorImage?: string;
  /** The operator's own pods, allowed to the client port by the NetworkPolicy (from the chart's labels). */
  operatorPods?: OperatorPods;
  /**
   * The least wait before spec.recovery.automatic recovers, whatever afterSeconds says (default 900 s: Kubernetes'
   * node failover first). Lower it only where failover is known to be faster (a test cluster).
   */
  automaticRecoveryFloorSeconds?: number;
  /** Replaces {@link reconcileEtcdCluster} (tests: to see what the watches enqueue). */
  reconcile?: Reconciler;
}

/** A random member-name suffix: 5 characters of [a-z0-9] (60 million names; the planner refuses one in use). */
export function randomSuffix(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from({ length: 5 }, () => alphabet[randomInt(alphabet.length)]).join("");
}

/**
 * The EtcdCluster controller: binding it also indexes the clusters by the backup they restore from, which its
 * EtcdBackup watch looks up.
 */
class EtcdClusterController extends Controller<EtcdCluster> {
  private readonly restoring: RestoringClusters;

  constructor(options: ControllerOptions<EtcdCluster>, restoring: RestoringClusters) {
    super(options);
    this.restoring = restoring;
  }

  override bind(env: Parameters<Controller<EtcdCluster>["bind"]>[0]): void {
    super.bind(env);
    // The informer the controller's own events come from (same kind and scope: the shared instance).
    this.restoring.attach(
      env.informers.informerFor(EtcdClusterKind, env.namespace ? { namespace: env.namespace } : {}),
    );
  }
}

/** The controller that reconciles EtcdClusters. */
export function etcdClusterController(options: EtcdClusterControllerOptions): Controller<EtcdCluster> {
  const restoring = new RestoringClusters();
  return new EtcdClusterController(
    {
      name: "etcdcluster",
      for: EtcdClusterKind,
      // The field manager of every object the operator applies (in users' managedFields: never renamed).
      fieldManager: "capstan-etcd-operator",
      owns: [Pod, Service, PodDisruptionBudget, Job, NetworkPolicy],
      watches: [
        // Members' claims kept when the cluster is deleted (storage.whenDeleted Retain) have no owner reference:
        // their events reach the cluster their label names (owned ones carry it too).
        watch(PersistentVolumeClaim, requestFromLabel(CLUSTER_LABEL)),
        // An EtcdRestore is acted on by its cluster's reconcile (one writer of the member pods).
        watch(EtcdRestoreKind, (r) => [{ namespace: r.metadata.namespace ?? "", name: r.spec.clusterName }]),
        // A cluster restoring from a backup starts as soon as the backup succeeds (not at its next requeue).
        watch(EtcdBackupKind, restoring.of),
      ],
      // Our own status writes do not trigger a reconcile; spec edits, creation and deletion do, and the
      // rotate-ca annotation (a CA rotation asked for).
      predicates: [or(generationChanged(), annotationsChanged())],
      maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
      reconcile: options.reconcile ?? ((req, ctx) => reconcileEtcdCluster(req, ctx, options)),
    },
    restoring,
  );
}

/** One reconcile of one EtcdCluster. */
export async function reconcileEtcdCluster(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: EtcdClusterControllerOptions,
): Promise<Result | undefined> {
  const cluster = await ctx.cache.get(EtcdClusterKind, req.name, req.namespace);
  if (cluster === undefined || cluster.metadata.deletionTimestamp !== undefined) {
    // Deleted: every object it owned goes with it (owner references and the garbage collector); the members' claims
    // stay unless storage.whenDeleted is Delete (and claims an EtcdRestore kept stay, labelled). Nothing is left to
    // give back or to finish, so no EtcdRestore naming it is held by the recovery finalizer any more.
    for (const name of await releaseRestores(ctx, req.namespace ?? "", req.name, true))
      ctx.log.info({ restore: name }, "recovery finalizer released: the EtcdCluster is gone");
    options.metrics.forget(req.namespace ?? "", req.name);
    return undefined;
  }
  const signal = ctx.signal;
  await applyServices(ctx, cluster);
  await applyNetworkPolicy(ctx, cluster, options.operatorPods);

  // Certificates first: the operator's client certificate is needed to observe a TLS cluster.
  const tls = await prepareTLS(ctx, cluster, new Date());
  const clientTLS = isTLSProblem(tls) ? undefined : tls.client;
  // The root password (spec.auth), read (or its Secret made) before etcd is asked anything.
  const auth = await prepareAuth(ctx.client, cluster, { create: true, signal });
  if (auth.created !== undefined) {
    ctx.log.info({ secret: auth.created }, auth.created);
    ctx.recorder.event(cluster, "Normal", "RootSecretCreated", "Auth", auth.created);
  }
  const credentials = auth.credentials;
  const etcdClient = options.etcdClient ?? defaultEtcdClient;
  const obs = await observe(cluster, ctx.cache, etcdClient, signal, clientTLS, credentials);
  // Each member's claim as storage.whenDeleted says (Retain: no owner reference, so deleting the EtcdCluster keeps
  // the data; Delete: owned): claims made by an older operator, or a changed policy. No write when they match, nor
  // while the cluster is paused.
  const whenDeleted = cluster.spec.storage.whenDeleted ?? "Retain";
  const claims = cluster.spec.paused === true ? [] : obs.claims.values();
  for (const claim of await applyClaimRetention(
    ctx.client,
    cluster,
    EtcdClusterKind,
    claims,
    whenDeleted,
    CLAIM_UID_LABEL,
    signal,
  ))
    ctx.log.info({ claim, whenDeleted }, "data claim set to storage.whenDeleted");
  if (!isTLSProblem(tls)) await refreshCertificates(ctx, cluster, obs, tls);
  // EtcdRestores that ended without their finalizer released (the operator stopped between the two writes).
  await releaseRestores(ctx, clusterRef(cluster).namespace, clusterRef(cluster).name);
  // The certificates' expiry, from the Secrets just read (with a TLS problem, the last judgement stands).
  const certificates = isTLSProblem(tls)
    ? undefined
    : { verdict: judgeClusterCertificates(cluster, tls, options.metrics, new Date()) };
  // What the recovery and automatic recovery ask a member alone with: the operator's client and credentials.
  const withCredentials: typeof etcdClient = (e, t) => etcdClient(e, t, credentials);
  const recovery = await activeRestore(cluster, ctx.cache);
  if (recovery !== undefined) {
    return reconcileRecovery(ctx, cluster, obs, recovery, withCredentials, clientTLS, {
      ...(options.operatorImage === undefined ? {} : { operatorImage: options.operatorImage }),
      ...podHooks(tls),
    });
  }
  const restore = await observeRestore(cluster, ctx.cache, obs.claims, options.operatorImage);
  if (restore !== undefined) obs.observed.restore = restore.observed;
  await applyDisruptionBudget(ctx, cluster, votersOf(cluster, obs));
  recordMetrics(options.metrics, cluster, obs);
  // The step is decided in one pure place (plan/cluster-step.ts); this only observes and acts.
  const tlsVerdict = isTLSProblem(tls) ? tls : undefined;
  // spec.recovery.automatic: the loss of quorum is dated in status; once long enough, ONE EtcdRestore is created
  // (its reconcile then takes over). Not judged while the cluster's TLS is not in place (the recorded time is kept).
  const recordedLoss = cluster.status?.quorumLostSince;
  const automatic: AutomaticRecoveryDecision = !automaticRecoveryMayRun(tlsVerdict)
    ? { type: "None", ...(recordedLoss === undefined ? {} : { lostSince: new Date(recordedLoss) }) }
    : await reconcileAutomaticRecovery(ctx, cluster, obs, new Date(), {
        etcdClient: withCredentials,
        ...(clientTLS === undefined ? {} : { tls: clientTLS }),
        ...(options.automaticRecoveryFloorSeconds === undefined
          ? {}
          : { floorSeconds: options.automaticRecoveryFloorSeconds }),
      });
  const reservedMember = isTLSProblem(tls) ? undefined : tls.reservedMember;
  let step = planClusterStep({
    ...(tlsVerdict === undefined ? {} : { tls: tlsVerdict }),
    ...(auth.problem === undefined ? {} : { auth: auth.problem }),
    membership: () =>
      planNext(cluster.spec, obs.observed, new Date(), {
        // A member whose cert-manager certificates were requested before it was made keeps its name.
        freshName: reservedMember?.() ?? memberName(cluster, randomSuffix()),
        ...(options.deadAfterMs === undefined ? {} : { deadAfterMs: options.deadAfterMs }),
      }),
    automatic,
  });
  if (caRotationMayRun(step, tlsVerdict) && !isTLSProblem(tls)) {
    const rotation = await rotateCA(ctx.client, cluster, obs, tls, new Date(), signal);
    if (rotation?.event !== undefined) {
      ctx.log.info({ step: rotation.event.reason }, rotation.event.message);
      ctx.recorder.event(cluster, "Normal", rotation.event.reason, "CARotation", rotation.event.message);
    }
    if (rotation !== undefined) step = rotation.step;
  }

  let reported: Step = step;
  let requeueAfter = requeueFor(step);
  if (isAction(step)) {
    try {
      const result = await act(step, {
        client: ctx.client,
        cluster,
        obs,
        ...(options.etcdClient === undefined ? {} : { etcdClient: options.etcdClient }),
        ...(restore === undefined ? {} : { restore }),
        ...(clientTLS === undefined ? {} : { tls: clientTLS }),
        ...(credentials === undefined ? {} : { auth: credentials }),
        ...podHooks(tls),
        signal,
      });
      if (result.done) {
        ctx.log.info({ step: step.type, member: memberOfStep(step) }, step.message);
        ctx.recorder.event(cluster, "Normal", step.type, step.type, step.message);
        options.metrics.countStep(clusterRef(cluster), step.type);
      } else {
        reported = { type: "Wait", reason: result.reason, message: result.message };
        requeueAfter = REQUEUE.waiting;
      }
    } catch (err) {
      if (!(err instanceof EtcdError)) throw err;
      // etcd refused or did not answer (e.g. "unhealthy cluster" right after a member started, a learner not
      // yet in sync): not a bug, so no backoff storm; report it and look again shortly. Caught here, not by an error
      // policy: the reconcile goes on to write the status (members, conditions) of what it just observed.
      const message = `${step.message}: etcd answered: ${err.message}`;
      ctx.log.warn({ step: step.type, err: err.message }, "etcd step failed; will retry");
      ctx.recorder.event(cluster, "Warning", `${step.type}Failed`, step.type, message);
      reported = { type: "Wait", reason: `${step.type}Failed`, message };
      requeueAfter = REQUEUE.waiting;
    }
  } else if (step.type === "Degraded" || step.type === "QuorumLost") {
    const reason = step.type === "Degraded" ? step.reason : "QuorumLost";
    const before = findCondition(cluster.status?.conditions, "Degraded");
    if (before?.status !== "True" || before.reason !== reason) {
      ctx.log.warn({ reason }, step.message);
      ctx.recorder.event(cluster, "Warning", reason, "Reconcile", step.message);
    }
  }

  const status = statusOf(cluster, obs, reported, new Date());
  if (certificates !== undefined)
    status.conditions = withCertificatesCondition(
      ctx,
      cluster,
      status.conditions,
      certificates.verdict,
      new Date(),
    );
  if (automatic.lostSince !== undefined) status.quorumLostSince = automatic.lostSince.toISOString();
  if (
    cluster.spec.recovery?.automatic?.enabled === true &&
    (automatic.type === "Wait" || automatic.type === "Failover")
  ) {
    // What automatic recovery waits for (its due time, or Kubernetes' failover) is said beside the loss.
    const degraded = status.conditions?.find((c) => c.type === "Degraded");
    if (degraded?.status === "True" && degraded.reason === "QuorumLost")
      degraded.message = `${degraded.message}; ${automatic.message}`;
  }
  const restored = restoreStatusOf(cluster, cluster.status?.restore, restore, obs.claims, status.clusterID);
  if (restored !== undefined) {
    status.restore = restored;
    if (restored.clusterID !== undefined && cluster.status?.restore?.clusterID === undefined) {
      const message = `restored from ${restored.source}${restored.revision === undefined ? "" : ` at revision ${restored.snapshotRevision}, now starting from revision ${restored.revision}`}: cluster ID ${restored.clusterID}`;
      ctx.log.info({ clusterID: restored.clusterID, revision: restored.revision }, message);
      ctx.recorder.event(cluster, "Normal", "Restored", "Restore", message);
    }
  }
  const patch = statusMergePatch(cluster.status, status);
  if (patch !== undefined) {
    await ctx.client.patchStatus(EtcdClusterKind, req.name, req.namespace, patch, "merge", { signal });
  }
  return requeueAfter === undefined ? undefined : { requeueAfter };
}

/** The certificate hooks of member creation: issue (or wait for) its certificates, annotate its pod. */
function podHooks(tls: ClusterTLS | TLSProblem): Pick<ActContext, "beforePod" | "memberPending"> {
  if (isTLSProblem(tls)) return {};
  const { memberPending } = tls;
  return {
    beforePod: (member: string) => tls.podAnnotations(member),
    ...(memberPending === undefined ? {} : { memberPending: (member: string) => memberPending(member) }),
  };
}

/**
 * Issues or renews the certificates of the members that have a pod or a claim, annotates each live pod with its
 * certificates' fingerprints (the kubelet then refreshes the mounted Secret within seconds; etcd reads the files
 * at each handshake), deletes the certificates of members that are gone, and records what was issued.
 */
async function refreshCertificates(
  ctx: ReconcileContext,
  cluster: EtcdCluster,
  obs: Observation,
  tls: ClusterTLS,
): Promise<void> {
  const members = new Set([
    ...obs.pods.keys(),
    ...obs.claims.keys(),
    ...(cluster.status?.members ?? []).map((m) => m.name),
  ]);
  for (const [member, pod] of obs.pods) {
    const value = await tls.ensureMember(member);
    await annotatePods(ctx.client, [pod], CERTIFICATES_ANNOTATION, value, { fieldManager: ctx.fieldManager });
  }
  await tls.forgetMembersExcept(members);
  for (const { reason, message } of tls.issued.splice(0)) {
    ctx.log.info({ reason }, message);
    ctx.recorder.event(cluster, "Normal", reason, "Certificates", message);
  }
}

/** The cluster's NetworkPolicy when spec.network.networkPolicy is on (deleted when it is turned off). */
async function applyNetworkPolicy(
  ctx: ReconcileContext,
  cluster: EtcdCluster,
  operatorPods: OperatorPods | undefined,
): Promise<void> {
  const { namespace } = clusterRef(cluster);
  const name = networkPolicyName(cluster);
  const live = await ctx.cache.get(NetworkPolicy, name, namespace);
  if (cluster.spec.network?.networkPolicy !== true) {
    if (live !== undefined) {
      await ctx.client
        .delete(NetworkPolicy, name, namespace, { signal: ctx.signal })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }
    return;
  }
  await ctx.apply(NetworkPolicy, networkPolicy(cluster, operatorPods), live);
}

/** The peer and client Services; no request when they already match. */
async function applyServices(ctx: ReconcileContext, cluster: EtcdCluster): Promise<void> {
  const { namespace } = clusterRef(cluster);
  for (const svc of [peerService(cluster), clientService(cluster)]) {
    await ctx.apply(Service, svc, await ctx.cache.get(Service, svc.metadata.name ?? "", namespace));
  }
}

/** The PodDisruptionBudget, from the voters that exist (applied before any member is removed). */
async function applyDisruptionBudget(
  ctx: ReconcileContext,
  cluster: EtcdCluster,
  voters: number,
): Promise<void> {
  const { namespace } = clusterRef(cluster);
  const pdb = podDisruptionBudget(cluster, voters);
  await ctx.apply(
    PodDisruptionBudget,
    pdb,
    await ctx.cache.get(PodDisruptionBudget, pdb.metadata.name ?? "", namespace),
  );
}

/** Voting members that exist: etcd's list, or (when etcd does not answer) the ones status last saw. */
export function votersOf(cluster: EtcdCluster, obs: Observation): number {
  const { etcd } = obs.observed;
  if (etcd.reachable) return etcd.members.filter((m) => !m.isLearner).length;
  return (cluster.status?.members ?? []).filter((m) => !m.learner).length;
}

function isAction(step: Step): boolean {
  return !["Wait", "InSync", "Degraded", "QuorumLost"].includes(step.type);
}

function requeueFor(step: Step): number | undefined {
  switch (step.type) {
    case "InSync":
      return REQUEUE.inSync;
    case "Degraded":
      return REQUEUE.degraded;
    case "QuorumLost":
      return REQUEUE.quorumLost;
    case "Wait":
      return step.reason === "Paused" ? undefined : REQUEUE.waiting;
    default:
      return REQUEUE.afterStep;
  }
}

function memberOfStep(step: Step): string | undefined {
  return "name" in step ? step.name : "toName" in step ? step.toName : undefined;
}

function recordMetrics(metrics: EtcdOperatorMetrics, cluster: EtcdCluster, obs: Observation): void {
  const { namespace, name } = clusterRef(cluster);
  const { etcd } = obs.observed;
  const members = etcd.reachable ? etcd.members : [];
  const voters = members.filter((m) => !m.isLearner);
  const healthy = voters.filter((m) => m.healthy).length;
  metrics.observe(
    namespace,
    name,
    { healthy, unhealthy: voters.length - healthy, learner: members.length - voters.length },
    etcd.reachable && voters.length > 0 && healthy >= quorum(voters.length),
    members.some((m) => m.leader),
  );
}
