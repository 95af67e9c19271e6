// The list-and-watch loop behind an informer (client-go's Reflector): keeps a sink in step with the server.

import type { KubeObject } from "../api/object.ts";
import type { WatchEvent } from "../client/client.ts";
import { ApiError, type ApiStatus, isGone } from "../client/errors.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import { sleepUntilAborted } from "../util/sleep.ts";
import type { ListerWatcher } from "./list-watch.ts";
import { dropManagedFields } from "./store.ts";

/** Reconnect backoff: `initialMs` doubling to `maxMs`, each delay times `1 + random() * jitter`. */
export interface BackoffOptions {
  /** Default 800 ms. */
  initialMs?: number;
  /** Cap before jitter; default 30 s. */
  maxMs?: number;
  /** Back to `initialMs` after this long without a failure; default 2 min. */
  resetAfterMs?: number;
  /** Default 1.0: a delay d becomes a random value in [d, 2d). */
  jitter?: number;
}

/** How a reflector lists and watches. Every field has a client-go-like default. */
export interface ReflectorOptions<T> {
  /** Applied to every object from lists and watches before it is stored; default {@link dropManagedFields}. */
  transform?: (obj: T) => T;
  /**
   * Whether the transform drops `metadata.managedFields`, so that lists may leave them out before parsing
   * (less to parse, nothing to drop). Default: true when `transform` is unset (the default drops them).
   */
  dropManagedFields?: boolean;
  /**
   * Objects per list page; default 500. 0 lists everything in one call. A list at resourceVersion "0"
   * (the first one) is served whole from the watch cache by servers that ignore the limit there.
   */
  pageSize?: number;
  /**
   * Fill the cache with a streaming list (WatchList: a watch with `sendInitialEvents`) instead of a list,
   * then keep watching on the same call; lists when the server refuses it. Default false, as client-go's:
   * kube-apiserver 1.34 sends a list at resourceVersion "0" about twice as fast as the same objects as watch
   * events, and the client decodes a list while it arrives, never holding it whole (docs/performance.md).
   * A streaming list spares the API server the list's memory on very large collections.
   */
  watchList?: boolean;
  /** Server-side timeout of each watch call, picked at random in [min, max]; default [300, 600]. */
  watchTimeoutSeconds?: [min: number, max: number];
  /**
   * A watch that delivers no event (bookmarks included) for this long is aborted and reopened from the
   * last resourceVersion, so a half-open connection cannot silence the informer. Default 150 s.
   */
  inactivityTimeoutMs?: number;
  backoff?: BackoffOptions;
  logger?: Logger;
  /** Name for logs, e.g. "v1/ConfigMap". */
  name?: string;
  /** Source of randomness for jitter and watch timeouts; injectable for tests. */
  random?: () => number;
}

/** Where a reflector delivers what it learns; the informer implements it. */
export interface ReflectorSink<T> {
  /** A complete, consistent list: the sink's content becomes exactly `items`. */
  replace(items: T[], resourceVersion: string): void;
  /** One change from the watch, already transformed. */
  apply(type: "ADDED" | "MODIFIED" | "DELETED", obj: T): void;
}

/** A watch that ends normally faster than this without any event counts as a failure (no hot loop). */
const MIN_HEALTHY_WATCH_MS = 1000;
/** The annotation of the bookmark that ends a streaming list's initial events. */
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** A streaming list that failed before its initial events were complete; `cause` says why. */
class WatchListError extends Error {
  constructor(cause: unknown) {
    super(`streaming list failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Exponential backoff with jitter that starts over after a quiet period. */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly resetAfterMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private delay = 0;
  /** When the last delay ended, i.e. when the retry it guarded began. */
  private retriedAt = Number.NEGATIVE_INFINITY;

  constructor(options: BackoffOptions = {}, random: () => number = Math.random) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.jitter = options.jitter ?? 1.0;
    this.random = random;
  }

  /** The delay before the next retry, in ms. */
  next(now: number = Date.now()): number {
    if (now - this.retriedAt >= this.resetAfterMs) this.delay = 0;
    this.delay = this.delay === 0 ? this.initialMs : Math.min(this.delay * 2, this.maxMs);
    const ms = this.delay * (1 + this.random() * this.jitter);
    this.retriedAt = now + ms;
    return ms;
  }
}

/**
 * Lists a collection, then watches it from the list's resourceVersion, forever: re-watches when the server
 * ends a watch, reconnects with backoff after errors, relists after 410 Gone. Every failure, 410 included,
 * first waits out the backoff (as in client-go), so a failing server is never hammered and a 410 cannot
 * turn into a relist loop.
 *
 * Which list: with a ListerWatcher that supports it, a streaming list (a watch that starts with every
 * object, then goes on as a normal watch); otherwise, or when the server refuses it, a paginated list. The
 * first list of either kind asks for resourceVersion "0", which the watch cache serves at once but which
 * may be stale, as client-go's first list (the watch then brings it up to date); after a 410 the list is a
 * consistent read (resourceVersion unset), so the store never goes back in time past what it has seen.
 */
export class Reflector<T extends KubeObject> {
  private readonly lw: ListerWatcher<T>;
  private readonly sink: ReflectorSink<T>;
  private readonly transform: (obj: T) => T;
  private readonly dropManagedFields: boolean;
  private readonly pageSize: number;
  private readonly watchTimeoutSeconds: [number, number];
  private readonly inactivityTimeoutMs: number;
  private readonly backoff: Backoff;
  private readonly logger: Logger;
  private readonly random: () => number;
  private resourceVersion = "";
  private error: Error | undefined;
  /** The last resourceVersion is too old for the server (410): the next list must be consistent. */
  private resourceVersionUnavailable = false;
  private useWatchList: boolean;

  constructor(lw: ListerWatcher<T>, sink: ReflectorSink<T>, options: ReflectorOptions<T> = {}) {
    this.lw = lw;
    this.sink = sink;
    this.transform = options.transform ?? dropManagedFields;
    this.dropManagedFields = options.dropManagedFields ?? options.transform === undefined;
    this.pageSize = options.pageSize ?? 500;
    this.watchTimeoutSeconds = options.watchTimeoutSeconds ?? [300, 600];
    this.inactivityTimeoutMs = options.inactivityTimeoutMs ?? 150_000;
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff(options.backoff, this.random);
    this.logger = options.logger ?? silentLogger;
    this.useWatchList = options.watchList ?? false;
  }

  /** The resourceVersion of the last list, event or bookmark seen; "" before the first list. */
  lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  /** The last list or watch error; cleared by the next successful list. */
  lastError(): Error | undefined {
    return this.error;
  }

  /** Lists and watches until `signal` aborts; resolves once nothing is in flight and no timer is left. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList && this.useWatchList) {
          let streamed = true;
          try {
            await this.watch(signal, true); // lists, then watches on until the call ends
          } catch (err) {
            if (!(err instanceof WatchListError)) {
              needList = false; // the list was complete; the watch after it failed
              throw err;
            }
            this.watchListFailed(err.cause);
            streamed = false;
          }
          if (streamed) {
            needList = false;
            continue;
          }
        }
        if (needList) {
          await this.list(signal);
          needList = false;
        }
        await this.watch(signal, false); // ended by the server or gone quiet: watch again at once, no relist
      } catch (err) {
        if (signal.aborted) break;
        this.error = err instanceof Error ? err : new Error(String(err));
        const gone = isGone(err);
        if (gone) {
          needList = true;
          this.resourceVersionUnavailable = true;
        }
        const delayMs = this.backoff.next();
        const what = gone ? "resourceVersion expired, relisting" : needList ? "list failed" : "watch failed";
        this.logger.warn({ err, delayMs: Math.round(delayMs) }, what);
        await sleepUntilAborted(delayMs, signal);
      }
    }
  }

  /** A streaming list failed before its end: list instead, now and (if the server refused it) from now on. */
  private watchListFailed(cause: unknown): void {
    const refused = cause instanceof ApiError && cause.code >= 400 && cause.code < 500;
    if (refused && cause.code !== 410 && cause.code !== 429) {
      this.useWatchList = false; // e.g. 422 "sendInitialEvents is forbidden" when the feature is off
      this.logger.info({ err: cause }, "the server refused a streaming list; listing instead from now on");
    } else {
      if (isGone(cause)) this.resourceVersionUnavailable = true;
      this.logger.info({ err: cause }, "streaming list failed; listing instead");
    }
  }

  /** The resourceVersion a list asks for: "0" at first (watch cache), "" (consistent) after a 410. */
  private listResourceVersion(): string {
    if (this.resourceVersionUnavailable) return "";
    return this.resourceVersion === "" ? "0" : this.resourceVersion;
  }

  /**
   * A full list, page by page; if a continue token expires, once more without pagination. A list at a
   * resourceVersion the server no longer has (410, or too large) is retried at once as a consistent read.
   */
  private async list(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let resourceVersion = this.listResourceVersion();
    // client-go lists unpaginated at a known resourceVersion so the watch cache can serve it.
    let limit = resourceVersion === "" || resourceVersion === "0" ? this.pageSize : 0;
    let cont: string | undefined;
    for (;;) {
      let page: Awaited<ReturnType<ListerWatcher<T>["list"]>>;
      try {
        page = await this.lw.list({
          signal,
          transform: this.transform,
          dropManagedFields: this.dropManagedFields,
          ...(limit > 0 ? { limit } : {}),
          ...(cont !== undefined ? { continue: cont } : resourceVersion ? { resourceVersion } : {}),
        });
      } catch (err) {
        if (cont === undefined && resourceVersion !== "" && (isGone(err) || isTooLargeResourceVersion(err))) {
          this.logger.info({ resourceVersion }, "list resourceVersion unavailable; listing consistently");
          this.resourceVersionUnavailable = true;
          resourceVersion = "";
          limit = this.pageSize;
          continue;
        }
        if (cont === undefined || !isGone(err)) throw err;
        this.logger.info("list continue token expired; listing again without pagination");
        items.length = 0;
        limit = 0;
        cont = undefined;
        continue;
      }
      if (page.transformed) for (const item of page.items) items.push(item);
      else for (const item of page.items) items.push(this.transform(item));
      cont = page.continue || undefined;
      if (cont === undefined) {
        this.synced(items, page.resourceVersion);
        this.logger.debug({ objects: items.length, resourceVersion: page.resourceVersion }, "listed");
        return;
      }
    }
  }

  /** A complete list arrived (from a list or a streaming list): hand it to the sink. */
  private synced(items: T[], resourceVersion: string): void {
    this.sink.replace(items, resourceVersion);
    this.resourceVersion = resourceVersion;
    this.resourceVersionUnavailable = false;
    this.error = undefined;
  }

  /**
   * One watch call; returns when it ends normally or goes quiet, throws on errors (ERROR events too).
   * With `initial`, a streaming list: objects are collected until the initial-events-end bookmark, then
   * handed to the sink as a list; a failure before that throws a {@link WatchListError}.
   */
  private async watch(signal: AbortSignal, initial: boolean): Promise<void> {
    if (signal.aborted) return; // stopped while listing: its abort listener below would never fire
    const [min, max] = this.watchTimeoutSeconds;
    const timeoutSeconds = Math.min(max, min + Math.floor(this.random() * (max - min + 1)));
    const call = new AbortController();
    const stop = () => call.abort(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    let quiet = false;
    const timer = setTimeout(() => {
      quiet = true;
      call.abort(new Error("watch inactive"));
    }, this.inactivityTimeoutMs);
    const started = Date.now();
    let events = 0;
    let iterator: AsyncIterator<WatchEvent<T>> | undefined;
    /** The streaming list's objects until its end; undefined for a plain watch or once complete. */
    let listed: T[] | undefined = initial ? [] : undefined;
    try {
      iterator = this.lw
        .watch({
          resourceVersion: initial ? this.listResourceVersion() : this.resourceVersion,
          timeoutSeconds,
          allowWatchBookmarks: true,
          ...(initial ? { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" as const } : {}),
          signal: call.signal,
        })
        [Symbol.asyncIterator]();
      for (;;) {
        const next = await nextUnlessAborted(iterator, call.signal);
        if (next === undefined || next.done) break;
        timer.refresh();
        events++;
        const event = next.value;
        if (listed === undefined) this.handle(event);
        else if (event.type === "ADDED") listed.push(this.transform(event.object));
        else if (event.type === "BOOKMARK" && event.object.metadata.annotations?.[INITIAL_EVENTS_END]) {
          this.synced(listed, event.object.metadata.resourceVersion ?? "");
          this.logger.debug(
            { objects: listed.length, resourceVersion: this.resourceVersion },
            "listed (streamed)",
          );
          listed = undefined;
        } else if (event.type === "ERROR") throw statusError(event.object);
        // other events before the end (plain bookmarks) carry nothing a streaming list needs
      }
    } catch (err) {
      // an aborted call may throw AbortError: that is our doing
      if (!call.signal.aborted) throw listed === undefined ? err : new WatchListError(err);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
      call.abort();
      iterator?.return?.().catch(() => {}); // not awaited: an iterator that ignores aborts must not hang us
    }
    if (listed !== undefined && !signal.aborted) {
      throw new WatchListError(
        new Error(quiet ? "went quiet" : "ended before its initial-events-end bookmark"),
      );
    }
    if (quiet) {
      this.logger.warn({ inactivityTimeoutMs: this.inactivityTimeoutMs }, "watch went quiet; reconnecting");
    } else if (!signal.aborted && events === 0 && Date.now() - started < MIN_HEALTHY_WATCH_MS) {
      throw new Error("watch closed at once without events");
    }
  }

  private handle(event: WatchEvent<T>): void {
    switch (event.type) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED": {
        const rv = event.object.metadata.resourceVersion;
        this.sink.apply(event.type, this.transform(event.object));
        if (rv) this.resourceVersion = rv;
        return;
      }
      case "BOOKMARK": {
        const rv = event.object.metadata.resourceVersion;
        if (rv) this.resourceVersion = rv;
        return;
      }
      case "ERROR":
        throw statusError(event.object);
    }
  }
}

/** The iterator's next result, or undefined as soon as `signal` aborts (even if the iterator ignores it). */
function nextUnlessAborted<E>(
  iterator: AsyncIterator<E>,
  signal: AbortSignal,
): Promise<IteratorResult<E> | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** The 504 a server answers for a resourceVersion newer than it has seen (client-go's isTooLargeResourceVersionError). */
function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.code !== 504) return false;
  const causes = err.status?.details?.causes ?? [];
  return (
    causes.some((c) => c.reason === "ResourceVersionTooLarge") ||
    /too large resource version/i.test(err.message)
  );
}

function statusError(status: ApiStatus): ApiError {
  return new ApiError(
    status.code ?? 500,
    status.reason ?? "",
    `watch ERROR event: ${status.message ?? "no message"}`,
    status,
  );
}
