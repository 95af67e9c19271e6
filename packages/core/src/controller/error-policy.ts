// A controller's error policy (kube-rs' error_policy): an operator maps its own error types, once when it sets up the
// controller, to what is done with a reconcile that threw one: requeue after a delay instead of the exponential
// backoff, conditions on the object's status, an Event. Each reconcile then throws its domain error instead of
// catching it inline. Used by the controller's workers and by reconcileOnce, so a unit test sees what a worker does.
import type { Kind } from "../api/kinds.ts";
import type { KubeObject, ObjectKey } from "../api/object.ts";
import type { Cache } from "../cache/cache.ts";
import type { Client } from "../client/client.ts";
import { type Condition, type ConditionInput, conditionsEqual, setCondition } from "../helpers/conditions.ts";
import type { EventRecorder } from "../helpers/event-recorder.ts";
import type { Logger } from "../util/logger.ts";

/** An Event an {@link ErrorPolicy} records about the object whose reconcile failed. */
export interface ErrorEvent {
  /** Default "Warning". */
  type?: "Normal" | "Warning";
  /** CamelCase, e.g. "SnapshotDeletionFailed". */
  reason: string;
  /** What the reconcile was doing (the Event's `action`); default "Reconcile". */
  action?: string;
  /** Default: the error's message. */
  note?: string;
}

/** What the controller does with a reconcile error its {@link ErrorPolicy} recognises. */
export interface ErrorAction {
  /**
   * Reconcile again after this many milliseconds instead of the rate-limited exponential backoff: the error is
   * handled, as if the reconcile had returned `{ requeueAfter }` (failures forgotten, counted as
   * `result="requeue_after"` and not in `controller_runtime_reconcile_errors_total`, logged at warn). Without it
   * the error is retried with backoff like any other, after the conditions and the Event are recorded.
   */
  requeueAfter?: number;
  /**
   * Set on the object's `status.conditions` (`observedGeneration` defaults to the object's generation), with a
   * merge patch of the status subresource sent only when they change.
   */
  conditions?: readonly ConditionInput[];
  /** Recorded about the object (a repeat folds into the Event's series). */
  event?: ErrorEvent;
}

/**
 * Maps an error a reconcile threw to an {@link ErrorAction}, or to undefined for the default handling (a retry with
 * backoff; no retry for a `TerminalError`). Given the object as the cache holds it. Not asked about programming
 * errors (`TypeError`, `ReferenceError`, ...) and thrown non-Errors, which are panics; when the reconcile's signal
 * aborted (leadership lost, a timeout, the end of a shutdown); nor when the object is gone. A policy that throws is
 * logged, and the reconcile's error gets the default handling.
 *
 * ```ts
 * class StorageError extends Error {}
 * controller({
 *   name: "backup",
 *   for: Backup,
 *   reconcile, // throws a StorageError when the bucket does not answer
 *   errorPolicy: (err) =>
 *     err instanceof StorageError
 *       ? {
 *           requeueAfter: 60_000,
 *           conditions: [{ type: "Degraded", status: "True", reason: "StorageUnreachable", message: err.message }],
 *           event: { reason: "StorageUnreachable" },
 *         }
 *       : undefined,
 * });
 * ```
 */
export type ErrorPolicy<T extends KubeObject = KubeObject> = (err: Error, obj: T) => ErrorAction | undefined;

/** What applying a policy needs of a reconcile's context. */
export interface ErrorPolicyContext {
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly client: Client;
  readonly cache: Cache;
  readonly recorder: EventRecorder;
}

const PROGRAMMING_ERRORS = [TypeError, ReferenceError, RangeError, SyntaxError];

/** The JavaScript analogue of a Go panic: a programming error or a thrown non-Error. */
export function isPanic(thrown: unknown): boolean {
  return !(thrown instanceof Error) || PROGRAMMING_ERRORS.some((E) => thrown.constructor === E);
}

/**
 * Asks `policy` about what a reconcile of `req` (an object of `kind`) threw and performs its action: writes the
 * conditions, records the Event. Returns the delay to requeue after when the error is handled, undefined when it gets
 * the default handling (the policy does not map it, or writing the conditions failed).
 */
export async function applyErrorPolicy<T extends KubeObject>(
  policy: ErrorPolicy<T>,
  kind: Kind<T>,
  req: ObjectKey,
  thrown: unknown,
  ctx: ErrorPolicyContext,
): Promise<number | undefined> {
  if (isPanic(thrown) || ctx.signal.aborted) return undefined;
  const err = thrown as Error;
  let obj: T | undefined;
  let action: ErrorAction | undefined;
  try {
    obj = await ctx.cache.get(kind, req.name, kind.namespaced ? req.namespace : undefined);
    if (obj === undefined) return undefined;
    action = policy(err, obj);
  } catch (policyErr) {
    ctx.log.error(
      { err: policyErr, reconcileErr: err },
      "error policy failed; the error gets the default handling",
    );
    return undefined;
  }
  if (action === undefined) return undefined;
  if (action.conditions !== undefined && action.conditions.length > 0) {
    try {
      await writeConditions(kind, obj, action.conditions, ctx);
    } catch (writeErr) {
      ctx.log.warn(
        { err: writeErr, reconcileErr: err },
        "error policy could not write its conditions; the error gets the default handling",
      );
      return undefined;
    }
  }
  if (action.event !== undefined) {
    const e = action.event;
    ctx.recorder.event(obj, e.type ?? "Warning", e.reason, e.action ?? "Reconcile", e.note ?? err.message);
  }
  const delay = action.requeueAfter;
  return delay !== undefined && delay > 0 ? delay : undefined;
}

/** Sets `conditions` on the object's status: one merge patch of `status.conditions`, none when nothing changes. */
async function writeConditions<T extends KubeObject>(
  kind: Kind<T>,
  obj: T,
  conditions: readonly ConditionInput[],
  ctx: ErrorPolicyContext,
): Promise<void> {
  const live = (obj as { status?: { conditions?: Condition[] } }).status?.conditions;
  const generation = obj.metadata.generation;
  let next: Condition[] = live ?? [];
  const now = new Date();
  for (const c of conditions) {
    next = setCondition(
      next,
      c.observedGeneration === undefined && generation !== undefined
        ? { ...c, observedGeneration: generation }
        : c,
      now,
    );
  }
  if (conditionsEqual(next, live)) return;
  await ctx.client.patchStatus(
    kind,
    obj.metadata.name ?? "",
    obj.metadata.namespace,
    { status: { conditions: next } },
    "merge",
    { signal: ctx.signal },
  );
}
