// The __Kind__ controller: observe (the cache), plan (pure), act (one step), report (status and Events). A
// steady-state reconcile writes nothing to the API server.
import {
  type CacheSelector,
  type Condition,
  ConfigMap,
  type Controller,
  conditionsEqual,
  controller,
  generationChanged,
  managedBySelectors,
  type PlannedStep,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  setCondition,
  stepConditions,
} from "@capstan/core";
import { type __Kind__, __Kind__Kind } from "../api/__kind__.ts";
import { configMapName, desiredConfigMap, MANAGED_BY } from "../desired/config-map.ts";
import { planNext, type Step } from "../plan/plan.ts";

/** Only the ConfigMaps the operator created are cached, not every one in the cluster. */
export function __kind__CacheSelectors(): CacheSelector[] {
  return managedBySelectors(MANAGED_BY, [ConfigMap]);
}

/** The controller that reconciles __Kind__ objects. */
export function __kind__Controller(options: { maxConcurrentReconciles?: number } = {}): Controller<__Kind__> {
  return controller({
    name: "__kind__",
    for: __Kind__Kind,
    // The field manager of ctx.apply, recorded in the managedFields of what the operator applies: never rename it.
    fieldManager: "capstan-__name__-operator",
    owns: [ConfigMap],
    predicates: [generationChanged()],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
    reconcile: reconcile__Kind__,
  });
}

/** One reconcile of one __Kind__. */
export async function reconcile__Kind__(
  req: ReconcileRequest,
  ctx: ReconcileContext,
): Promise<Result | undefined> {
  const obj = await ctx.cache.get(__Kind__Kind, req.name, req.namespace);
  if (obj === undefined || obj.metadata.deletionTimestamp !== undefined) return undefined; // owned objects go with it
  const desired = desiredConfigMap(obj);
  const live = await ctx.cache.get(ConfigMap, configMapName(obj), req.namespace);
  const foreign =
    live !== undefined && !(live.metadata.ownerReferences ?? []).some((r) => r.uid === obj.metadata.uid);
  const step = planNext({ paused: obj.spec.paused === true, desired, live, foreign });

  if (step.type === "ApplyConfigMap") {
    await ctx.apply(ConfigMap, desired, live);
    ctx.recorder.event(obj, "Normal", step.reason, "ApplyConfigMap", step.message);
  } else if (step.type === "Degraded" && conditionOf(obj, "Degraded")?.reason !== step.reason) {
    ctx.recorder.event(obj, "Warning", step.reason, "Reconcile", step.message);
  }
  await reportStatus(ctx, obj, step);
  return undefined;
}

/** The step as core's stepConditions reads it: Paused is a wait, and a ConfigMap just applied is in sync. */
function asPlanned(step: Step, configMap: string): PlannedStep {
  if (step.type === "Paused") return { type: "Wait", reason: "Paused", message: step.message };
  if (step.type === "ApplyConfigMap")
    return { type: "InSync", message: `ConfigMap ${configMap} holds spec.data` };
  return step;
}

function conditionOf(obj: __Kind__, type: string): Condition | undefined {
  return obj.status?.conditions?.find((c) => c.type === type);
}

/** Writes status only when it changed (no steady-state write). */
async function reportStatus(ctx: ReconcileContext, obj: __Kind__, step: Step): Promise<void> {
  const generation = obj.metadata.generation ?? 0;
  // After an apply the ConfigMap holds spec.data: reported as in sync, so the next reconcile writes nothing.
  const available = step.type === "InSync" || step.type === "ApplyConfigMap";
  let conditions = setCondition(obj.status?.conditions, {
    type: "Available",
    status: available ? "True" : "False",
    reason: available ? "ConfigMapReady" : step.type === "Degraded" ? step.reason : step.type,
    message: available ? `ConfigMap ${configMapName(obj)} holds spec.data` : step.message,
    observedGeneration: generation,
  });
  // Progressing and Degraded as every Capstan operator maps a step; an applied ConfigMap counts as in sync.
  const { progressing, degraded } = stepConditions(asPlanned(step, configMapName(obj)), generation);
  conditions = setCondition(conditions, progressing);
  conditions = setCondition(conditions, degraded);
  const configMap = configMapName(obj);
  if (
    obj.status?.observedGeneration === generation &&
    obj.status.configMap === configMap &&
    conditionsEqual(conditions, obj.status.conditions ?? [])
  ) {
    return;
  }
  await ctx.client.patchStatus(
    __Kind__Kind,
    obj.metadata.name ?? "",
    obj.metadata.namespace,
    { status: { observedGeneration: generation, conditions, configMap } },
    "merge",
    { signal: ctx.signal },
  );
}
