// One reconcile of a Prometheus server: observe (observe.ts: the server, what it selects, its objects) -> compute
// (selectMonitors + renderConfig + shardRuleFiles) -> act (act.ts: apply what changed: ServiceAccount, RBAC, rule
// shards, config Secret, Services, StatefulSet, PDB; delete shards no longer needed once the pods carry the
// configuration without them) -> monitor bindings -> status, conditions, events and metrics (report.ts).
// Configuration changes reach the pods through the projected Secrets and the reloader sidecar: the pod template never
// changes for them. A write the API server refuses (refusals.ts) is Degraded, not a thrown error. Once every pod's
// reloader says its Prometheus accepted the candidate generation, the operator copies it to the last-good Secrets a
// starting pod loads; a generation a pod refused is Degraded ConfigRefused, with Prometheus's own message.
import {
  findCondition,
  hasFinalizer,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  removeFinalizer,
  type SecretObject,
  secretData,
} from "@capstan/core";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { loadStateOf } from "../desired/bindings.ts";
import { renderConfig } from "../desired/config.ts";
import { featureFlagProblems } from "../desired/feature-flags.ts";
import { configSecret, lastGoodSecrets, ruleShardSecrets } from "../desired/objects/secrets.ts";
import {
  DEFAULT_RELOADER_IMAGE,
  mountedRuleSlots,
  type PodSettings,
  prometheusImage,
  ruleSlots,
} from "../desired/objects/statefulset.ts";
import { GENERATION_ANNOTATION, RBAC_FINALIZER, serverName } from "../desired/objects.ts";
import { shardRuleFiles } from "../desired/rule-shards.ts";
import { type Selection, selectMonitors } from "../desired/select.ts";
import { act, deleteAll, recordLastGood } from "./act.ts";
import { type BindingsResult, syncBindings } from "./bindings.ts";
import { interestOf } from "./interest.ts";
import { keyId, observe, referencedKeys } from "./observe.ts";
import { ControllerState, type PrometheusControllerOptions, REQUEUE } from "./options.ts";
import {
  httpReloaderState,
  httpRuntimeInfo,
  judgeGenerations,
  judgeReloads,
  LOG_TAIL_LINES,
  type PodGeneration,
  type PodLogClient,
  type PodRuntime,
  reloadErrorFromLog,
} from "./reload.ts";
import { report, writeStatus } from "./report.ts";
import { type Problem, podProblems, statusOf } from "./status.ts";

/** One reconcile of one Prometheus server. */
export async function reconcilePrometheus(
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: PrometheusControllerOptions & { state?: ControllerState },
): Promise<Result | undefined> {
  const state = options.state ?? new ControllerState();
  const key = `${req.namespace}/${req.name}`;
  // Until this reconcile has selected, every Service and Pod event maps to the server; a deleted server, or one whose
  // reconcile fails before selecting, keeps no interest.
  state.interest.delete(key);
  const p = await ctx.cache.get(PrometheusKind, req.name, req.namespace);
  if (p === undefined) {
    // Deleted: what it owned goes with it (owner references); foreign RBAC went before the finalizer was removed.
    state.servers.delete(key);
    state.reloads.delete(key);
    state.refusals.delete(key);
    state.monitorStatus.forgetServer(key);
    state.referenced.forget(key);
    state.rendered.forget(key);
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
    state.interest.set(key, interestOf(p, none)); // only its own pods: no configuration is written
    await writeStatus(
      ctx,
      p,
      statusOf(p, { ...(obs.statefulSet ? { statefulSet: obs.statefulSet } : {}), problems: [] }, now),
    );
    return undefined;
  }

  const settings: PodSettings = { reloaderImage: options.reloaderImage ?? DEFAULT_RELOADER_IMAGE };
  // Feature flags the server's release does not know: passed on (Prometheus ignores them), and said.
  const problems: Problem[] = featureFlagProblems(p.spec).map((message) => ({
    reason: "UnknownFeatureFlag",
    message,
  }));

  // Compute: what the server selects and its configuration.
  let selection: Selection | undefined;
  let configHash: string | undefined;
  let configProblem: Problem | undefined;
  let first: Selection | undefined;
  /** The candidate generation written this reconcile (undefined: none computed, or a write was refused). */
  let candidate: { secret: SecretObject; shards: SecretObject[] } | undefined;
  const ruleFile = state.rendered.ruleFileRenderer(key);
  try {
    first = selectMonitors(p, obs.namespaces, obs.monitors, obs.services, obs.pods, { ruleFile });
  } catch (err) {
    // A malformed selector of the server itself (selectMonitors names the field): keep the last configuration.
    configProblem = { reason: "InvalidSelector", message: (err as Error).message };
    problems.push(configProblem);
  }
  if (first !== undefined) {
    // What this server now depends on among Services and Pods; events until here mapped to it (no interest recorded).
    // Recorded before the keys are read: the final selection only leaves monitors out, so this covers it.
    state.interest.set(key, interestOf(p, first));
    // The Secret and ConfigMap keys the chosen monitors read: a monitor whose key is missing is left out.
    const refs = referencedKeys({
      serviceMonitors: first.serviceMonitors.map((m) => m.object),
      podMonitors: first.podMonitors.map((m) => m.object),
    });
    const values = await state.referenced.readKeys(key, ctx.client, ctx.cache, refs, ctx.signal);
    // Every key read exists (the usual case): the first selection stands, as a second with keyExists would give
    // the same. Else select again, leaving out each monitor whose key is missing (named on its status).
    selection = refs.every((r) => values.has(keyId(r)))
      ? first
      : selectMonitors(p, obs.namespaces, obs.monitors, obs.services, obs.pods, {
          keyExists: (r) => values.has(keyId(r)),
          ruleFile,
        });
    // Rendered again only when the server or what it selects changed (render-cache.ts); its feedback, which the
    // configuration does not read, is left out of the arguments (and so of the cache's key).
    const { serviceMonitors, podMonitors, rules } = selection;
    const config = state.rendered.config(key, p, { serviceMonitors, podMonitors, rules });
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
  const status = await report(
    ctx,
    p,
    obs,
    options.metrics,
    { selection, configHash, configProblem, problems, bindings },
    now,
  );
  const progressing = findCondition(status.conditions, "Progressing")?.status === "True";
  return { requeueAfter: progressing || catchingUp ? REQUEUE.rollingOut : REQUEUE.inSync };
}

const none = { serviceMonitors: [], podMonitors: [], rules: [] };

/** The live rule shards as shardRuleFiles reads them: index -> file name -> contents (missing indexes empty). */
function liveShardFiles(p: Prometheus, shards: readonly SecretObject[]): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  const prefix = `${serverName(p)}-rules-`;
  for (const s of shards) {
    const index = Number((s.metadata.name ?? "").slice(prefix.length));
    if (!Number.isInteger(index) || index < 0) continue;
    while (out.length <= index) out.push({});
    out[index] = secretData(s);
  }
  return out;
}
