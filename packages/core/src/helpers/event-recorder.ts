// Kubernetes Events (events.k8s.io/v1) about objects, with repeats folded into a series like client-go's recorder.
import { randomBytes } from "node:crypto";
import type { EventsV1Event } from "@kubernetes/client-node";
import { type Kind, KubeEvent } from "../api/kinds.ts";
import type { KubeObject, Wire } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { isNotFound } from "../client/errors.ts";
import { type Logger, silentLogger } from "../util/logger.ts";

/** An events.k8s.io/v1 Event as it travels on the wire. */
export type EventObject = Wire<EventsV1Event> & KubeObject;
type ObjectReference = NonNullable<EventObject["regarding"]>;

/** Longest note the API server accepts, in bytes. */
const MAX_NOTE_BYTES = 1024;
/** client-go's finishTime: a series ends when it has not been seen for this long. */
const DEFAULT_WINDOW_MS = 6 * 60_000;
const DEFAULT_MAX_KEYS = 4096;
/** Writes waiting for the API server beyond this are dropped (client-go's maxQueuedEvents). */
const MAX_PENDING_WRITES = 1000;

/** What to send for one occurrence of an event. */
export type SeriesDecision =
  | { op: "create"; name: string }
  | {
      op: "patch";
      name: string;
      /** The series count to write: 2 on the first repeat, then one more each time. */
      count: number;
      /** When the series started: the eventTime of the event being patched. */
      firstTime: Date;
    };

interface SeriesEntry {
  name: string;
  count: number;
  firstTime: Date;
  lastObserved: Date;
}

/**
 * The folding decision, pure and synchronous: the first occurrence of a key creates an event, a repeat seen
 * within `windowMs` of the previous one patches it with a higher series count. Entries expire after the
 * window (a later repeat starts a new event) and the least recently seen key is evicted beyond `maxKeys`.
 */
export class EventSeriesCache {
  private readonly entries = new Map<string, SeriesEntry>();
  private readonly windowMs: number;
  private readonly maxKeys: number;

  constructor(options: { windowMs?: number; maxKeys?: number } = {}) {
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    this.maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  }

  /** Keys currently remembered. */
  get size(): number {
    return this.entries.size;
  }

  /** Records one occurrence of `key` at `now`; `newName` names the event when a new one is created. */
  observe(key: string, now: Date, newName: () => string): SeriesDecision {
    this.expire(now);
    const entry = this.entries.get(key);
    this.entries.delete(key); // re-inserted below, as the most recently seen
    if (entry !== undefined && !this.expired(entry, now)) {
      entry.count++;
      entry.lastObserved = now;
      this.entries.set(key, entry);
      return { op: "patch", name: entry.name, count: entry.count, firstTime: entry.firstTime };
    }
    const name = newName();
    this.entries.set(key, { name, count: 1, firstTime: now, lastObserved: now });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxKeys) break;
      this.entries.delete(oldest);
    }
    return { op: "create", name };
  }

  private expired(entry: SeriesEntry, now: Date): boolean {
    return now.getTime() - entry.lastObserved.getTime() > this.windowMs;
  }

  /** Drops expired entries; the map is ordered by last observation, so only its head needs checking. */
  private expire(now: Date): void {
    for (const [key, entry] of this.entries) {
      if (!this.expired(entry, now)) break;
      this.entries.delete(key);
    }
  }
}

/** The fields that make two events "the same" for series folding. */
export interface EventKeyFields {
  regarding: ObjectReference;
  related?: ObjectReference | undefined;
  type: string;
  reason: string;
  action: string;
  note: string;
  reportingController: string;
}

/** The series key of an event: regarding (and related) object, type, reason, action, note, reporting controller. */
export function eventSeriesKey(e: EventKeyFields): string {
  const ref = (r: ObjectReference | undefined) =>
    r === undefined ? null : [r.uid ?? "", r.apiVersion ?? "", r.kind ?? "", r.namespace ?? "", r.name ?? ""];
  return JSON.stringify([
    ref(e.regarding),
    ref(e.related),
    e.type,
    e.reason,
    e.action,
    e.note,
    e.reportingController,
  ]);
}

/** `date` as a metav1.MicroTime: RFC 3339 with microseconds, e.g. "2026-11-29T22:00:00.123000Z". */
export function microTime(date: Date): string {
  return `${date.toISOString().slice(0, -1)}000Z`; // toISOString() always ends in ".sssZ"
}

/** `s` cut to at most `maxBytes` bytes of UTF-8, never in the middle of a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s) <= maxBytes) return s;
  let out = "";
  let bytes = 0;
  for (const ch of s) {
    bytes += Buffer.byteLength(ch);
    if (bytes > maxBytes) break;
    out += ch;
  }
  return out;
}

/** Settings of an {@link EventRecorder}. */
export interface EventRecorderOptions {
  client: Client;
  /** The controller emitting events, e.g. "capstan.dev/etcd-operator". */
  reportingController: string;
  /** This replica, usually the pod name. */
  reportingInstance: string;
  logger?: Logger;
  /** Clock; defaults to the system clock. */
  now?: () => Date;
  /** How long a series stays open after its last occurrence; default 6 minutes like client-go. */
  seriesWindowMs?: number;
  /** Series keys remembered (least recently seen evicted first); default 4096. */
  maxSeriesKeys?: number;
}

/**
 * Records Events about objects, as `kubectl describe` and `kubectl events` show them. The first occurrence
 * creates an Event; a repeat within the series window patches that Event's `series` (count, lastObservedTime)
 * instead of creating another, so a hot loop cannot flood the API server with Events.
 */
export class EventRecorder {
  private readonly client: Client;
  private readonly reportingController: string;
  private readonly reportingInstance: string;
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly cache: EventSeriesCache;
  /** The tail of the write chain of each series key: writes of one series go out in order. */
  private readonly tails = new Map<string, Promise<void>>();
  private pending = 0;

  constructor(options: EventRecorderOptions) {
    this.client = options.client;
    this.reportingController = options.reportingController;
    this.reportingInstance = options.reportingInstance;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.cache = new EventSeriesCache({
      ...(options.seriesWindowMs === undefined ? {} : { windowMs: options.seriesWindowMs }),
      ...(options.maxSeriesKeys === undefined ? {} : { maxKeys: options.maxSeriesKeys }),
    });
  }

  /**
   * Records that `action` happened to `regarding` for `reason` (both CamelCase, e.g. action "Scale", reason
   * "MemberAdded"), with a human-readable `note` (cut to 1024 bytes). Fire-and-forget: it never throws and
   * never waits; failures are logged.
   */
  event(
    regarding: KubeObject,
    type: "Normal" | "Warning",
    reason: string,
    action: string,
    note: string,
    related?: KubeObject,
  ): void {
    try {
      const now = this.now();
      const fields: EventKeyFields = {
        regarding: objectReference(regarding),
        related: related === undefined ? undefined : objectReference(related),
        type,
        reason,
        action,
        note: truncateUtf8(note, MAX_NOTE_BYTES),
        reportingController: this.reportingController,
      };
      const key = eventSeriesKey(fields);
      const decision = this.cache.observe(key, now, () => eventName(regarding));
      const { related: rel, ...rest } = fields;
      const body: EventObject = {
        apiVersion: KubeEvent.apiVersion,
        kind: KubeEvent.kind,
        metadata: { name: decision.name, namespace: regarding.metadata.namespace || "default" },
        eventTime: microTime(now),
        ...rest,
        ...(rel === undefined ? {} : { related: rel }),
        reportingInstance: this.reportingInstance,
      };
      if (this.pending >= MAX_PENDING_WRITES) {
        this.logger.warn({ event: summary(body) }, "dropping event: too many event writes pending");
        return;
      }
      this.enqueue(key, () => this.write(body, decision, now));
    } catch (err) {
      this.logger.error({ err }, "failed to record event");
    }
  }

  /** Resolves when every event recorded so far has been written (or has failed and been logged). */
  async flush(): Promise<void> {
    while (this.tails.size > 0) await Promise.allSettled(this.tails.values());
  }

  private enqueue(key: string, write: () => Promise<void>): void {
    this.pending++;
    const tail = (this.tails.get(key) ?? Promise.resolve()).then(write).finally(() => {
      this.pending--;
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    this.tails.set(key, tail);
  }

  private async write(body: EventObject, decision: SeriesDecision, now: Date): Promise<void> {
    try {
      if (decision.op === "create") {
        await this.client.create(EventKind, body);
        return;
      }
      const series = { count: decision.count, lastObservedTime: microTime(now) };
      try {
        await this.client.patch(EventKind, decision.name, body.metadata.namespace, { series }, "merge");
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The event expired on the server (or its create failed): create it again, series included.
        await this.client.create(EventKind, { ...body, eventTime: microTime(decision.firstTime), series });
      }
    } catch (err) {
      this.logger.warn({ err, event: summary(body) }, "failed to record event");
    }
  }
}

/** The Event kind typed with its wire shape (timestamps as strings). */
const EventKind = KubeEvent as unknown as Kind<EventObject>;

function objectReference(obj: KubeObject): ObjectReference {
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  const ref: ObjectReference = {};
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (name) ref.name = name;
  if (namespace) ref.namespace = namespace;
  if (uid) ref.uid = uid;
  if (resourceVersion) ref.resourceVersion = resourceVersion;
  return ref;
}

/** `<regarding name>.<16 hex digits>`, kept within the 253 characters of a DNS subdomain. */
function eventName(regarding: KubeObject): string {
  const base = (regarding.metadata.name || "event").slice(0, 253 - 17);
  return `${base}.${randomBytes(8).toString("hex")}`;
}

function summary(e: EventObject): Record<string, unknown> {
  return {
    name: e.metadata.name,
    namespace: e.metadata.namespace,
    regarding: `${e.regarding?.kind}/${e.regarding?.name}`,
    type: e.type,
    reason: e.reason,
  };
}
