// The Prometheus controller: observe (the server, what it selects, its objects) -> compute (selectMonitors +
// renderConfig + shardRuleFiles) -> act (apply what changed: ServiceAccount, RBAC, rule shards, config Secret,
// Services, StatefulSet, PDB; delete shards no longer needed once the pods carry the configuration without them) ->
// monitor bindings -> status, conditions, events and metrics. Configuration changes reach the pods through the
// projected Secrets and the reloader sidecar: the pod template never changes for them. A write the API server
// refuses (refusals.ts) is Degraded, not a thrown error. Once every pod's reloader says its Prometheus accepted the
// candidate generation, the operator copies it to the last-good Secrets a starting pod loads; a generation a pod
// refused is Degraded ConfigRefused, with Prometheus's own message.
import {
  addFinalizer,
  annotatePods,
  applyIfChanged,
  type CacheSelector,
  type Controller,
  controller,
  findCondition,
  generationChanged,
  hasFinalizer,
  isNotFound,
  type Kind,
  type KubeObject,
  labelsChanged,
  managedBySelectors,
  Namespace,
  or,
  owns,
  Pod,
  PodDisruptionBudget,
  type Predicate,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  Role,
  RoleBinding,
  removeFinalizer,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  statusMergePatch,
  watch,
} from "@capstan/core";
import { PodMonitorKind } from "../api/pod-monitor.ts";
import { DEFAULT_STORAGE_SIZE, type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { ServiceMonitorKind } from "../api/service-monitor.ts";
import { loadStateOf, selectedStatus } from "../desired/bindings.ts";
import { clusterMetricsRbac } from "../desired/cluster-metrics.ts";
import { renderConfig } from "../desired/config.ts";
import {
  ClusterRole,
  ClusterRoleBinding,
  CONFIG_HASH_ANNOTATION,
  clientService,
  configSecret,
  DEFAULT_RELOADER_IMAGE,
  discoveryRbac,
  discoveryScope,
  GENERATION_ANNOTATION,
  governingService,
  type LastGood,
  lastGoodSecrets,
  MANAGED_BY,
  mountedRuleSlots,
  type PodSettings,
  podDisruptionBudget,
  prometheusImage,
  RBAC_FINALIZER,
  ruleShardSecrets,
  ruleSlots,
  type SecretObject,
  serverName,
  serviceAccount,
  statefulSet,
} from "../desired/objects.ts";
import { shardRuleFiles } from "../desired/rule-shards.ts";
import { type Selection, selectMonitors } from "../desired/select.ts";
import { MonitorStatusMemo } from "./binding-reports.ts";
import { type BindingsResult, syncBindings } from "./bindings.ts";
import type { PrometheusOperatorMetrics } from "./metrics.ts";
import {
  type ForeignRbacObject,
  keyId,
  type Observation,
  observe,
  readKeys,
  referencedKeys,
} from "./observe.ts";
import { isRefusal, refusalProblem } from "./refusals.ts";
import {
  httpReloaderState,
  httpRuntimeInfo,
  judgeGenerations,
  judgeReloads,
  LOG_TAIL_LINES,
  type PodGeneration,
  type PodLogClient,
  type PodRuntime,
  type ReloaderStateClient,
  type RuntimeInfoClient,
  reloadErrorFromLog,
} from "./reload.ts";
import { type Problem, podProblems, statusOf } from "./status.ts";

/** The field manager of every object the operator applies. */
export const FIELD_MANAGER = "capstan-prometheus-operator";

/** When to look again (milliseconds). */
export const REQUEUE = {
  /** Pods starting or rolling: their reloads and readiness are worth watching closely. */
  rollingOut: 15_000,
  /** In sync: referenced Secret keys and the pods' reload results are not watched, so they are polled. */
  inSync: 300_000,
} as const;

/** Only the objects the operator created are cached, except Services, Pods and Namespaces: monitors select those. */
export function prometheusCacheSelectors(): CacheSelector[] {
  return managedBySelectors(MANAGED_BY, [
    StatefulSet,
    Secret,
    ServiceAccount,
    Role,
    RoleBinding,
    PodDisruptionBudget,
    ClusterRole,
    ClusterRoleBinding,
  ]);
}

/** State a controller keeps across reconciles (in memory: lost on restart, which only repeats an Event). */
export class ControllerState {
  /** Servers seen, for mapping a monitor, Namespace, Service or Pod event to every server. */
  readonly servers = new Map<string, ReconcileRequest>();
  /** Monitor statuses the API server would not take (refused, or no status subresource), reported by Events. */
  readonly monitorStatus = new MonitorStatusMemo();
  /** Each server's pods' last seen lastConfigTime, by pod uid. */
  readonly reloads = new Map<string, Map<string, string>>();
  /**
   * What Prometheus logged about a refused generation, by server, as "<pod>/<generation>" -> the errors: read once,
   * so the Degraded message stays the same while the log scrolls on.
   */
  readonly refusals = new Map<string, Map<string, string>>();
}

/** Options of {@link prometheusController}. */
export interface PrometheusControllerOptions {
  metrics: PrometheusOperatorMetrics;
  /** Image of the reloader sidecar (default busybox:1.37). */
  reloaderImage?: string;
  /** Default 4: different servers in parallel, one server never by two workers. */
  maxConcurrentReconciles?: number;
  /** Asks a pod's Prometheus for its runtimeinfo (tests replace it). */
  runtimeInfo?: RuntimeInfoClient;
  /** Asks a pod's reloader which generation its Prometheus accepted or refused (tests replace it). */
  reloaderState?: ReloaderStateClient;
  /** Reads a pod's prometheus container log, to explain a refused reload (default: the API's pods/log). */
  podLog?: PodLogClient;
  /** Shared state; a fresh one when omitted. */
  state?: ControllerState;
}

const serviceChanged: Predicate<KubeObject> = {
  update: (o, n) =>
    JSON.stringify([o.metadata.labels, (o as { spec?: { ports?: unknown } }).spec?.ports]) !==
    JSON.stringify([n.metadata.labels, (n as { spec?: { ports?: unknown } }).spec?.ports]),
};

/** The controller that reconciles Prometheus servers. */
export function prometheusController(options: PrometheusControllerOptions): Controller<Prometheus> {
  const state = options.state ?? new ControllerState();
  const all = () => [...state.servers.values()];
  const monitorChanged = [or(generationChanged(), labelsChanged())];
  return controller({
    name: "prometheus",
    for: PrometheusKind,
    owns: [
      StatefulSet,
      Service,
      Secret,
      ServiceAccount,
      Role,
      RoleBinding,
      owns(PodDisruptionBudget, [generationChanged()]),
    ],
    watches: [
      watch(ServiceMonitorKind, all, monitorChanged),
      watch(PodMonitorKind, all, monitorChanged),
      watch(PrometheusRuleKind, all, monitorChanged),
      watch(Namespace, all, [labelsChanged()]),
      watch(Service, all, [serviceChanged]),
      watch(Pod, all, [labelsChanged()]),
    ],
    predicates: [generationChanged()],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
    reconcile: (req, ctx) => reconcilePrometheus(req, ctx, { ...options, state }),
  });
}

/** One reconcile of one Prometheus server. */
export async function reconcilePrometheus(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: PrometheusControllerOptions & { state?: ControllerState },
): Promise<Result | undefined> {
  const state = options.state ?? new ControllerState();
  const key = `${req.namespace}/${req.name}`;
  const p = await ctx.cache.get(PrometheusKind, req.name, req.namespace);
  if (p === undefined) {
    // Deleted: what it owned goes with it (owner references); foreign RBAC went before the finalizer was removed.
    state.servers.delete(key);
    state.reloads.delete(key);
    state.refusals.delete(key);
    state.monitorStatus.forgetServer(key);
    options.metrics.forget(req.namespace ?? "", req.name);
    return undefined;
  }
  state.servers.set(key, { namespace: req.namespace ?? "", name: req.name });
  const obs = await observe(p, ctx.cache);

  if (p.metadata.deletionTimestamp !== undefined) {
    if (hasFinalizer(p, RBAC_FINALIZER)) {
      await deleteAll(ctx, obs.foreign);
      await removeFinalizer(ctx.client, PrometheusKind, p, RBAC_FINALIZER);
    }
    options.metrics.forget(req.namespace ?? "", req.name);
    return undefined;
  }

  const now = new Date();
  if (p.spec.paused === true) {
    await writeStatus(
      ctx,
      p,
      statusOf(p, { ...(obs.statefulSet ? { statefulSet: obs.statefulSet } : {}), problems: [] }, now),
    );
    return undefined;
  }

  const settings: PodSettings = { reloaderImage: options.reloaderImage ?? DEFAULT_RELOADER_IMAGE };
  const problems: Problem[] = [];

  // Compute: what the server selects and its configuration.
  let selection: Selection | undefined;
  let configHash: string | undefined;
  let configProblem: Problem | undefined;
  let first: Selection | undefined;
  /** The candidate generation written this reconcile (undefined: none computed, or a write was refused). */
  let candidate: { secret: SecretObject; shards: SecretObject[] } | undefined;
  try {
    first = selectMonitors(p, obs.namespaces, obs.monitors, obs.services, obs.pods);
  } catch (err) {
    // A malformed selector of the server itself (selectMonitors names the field): keep the last configuration.
    configProblem = { reason: "InvalidSelector", message: (err as Error).message };
    problems.push(configProblem);
  }
  if (first !== undefined) {
    // The Secret and ConfigMap keys the chosen monitors read: a monitor whose key is missing is left out.
    const refs = referencedKeys({
      serviceMonitors: first.serviceMonitors.map((m) => m.object),
      podMonitors: first.podMonitors.map((m) => m.object),
    });
    const values = await readKeys(ctx.client, refs, ctx.signal);
    selection = selectMonitors(p, obs.namespaces, obs.monitors, obs.services, obs.pods, {
      keyExists: (r) => values.has(keyId(r)),
    });
    const config = renderConfig(p, selection);
    configHash = config.hash;
    const assets: Record<string, string> = {};
    for (const a of config.assets) assets[a.assetKey] = values.get(keyId(a)) ?? "";
    const shards = shardRuleFiles(config.rules, liveShardFiles(p, obs.ruleShards));
    const built = { secret: configSecret(p, config, assets), shards: ruleShardSecrets(p, shards) };
    const refused = await act(ctx, p, obs, settings, selection, problems, {
      ...built,
      slots: ruleSlots(shards.length, mountedRuleSlots(obs.statefulSet)),
    });
    if (refused !== undefined) {
      // The pods keep the previous configuration: Reconciled says so, and the status keeps the previous hash.
      configProblem = refused;
      configHash = undefined;
    } else candidate = built;
  } else {
    const fallback = obs.configSecret === undefined ? configSecret(p, renderConfig(p, none), {}) : undefined;
    await act(ctx, p, obs, settings, undefined, problems, {
      ...(fallback === undefined ? {} : { secret: fallback }),
      slots: ruleSlots(0, mountedRuleSlots(obs.statefulSet)),
    });
  }

  // What the pods say about their reloads, and which generation each one's Prometheus accepted or refused.
  const image = prometheusImage(p);
  const answers = await Promise.all(
    obs.serverPods
      .filter((pod) => pod.metadata.deletionTimestamp === undefined)
      .map(async (pod) => {
        const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
        const ip = pod.status?.podIP;
        const [info, reloader] =
          ready && ip
            ? await Promise.all([
                (options.runtimeInfo ?? httpRuntimeInfo)(ip, ctx.signal),
                (options.reloaderState ?? httpReloaderState)(ip, ctx.signal),
              ])
            : [undefined, undefined];
        const name = pod.metadata.name ?? "";
        const runtime: PodRuntime = {
          uid: pod.metadata.uid ?? pod.metadata.name ?? "",
          name,
          ...(info ? { info } : {}),
        };
        const generation: PodGeneration = {
          name,
          currentImage: pod.spec?.containers?.find((c) => c.name === "prometheus")?.image === image,
          ...(reloader ? { state: reloader } : {}),
        };
        return { runtime, generation };
      }),
  );
  const pods = answers.map((a) => a.runtime);
  // The generation the pods should be on: the one written now, else the one in the config Secret.
  const candidateId =
    (candidate?.secret ?? obs.configSecret)?.metadata.annotations?.[GENERATION_ANNOTATION] ?? "";
  const generations = judgeGenerations(
    candidateId,
    answers.map((a) => a.generation),
  );
  const refusal = generations.refused[0];
  if (refusal === undefined) state.refusals.delete(key);
  else {
    const lastGood = obs.lastGood?.metadata.annotations?.[GENERATION_ANNOTATION];
    // The reload's answer is Prometheus's summary; its log says which file and rule (read once per refusal).
    const known = state.refusals.get(key) ?? new Map<string, string>();
    const id = `${refusal.pod}/${candidateId}`;
    if (!known.has(id)) {
      const podLog: PodLogClient =
        options.podLog ??
        (async (namespace, pod, signal) => {
          try {
            const text = await ctx.client.raw(
              `/api/v1/namespaces/${namespace}/pods/${pod}/log?container=prometheus&tailLines=${LOG_TAIL_LINES}`,
              signal,
            );
            return typeof text === "string" ? text : undefined;
          } catch {
            return undefined; // no pods/log access, or the pod is gone: the summary has to do
          }
        });
      const detail = reloadErrorFromLog((await podLog(req.namespace ?? "", refusal.pod, ctx.signal)) ?? "");
      known.clear();
      known.set(id, detail ?? "");
      state.refusals.set(key, known);
    }
    const detail = known.get(id) ?? "";
    const said = [refusal.message, detail].filter((m) => m !== "").join(": ") || "(no message)";
    problems.push({
      reason: "ConfigRefused",
      message: `Prometheus in ${generations.refused.map((r) => r.pod).join(", ")} refused configuration generation ${candidateId}: ${said}; it keeps running generation ${refusal.accepted || "(none yet)"}, and a restarted or recreated pod starts from ${lastGood === undefined ? "the candidate (no last-good generation recorded yet)" : `the last-good generation ${lastGood}`}: fix the object the message names (kubectl logs ${refusal.pod} -c prometheus has the details)`,
    });
  }
  if (generations.allAccepted && candidate !== undefined) {
    await recordLastGood(
      ctx,
      p,
      obs,
      lastGoodSecrets(p, candidate.secret, candidate.shards, p.spec.version),
      problems,
    );
  }
  // Pods that do not run (unpullable image, unschedulable, crash-looping) say why.
  problems.push(...podProblems(obs.serverPods));
  const reloads = judgeReloads(state.reloads.get(key) ?? new Map(), pods);
  state.reloads.set(key, reloads.seen);
  if (reloads.success > 0) options.metrics.reloads.inc({ result: "success" }, reloads.success);
  if (reloads.failure > 0) options.metrics.reloads.inc({ result: "failure" }, reloads.failure);
  // A refusal ConfigRefused already explains is not said twice.
  const failing = reloads.failing.filter((name) => !generations.refused.some((r) => r.pod === name));
  if (failing.length > 0) {
    problems.push({
      reason: "ReloadFailed",
      message: `${failing.join(", ")} could not load the latest configuration and keep running the previous one: see kubectl logs <pod> -c prometheus`,
    });
  }
  // Feedback on each monitor: Accepted=True once every pod runs a configuration holding it.
  let bindings: BindingsResult | undefined;
  if (selection !== undefined) {
    const load = loadStateOf({
      server: key,
      notWritten: configProblem !== undefined,
      allAccepted: generations.allAccepted,
      refused: refusal === undefined ? undefined : { pods: generations.refused.map((r) => r.pod) },
    });
    bindings = await syncBindings(ctx, p, selection.feedback, obs.monitors, load, state.monitorStatus, now);
  }
  // Pods still on their way to the candidate: look again soon, to record it as last-good once they all run it.
  const catchingUp =
    candidate !== undefined &&
    !generations.allAccepted &&
    generations.refused.length === 0 &&
    answers.some((a) => a.generation.state !== undefined && a.generation.state.accepted !== candidateId);

  // Status, events, metrics.
  const selected = selection === undefined ? undefined : selectedStatus(selection);
  const written = configProblem === undefined ? selected : undefined;
  if (selected !== undefined) {
    options.metrics.observe(p.metadata.namespace ?? "", p.metadata.name ?? "", {
      ServiceMonitor: selected.serviceMonitors?.length ?? 0,
      PodMonitor: selected.podMonitors?.length ?? 0,
      PrometheusRule: selected.rules?.length ?? 0,
    });
  }
  options.metrics.observeReplicas(
    p.metadata.namespace ?? "",
    p.metadata.name ?? "",
    p.spec.replicas,
    obs.statefulSet?.status?.readyReplicas ?? 0,
  );
  const problem = problems[0];
  if (problem !== undefined) {
    const before = findCondition(p.status?.conditions, "Degraded");
    if (before?.status !== "True" || before.reason !== problem.reason || before.message !== problem.message) {
      ctx.log.warn({ reason: problem.reason }, problem.message);
      ctx.recorder.event(p, "Warning", problem.reason, "Reconcile", problem.message);
    }
  }
  const status = statusOf(
    p,
    {
      ...(obs.statefulSet === undefined ? {} : { statefulSet: obs.statefulSet }),
      ...(written === undefined ? {} : { selected: written }),
      ...(selection === undefined
        ? {}
        : { notAccepted: selection.feedback.filter((f) => !f.inConfig).length }),
      ...(bindings === undefined ? {} : { noStatusKinds: bindings.noStatusKinds }),
      ...(configHash === undefined ? {} : { configHash }),
      problems,
      ...(configProblem === undefined ? {} : { configProblem }),
    },
    now,
  );
  await writeStatus(ctx, p, status);
  const progressing = findCondition(status.conditions, "Progressing")?.status === "True";
  return { requeueAfter: progressing || catchingUp ? REQUEUE.rollingOut : REQUEUE.inSync };
}

const none = { serviceMonitors: [], podMonitors: [], rules: [] };

async function writeStatus(
  ctx: ReconcileContext,
  p: Prometheus,
  status: NonNullable<Prometheus["status"]>,
): Promise<void> {
  const patch = statusMergePatch(p.status, status);
  if (patch !== undefined) {
    await ctx.client.patchStatus(
      PrometheusKind,
      p.metadata.name ?? "",
      p.metadata.namespace ?? "",
      patch,
      "merge",
      {
        signal: ctx.signal,
      },
    );
  }
}

/** The live rule shards as shardRuleFiles reads them: index -> file name -> contents (missing indexes empty). */
function liveShardFiles(p: Prometheus, shards: readonly SecretObject[]): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  const prefix = `${serverName(p)}-rules-`;
  for (const s of shards) {
    const index = Number((s.metadata.name ?? "").slice(prefix.length));
    if (!Number.isInteger(index) || index < 0) continue;
    while (out.length <= index) out.push({});
    out[index] = Object.fromEntries(
      Object.entries(s.data ?? {}).map(([f, v]) => [f, Buffer.from(v, "base64").toString("utf8")]),
    );
  }
  return out;
}

/**
 * Records `lastGood` (a generation every pod accepted): its rule shards first, then the Secret naming the generation
 * (the init container checks the files against the checksums in that Secret, so a copy interrupted between two
 * writes is never taken for a good one), then the last-good shards the generation no longer uses. Unchanged objects
 * are not written. A refused write is a problem, as elsewhere.
 */
async function recordLastGood(
  ctx: ReconcileContext,
  p: Prometheus,
  obs: Observation,
  lastGood: LastGood,
  problems: Problem[],
): Promise<void> {
  const opts = { fieldManager: FIELD_MANAGER, force: true };
  const live = new Map(obs.lastGoodShards.map((s) => [s.metadata.name ?? "", s]));
  try {
    for (const shard of lastGood.shards) {
      await applyIfChanged(ctx.client, Secret, shard, live.get(shard.metadata.name ?? ""), opts);
    }
    const applied = await applyIfChanged(ctx.client, Secret, lastGood.secret, obs.lastGood, opts);
    if (applied.applied) {
      const id = lastGood.secret.metadata.annotations?.[GENERATION_ANNOTATION] ?? "";
      ctx.recorder.event(
        p,
        "Normal",
        "LastGoodRecorded",
        "UpdateConfig",
        `every pod accepted configuration generation ${id}: recorded in Secret ${lastGood.secret.metadata.name} as the one a starting pod loads`,
      );
    }
    const wanted = new Set(lastGood.shards.map((s) => s.metadata.name ?? ""));
    for (const s of obs.lastGoodShards) {
      if (wanted.has(s.metadata.name ?? "")) continue;
      await ctx.client
        .delete(Secret, s.metadata.name ?? "", p.metadata.namespace ?? "", { signal: ctx.signal })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }
  } catch (err) {
    if (!isRefusal(err)) throw err;
    problems.push(refusalProblem(lastGood.secret, err));
  }
}

/** What {@link act} writes for the configuration. */
interface ConfigObjects {
  /** The config Secret; undefined keeps the live one. */
  secret?: SecretObject;
  /** The rule shards wanted; undefined keeps the live ones. */
  shards?: SecretObject[];
  /** Rule shard slots the pods mount. */
  slots: number;
}

/**
 * Applies every object of the server (no request for one that already matches) and deletes what is no longer
 * wanted: RBAC outside the discovery scope, the PDB below two replicas, rule shards no longer needed (once every
 * server pod carries the configuration that no longer lists their files). A write the API server refuses is a
 * problem, not an error; the answer is the first refusal of a configuration write (a rule shard or the config
 * Secret), undefined when the configuration was written.
 */
async function act(
  ctx: ReconcileContext,
  p: Prometheus,
  obs: Observation,
  settings: PodSettings,
  selection: Selection | undefined,
  problems: Problem[],
  config: ConfigObjects,
): Promise<Problem | undefined> {
  const namespace = p.metadata.namespace ?? "";
  const opts = { fieldManager: FIELD_MANAGER, force: true };
  const ownedLive = (kind: string, name: string) => obs.owned.get(`${kind}/${name}`) as never;
  /** Runs one write; a refusal becomes a problem (and false), anything else is thrown. */
  const attempt = async (obj: KubeObject, write: () => Promise<unknown>, reason?: string) => {
    try {
      await write();
      return true;
    } catch (err) {
      if (!isRefusal(err)) throw err;
      problems.push(refusalProblem(obj, err, reason));
      return false;
    }
  };

  if (p.spec.serviceAccountName === undefined) {
    const sa = serviceAccount(p);
    await attempt(sa, () =>
      applyIfChanged(ctx.client, ServiceAccount, sa, ownedLive("ServiceAccount", serverName(p)), opts),
    );
  }

  // RBAC: exactly the namespaces the monitors look in; kept as is when the selection is unknown.
  if (selection !== undefined) {
    const scope = discoveryScope([...selection.serviceMonitors, ...selection.podMonitors]);
    const rbac = discoveryRbac(p, scope);
    // And what spec.clusterMetrics asks for (kubelet, API server), cluster-wide.
    rbac.foreign.push(...clusterMetricsRbac(p));
    if (rbac.foreign.length > 0) await addFinalizer(ctx.client, PrometheusKind, p, RBAC_FINALIZER);
    const wanted = new Set<string>();
    for (const o of rbac.owned) {
      wanted.add(`${o.kind}/${o.metadata.name}`);
      const kind = (o.kind === "Role" ? Role : RoleBinding) as Kind;
      await attempt(o, () =>
        applyIfChanged(ctx.client, kind, o, ownedLive(o.kind ?? "", o.metadata.name ?? ""), opts),
      );
    }
    for (const kind of ["Role", "RoleBinding"]) {
      const live = obs.owned.get(`${kind}/${serverName(p)}`);
      if (live !== undefined && !wanted.has(`${kind}/${serverName(p)}`))
        await deleteAll(ctx, [live as ForeignRbacObject]);
    }
    const foreignKey = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    const liveForeign = new Map(obs.foreign.map((o) => [foreignKey(o), o]));
    for (const o of rbac.foreign) {
      await attempt(o, () =>
        applyIfChanged(ctx.client, rbacKind(o), o, liveForeign.get(foreignKey(o)), opts),
      );
      liveForeign.delete(foreignKey(o));
    }
    await deleteAll(ctx, [...liveForeign.values()]);
    if (rbac.foreign.length === 0 && hasFinalizer(p, RBAC_FINALIZER)) {
      await removeFinalizer(ctx.client, PrometheusKind, p, RBAC_FINALIZER);
    }
  }

  // The rule shards first, so that a configuration listing a new rule file never reaches the API server before it.
  let refused: Problem | undefined;
  const liveShards = new Map(obs.ruleShards.map((s) => [s.metadata.name ?? "", s]));
  for (const shard of config.shards ?? []) {
    const name = shard.metadata.name ?? "";
    const ok = await attempt(shard, () =>
      applyIfChanged(ctx.client, Secret, shard, liveShards.get(name), opts),
    );
    if (!ok) refused ??= problems.at(-1);
  }
  const secret = config.secret;
  if (secret !== undefined) {
    const before = obs.configSecret;
    let applied = { applied: false };
    const ok = await attempt(secret, async () => {
      applied = await applyIfChanged(ctx.client, Secret, secret, before, opts);
    });
    if (!ok) refused ??= problems.at(-1);
    if (applied.applied && before !== undefined) {
      const hash = secret.metadata.annotations?.[CONFIG_HASH_ANNOTATION] ?? "";
      ctx.recorder.event(
        p,
        "Normal",
        "ConfigurationChanged",
        "UpdateConfig",
        `configuration ${hash} written to Secret ${serverName(p)}; the pods reload it without restarting`,
      );
    }
  }
  if (secret !== undefined && refused === undefined) {
    // Each server pod stamped with the configuration it should load: the kubelet refreshes the mounted Secret at
    // once instead of at its next periodic sync, so the reloader sees it within seconds (once per change and pod).
    const hash = secret.metadata.annotations?.[CONFIG_HASH_ANNOTATION] ?? "";
    await annotatePods(ctx.client, obs.serverPods, CONFIG_HASH_ANNOTATION, hash, {
      fieldManager: FIELD_MANAGER,
    });
  }

  if (config.shards !== undefined && refused === undefined) {
    // Shards no longer needed hold only files the new configuration does not list (a file never leaves a shard
    // that still holds others, and the first file kept in a shard never moves): deleted once every running server
    // pod carries the configuration hash (stamped by an earlier reconcile, after the configuration was written).
    const wanted = new Set(config.shards.map((s) => s.metadata.name ?? ""));
    const hash = secret?.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    const podsCarry = obs.serverPods
      .filter((pod) => pod.metadata.deletionTimestamp === undefined)
      .every((pod) => pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION] === hash);
    const unneeded = obs.ruleShards.filter((s) => !wanted.has(s.metadata.name ?? ""));
    if (
      podsCarry &&
      hash !== undefined &&
      obs.configSecret?.metadata.annotations?.[CONFIG_HASH_ANNOTATION] === hash
    ) {
      for (const s of unneeded) {
        await attempt(s, () =>
          ctx.client
            .delete(Secret, s.metadata.name ?? "", namespace, { signal: ctx.signal })
            .catch((err: unknown) => {
              if (!isNotFound(err)) throw err;
            }),
        );
      }
    }
  }

  for (const svc of [governingService(p), clientService(p)]) {
    await attempt(svc, () =>
      applyIfChanged(ctx.client, Service, svc, ownedLive("Service", svc.metadata.name ?? ""), opts),
    );
  }

  const live = obs.statefulSet;
  const liveSize = live?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
  const wantSize =
    p.spec.storage.ephemeral === true ? undefined : (p.spec.storage.size ?? DEFAULT_STORAGE_SIZE);
  if (liveSize !== undefined && wantSize !== undefined && wantSize !== liveSize) {
    // A StatefulSet's claim template is immutable: keep it (and the retention size derived from it), and say what to do.
    problems.push({
      reason: "StorageSizeChangeNotApplied",
      message: `spec.storage.size ${wantSize} differs from the claims' ${liveSize}: a StatefulSet cannot change its claim template; expand each claim data-${serverName(p)}-<ordinal> by hand (if its StorageClass allows expansion)`,
    });
  }
  const sts = statefulSet(p, settings, config.slots, liveSize ?? wantSize);
  await attempt(sts, () => applyIfChanged(ctx.client, StatefulSet, sts, live, opts), "StatefulSetRefused");

  const pdb = podDisruptionBudget(p);
  const livePdb = ownedLive("PodDisruptionBudget", serverName(p)) as KubeObject | undefined;
  if (pdb !== undefined) {
    await attempt(pdb, () => applyIfChanged(ctx.client, PodDisruptionBudget, pdb, livePdb as never, opts));
  } else if (livePdb !== undefined) {
    await ctx.client
      .delete(PodDisruptionBudget, serverName(p), namespace, { signal: ctx.signal })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
  return refused;
}

function rbacKind(o: KubeObject): Kind {
  switch (o.kind) {
    case "Role":
      return Role as Kind;
    case "RoleBinding":
      return RoleBinding as Kind;
    case "ClusterRole":
      return ClusterRole as Kind;
    default:
      return ClusterRoleBinding as Kind;
  }
}

async function deleteAll(ctx: ReconcileContext, objects: readonly KubeObject[]): Promise<void> {
  for (const o of objects) {
    await ctx.client
      .delete(rbacKind(o), o.metadata.name ?? "", o.metadata.namespace, { signal: ctx.signal })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
}
