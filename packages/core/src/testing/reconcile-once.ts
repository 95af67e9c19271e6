// reconcileOnce: a reconciler unit test without a cluster or a Manager. It seeds a fake API server, primes a
// synced cache from it, calls the reconciler once with a real ReconcileContext and reports what it wrote.
import { AssertionError } from "node:assert";
import { randomUUID } from "node:crypto";
import type { Kind } from "../api/kinds.ts";
import type { KubeObject, ObjectKey } from "../api/object.ts";
import { Cache } from "../cache/cache.ts";
import { InformerFactory } from "../cache/informer-factory.ts";
import type { ClientOptions } from "../client/client.ts";
import type { ReconcileRequest, Reconciler, Result } from "../controller/controller.ts";
import { applyErrorPolicy, type ErrorPolicy } from "../controller/error-policy.ts";
import {
  checkFieldManager,
  type ReconcileContext,
  reconcileContext,
} from "../controller/reconcile-context.ts";
import { EventRecorder } from "../helpers/event-recorder.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { collectionPath, FakeApiServer, type RecordedRequest, WRITE_VERBS } from "./fake-api-server.ts";

/** One write the reconcile made (Events are reported apart, in {@link ReconcileRun.events}). */
export interface Write {
  verb: "create" | "update" | "patch" | "apply" | "delete" | "deletecollection";
  /** The kind's name, e.g. "ConfigMap" (the resource, e.g. "configmaps", if the server does not know it). */
  kind: string;
  apiVersion: string;
  /** "" for cluster-scoped objects. */
  namespace: string;
  /** "" for a deletecollection. */
  name: string;
  /** "status" for status writes; "" for the main resource. */
  subresource: string;
  /** The object sent (create, update, apply), the patch document, or the DeleteOptions. */
  body: unknown;
  /** The HTTP status the server answered (a scripted fault shows here, e.g. 409). */
  status: number;
}

/** An event the reconciler recorded through `ctx.recorder`. */
export interface RecordedEvent {
  type: "Normal" | "Warning";
  reason: string;
  action: string;
  note: string;
  /** The object the event is about. */
  regarding: { apiVersion: string; kind: string; namespace: string; name: string };
}

export interface ReconcileOnceOptions {
  /** What to reconcile: a namespace/name key, or the object itself (its key is taken). */
  request: ReconcileRequest | KubeObject;
  /**
   * What the API server (and so the cache) holds before the reconcile. Pass a previous run's `objects` to
   * reconcile again from where it left off.
   */
  objects?: readonly KubeObject[];
  /** Custom kinds among `objects` (built-in kinds need not be listed); their caches are primed too. */
  kinds?: readonly Kind[];
  /**
   * Scripts the server after the cache is primed and before the reconcile: faults and latency affect only
   * the reconcile's own requests, e.g. `(s) => s.fail({ verb: "apply", kind: ConfigMap }, 409)`.
   */
  setup?: (server: FakeApiServer) => void | Promise<void>;
  /** Use this (started) server instead of a fresh one; it is left running afterwards. */
  server?: FakeApiServer;
  /** Restricts the cache to one namespace, as the manager's namespace-scoped mode does. */
  namespace?: string;
  /**
   * Aborts `ctx.signal` after this many ms, and bounds how long a cache read waits for a kind to sync;
   * default 60 s: never reached by a healthy unit-test reconcile, even on a loaded CI machine (a reconcile that
   * generates keys took over 10 s at load 30 on 2 cores).
   */
  timeoutMs?: number;
  /** `ctx.log`; default silent. */
  logger?: Logger;
  /** The recorder's reportingController; default "capstan.dev/test". */
  reportingController?: string;
  /** Options of the Client handed to the reconciler (e.g. `maxAttempts: 1` to see a 500 at once). */
  clientOptions?: Omit<ClientOptions, "kubeConfig">;
  /**
   * The controller's error policy: an error the reconciler throws is handled as a controller's worker handles it
   * (its conditions written, its Event recorded), and one it requeues is reported in `result` and `handledError`
   * instead of `error`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the policy of any controller; its kind is `for`'s.
  errorPolicy?: ErrorPolicy<any>;
  /** The kind the reconciler reconciles (the controller's `for`), for `errorPolicy`; default: `request`'s kind. */
  for?: Kind;
  /**
   * The controller's field manager (`controller({ fieldManager })`): what `ctx.apply` applies as and
   * `ctx.fieldManager` says; default "reconcile-once".
   */
  fieldManager?: string;
}

/** What one reconcile did. */
export interface ReconcileRun {
  /**
   * What the reconciler returned, or the requeue its `errorPolicy` made of the error it threw; undefined when it
   * threw otherwise or returned nothing.
   */
  result: Result | undefined;
  /** What the reconciler threw and `errorPolicy` did not handle, or undefined. */
  error: unknown;
  /** What the reconciler threw and `errorPolicy` handled (requeued), or undefined. */
  handledError: unknown;
  /** Every write request, in order, Events left out. */
  writes: Write[];
  /** Every event recorded, in order. */
  events: RecordedEvent[];
  /** Every request the reconcile made, reads included (the cache's list and watch calls are not). */
  requests: RecordedRequest[];
  /** The server's objects after the reconcile (Events left out): seed the next run with them. */
  objects: KubeObject[];
  /** The writes of one kind (a Kind or a kind name), optionally of one subresource ("" = main resource). */
  writesOf(kind: Kind | string, subresource?: string): Write[];
  /** An object as the server holds it after the reconcile. */
  get<T extends KubeObject>(kind: Kind<T>, name: string, namespace?: string): T | undefined;
  /** Throws an AssertionError listing the writes, if there were any: "steady state makes no writes". */
  expectNoWrites(): void;
  /** Throws an AssertionError carrying the reconciler's error, if it threw. */
  expectNoError(): void;
}

/** The harness's recorder: remembers each event as it is recorded, then writes it as the real one does. */
class RecordingEventRecorder extends EventRecorder {
  readonly recorded: RecordedEvent[] = [];

  override event(
    regarding: KubeObject,
    type: "Normal" | "Warning",
    reason: string,
    action: string,
    note: string,
    related?: KubeObject,
  ): void {
    this.recorded.push({
      type,
      reason,
      action,
      note,
      regarding: {
        apiVersion: regarding.apiVersion ?? "",
        kind: regarding.kind ?? "",
        namespace: regarding.metadata.namespace ?? "",
        name: regarding.metadata.name ?? "",
      },
    });
    super.event(regarding, type, reason, action, note, related);
  }
}

const CACHE_USER_AGENT = "capstan-reconcile-once-cache";
const EVENT_KINDS = new Set(["/apis/events.k8s.io/v1/events", "/api/v1/events"]);

/**
 * Runs `reconciler` once against an in-memory API server holding `objects`, with a cache synced from it, and
 * reports its result, the writes it made and the events it recorded:
 *
 * ```ts
 * const run = await reconcileOnce(reconcile, { kinds: [Greeting], objects: [greeting], request: greeting });
 * run.expectNoError();
 * expect(run.writesOf(ConfigMap)).toMatchObject([{ verb: "apply", name: "hello-greeting" }]);
 * const again = await reconcileOnce(reconcile, { kinds: [Greeting], objects: run.objects, request: greeting });
 * again.expectNoWrites(); // steady state
 * ```
 *
 * The reconciler gets a real Client, Cache and EventRecorder (`ctx.client`, `ctx.cache`, `ctx.recorder`), so
 * what passes here runs unchanged under a Manager. A thrown error is reported in `error`, not rethrown.
 */
export async function reconcileOnce(
  reconciler: Reconciler,
  options: ReconcileOnceOptions,
): Promise<ReconcileRun> {
  checkFieldManager("reconcile-once", options.fieldManager);
  const server = options.server ?? new FakeApiServer();
  const ownServer = options.server === undefined;
  server.register(...(options.kinds ?? []));
  const seeded = server.seed(...(options.objects ?? []));
  if (ownServer) await server.start();

  const stop = new AbortController();
  const client = server.client(options.clientOptions ?? {});
  const cacheClient = server.client({ userAgent: CACHE_USER_AGENT });
  const logger = options.logger ?? silentLogger;
  const factory = new InformerFactory({ client: cacheClient, logger });
  const timeoutMs = options.timeoutMs ?? 60_000;
  const cache = new Cache(factory, {
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    syncTimeoutMs: timeoutMs,
    signal: stop.signal,
  });
  const recorder = new RecordingEventRecorder({
    client,
    reportingController: options.reportingController ?? "capstan.dev/test",
    reportingInstance: "reconcile-once",
    logger,
  });
  try {
    // Prime: one informer per kind seeded or named, synced before the reconcile reads.
    const kinds = new Map<string, Kind>();
    for (const kind of options.kinds ?? []) kinds.set(collectionPath(kind), kind);
    for (const obj of seeded) {
      const kind = server.kindFor(obj);
      if (kind) kinds.set(collectionPath(kind), kind);
    }
    const scope = options.namespace === undefined ? {} : { namespace: options.namespace };
    for (const kind of kinds.values()) factory.informerFor(kind, scope);
    factory.start(stop.signal);
    await factory.waitForSync(stop.signal);
    await options.setup?.(server);

    const request = toRequest(options.request);
    const reconcileID = randomUUID();
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(timeoutMs)]);
    // As the controller does: the context's client, cache and apply are bound to the reconcile's signal.
    const ctx: ReconcileContext = reconcileContext({
      controller: "reconcile-once",
      signal,
      log: logger.child({ controller: "reconcile-once", ...request, reconcileID }),
      reconcileID,
      client,
      cache,
      recorder,
      fieldManager: options.fieldManager ?? "reconcile-once",
    });
    const firstRequest = server.log.length;
    let result: Result | undefined;
    let error: unknown;
    let handledError: unknown;
    try {
      result = (await reconciler(request, ctx)) ?? undefined;
    } catch (err) {
      error = err;
    }
    if (error !== undefined && options.errorPolicy !== undefined) {
      const requeueAfter = await applyErrorPolicy(
        options.errorPolicy,
        policyKind(options, server),
        request,
        error,
        ctx,
      );
      if (requeueAfter !== undefined) {
        result = { requeueAfter };
        handledError = error;
        error = undefined;
      }
    }
    await recorder.flush();
    const requests = server.log.slice(firstRequest).filter((r) => !isCacheRequest(r));
    const writes = requests
      .filter((r) => WRITE_VERBS.has(r.verb) && !EVENT_KINDS.has(collectionOf(r)))
      .map(toWrite);
    const objects = server.all().filter((o) => !isEvent(o));
    const events = [...recorder.recorded];
    return {
      result,
      error,
      handledError,
      writes,
      events,
      requests,
      objects,
      writesOf(kind, subresource) {
        return writes.filter(
          (w) =>
            (typeof kind === "string"
              ? w.kind === kind
              : w.kind === kind.kind && w.apiVersion === kind.apiVersion) &&
            (subresource === undefined || w.subresource === subresource),
        );
      },
      get<T extends KubeObject>(kind: Kind<T>, name: string, namespace?: string): T | undefined {
        const found = objects.find(
          (o) =>
            o.apiVersion === kind.apiVersion &&
            o.kind === kind.kind &&
            o.metadata.name === name &&
            (o.metadata.namespace ?? "") === (kind.namespaced ? (namespace ?? "") : ""),
        );
        return found === undefined ? undefined : (structuredClone(found) as T);
      },
      expectNoWrites() {
        if (writes.length === 0) return;
        throw new AssertionError({
          message: `expected no writes, but the reconcile of ${keyText(request)} made ${writes.length}:\n${writes.map((w) => `  ${describeWrite(w)}`).join("\n")}`,
          actual: writes.map(describeWrite),
          expected: [],
        });
      },
      expectNoError() {
        if (error === undefined) return;
        const e = new AssertionError({
          message: `expected the reconcile of ${keyText(request)} to succeed, but it threw: ${error instanceof Error ? error.message : String(error)}`,
        });
        (e as { cause?: unknown }).cause = error;
        throw e;
      },
    };
  } finally {
    stop.abort();
    await factory.stopped();
    await client.close();
    await cacheClient.close();
    if (ownServer) await server.stop();
  }
}

/** The kind an error policy's object is read as: `for`, else the kind of the object given as the request. */
function policyKind(options: ReconcileOnceOptions, server: FakeApiServer): Kind {
  const r = options.request;
  const kind = options.for ?? ("metadata" in r ? server.kindFor(r) : undefined);
  if (kind === undefined) {
    throw new Error(
      "reconcileOnce: errorPolicy needs `for` (the controller's kind) or the object as `request`",
    );
  }
  return kind;
}

function toRequest(r: ReconcileRequest | KubeObject): ReconcileRequest {
  if ("metadata" in r) return { namespace: r.metadata.namespace ?? "", name: r.metadata.name ?? "" };
  return { namespace: r.namespace, name: r.name };
}

function keyText(r: ObjectKey): string {
  return r.namespace === "" ? r.name : `${r.namespace}/${r.name}`;
}

/** The cache's list and watch calls (made with its own user agent) are not the reconciler's requests. */
function isCacheRequest(r: RecordedRequest): boolean {
  return r.userAgent === CACHE_USER_AGENT;
}

function collectionOf(r: RecordedRequest): string {
  return `${r.apiVersion.includes("/") ? `/apis/${r.apiVersion}` : `/api/${r.apiVersion}`}/${r.resource}`;
}

function isEvent(o: KubeObject): boolean {
  return o.kind === "Event" && (o.apiVersion === "events.k8s.io/v1" || o.apiVersion === "v1");
}

function toWrite(r: RecordedRequest): Write {
  return {
    verb: r.verb as Write["verb"],
    kind: r.kind,
    apiVersion: r.apiVersion,
    namespace: r.namespace,
    name:
      r.name !== ""
        ? r.name
        : (((r.body as KubeObject | undefined)?.metadata?.name as string | undefined) ?? ""),
    subresource: r.subresource,
    body: r.body,
    status: r.status,
  };
}

function describeWrite(w: Write): string {
  const key = w.namespace === "" ? w.name : `${w.namespace}/${w.name}`;
  return `${w.verb} ${w.kind} ${key}${w.subresource ? ` (${w.subresource})` : ""} -> ${w.status}`;
}
