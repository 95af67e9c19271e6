// One reconcile of a backup schedule, shared by the operators' schedule controllers (EtcdBackupSchedule,
// VaultSnapshotSchedule): list what the schedule controls -> plan (schedule-plan.ts) -> delete by retention, create
// the due one from the template -> write status, conditions and events; requeue at the next scheduled time. Each
// operator says what its kinds are, how its spec and status name the shared fields, and what restores use.
import {
  type Cache,
  isAlreadyExists,
  isNotFound,
  type Kind,
  type KubeObject,
  type ReconcileContext,
  type ReconcileRequest,
  type Result,
  setControllerReference,
  statusMergePatch,
} from "@capstan/core";
import type { BackupPhase } from "./backup-schema.ts";
import { degradedReason, scheduleConditions, scheduleReasons } from "./schedule-conditions.ts";
import { type BackupsInUse, type OwnedBackup, planSchedule, type ScheduleSettings } from "./schedule-plan.ts";
import {
  type ScheduleStatusBase,
  type ScheduleTemplate,
  type ScheduleWords,
  scheduleFields,
} from "./schedule-schema.ts";

/** A backup object a schedule creates: its spec, and the phase and completion time its reconciler writes. */
export interface ScheduledObject extends KubeObject {
  spec: unknown;
  status?: { phase?: BackupPhase | undefined; completionTime?: string | undefined } | undefined;
}

/** A schedule object: its spec holds the shared fields, its status is written here. */
export interface ScheduleObject extends KubeObject {
  spec: unknown;
  status?: ScheduleStatusBase | undefined;
}

/** What a schedule controller is: its kinds, its words and the operator's own parts. */
export interface ScheduleDefinition<S extends ScheduleObject, B extends ScheduledObject> {
  scheduleKind: Kind<S>;
  backupKind: Kind<B>;
  words: ScheduleWords;
  /** The API group: `<group>/schedule` labels and `<group>/scheduled-time` annotates what the schedule creates. */
  group: string;
  /** The app.kubernetes.io/managed-by value of what the schedule creates. */
  managedBy: string;
  /** The schedule's settings as the planner reads them. */
  settings: (schedule: S) => ScheduleSettings;
  /** The template each scheduled one is made from. */
  template: (schedule: S) => ScheduleTemplate<B["spec"]>;
  /** The ones a restore uses or may still use (retention keeps them). */
  inUse?: (cache: Cache, namespace: string) => Promise<BackupsInUse>;
}

/** Options of one reconcile. */
export interface ScheduleReconcileOptions {
  /** The time the reconcile plans at (tests); default now. */
  now?: Date;
  /** Told after each status computation whether the schedule is Degraded because its newest success is stale. */
  observed?: (namespace: string, name: string, stale: boolean) => void;
  /** Told when the schedule is gone (its metrics series go). */
  forget?: (namespace: string, name: string) => void;
}

/** Label carrying the schedule's name on what it creates. */
export const scheduleLabel = (group: string) => `${group}/schedule`;
/** Annotation on what a schedule creates: the scheduled time it was created for (RFC 3339). */
export const scheduledTimeAnnotation = (group: string) => `${group}/scheduled-time`;

/** The object a schedule creates for `scheduledTime`, named `name`, from its template, controlled by it. */
export function scheduledObject<S extends ScheduleObject, B extends ScheduledObject>(
  def: ScheduleDefinition<S, B>,
  schedule: S,
  name: string,
  scheduledTime: Date,
): B {
  const template = def.template(schedule);
  const obj = {
    apiVersion: def.backupKind.apiVersion,
    kind: def.backupKind.kind,
    metadata: {
      name,
      namespace: schedule.metadata.namespace ?? "",
      labels: {
        ...template.metadata?.labels,
        "app.kubernetes.io/managed-by": def.managedBy,
        [scheduleLabel(def.group)]: schedule.metadata.name ?? "",
      },
      annotations: {
        ...template.metadata?.annotations,
        [scheduledTimeAnnotation(def.group)]: scheduledTime.toISOString(),
      },
    },
    spec: structuredClone(template.spec),
  } as unknown as B;
  setControllerReference(schedule, def.scheduleKind, obj);
  return obj;
}

/** What `schedule` controls, as the planner reads them. */
export function ownedBackups(
  schedule: KubeObject,
  all: readonly ScheduledObject[],
  group: string,
): OwnedBackup[] {
  const uid = schedule.metadata.uid;
  return (
    all
      .filter((b) => b.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true)
      // One being deleted (its finalizer deleting the stored file) is gone as far as retention counts.
      .filter((b) => b.metadata.deletionTimestamp === undefined)
      .map((b) => {
        const scheduled =
          b.metadata.annotations?.[scheduledTimeAnnotation(group)] ?? b.metadata.creationTimestamp;
        const done = b.status?.completionTime;
        const phase = b.status?.phase;
        return {
          name: b.metadata.name ?? "",
          ...(phase === undefined ? {} : { phase }),
          scheduledTime: new Date(scheduled ?? 0),
          ...(done === undefined ? {} : { completionTime: new Date(done) }),
        };
      })
  );
}

type StatusRecord = ScheduleStatusBase & { [field: string]: unknown };

/** One reconcile of one schedule. */
export async function reconcileSchedule<S extends ScheduleObject, B extends ScheduledObject>(
  def: ScheduleDefinition<S, B>,
  req: ReconcileRequest,
  ctx: ReconcileContext,
  options: ScheduleReconcileOptions = {},
): Promise<Result | undefined> {
  const now = options.now ?? new Date();
  const schedule = await ctx.cache.get(def.scheduleKind, req.name, req.namespace);
  if (schedule === undefined || schedule.metadata.deletionTimestamp !== undefined) {
    options.forget?.(req.namespace ?? "", req.name);
    return undefined;
  }
  const { words } = def;
  const fields = scheduleFields(words);
  const reasons = scheduleReasons(words);
  const settings = def.settings(schedule);
  const namespace = schedule.metadata.namespace ?? "";
  const all = await ctx.cache.list(def.backupKind, { namespace });
  const backups = ownedBackups(schedule, all, def.group);
  const status: StatusRecord = { ...schedule.status };
  const plan = planSchedule({
    name: schedule.metadata.name ?? "",
    spec: settings,
    createdAt: new Date(schedule.metadata.creationTimestamp ?? 0),
    ...(status.lastScheduleTime === undefined ? {} : { lastScheduleTime: new Date(status.lastScheduleTime) }),
    ...(status.lastMissedTime === undefined ? {} : { lastMissedTime: new Date(status.lastMissedTime) }),
    backups,
    now,
    ...(def.inUse === undefined ? {} : { inUse: await def.inUse(ctx.cache, namespace) }),
  });

  for (const d of plan.deletes) {
    try {
      await ctx.client.delete(def.backupKind, d.name, namespace, { signal: ctx.signal });
      ctx.recorder.event(
        schedule,
        "Normal",
        reasons.deleted,
        "Retention",
        `deleted ${words.kind} ${d.name}: ${d.reason}`,
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  const next: StatusRecord = { ...status };
  const decision = plan.decision;
  let active = plan.active;
  if (decision.type === "Create") {
    try {
      const obj = scheduledObject(def, schedule, decision.name, decision.scheduledTime);
      await ctx.client.create(def.backupKind, obj, { signal: ctx.signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const missed = decision.missed > 0 ? ` (${decision.missed} earlier scheduled times were skipped)` : "";
    ctx.recorder.event(
      schedule,
      decision.missed > 0 ? "Warning" : "Normal",
      reasons.created,
      "Schedule",
      `created ${words.kind} ${decision.name} for ${decision.scheduledTime.toISOString()}${missed}`,
    );
    next.lastScheduleTime = decision.scheduledTime.toISOString();
    active = decision.name;
  } else if (decision.type === "AlreadyCreated") {
    next.lastScheduleTime = decision.scheduledTime.toISOString();
  } else if (decision.type === "Missed") {
    next.lastMissedTime = decision.scheduledTime.toISOString();
    ctx.recorder.event(
      schedule,
      "Warning",
      "MissedSchedule",
      "Schedule",
      `no ${words.noun} for ${decision.scheduledTime.toISOString()}: not started within spec.startingDeadlineSeconds (${settings.startingDeadlineSeconds}s)${decision.missed > 0 ? `; ${decision.missed} earlier times were skipped too` : ""}`,
    );
  } else if (decision.type === "Invalid" && degradedReason(status.conditions) !== "InvalidSchedule") {
    ctx.recorder.event(schedule, "Warning", "InvalidSchedule", "Schedule", decision.message);
  }

  if (plan.next === undefined) delete next.nextScheduleTime;
  else next.nextScheduleTime = plan.next.toISOString();
  if (active === undefined) delete next.active;
  else next.active = active;
  const deleted = new Set(plan.deletes.map((d) => d.name));
  const lastSuccess = backups
    .filter((b) => b.phase === "Succeeded" && !deleted.has(b.name))
    .sort((a, b) => (b.completionTime?.getTime() ?? 0) - (a.completionTime?.getTime() ?? 0))[0];
  if (lastSuccess !== undefined) {
    next[fields.lastSuccessful] = lastSuccess.name;
    if (lastSuccess.completionTime !== undefined)
      next.lastSuccessfulTime = lastSuccess.completionTime.toISOString();
  }
  const named = next[fields.lastSuccessful];
  next.conditions = scheduleConditions({
    words,
    settings,
    generation: schedule.metadata.generation,
    createdAt: new Date(schedule.metadata.creationTimestamp ?? 0),
    conditions: schedule.status?.conditions,
    status: next,
    lastSuccessful: typeof named === "string" ? named : undefined,
    plan,
    backups,
    active,
    now,
  });
  options.observed?.(namespace, req.name, degradedReason(next.conditions) === reasons.stale);
  if (schedule.metadata.generation !== undefined) next.observedGeneration = schedule.metadata.generation;

  const patch = statusMergePatch(schedule.status as StatusRecord | undefined, next);
  if (patch !== undefined) {
    await ctx.client.patchStatus(def.scheduleKind, req.name, req.namespace, patch, "merge", {
      signal: ctx.signal,
    });
  }
  if (plan.next === undefined) return undefined;
  return { requeueAfter: Math.max(1000, plan.next.getTime() - now.getTime()) };
}
