// A scripted ListerWatcher for reflector and informer tests: queued list replies, controllable watch streams.

import type { KubeObject } from "../api/object.ts";
import type { ListerWatcher } from "../cache/list-watch.ts";
import type { ListResult, WatchEvent } from "../client/client.ts";
import { ApiError } from "../client/errors.ts";

/** A list reply: a page, or an error to reject with. */
export type ListReply<T> = ListResult<T> | Error;
type ListOptions<T extends KubeObject> = Parameters<ListerWatcher<T>["list"]>[0];
type WatchOptions = Parameters<ListerWatcher["watch"]>[0];

/** One watch call's stream. Tests push events into it, end it as the server would, or make it fail. */
export class FakeWatch<T> implements AsyncIterable<WatchEvent<T>> {
  readonly options: WatchOptions;
  /** `Date.now()` when the watch was called (fake time under vi.useFakeTimers). */
  readonly at: number;
  private readonly queue: ({ event: WatchEvent<T> } | { end: true } | { error: Error })[] = [];
  private readonly honorAbort: boolean;
  private wake: (() => void) | undefined;

  constructor(options: WatchOptions, honorAbort: boolean) {
    this.options = options;
    this.at = Date.now();
    this.honorAbort = honorAbort;
  }

  /** Queues events; each is delivered as a fresh copy, like JSON off the wire. */
  push(...events: WatchEvent<T>[]): this {
    for (const event of events) this.queue.push({ event });
    this.wake?.();
    return this;
  }

  /** The server ends the watch normally (its timeout). */
  end(): this {
    this.queue.push({ end: true });
    this.wake?.();
    return this;
  }

  /** The connection fails: the iterator throws `error`. */
  fail(error: Error): this {
    this.queue.push({ error });
    this.wake?.();
    return this;
  }

  /** Whether the consumer aborted this watch call. */
  get aborted(): boolean {
    return this.options.signal.aborted;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    const signal = this.options.signal;
    for (;;) {
      if (this.honorAbort && signal.aborted) return;
      const item = this.queue.shift();
      if (item === undefined) {
        await new Promise<void>((resolve) => {
          const done = () => {
            signal.removeEventListener("abort", done);
            this.wake = undefined;
            resolve();
          };
          this.wake = done;
          if (this.honorAbort) signal.addEventListener("abort", done, { once: true });
        });
        continue;
      }
      if ("end" in item) return;
      if ("error" in item) throw item.error;
      yield structuredClone(item.event);
    }
  }
}

/** What a scripted watch does: its events, then end, throw, or (unset) stay open. */
export interface WatchScript<T> {
  events?: WatchEvent<T>[];
  ending?: "end" | Error;
}

/**
 * A ListerWatcher whose answers the test scripts. A list call with no queued reply, and a watch call
 * with no script, wait (open and silent) until aborted.
 */
export class FakeListerWatcher<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  /** Every list call's options (without the signal), with `at` = Date.now(). */
  readonly listCalls: (Omit<ListOptions<T>, "signal" | "transform" | "dropManagedFields"> & {
    at: number;
  })[] = [];
  /** Every watch call, in order. */
  readonly watches: FakeWatch<T>[] = [];
  /** Whether watch streams stop when their signal aborts; false simulates a stream that ignores it. */
  honorAbort = true;
  private readonly listReplies: ListReply<T>[] = [];
  private readonly watchScripts: WatchScript<T>[] = [];
  /** Signals of list calls still waiting for a reply. */
  readonly pendingLists: AbortSignal[] = [];

  /** Queues replies for the next list calls, in order. */
  replyList(...replies: ListReply<T>[]): this {
    this.listReplies.push(...replies);
    return this;
  }

  /** Scripts the next watch calls, in order. */
  scriptWatch(...scripts: WatchScript<T>[]): this {
    this.watchScripts.push(...scripts);
    return this;
  }

  /** The most recent watch call. */
  get lastWatch(): FakeWatch<T> {
    const w = this.watches.at(-1);
    if (w === undefined) throw new Error("no watch call yet");
    return w;
  }

  list(options: ListOptions<T>): Promise<ListResult<T>> {
    const { signal, transform: _transform, dropManagedFields: _drop, ...rest } = options; // the reflector transforms what we return
    this.listCalls.push({ ...rest, at: Date.now() });
    const reply = this.listReplies.shift();
    if (reply instanceof Error) return Promise.reject(reply);
    if (reply !== undefined) return Promise.resolve(structuredClone(reply));
    return new Promise((_, reject) => {
      if (signal === undefined) return;
      this.pendingLists.push(signal);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }

  watch(options: WatchOptions): AsyncIterable<WatchEvent<T>> {
    const w = new FakeWatch<T>(options, this.honorAbort);
    const script = this.watchScripts.shift();
    if (script?.events) w.push(...script.events);
    if (script?.ending === "end") w.end();
    else if (script?.ending instanceof Error) w.fail(script.ending);
    this.watches.push(w);
    return w;
  }
}

/** A ConfigMap with the fields the tests look at. */
export function cm(
  name: string,
  resourceVersion: string,
  extra: {
    namespace?: string;
    owners?: string[];
    data?: Record<string, string>;
    managedFields?: boolean;
  } = {},
): KubeObject & { data?: Record<string, string> } {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: extra.namespace ?? "default",
      resourceVersion,
      uid: `uid-${name}`,
      ...(extra.owners
        ? {
            ownerReferences: extra.owners.map((uid) => ({ apiVersion: "v1", kind: "Owner", name: uid, uid })),
          }
        : {}),
      ...(extra.managedFields
        ? { managedFields: [{ manager: "kubectl", operation: "Apply", fieldsV1: { "f:data": {} } }] }
        : {}),
    },
    ...(extra.data ? { data: extra.data } : {}),
  };
}

/** A list page. */
export function page<T>(items: T[], resourceVersion: string, continueToken?: string): ListResult<T> {
  return { items, resourceVersion, ...(continueToken === undefined ? {} : { continue: continueToken }) };
}

/** A watch event. */
export function ev<T extends KubeObject>(type: "ADDED" | "MODIFIED" | "DELETED", object: T): WatchEvent<T> {
  return { type, object };
}

/** A bookmark carrying only a resourceVersion. */
export function bookmark<T extends KubeObject>(resourceVersion: string): WatchEvent<T> {
  return { type: "BOOKMARK", object: { metadata: { resourceVersion } } as T };
}

/** The 410 the API server answers for an expired resourceVersion or continue token. */
export function gone(): ApiError {
  return new ApiError(410, "Expired", "too old resource version", { code: 410, reason: "Expired" });
}

/** A transport failure, as the client reports a reset connection. */
export function connectionReset(): ApiError {
  return new ApiError(0, "ECONNRESET", "transport error: socket hang up");
}
