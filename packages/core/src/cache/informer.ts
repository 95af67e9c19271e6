// An informer: a reflector keeping an indexed store in step with the server, and event handlers told of changes.

import { type KubeObject, keyOf } from "../api/object.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { sleepUntilAborted } from "../util/sleep.ts";
import type { ListerWatcher } from "./list-watch.ts";
import { Reflector, type ReflectorOptions } from "./reflector.ts";
import {
  dropManagedFields,
  type IndexFunc,
  indexByNamespace,
  indexByOwnerUid,
  NAMESPACE_INDEX,
  OWNER_UID_INDEX,
  type ReadStore,
  Store,
} from "./store.ts";

/**
 * Callbacks for changes to an informer's objects. They run synchronously: keep them short (enqueue a key).
 * A handler that throws, or returns a promise that rejects, is logged; it never stops the informer.
 */
export interface EventHandler<T> {
  /** A new object; `isInInitialList` is true for the first list and for the replay to a late handler. */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** A changed object: its resourceVersion changed, or a periodic resync re-delivers it (oldObj === newObj). */
  onUpdate?(oldObj: T, newObj: T): void;
  /** A deleted object, in its last known state. */
  onDelete?(obj: T): void;
}

/** How an informer lists, watches and indexes. */
export interface InformerOptions<T> extends ReflectorOptions<T> {
  /** Extra indexes; the `namespace` and `ownerUid` indexes are always present. */
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Runs after managedFields are dropped (a custom transform adds to the stripping; it does not replace it).
   * May change the object in place; must return an object of the same kind.
   */
  transform?: (obj: T) => T;
  /** Keep `metadata.managedFields` in the cache (dropped by default: no controller reads them). */
  keepManagedFields?: boolean;
  /**
   * Re-delivers every cached object to the handlers as an update (oldObj === newObj) about this often, with
   * up to 10% jitter (controller-runtime's SyncPeriod). Off by default: level-triggered reconcilers
   * requeue themselves; a resync is a safety net for missed external changes.
   */
  resyncPeriodMs?: number;
}

interface Registration<T> {
  handler: EventHandler<T>;
}

/**
 * Watches one kind in one scope and keeps a local, indexed copy of its objects (client-go's
 * SharedIndexInformer). Controllers read {@link Informer.store} instead of the API server.
 */
export class Informer<T extends KubeObject> {
  /** The name given in the options (for logs and errors), e.g. "v1/ConfigMap"; "" when none was given. */
  readonly name: string;
  /** The informer's cache; empty until the first list has been stored. */
  readonly store: ReadStore<T>;
  private readonly cache: Store<T>;
  private readonly reflector: Reflector<T>;
  private readonly logger: Logger;
  private readonly handlers = new Set<Registration<T>>();
  private readonly syncWaiters = new Set<() => void>();
  private synced = false;
  private started = false;
  private readonly resyncPeriodMs: number | undefined;
  private readonly random: () => number;

  constructor(lw: ListerWatcher<T>, options: InformerOptions<T> = {}) {
    this.cache = new Store<T>({
      [NAMESPACE_INDEX]: indexByNamespace,
      [OWNER_UID_INDEX]: indexByOwnerUid,
      ...options.indexers,
    });
    this.store = this.cache;
    this.name = options.name ?? "";
    const logger = options.logger ?? silentLogger;
    this.logger = options.name === undefined ? logger : logger.child({ informer: options.name });
    this.resyncPeriodMs = options.resyncPeriodMs;
    this.random = options.random ?? Math.random;
    const custom = options.transform;
    const transform = options.keepManagedFields
      ? (custom ?? ((obj: T) => obj))
      : custom
        ? (obj: T) => custom(dropManagedFields(obj))
        : dropManagedFields;
    this.reflector = new Reflector(
      lw,
      { replace: (items) => this.replace(items), apply: (type, obj) => this.apply(type, obj) },
      { ...options, transform, dropManagedFields: options.keepManagedFields !== true, logger: this.logger },
    );
  }

  /**
   * Registers `handler` and returns a function that unregisters it. The handler first receives
   * `onAdd(obj, true)` for every object already in the store (synchronously, before this returns).
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    const registration = { handler };
    this.handlers.add(registration);
    for (const obj of this.cache.list()) this.notify([registration], (h) => h.onAdd?.(obj, true));
    return () => {
      this.handlers.delete(registration);
    };
  }

  /** Adds an index (objects already stored are indexed at once); see `Store.addIndexer`. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.cache.addIndexer(name, fn);
  }

  /** True once the first full list has been stored and its add events delivered. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once synced, or false if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (synced: boolean) => {
        this.syncWaiters.delete(onSync);
        signal?.removeEventListener("abort", onAbort);
        resolve(synced);
      };
      const onSync = () => done(true);
      const onAbort = () => done(false);
      this.syncWaiters.add(onSync);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The last list or watch error (e.g. 403 Forbidden, 404 for a missing CRD); undefined once it succeeds. */
  lastError(): Error | undefined {
    return this.reflector.lastError();
  }

  /** The resourceVersion the informer is up to date with; "" before the first list. */
  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  /** Lists and watches until `signal` aborts; resolves after cleanup. An informer starts only once. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error("informer: start() called twice");
    this.started = true;
    const resync =
      this.resyncPeriodMs === undefined ? undefined : this.resyncLoop(this.resyncPeriodMs, signal);
    await this.reflector.run(signal);
    await resync;
  }

  /** Every period (with jitter), once synced: onUpdate(obj, obj) for every cached object. */
  private async resyncLoop(periodMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleepUntilAborted(periodMs * (1 + 0.1 * this.random()), signal);
      if (signal.aborted || !this.synced) continue;
      const handlers = [...this.handlers];
      for (const obj of this.cache.list()) this.notify(handlers, (h) => h.onUpdate?.(obj, obj));
    }
  }

  /** A full list arrived: swap the store at once, then emit the events the difference implies. */
  private replace(items: T[]): void {
    const initial = !this.synced;
    const added: T[] = [];
    const updated: [T, T][] = [];
    const deleted: T[] = [];
    const keys = new Set<string>();
    for (const obj of items) {
      const key = keyOf(obj);
      keys.add(key);
      const old = this.cache.get(key);
      if (old === undefined) added.push(obj);
      else if (changed(old, obj)) updated.push([old, obj]);
    }
    for (const key of this.cache.listKeys()) {
      if (!keys.has(key)) deleted.push(this.cache.get(key)!);
    }
    this.cache.replace(items);
    const handlers = [...this.handlers];
    for (const obj of added) this.notify(handlers, (h) => h.onAdd?.(obj, initial));
    for (const [oldObj, newObj] of updated) this.notify(handlers, (h) => h.onUpdate?.(oldObj, newObj));
    for (const obj of deleted) this.notify(handlers, (h) => h.onDelete?.(obj));
    if (initial) {
      this.synced = true;
      for (const wake of [...this.syncWaiters]) wake();
    }
  }

  /** One watch event: update the store, then tell the handlers (nothing when the resourceVersion is unchanged). */
  private apply(type: "ADDED" | "MODIFIED" | "DELETED", obj: T): void {
    const handlers = [...this.handlers];
    if (type === "DELETED") {
      this.cache.remove(keyOf(obj));
      this.notify(handlers, (h) => h.onDelete?.(obj));
      return;
    }
    const old = this.cache.get(keyOf(obj));
    if (old !== undefined && !changed(old, obj)) return;
    this.cache.upsert(obj);
    if (old === undefined) this.notify(handlers, (h) => h.onAdd?.(obj, false));
    else this.notify(handlers, (h) => h.onUpdate?.(old, obj));
  }

  /**
   * Calls every still-registered handler. A handler that throws, or returns a promise that rejects (an
   * async handler), is logged and never stops the informer or the process.
   */
  private notify(registrations: Registration<T>[], call: (handler: EventHandler<T>) => unknown): void {
    for (const registration of registrations) {
      if (!this.handlers.has(registration)) continue;
      try {
        const returned = call(registration.handler);
        if (isThenable(returned)) {
          returned.then(undefined, (err: unknown) =>
            this.logger.error({ err }, "informer event handler rejected"),
          );
        }
      } catch (err) {
        this.logger.error({ err }, "informer event handler threw");
      }
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/** Whether `newObj` is a different version of `oldObj` (always true without resourceVersions). */
function changed(oldObj: KubeObject, newObj: KubeObject): boolean {
  const rv = oldObj.metadata.resourceVersion;
  return rv === undefined || rv !== newObj.metadata.resourceVersion;
}
