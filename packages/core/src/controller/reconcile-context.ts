// What one reconcile is given: its signal, a logger, the client and the cache bound to that signal, the event
// recorder, and server-side apply as the controller's field manager (set once: controller({ fieldManager })). Made
// the same way by the controller's workers and by reconcileOnce, so a unit test sees what a worker does.
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Cache } from "../cache/cache.ts";
import { type ApplyResult, applyIfChanged } from "../client/apply.ts";
import type { Client } from "../client/client.ts";
import type { EventRecorder } from "../helpers/event-recorder.ts";
import type { Logger } from "../util/logger.ts";

/** Everything a reconcile may use; all reads should go through `cache`. */
export interface ReconcileContext {
  /**
   * Aborted at once when leadership is lost, and when the reconcile timeout passes or the manager's
   * graceful shutdown period ends. `client` and `cache` are bound to it: their requests and reads abort
   * with it even where the signal is not passed on.
   */
  readonly signal: AbortSignal;
  /** Carries controller, namespace, name and reconcileID. */
  readonly log: Logger;
  readonly reconcileID: string;
  readonly client: Client;
  readonly cache: Cache;
  readonly recorder: EventRecorder;
  /**
   * The controller's field manager (`controller({ fieldManager })`), the name `apply` records in the objects'
   * `managedFields`; undefined when the controller has none. Pass it to the other writes that take one (e.g.
   * `annotatePods(ctx.client, pods, annotation, value, { fieldManager: ctx.fieldManager })`).
   */
  readonly fieldManager: string | undefined;
  /**
   * Server-side apply of `desired` as the controller's field manager, taking ownership of conflicting fields
   * (`force`), bound to `signal`: the one write path for the objects an operator owns. Sends nothing when `live` (the
   * object as the cache holds it) already matches (see {@link applyIfChanged}: a steady-state reconcile makes no
   * write); pass undefined when there is no live object. Rejects, sending nothing, when the controller has no field
   * manager.
   *
   * ```ts
   * const live = await ctx.cache.get(ConfigMap, desired.metadata.name ?? "", req.namespace);
   * const { applied } = await ctx.apply(ConfigMap, desired, live);
   * ```
   */
  apply<T extends KubeObject>(kind: Kind<T>, desired: T, live: T | undefined): Promise<ApplyResult<T>>;
}

/** What {@link reconcileContext} binds together. */
export interface ReconcileContextParts {
  /** The controller's name, for the error of an apply without a field manager. */
  controller: string;
  signal: AbortSignal;
  log: Logger;
  reconcileID: string;
  /** Unbound: the context holds a view of it bound to `signal` (and of `cache`). */
  client: Client;
  cache: Cache;
  recorder: EventRecorder;
  fieldManager: string | undefined;
}

/** A reconcile's context: `client` and `cache` bound to `signal`, `apply` to both and to the field manager. */
export function reconcileContext(parts: ReconcileContextParts): ReconcileContext {
  const { signal, fieldManager } = parts;
  const client = parts.client.withSignal(signal);
  return {
    signal,
    log: parts.log,
    reconcileID: parts.reconcileID,
    client,
    cache: parts.cache.withSignal(signal),
    recorder: parts.recorder,
    fieldManager,
    apply: async (kind, desired, live) => {
      if (fieldManager === undefined) {
        throw new Error(
          `controller ${parts.controller}: ctx.apply(${kind.kind} ${desired.metadata.name}) needs the controller's field manager: set controller({ fieldManager: "<operator name>" })`,
        );
      }
      return applyIfChanged(client, kind, desired, live, { fieldManager, force: true });
    },
  };
}

/**
 * Checks a controller's `fieldManager` as the API server would (1 to 128 characters), so a bad one fails when the
 * controller is made, not at its first apply.
 */
export function checkFieldManager(controller: string, fieldManager: string | undefined): void {
  if (fieldManager === undefined) return;
  if (fieldManager.length === 0 || fieldManager.length > 128) {
    throw new Error(
      `controller ${controller}: fieldManager must be 1 to 128 characters, got ${JSON.stringify(fieldManager.slice(0, 140))}`,
    );
  }
}
