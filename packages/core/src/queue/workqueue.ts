// The controller work queue: de-duplicating, delaying and rate-limited, with client-go's semantics and metrics.
import type { Counter, Gauge } from "prom-client";
import { type CoreMetrics, globalMetrics, HistogramBuffer, QUEUE_BUCKETS } from "../metrics/metrics.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiter.ts";

/** Options of a {@link WorkQueue}. */
export interface WorkQueueOptions<T> {
  /** Queue name: the `name` label of the workqueue_* metrics. */
  name: string;
  /** The `controller` label of the workqueue_* metrics; defaults to `name`. */
  controller?: string;
  /**
   * Where to record metrics; defaults to {@link globalMetrics}. `null` records none and reads no clock per
   * item, like client-go's queues without a name or metrics provider.
   */
  metrics?: CoreMetrics | null;
  /** Decides the delay of {@link WorkQueue.addRateLimited}; defaults to {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter<T>;
  /** Millisecond clock for the duration metrics; defaults to `performance.now`. */
  now?: () => number;
}

/** setTimeout's largest delay; longer waits re-arm the timer when it fires. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A work queue with client-go's guarantees: an item waits at most once (adds of a waiting item are merged),
 * no two workers ever hold the same item, and an item added while it is processed is queued again on `done()`.
 * Items are compared as Map keys, so use strings (e.g. "namespace/name") or stable object references.
 *
 * A worker loops: `const item = q.tryGet() ?? (await q.get()); if (item === undefined) return;`
 * then `try { ... } finally { q.done(item) }`.
 */
export class WorkQueue<T = string> {
  /** The `name` label of this queue's metrics. */
  readonly name: string;
  /** The `controller` label of this queue's metrics. */
  readonly controller: string;

  private readonly rateLimiter: RateLimiter<T>;
  private readonly now: () => number;
  /** Every item that is waiting (dirty) or held by a worker (processing), or both: one entry per item. */
  private readonly entries = new RenewingMap<T, Entry<T>>();
  /** Dirty entries not held by a worker, oldest first. */
  private readonly queue = new Fifo<Entry<T>>();
  /** Entries held by workers, in the order they were taken (so the oldest first). */
  private readonly processing = new EntryList<T>();
  /** How many entries are dirty: the workqueue_depth. */
  private dirtyCount = 0;
  /** Pending get() calls, oldest first; non-empty only while the queue is empty. */
  private readonly waiters: ((item: T | undefined) => void)[] = [];
  /** Pending shutDownWithDrain() calls. */
  private readonly drained: (() => void)[] = [];
  private readonly delayed = new DelayHeap<T>();
  /** The one timer of the delaying queue, armed for the earliest due item. */
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;
  private shuttingDown = false;

  /** Undefined with `metrics: null`. */
  private readonly recorder: QueueRecorder | undefined;
  private untracked = false;
  private readonly untrack: () => void;

  constructor(options: WorkQueueOptions<T>) {
    this.name = options.name;
    this.controller = options.controller ?? options.name;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>();
    this.now = options.now ?? (() => performance.now());

    if (options.metrics === null) {
      this.recorder = undefined;
      this.untrack = () => {};
      return;
    }
    const metrics = options.metrics ?? globalMetrics();
    const recorder = new QueueRecorder(metrics, { name: this.name, controller: this.controller });
    this.recorder = recorder;
    this.untrack = metrics.trackQueue({
      name: this.name,
      controller: this.controller,
      unfinishedWorkSeconds: () => this.unfinishedWorkSeconds(),
      longestRunningProcessorSeconds: () => this.longestRunningProcessorSeconds(),
      flush: () => recorder.flush(this.dirtyCount),
    });
  }

  /** Queues `item` unless it is already waiting; if a worker holds it, it is queued again on `done()`. */
  add(item: T): void {
    if (this.shuttingDown) return;
    let entry = this.entries.get(item);
    if (entry === undefined) {
      entry = new Entry(item);
      this.entries.set(item, entry);
    } else if (entry.dirty) {
      return;
    }
    entry.dirty = true;
    this.dirtyCount++;
    if (this.recorder !== undefined) {
      entry.addedAt = this.now();
      this.recorder.adds++;
    }
    if (entry.processing) return;
    this.queue.push(entry);
    if (this.waiters.length > 0) this.dispatch();
  }

  /**
   * The next item, oldest first, waiting for one if needed; the caller holds it until `done(item)`.
   * Resolves `undefined` once the queue is shut down: the worker should then return.
   */
  get(): Promise<T | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * The next item, like {@link get}, when one is waiting now; `undefined` when none is (or the queue is shut
   * down), without waiting and without a promise. The caller holds a returned item until `done(item)`.
   * A worker loop that takes what is ready synchronously and waits only on an empty queue:
   * `const item = q.tryGet() ?? (await q.get()); if (item === undefined) return;`
   */
  tryGet(): T | undefined {
    return this.queue.length > 0 ? this.take() : undefined;
  }

  /** Marks `item` as processed; queues it again if it was added meanwhile. Ignored for an item not held. */
  done(item: T): void {
    const entry = this.entries.get(item);
    if (entry === undefined || !entry.processing) return;
    entry.processing = false;
    this.processing.remove(entry);
    const recorder = this.recorder;
    if (recorder !== undefined) {
      recorder.workDuration.observe((this.now() - entry.startedAt) / 1000);
      if (this.untracked) recorder.workDuration.flush(); // done() after shutDown: no scrape flushes it now
    }
    if (entry.dirty) {
      this.queue.push(entry);
      if (this.waiters.length > 0) this.dispatch();
      return;
    }
    this.entries.delete(item);
    if (this.shuttingDown && this.processing.size === 0) {
      for (const resolve of this.drained.splice(0)) resolve();
    }
  }

  /** Number of items waiting in the queue (not those being processed, nor those delayed by `addAfter`). */
  len(): number {
    return this.queue.length;
  }

  /**
   * Adds `item` after `delayMs` (at once when `delayMs <= 0`). While it waits, adding it again with a
   * later due time is ignored and with an earlier one moves it forward: it is added once, at the earliest.
   * Each call counts in workqueue_retries_total, as client-go's AddAfter does.
   */
  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown) return;
    if (this.recorder !== undefined) this.recorder.retries++; // client-go counts every AddAfter (so every AddRateLimited) in workqueue_retries_total
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const due = performance.now() + delayMs;
    if (this.delayed.schedule(item, due) && due < this.timerDue) this.arm();
  }

  /** Adds `item` after the delay its rate limiter decides: `addAfter(item, rateLimiter.when(item))`. */
  addRateLimited(item: T): void {
    if (this.shuttingDown) return;
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Clears the item's failure history in the rate limiter (call it when the item succeeded). */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** How many times the item was rate-limited since it was last forgotten. */
  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  /**
   * Stops the queue: later adds are ignored, waiting and delayed items are dropped, pending `get()` calls
   * resolve `undefined`. Items being processed may still be `done()`.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.queue.clear();
    for (const [item, entry] of this.entries.map) {
      if (entry.processing) entry.dirty = false;
      else this.entries.map.delete(item); // deleting while iterating: not through RenewingMap.delete
    }
    this.dirtyCount = 0;
    this.delayed.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    this.untrack(); // flushes a last time (depth 0)
    this.untracked = true;
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  /** Shuts down like {@link shutDown}, then resolves once every item being processed is `done()`. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Whether `shutDown` or `shutDownWithDrain` was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Hands queued items to pending get() calls. */
  private dispatch(): void {
    while (this.waiters.length > 0 && this.queue.length > 0) this.waiters.shift()!(this.take());
  }

  /** Moves the oldest queued item to processing. The queue must not be empty. */
  private take(): T {
    const entry = this.queue.shift();
    const recorder = this.recorder;
    if (recorder !== undefined) {
      const now = this.now();
      recorder.queueDuration.observe((now - entry.addedAt) / 1000);
      entry.startedAt = now;
    }
    entry.dirty = false;
    this.dirtyCount--;
    entry.processing = true;
    this.processing.append(entry);
    return entry.item;
  }

  /** (Re)arms the single timer for the earliest delayed item. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = this.delayed.nextDue() ?? Number.POSITIVE_INFINITY;
    if (this.timerDue === Number.POSITIVE_INFINITY) return;
    // At least 1 ms, rounded up: a timer that fires early finds nothing due and re-arms; it never spins.
    const wait = Math.min(MAX_TIMEOUT_MS, Math.max(1, Math.ceil(this.timerDue - performance.now())));
    this.timer = setTimeout(this.fire, wait);
  }

  private readonly fire = (): void => {
    for (const item of this.delayed.takeDue(performance.now())) this.add(item);
    this.arm();
  };

  private unfinishedWorkSeconds(): number {
    const now = this.now();
    let total = 0;
    for (let e = this.processing.first; e !== undefined; e = e.next) total += now - e.startedAt;
    return total / 1000;
  }

  private longestRunningProcessorSeconds(): number {
    const first = this.processing.first; // taken first, so running longest
    return first === undefined ? 0 : (this.now() - first.startedAt) / 1000;
  }
}

/**
 * A queue's workqueue_* metrics, counted in plain fields and arrays and moved into prom-client when scraped
 * ({@link flush}): prom-client's label lookups per item would cost more than the queue itself.
 */
class QueueRecorder {
  /** Adds and retries since the last flush. */
  adds = 0;
  retries = 0;
  readonly queueDuration: HistogramBuffer;
  readonly workDuration: HistogramBuffer;
  private readonly depth: Gauge.Internal<"name" | "controller">;
  private readonly addsTotal: Counter.Internal;
  private readonly retriesTotal: Counter.Internal;

  constructor(metrics: CoreMetrics, labels: { name: string; controller: string }) {
    this.depth = metrics.workqueueDepth.labels(labels);
    this.addsTotal = metrics.workqueueAdds.labels(labels);
    this.retriesTotal = metrics.workqueueRetries.labels(labels);
    this.queueDuration = new HistogramBuffer(metrics.workqueueQueueDuration, labels, QUEUE_BUCKETS);
    this.workDuration = new HistogramBuffer(metrics.workqueueWorkDuration, labels, QUEUE_BUCKETS);
    // Export the series at zero from the start, so dashboards and rate() see the queue before its first add.
    this.depth.set(0);
    this.addsTotal.inc(0);
    this.retriesTotal.inc(0);
  }

  /** Moves the counts since the last flush into prom-client (before each scrape, and on shutDown). */
  flush(depth: number): void {
    this.depth.set(depth);
    if (this.adds > 0) this.addsTotal.inc(this.adds);
    if (this.retries > 0) this.retriesTotal.inc(this.retries);
    this.adds = 0;
    this.retries = 0;
    this.queueDuration.flush();
    this.workDuration.flush();
  }
}

/** What the queue knows about one item; one object per item for its whole stay (dirty and/or processing). */
class Entry<T> {
  readonly item: T;
  /** Waiting to be processed: queued, or re-added while a worker holds it. */
  dirty = false;
  /** Held by a worker. */
  processing = false;
  /** When it became dirty (the queue clock, ms; left at 0 without metrics). */
  addedAt = 0;
  /** When a worker took it (the queue clock, ms; left at 0 without metrics). */
  startedAt = 0;
  prev: Entry<T> | undefined = undefined;
  next: Entry<T> | undefined = undefined;

  constructor(item: T) {
    this.item = item;
  }
}

/**
 * A Map that replaces itself by a copy once it has had at least {@link RenewingMap.MIN_DELETES} deletes and
 * twice its size in deletes (so the copy is O(1) per delete). V8 links each hash table a Map outgrows, or
 * rehashes after deletes, to the next one (for live iterators). Once a long-lived map sits in the old
 * generation, the chain from its table of that time to the current one is reachable for every young
 * collection (old-to-young pointers are roots there): every superseded table and every value it held is kept
 * and promoted, until the next full collection. A fresh map is young, and its superseded tables die young.
 */
class RenewingMap<K, V> {
  private static readonly MIN_DELETES = 1024;
  /** The current map; read it, but delete through {@link delete} (except while iterating it). */
  map = new Map<K, V>();
  private deletes = 0;

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.map.set(key, value);
  }

  delete(key: K): void {
    const map = this.map;
    if (!map.delete(key)) return;
    if (++this.deletes < RenewingMap.MIN_DELETES || this.deletes < 2 * map.size) return;
    this.map = map.size === 0 ? new Map() : new Map(map);
    this.deletes = 0;
  }

  clear(): void {
    this.map = new Map();
    this.deletes = 0;
  }
}

/** A doubly-linked list of entries through their prev/next fields: O(1) append and remove. */
class EntryList<T> {
  first: Entry<T> | undefined = undefined;
  private last: Entry<T> | undefined = undefined;
  size = 0;

  append(entry: Entry<T>): void {
    entry.prev = this.last;
    entry.next = undefined;
    if (this.last === undefined) this.first = entry;
    else this.last.next = entry;
    this.last = entry;
    this.size++;
  }

  remove(entry: Entry<T>): void {
    if (entry.prev === undefined) this.first = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === undefined) this.last = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = undefined;
    entry.next = undefined;
    this.size--;
  }
}

/**
 * A FIFO in a ring buffer: O(1) push and shift without allocating (Array#shift is O(n) on large arrays, and
 * a sliding array allocates a new one every time it is emptied or compacted). The capacity doubles when full
 * and, above {@link Fifo.KEEP_CAPACITY}, halves when a quarter full: a queue that fills and drains every turn
 * keeps its array.
 */
class Fifo<T> {
  private static readonly MIN_CAPACITY = 16;
  private static readonly KEEP_CAPACITY = 1024;
  private items: (T | undefined)[] = new Array(Fifo.MIN_CAPACITY).fill(undefined);
  /** Capacity - 1; the capacity is a power of two. */
  private mask = Fifo.MIN_CAPACITY - 1;
  private head = 0;
  length = 0;

  push(item: T): void {
    if (this.length > this.mask) this.resize((this.mask + 1) * 2);
    this.items[(this.head + this.length) & this.mask] = item;
    this.length++;
  }

  /** Removes and returns the oldest item. The queue must not be empty. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.length--;
    const capacity = this.mask + 1;
    if (capacity > Fifo.KEEP_CAPACITY && this.length <= capacity >> 2) this.resize(capacity >> 1);
    return item;
  }

  clear(): void {
    this.items = new Array(Fifo.MIN_CAPACITY).fill(undefined);
    this.mask = Fifo.MIN_CAPACITY - 1;
    this.head = 0;
    this.length = 0;
  }

  /** Moves the items, oldest first, to the start of a new array of `capacity` (a power of two). */
  private resize(capacity: number): void {
    const items = new Array<T | undefined>(capacity).fill(undefined);
    for (let i = 0; i < this.length; i++) items[i] = this.items[(this.head + i) & this.mask];
    this.items = items;
    this.mask = capacity - 1;
    this.head = 0;
  }
}

interface Delayed<T> {
  readonly item: T;
  due: number;
  readonly seq: number;
  index: number;
}

/** Delayed items in a binary min-heap by due time (then insertion order), one entry per item. */
class DelayHeap<T> {
  private readonly heap: Delayed<T>[] = [];
  private readonly entries = new RenewingMap<T, Delayed<T>>();
  private seq = 0;

  /** Schedules `item` at `due`, or moves it earlier; returns false when it was already due no later. */
  schedule(item: T, due: number): boolean {
    const entry = this.entries.get(item);
    if (entry !== undefined) {
      if (entry.due <= due) return false;
      entry.due = due;
      this.up(entry.index);
      return true;
    }
    const added: Delayed<T> = { item, due, seq: this.seq++, index: this.heap.length };
    this.entries.set(item, added);
    this.heap.push(added);
    this.up(added.index);
    return true;
  }

  nextDue(): number | undefined {
    return this.heap[0]?.due;
  }

  /** Removes and returns the items due at `now`, earliest first. */
  takeDue(now: number): T[] {
    const due: T[] = [];
    for (let top = this.heap[0]; top !== undefined && top.due <= now; top = this.heap[0]) {
      const last = this.heap.pop()!;
      if (last !== top) {
        this.place(last, 0);
        this.down(0);
      }
      this.entries.delete(top.item);
      due.push(top.item);
    }
    return due;
  }

  clear(): void {
    this.heap.length = 0;
    this.entries.clear();
  }

  private before(a: Delayed<T>, b: Delayed<T>): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private place(entry: Delayed<T>, index: number): void {
    this.heap[index] = entry;
    entry.index = index;
  }

  private up(index: number): void {
    const entry = this.heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.heap[parentIndex]!;
      if (!this.before(entry, parent)) break;
      this.place(parent, index);
      index = parentIndex;
    }
    this.place(entry, index);
  }

  private down(index: number): void {
    const entry = this.heap[index]!;
    const size = this.heap.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= size) break;
      const right = this.heap[child + 1];
      if (right !== undefined && this.before(right, this.heap[child]!)) child++;
      const smallest = this.heap[child]!;
      if (!this.before(smallest, entry)) break;
      this.place(smallest, index);
      index = child;
    }
    this.place(entry, index);
  }
}
