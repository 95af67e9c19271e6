import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CoreMetrics, globalMetrics } from "../metrics/metrics.ts";
import { ItemExponentialFailureRateLimiter } from "./rate-limiter.ts";
import { WorkQueue, type WorkQueueOptions } from "./workqueue.ts";

function newQueue(options: Partial<WorkQueueOptions<string>> = {}) {
  const metrics = new CoreMetrics(new Registry());
  const queue = new WorkQueue<string>({ name: "test", metrics, ...options });
  return { queue, metrics };
}

/** Lets pending promise callbacks and immediates run (no time passes). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether `promise` has settled, without waiting for it. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  await settle();
  return settled;
}

/** The value of one series, read back from the registry like a scrape would (`x_sum`/`x_count` of a histogram). */
async function sample(
  metrics: CoreMetrics,
  metricName: string,
  labels = { name: "test", controller: "test" },
) {
  const family = metrics.registry.getSingleMetric(metricName.replace(/_(sum|count)$/, ""));
  if (family === undefined) throw new Error(`no metric ${metricName}`);
  const { values } = await family.get();
  return values.find(
    (v) =>
      ("metricName" in v ? v.metricName : metricName) === metricName &&
      v.labels.name === labels.name &&
      v.labels.controller === labels.controller,
  )?.value;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("WorkQueue", () => {
  it("keeps one copy of an item that is already waiting", async () => {
    const { queue } = newQueue();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe("a");
    expect(await queue.get()).toBe("b");
    expect(queue.len()).toBe(0);
  });

  it("hands out items in FIFO order, to waiters in the order they asked", async () => {
    const { queue } = newQueue();
    for (const item of ["c", "a", "d", "b"]) queue.add(item);
    expect([await queue.get(), await queue.get()]).toEqual(["c", "a"]);

    queue.add("e");
    const waiting = [queue.get(), queue.get(), queue.get(), queue.get(), queue.get(), queue.get()];
    for (const item of ["f", "g", "h"]) queue.add(item);
    expect(await Promise.all(waiting)).toEqual(["d", "b", "e", "f", "g", "h"]);
  });

  it("stays FIFO across many items", async () => {
    const { queue } = newQueue();
    const got: string[] = [];
    for (let i = 0; i < 5_000; i++) queue.add(`k${i}`);
    for (let i = 0; i < 3_000; i++) got.push((await queue.get())!);
    for (let i = 5_000; i < 8_000; i++) queue.add(`k${i}`);
    while (queue.len() > 0) got.push((await queue.get())!);
    expect(got).toEqual(Array.from({ length: 8_000 }, (_, i) => `k${i}`));
  });

  it("stays FIFO while its buffer wraps around, grows and shrinks", async () => {
    const { queue } = newQueue();
    const expected: string[] = [];
    let next = 0;
    // Uneven adds and takes: the oldest item moves around the buffer while it grows to thousands and drains.
    for (const [adds, takes] of [
      [7, 5],
      [13, 2],
      [3000, 100],
      [50, 2900],
      [5, 60],
      [2000, 2000],
    ] as const) {
      for (let i = 0; i < adds; i++) {
        queue.add(`k${next}`);
        expected.push(`k${next++}`);
      }
      for (let i = 0; i < takes; i++) {
        const item = expected.shift()!;
        expect(queue.tryGet()).toBe(item);
        queue.done(item);
      }
      expect(queue.len()).toBe(expected.length);
    }
  });

  it("keeps a held and a waiting item through many other items being finished", async () => {
    const { queue } = newQueue();
    queue.add("held");
    expect(await queue.get()).toBe("held");
    queue.add("held"); // dirty while held: queued again on done()
    queue.add("waiting");
    // Thousands of other items come and go (the queue replaces its map of items now and then).
    for (let i = 0; i < 5_000; i++) queue.add(`other-${i}`);
    expect(await queue.get()).toBe("waiting");
    queue.done("waiting");
    queue.add("waiting");
    for (let i = 0; i < 5_000; i++) {
      expect(queue.tryGet()).toBe(`other-${i}`);
      queue.done(`other-${i}`);
    }
    queue.add("held");
    queue.add("waiting");
    expect(queue.len()).toBe(1); // "waiting" once; "held" is still held
    expect(queue.tryGet()).toBe("waiting");
    expect(queue.tryGet()).toBeUndefined();
    queue.done("held");
    expect(queue.tryGet()).toBe("held");
    expect(queue.tryGet()).toBeUndefined();
  });

  it("tryGet takes a waiting item at once, with get()'s de-duplication, and none once shut down", async () => {
    const { queue } = newQueue();
    expect(queue.tryGet()).toBeUndefined();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    expect(queue.tryGet()).toBe("a");
    queue.add("a"); // held: not handed out again until done()
    expect(queue.tryGet()).toBe("b");
    expect(queue.tryGet()).toBeUndefined();
    const waiting = queue.get();
    queue.done("a");
    expect(await waiting).toBe("a"); // a pending get() is served first: nothing waits in the queue meanwhile
    expect(queue.tryGet()).toBeUndefined();

    queue.add("c");
    const drained = queue.shutDownWithDrain();
    expect(queue.tryGet()).toBeUndefined(); // "c" was dropped
    queue.add("d");
    expect(queue.tryGet()).toBeUndefined();
    queue.done("a");
    queue.done("b");
    expect(await isSettled(drained)).toBe(true);
  });

  it("re-queues an item added while it is processed, exactly once, after done()", async () => {
    const { queue } = newQueue();
    queue.add("a");
    expect(await queue.get()).toBe("a");
    queue.add("a");
    queue.add("a");
    expect(queue.len()).toBe(0); // not handed to another worker while held

    const next = queue.get();
    expect(await isSettled(next)).toBe(false);
    queue.done("a");
    expect(await next).toBe("a");
    expect(queue.len()).toBe(0);
    queue.done("a");
    expect(queue.len()).toBe(0);
    expect(await isSettled(queue.get())).toBe(false);
  });

  it("ignores done() for an item that is not held", async () => {
    const { queue } = newQueue();
    queue.add("a");
    queue.done("a");
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe("a");
  });

  it("never lets two concurrent workers hold the same item", async () => {
    const { queue } = newQueue();
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const held = new Set<string>();
    const overlaps: string[] = [];
    const processed: string[] = [];

    const worker = async () => {
      for (;;) {
        const item = await queue.get();
        if (item === undefined) return;
        if (held.has(item)) overlaps.push(item);
        held.add(item);
        // Work takes a few turns of the event loop; meanwhile others keep adding the same keys.
        for (let i = random(4); i >= 0; i--) await settle();
        if (random(3) === 0) queue.add(item);
        held.delete(item);
        processed.push(item);
        queue.done(item);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 3; i++) queue.add(`k${random(5)}`);
      await settle();
    }
    await queue.shutDownWithDrain();
    await Promise.all(workers);

    expect(overlaps).toEqual([]);
    expect(processed.length).toBeGreaterThan(200);
    expect(held.size).toBe(0);
  });

  it("resolves waiting get() calls with undefined on shutDown, drops waiting items and ignores adds", async () => {
    const { queue } = newQueue();
    const waiters = [queue.get(), queue.get(), queue.get()];
    queue.shutDown();
    expect(await Promise.all(waiters)).toEqual([undefined, undefined, undefined]);
    expect(queue.isShuttingDown()).toBe(true);

    queue.add("late");
    expect(queue.len()).toBe(0);
    expect(await queue.get()).toBeUndefined();

    const { queue: full } = newQueue();
    full.add("a");
    full.add("b");
    full.shutDown();
    expect(full.len()).toBe(0);
    expect(await full.get()).toBeUndefined();
  });

  it("shutDownWithDrain resolves only after every held item is done()", async () => {
    const { queue } = newQueue();
    for (const item of ["a", "b", "c"]) queue.add(item);
    const a = await queue.get();
    const b = await queue.get();
    expect([a, b]).toEqual(["a", "b"]);

    const drained = queue.shutDownWithDrain();
    expect(await isSettled(drained)).toBe(false);
    queue.add("a"); // ignored: shutting down, so done("a") does not re-queue
    queue.done("a");
    expect(await isSettled(drained)).toBe(false);
    queue.done("b");
    expect(await isSettled(drained)).toBe(true);
    expect(await queue.get()).toBeUndefined(); // "c" was waiting: dropped

    const { queue: idle } = newQueue();
    expect(await isSettled(idle.shutDownWithDrain())).toBe(true);
  });

  it("does not re-queue on done() an item re-added before shutDown, and forgets it", async () => {
    const { queue } = newQueue();
    queue.add("a");
    expect(await queue.get()).toBe("a");
    queue.add("a"); // dirty while held
    const drained = queue.shutDownWithDrain();
    queue.done("a");
    expect(await isSettled(drained)).toBe(true);
    expect(queue.len()).toBe(0);
    queue.done("a"); // no longer held: ignored
    expect(await queue.get()).toBeUndefined();
  });

  it("behaves like a reference model of dirty and processing sets over random operations", async () => {
    const { queue } = newQueue();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    // The model: client-go's queue.go in a few lines.
    const order: string[] = [];
    const dirty = new Set<string>();
    const processing = new Set<string>();
    const held: string[] = [];
    for (let step = 0; step < 20_000; step++) {
      const op = random(3);
      if (op === 0) {
        const item = `k${random(20)}`;
        queue.add(item);
        if (!dirty.has(item)) {
          dirty.add(item);
          if (!processing.has(item)) order.push(item);
        }
      } else if (op === 1 && order.length > 0) {
        const expected = order.shift()!;
        dirty.delete(expected);
        processing.add(expected);
        held.push(expected);
        expect(await queue.get()).toBe(expected);
      } else if (op === 2 && held.length > 0) {
        const item = held.splice(random(held.length), 1)[0]!;
        processing.delete(item);
        if (dirty.has(item)) order.push(item);
        queue.done(item);
      }
      expect(queue.len()).toBe(order.length);
    }
  });

  it("addAfter adds items when due, earliest first, with a single timer", async () => {
    vi.useFakeTimers();
    const { queue } = newQueue();
    queue.addAfter("a", 300);
    queue.addAfter("b", 100);
    queue.addAfter("c", 200);
    queue.addAfter("d", 200);
    expect(vi.getTimerCount()).toBe(1);
    expect(queue.len()).toBe(0);

    vi.advanceTimersByTime(99);
    expect(queue.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(queue.len()).toBe(1);
    vi.advanceTimersByTime(100);
    expect(queue.len()).toBe(3);
    vi.advanceTimersByTime(100);
    expect(queue.len()).toBe(4);
    expect(vi.getTimerCount()).toBe(0);
    expect([await queue.get(), await queue.get(), await queue.get(), await queue.get()]).toEqual([
      "b",
      "c",
      "d",
      "a",
    ]);

    queue.addAfter("now", 0);
    queue.addAfter("negative", -5);
    expect(queue.len()).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("addAfter keeps the earliest due time of an item added again", async () => {
    vi.useFakeTimers();
    const { queue, metrics } = newQueue();
    queue.addAfter("later", 500);
    queue.addAfter("later", 100); // moves it forward
    queue.addAfter("sooner", 100);
    queue.addAfter("sooner", 500); // ignored
    vi.advanceTimersByTime(100);
    expect(queue.len()).toBe(2);
    vi.advanceTimersByTime(1_000);
    expect(queue.len()).toBe(2);
    expect(await sample(metrics, "workqueue_adds_total")).toBe(2);
  });

  it("addAfter keeps one due time per item while thousands of other delayed items come and go", () => {
    vi.useFakeTimers();
    const { queue } = newQueue({ metrics: null });
    queue.addAfter("x", 10_000);
    // Other delayed items come due and are processed (the delay heap replaces its map now and then).
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 1_000; i++) queue.addAfter(`other-${round}-${i}`, 1);
      vi.advanceTimersByTime(1);
      for (let item = queue.tryGet(); item !== undefined; item = queue.tryGet()) queue.done(item);
    }
    queue.addAfter("x", 20_000); // later than its due time: ignored
    queue.addAfter("x", 100); // earlier: moves it forward
    vi.advanceTimersByTime(100);
    expect(queue.tryGet()).toBe("x");
    queue.done("x");
    vi.advanceTimersByTime(30_000); // nothing else was scheduled for it
    expect(queue.len()).toBe(0);
    queue.shutDown();
  });

  it("shutDown drops delayed items and clears the timer", () => {
    vi.useFakeTimers();
    const { queue } = newQueue();
    queue.addAfter("a", 100);
    expect(vi.getTimerCount()).toBe(1);
    queue.shutDown();
    expect(vi.getTimerCount()).toBe(0);
    queue.addAfter("b", 100);
    queue.addRateLimited("c");
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(queue.len()).toBe(0);
  });

  it("addRateLimited waits as long as the rate limiter says; forget resets it", async () => {
    vi.useFakeTimers();
    const { queue, metrics } = newQueue({ rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000) });
    queue.addRateLimited("a");
    queue.addRateLimited("a"); // 200 ms: the earlier due time (100 ms) is kept
    expect(queue.numRequeues("a")).toBe(2);
    vi.advanceTimersByTime(99);
    expect(queue.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe("a");
    queue.done("a");

    queue.addRateLimited("a"); // third failure: 400 ms
    vi.advanceTimersByTime(399);
    expect(queue.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(queue.len()).toBe(1);

    queue.forget("a");
    expect(queue.numRequeues("a")).toBe(0);
    expect(await sample(metrics, "workqueue_retries_total")).toBe(3);
  });
});

describe("WorkQueue metrics", () => {
  it("counts real adds, tracks depth and retries", async () => {
    vi.useFakeTimers();
    const { queue, metrics } = newQueue({ name: "q", controller: "ctl" });
    const labels = { name: "q", controller: "ctl" };
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(0);
    expect(await sample(metrics, "workqueue_adds_total", labels)).toBe(0);

    queue.add("a");
    queue.add("a");
    queue.add("b");
    expect(await sample(metrics, "workqueue_adds_total", labels)).toBe(2);
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(2);

    await queue.get();
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(1);
    queue.add("a"); // re-added while processing: waits again, so it counts
    expect(await sample(metrics, "workqueue_adds_total", labels)).toBe(3);
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(2);
    queue.done("a");
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(2);

    queue.addRateLimited("c");
    queue.addRateLimited("c");
    expect(await sample(metrics, "workqueue_retries_total", labels)).toBe(2);
    vi.runAllTimers();
    expect(await sample(metrics, "workqueue_adds_total", labels)).toBe(4);
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(3);

    queue.shutDown();
    expect(await sample(metrics, "workqueue_depth", labels)).toBe(0);
  });

  it("counts every addAfter as a retry, as client-go does (a rate-limited add counts once)", async () => {
    vi.useFakeTimers();
    const { queue, metrics } = newQueue({ rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000) });
    queue.addAfter("a", 500); // client-go's AddAfter increments retries whatever the delay
    queue.addAfter("b", 0);
    queue.addAfter("c", -1);
    expect(await sample(metrics, "workqueue_retries_total")).toBe(3);
    queue.addRateLimited("d"); // AddRateLimited is AddAfter(item, When(item)): one retry, not two
    expect(await sample(metrics, "workqueue_retries_total")).toBe(4);
    queue.shutDown();
    queue.addAfter("e", 100); // ignored after shutdown, and not counted
    queue.addRateLimited("e");
    expect(await sample(metrics, "workqueue_retries_total")).toBe(4);
  });

  it("observes queue and work durations with the injected clock", async () => {
    let now = 0;
    const { queue, metrics } = newQueue({ now: () => now });
    queue.add("a");
    queue.add("b");
    now = 1_000;
    await queue.get();
    now = 3_000;
    await queue.get();
    expect(await sample(metrics, "workqueue_queue_duration_seconds_count")).toBe(2);
    expect(await sample(metrics, "workqueue_queue_duration_seconds_sum")).toBe(4);

    now = 5_000;
    queue.done("a");
    queue.done("b");
    expect(await sample(metrics, "workqueue_work_duration_seconds_count")).toBe(2);
    expect(await sample(metrics, "workqueue_work_duration_seconds_sum")).toBe(6);
  });

  it("reports unfinished work and the longest running processor at scrape time", async () => {
    let now = 0;
    const { queue, metrics } = newQueue({ now: () => now });
    queue.add("a");
    queue.add("b");
    now = 1_000;
    await queue.get(); // a from 1 s
    now = 3_000;
    await queue.get(); // b from 3 s

    now = 4_000;
    expect(await sample(metrics, "workqueue_unfinished_work_seconds")).toBe(4); // 3 + 1
    expect(await sample(metrics, "workqueue_longest_running_processor_seconds")).toBe(3);

    now = 10_000;
    queue.done("a");
    expect(await sample(metrics, "workqueue_unfinished_work_seconds")).toBe(7);
    expect(await sample(metrics, "workqueue_longest_running_processor_seconds")).toBe(7);

    queue.done("b");
    expect(await sample(metrics, "workqueue_unfinished_work_seconds")).toBe(0);
    expect(await sample(metrics, "workqueue_longest_running_processor_seconds")).toBe(0);

    queue.shutDown();
    expect(await sample(metrics, "workqueue_unfinished_work_seconds")).toBeUndefined();
  });

  it("records the work duration of an item done after shutDown", async () => {
    let now = 0;
    const { queue, metrics } = newQueue({ now: () => now });
    queue.add("a");
    await queue.get();
    const drained = queue.shutDownWithDrain();
    now = 2_000;
    queue.done("a");
    await drained;
    expect(await sample(metrics, "workqueue_work_duration_seconds_count")).toBe(1);
    expect(await sample(metrics, "workqueue_work_duration_seconds_sum")).toBe(2);
  });

  it("exposes cumulative buckets in the scrape text, and counts again from zero after a registry reset", async () => {
    let now = 0;
    const { queue, metrics } = newQueue({ now: () => now });
    for (const [item, waitedMs] of [
      ["a", 0.5], // <= 1e-3 s
      ["b", 5], // <= 1e-2 s
      ["c", 5_000_000], // 5,000 s: above the last bucket (1e3 s), only in +Inf
    ] as const) {
      queue.add(item);
      now += waitedMs;
      await queue.get();
    }
    const text = await metrics.registry.metrics();
    const bucket = (le: string) =>
      text.match(
        new RegExp(
          `workqueue_queue_duration_seconds_bucket\\{le="${le.replace("+", "\\+")}",name="test",controller="test"\\} (\\S+)`,
        ),
      )?.[1];
    expect(bucket("0.0001")).toBe("0");
    expect(bucket("0.001")).toBe("1");
    expect(bucket("0.01")).toBe("2");
    expect(bucket("1000")).toBe("2");
    expect(bucket("+Inf")).toBe("3");
    expect(text).toMatch(/workqueue_adds_total\{name="test",controller="test"\} 3\n/);

    metrics.registry.resetMetrics();
    queue.add("d");
    await queue.get();
    expect(await sample(metrics, "workqueue_queue_duration_seconds_count")).toBe(1);
    expect(await sample(metrics, "workqueue_adds_total")).toBe(1);
  });

  it("with metrics: null records nothing and reads no clock, with the same semantics", async () => {
    vi.useFakeTimers();
    const queue = new WorkQueue<string>({
      name: "unmetered",
      metrics: null,
      now: () => {
        throw new Error("the clock must not be read without metrics");
      },
    });
    queue.add("a");
    queue.add("a");
    queue.add("b");
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe("a");
    queue.add("a"); // re-added while held
    queue.done("a");
    expect([await queue.get(), await queue.get()]).toEqual(["b", "a"]);
    queue.addAfter("c", 10);
    queue.addRateLimited("d");
    vi.advanceTimersByTime(1_000);
    expect(queue.len()).toBe(2);
    const drained = queue.shutDownWithDrain();
    queue.done("a");
    queue.done("b");
    await drained;
    const scraped = await globalMetrics().registry.metrics();
    expect(scraped).not.toContain('name="unmetered"');
  });

  it("defaults the controller label to the queue name", async () => {
    const { queue, metrics } = newQueue({ name: "solo" });
    queue.add("a");
    expect(await sample(metrics, "workqueue_adds_total", { name: "solo", controller: "solo" })).toBe(1);
    expect(queue.controller).toBe("solo");
  });
});
