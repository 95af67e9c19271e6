// A controller: watches kinds, maps events to reconcile requests on a rate-limited work queue, and runs
// the reconciler on up to maxConcurrentReconciles workers with controller-runtime's result semantics.
import { randomUUID } from "node:crypto";
import type { Kind } from "../api/kinds.ts";
import { type KubeObject, keyOf, type ObjectKey, parseKey } from "../api/object.ts";
import type { Cache } from "../cache/cache.ts";
import type { EventHandler } from "../cache/informer.ts";
import type { InformerFactory } from "../cache/informer-factory.ts";
import type { Client } from "../client/client.ts";
import { isTerminalError } from "../client/errors.ts";
import type { EventRecorder } from "../helpers/event-recorder.ts";
import type { CoreMetrics } from "../metrics/metrics.ts";
import type { RateLimiter } from "../queue/rate-limiter.ts";
import { WorkQueue } from "../queue/workqueue.ts";
import type { Logger } from "../util/logger.ts";
import { applyErrorPolicy, type ErrorPolicy, isPanic } from "./error-policy.ts";
import type { Predicate } from "./predicates.ts";
import { checkFieldManager, type ReconcileContext, reconcileContext } from "./reconcile-context.ts";

/** What to reconcile: the namespace ("" when cluster-scoped) and name of one object of the `for` kind. */
export type ReconcileRequest = ObjectKey;

/** What the reconciler asks for next. Returning nothing means success: no requeue. */
export interface Result {
  /** Reconcile again after this many milliseconds (failure history is forgotten). */
  requeueAfter?: number;
  /** Reconcile again soon, rate-limited (prefer requeueAfter or throwing). */
  requeue?: boolean;
}

/** A reconciler is a function: level-triggered, idempotent, given a key and never an event. */
// biome-ignore lint/suspicious/noConfusingVoidType: lets `async () => {}` be a reconciler that succeeded.
export type Reconciler = (req: ReconcileRequest, ctx: ReconcileContext) => Promise<Result | undefined | void>;

/** A watched kind whose events map to requests of the controller's kind. */
export interface Watch<U extends KubeObject = KubeObject> {
  kind: Kind<U>;
  map(obj: U): ReconcileRequest[];
  predicates?: Predicate<U>[];
}

/** An owned kind with predicates on its events (e.g. only Pods whose phase changed). */
export interface Owned<U extends KubeObject = KubeObject> {
  kind: Kind<U>;
  predicates?: Predicate<U>[];
}

/** A typed owned kind: `owns(Pod, [predicate])` infers the object type for the predicates. */
export function owns<U extends KubeObject>(kind: Kind<U>, predicates: Predicate<U>[]): Owned<U> {
  return { kind, predicates };
}

/** A typed watch: `watch(Secret, (s) => [...])` infers the object type for the map function. */
export function watch<U extends KubeObject>(
  kind: Kind<U>,
  map: (obj: U) => ReconcileRequest[],
  predicates?: Predicate<U>[],
): Watch<U> {
  return predicates ? { kind, map, predicates } : { kind, map };
}

/**
 * A watch's map function: the object named by `label` on the watched object, in the same namespace (none when the
 * label is absent). For children an operator deliberately leaves without an owner reference (e.g. data claims it
 * keeps when their resource is deleted), whose events `owns` cannot map: `watch(PersistentVolumeClaim,
 * requestFromLabel("app.kubernetes.io/instance"))`.
 */
export function requestFromLabel(label: string): (obj: KubeObject) => ReconcileRequest[] {
  return (obj) => {
    const name = obj.metadata.labels?.[label];
    if (name === undefined || name === "") return [];
    return [{ namespace: obj.metadata.namespace ?? "", name }];
  };
}

export interface ControllerOptions<T extends KubeObject> {
  /** Unique per manager; the `controller` label of every metric. */
  name: string;
  /** The kind this controller reconciles. */
  for: Kind<T>;
  /**
   * Kinds whose controller owner reference points at a `for` object: their events enqueue the owner. An
   * entry may carry predicates: `owns(Pod, [labelsChanged()])` or `{ kind: Pod, predicates }`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: each entry has its own object type; owns() keeps them typed.
  owns?: (Kind | Owned<any>)[];
  watches?: Watch[];
  /** Filters for events of the `for` kind; all must pass. */
  predicates?: Predicate<T>[];
  /** Default 1. A key is never reconciled by two workers at once. */
  maxConcurrentReconciles?: number;
  /** Aborts ctx.signal and counts a timeout after this many ms; the reconcile is retried. Default: none. */
  reconcileTimeoutMs?: number;
  /** Default: max(per-item exponential 5 ms..1000 s, token bucket 10 qps burst 100). */
  rateLimiter?: RateLimiter<string>;
  reconcile: Reconciler;
  /**
   * The field manager of the controller's server-side applies (`ctx.apply`), recorded in the `managedFields` of
   * every object it applies: one name per operator (e.g. "capstan-etcd-operator"), kept across releases (a new
   * name leaves the old one owning the fields). Without it `ctx.apply` rejects.
   */
  fieldManager?: string;
  /**
   * Maps the operator's own errors, once for every reconcile, to a requeue after a delay, conditions and an Event
   * instead of the backoff (kube-rs' error_policy; see {@link ErrorPolicy}). Errors it returns nothing for get
   * the default handling.
   */
  errorPolicy?: ErrorPolicy<T>;
}

/** How a controller runs and stops (the manager passes these). */
export interface ControllerStartOptions {
  /** In-flight reconciles get this long to finish after `signal` aborts; then their signal aborts. Default 30 s. */
  gracePeriodMs?: number;
  /**
   * Aborts every in-flight reconcile's signal at once, with no grace period: leadership was lost, and a
   * reconcile that keeps writing would race the new leader.
   */
  cancel?: AbortSignal;
}

/** A reconcile in progress. */
export interface InFlightReconcile {
  request: ReconcileRequest;
  reconcileID: string;
  /** How long it has been running. */
  runningMs: number;
}

/** What the manager hands a controller when it is added. */
export interface ControllerEnv {
  client: Client;
  cache: Cache;
  informers: InformerFactory;
  recorder: EventRecorder;
  metrics: CoreMetrics;
  logger: Logger;
  /** Informer scope (the manager's namespace-scoped mode), if any. */
  namespace?: string;
}

/** Type-safe constructor helper: `mgr.add(controller({ name, for: EtcdCluster, reconcile }))`. */
export function controller<T extends KubeObject>(options: ControllerOptions<T>): Controller<T> {
  return new Controller(options);
}

type Outcome = "success" | "error" | "requeue" | "requeue_after";
const OUTCOMES: Outcome[] = ["success", "error", "requeue", "requeue_after"];

/**
 * A controller (controller-runtime's): the informers of its `for`, `owns` and `watches` kinds feed a rate-limited,
 * de-duplicating work queue of requests, and up to `maxConcurrentReconciles` workers run the reconciler on them,
 * never one key on two workers at once. Make one with {@link controller} and add it to a `Manager`; subclass it to
 * hook into {@link Controller.bind}.
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  /** The field manager of its applies (`ControllerOptions.fieldManager`), if any. */
  readonly fieldManager: string | undefined;
  private readonly options: ControllerOptions<T>;
  private env: ControllerEnv | undefined;
  private queue: WorkQueue<string> | undefined;
  private readonly unsubscribe: (() => void)[] = [];
  /** Aborted when the shutdown deadline passes or leadership is lost: in-flight reconciles are told to stop. */
  private readonly hardStop = new AbortController();
  /** Reconciles in progress by reconcileID. */
  private readonly running = new Map<string, { request: ReconcileRequest; startedAt: number }>();

  constructor(options: ControllerOptions<T>) {
    if (!/^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/.test(options.name)) {
      throw new Error(`controller name "${options.name}" must be lower-case alphanumerics, '-', '_' or '.'`);
    }
    const workers = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new Error(
        `controller ${options.name}: maxConcurrentReconciles must be a positive integer, got ${workers}`,
      );
    }
    checkFieldManager(options.name, options.fieldManager);
    this.name = options.name;
    this.fieldManager = options.fieldManager;
    this.options = options;
  }

  /** Called by the manager on add: creates the informers this controller needs so they start with the cache. */
  bind(env: ControllerEnv): void {
    if (this.env) throw new Error(`controller ${this.name} is already added to a manager`);
    this.env = { ...env, logger: env.logger.child({ controller: this.name }) };
    this.informerFor(this.options.for);
    for (const owned of this.ownedKinds()) this.informerFor(owned.kind);
    for (const w of this.options.watches ?? []) this.informerFor(w.kind);
    const m = env.metrics;
    for (const result of OUTCOMES) m.reconcileTotal.inc({ controller: this.name, result }, 0);
    m.reconcileErrors.inc({ controller: this.name }, 0);
    m.terminalReconcileErrors.inc({ controller: this.name }, 0);
    m.reconcilePanics.inc({ controller: this.name }, 0);
    m.reconcileTimeouts.inc({ controller: this.name }, 0);
    m.maxConcurrentReconciles.set({ controller: this.name }, this.options.maxConcurrentReconciles ?? 1);
    m.activeWorkers.set({ controller: this.name }, 0);
  }

  /**
   * The kinds this controller reads through the cache, without starting anything: its `for` kind, its `owns`
   * kinds and its `watches` kinds, as declared (metadata-only descriptors stay metadata-only). `capstan rbac`
   * derives the operator's read rules from them.
   */
  watchedKinds(): { for: Kind<T>; owns: Kind[]; watches: Kind[] } {
    return {
      for: this.options.for,
      owns: this.ownedKinds().map((o) => o.kind),
      watches: (this.options.watches ?? []).map((w) => w.kind),
    };
  }

  /** Enqueue a request by hand (e.g. from a timer or an external trigger). */
  enqueue(req: ReconcileRequest): void {
    this.queue?.add(keyOf(req));
  }

  /** The reconciles in progress, longest-running first (for liveness checks and shutdown errors). */
  inFlight(): InFlightReconcile[] {
    const now = performance.now();
    return [...this.running.entries()]
      .map(([reconcileID, r]) => ({ request: r.request, reconcileID, runningMs: now - r.startedAt }))
      .sort((a, b) => b.runningMs - a.runningMs);
  }

  /**
   * Subscribes to events and runs the workers until `signal` aborts, then stops taking new work and
   * resolves once every in-flight reconcile has finished. Their signal aborts when the grace period
   * passes, or at once when `options.cancel` aborts (leadership lost).
   */
  async start(signal: AbortSignal, options: ControllerStartOptions = {}): Promise<void> {
    const env = this.requireEnv();
    if (this.queue) throw new Error(`controller ${this.name} was already started`);
    const deadlineMs = options.gracePeriodMs ?? 30_000;
    const { cancel } = options;
    const cancelNow = () => this.hardStop.abort(cancel?.reason ?? new Error("leader election lost"));
    if (cancel?.aborted) cancelNow();
    else cancel?.addEventListener("abort", cancelNow, { once: true });
    const queue = new WorkQueue<string>({
      name: this.name,
      controller: this.name,
      metrics: env.metrics,
      ...(this.options.rateLimiter ? { rateLimiter: this.options.rateLimiter } : {}),
    });
    this.queue = queue;
    this.subscribe(queue);
    env.logger.info({ workers: this.options.maxConcurrentReconciles ?? 1 }, "starting workers");
    const workers = Array.from({ length: this.options.maxConcurrentReconciles ?? 1 }, () =>
      this.worker(queue),
    );
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    for (const off of this.unsubscribe.splice(0)) off();
    env.logger.info("stopping: waiting for in-flight reconciles");
    const drained = queue.shutDownWithDrain();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), deadlineMs);
        this.hardStop.signal.addEventListener("abort", () => resolve(true), { once: true });
      }),
    ]);
    clearTimeout(timer);
    cancel?.removeEventListener("abort", cancelNow);
    if (timedOut) {
      if (!this.hardStop.signal.aborted) {
        env.logger.warn({ deadlineMs }, "shutdown deadline passed: aborting in-flight reconciles");
        this.hardStop.abort(new Error("controller shutdown deadline exceeded"));
      } else {
        env.logger.warn("leadership lost: aborted in-flight reconciles at once");
      }
      queue.shutDown();
    }
    await Promise.all(workers);
    env.logger.info("stopped");
  }

  /** `owns` entries as { kind, predicates }. */
  private ownedKinds(): Owned[] {
    return (this.options.owns ?? []).map((o) =>
      typeof (o as Owned).kind === "object" ? (o as Owned) : { kind: o as Kind },
    );
  }

  private requireEnv(): ControllerEnv {
    if (!this.env) throw new Error(`controller ${this.name} must be added to a manager before it starts`);
    return this.env;
  }

  private informerFor<U extends KubeObject>(kind: Kind<U>) {
    const env = this.requireEnv();
    return env.informers.informerFor(kind, env.namespace ? { namespace: env.namespace } : {});
  }

  private subscribe(queue: WorkQueue<string>): void {
    const forKind = this.options.for;
    const enqueue = (reqs: Iterable<ReconcileRequest>) => {
      for (const r of reqs) queue.add(keyOf(r));
    };
    // The `for` kind: its own key.
    this.unsubscribe.push(
      this.informerFor(forKind).addEventHandler(
        filtered(this.options.predicates ?? [], (obj: T) => [keyFromObject(obj)], enqueue),
      ),
    );
    // Owned kinds: the controller owner, when it is of the `for` kind.
    const ownerOf = (obj: KubeObject): ReconcileRequest[] => {
      const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
      if (!ref || ref.kind !== forKind.kind || apiGroup(ref.apiVersion) !== forKind.group) return [];
      return [{ namespace: forKind.namespaced ? (obj.metadata.namespace ?? "") : "", name: ref.name }];
    };
    for (const { kind, predicates } of this.ownedKinds()) {
      this.unsubscribe.push(
        this.informerFor(kind).addEventHandler(filtered(predicates ?? [], ownerOf, enqueue)),
      );
    }
    // Arbitrary watches: the user's map function.
    const log = this.requireEnv().logger;
    for (const w of this.options.watches ?? []) {
      const map = (obj: KubeObject): ReconcileRequest[] => {
        try {
          return w.map(obj);
        } catch (err) {
          log.error({ err, kind: w.kind.kind }, "watch map function threw; event dropped");
          return [];
        }
      };
      this.unsubscribe.push(
        this.informerFor(w.kind).addEventHandler(filtered(w.predicates ?? [], map, enqueue)),
      );
    }
  }

  private async worker(queue: WorkQueue<string>): Promise<void> {
    for (;;) {
      // A key that is ready is taken without a promise; get() waits only on an empty queue.
      const key = queue.tryGet() ?? (await queue.get());
      if (key === undefined) return;
      try {
        await this.process(queue, key);
      } finally {
        queue.done(key);
      }
    }
  }

  private async process(queue: WorkQueue<string>, key: string): Promise<void> {
    const env = this.requireEnv();
    const m = env.metrics;
    const labels = { controller: this.name };
    const req = parseKey(key);
    const reconcileID = randomUUID();
    const log = env.logger.child({ namespace: req.namespace, name: req.name, reconcileID });
    const signals = [this.hardStop.signal];
    const timeoutMs = this.options.reconcileTimeoutMs;
    if (timeoutMs !== undefined) signals.push(AbortSignal.timeout(timeoutMs));
    const signal = AbortSignal.any(signals);
    const ctx: ReconcileContext = reconcileContext({
      controller: this.name,
      signal,
      log,
      reconcileID,
      client: env.client,
      cache: env.cache,
      recorder: env.recorder,
      fieldManager: this.fieldManager,
    });

    m.activeWorkers.inc(labels);
    const started = performance.now();
    this.running.set(reconcileID, { request: req, startedAt: started });
    let outcome: Outcome;
    try {
      const result = (await this.options.reconcile(req, ctx)) ?? {};
      if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
        queue.forget(key);
        queue.addAfter(key, result.requeueAfter);
        outcome = "requeue_after";
      } else if (result.requeue) {
        queue.addRateLimited(key);
        outcome = "requeue";
      } else {
        queue.forget(key);
        outcome = "success";
      }
    } catch (thrown) {
      const policy = this.options.errorPolicy;
      const requeueAfter =
        policy === undefined ? undefined : await applyErrorPolicy(policy, this.options.for, req, thrown, ctx);
      if (requeueAfter !== undefined) {
        // Handled: an error the operator expects, mapped once by its policy, is a requeue, not a failure.
        queue.forget(key);
        queue.addAfter(key, requeueAfter);
        outcome = "requeue_after";
        log.warn({ err: thrown, requeueAfter }, "reconcile failed; requeued by the error policy");
      } else {
        outcome = "error";
        this.failed(queue, key, thrown, signal, log);
      }
    } finally {
      m.activeWorkers.dec(labels);
      this.running.delete(reconcileID);
    }
    m.reconcileTotal.inc({ controller: this.name, result: outcome });
    m.reconcileTime.observe(labels, (performance.now() - started) / 1000);
  }

  /** The default handling of a reconcile error: counted, then retried with backoff (a terminal error is not). */
  private failed(
    queue: WorkQueue<string>,
    key: string,
    thrown: unknown,
    signal: AbortSignal,
    log: Logger,
  ): void {
    const m = this.requireEnv().metrics;
    const labels = { controller: this.name };
    m.reconcileErrors.inc(labels);
    const err = thrown instanceof Error ? thrown : new Error(`non-Error thrown: ${String(thrown)}`);
    if (isPanic(thrown)) m.reconcilePanics.inc(labels);
    if (this.options.reconcileTimeoutMs !== undefined && signal.aborted && !this.hardStop.signal.aborted) {
      m.reconcileTimeouts.inc(labels);
    }
    if (isTerminalError(thrown)) {
      m.terminalReconcileErrors.inc(labels);
      queue.forget(key);
      log.error({ err }, "reconcile failed with a terminal error; not retrying");
    } else {
      queue.addRateLimited(key);
      log.error({ err, retries: queue.numRequeues(key) }, "reconcile failed; retrying with backoff");
    }
  }
}

function keyFromObject(obj: KubeObject): ReconcileRequest {
  return { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" };
}

function apiGroup(apiVersion: string): string {
  const i = apiVersion.indexOf("/");
  return i < 0 ? "" : apiVersion.slice(0, i);
}

/**
 * An informer handler that applies predicates, maps the object to requests and enqueues them. For an
 * update both the old and the new object are mapped (an owner or a mapped field may have changed), and
 * the union is enqueued once.
 */
function filtered<U extends KubeObject>(
  predicates: Predicate<U>[],
  map: (obj: U) => ReconcileRequest[],
  enqueue: (reqs: Iterable<ReconcileRequest>) => void,
): EventHandler<U> {
  return {
    onAdd: (obj) => {
      if (predicates.every((p) => p.create?.(obj) ?? true)) enqueue(map(obj));
    },
    onUpdate: (oldObj, newObj) => {
      if (!predicates.every((p) => p.update?.(oldObj, newObj) ?? true)) return;
      const reqs = new Map<string, ReconcileRequest>();
      for (const r of [...map(newObj), ...map(oldObj)]) reqs.set(keyOf(r), r);
      enqueue(reqs.values());
    },
    onDelete: (obj) => {
      if (predicates.every((p) => p.delete?.(obj) ?? true)) enqueue(map(obj));
    },
  };
}
