// Work queue throughput: add/get/done cycles per second with 1 and 4 workers, and addAfter scheduling.
import { Registry } from "prom-client";
import { CoreMetrics } from "../packages/core/src/metrics/metrics.ts";
import { WorkQueue } from "../packages/core/src/queue/workqueue.ts";

/** One measured figure, as the bench runner prints and compares them. */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
}

const ADDS = 1_000_000;
/** Adds per producer turn; the producer then yields so the workers run, like informer events arriving. */
const BATCH = 1_000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Run {
  seconds: number;
  processed: number;
  /** CPU time of the process (user + system, GC threads included) during the run. */
  cpuSeconds: number;
}

/**
 * `count` keys "namespace/object-<i>". V8 builds a template literal this long as a rope (a cons string) that
 * the first hash lookup copies into a flat string; Go's strings are always flat. With `flat` the keys are
 * flattened here, before the clock starts, so the queue is timed on the same kind of keys as client-go's;
 * without it the first add of each key also pays the copy (as a key built by `${namespace}/${name}` does).
 */
function makeKeys(count: number, flat: boolean): string[] {
  const keys = Array.from({ length: count }, (_, i) => `namespace/object-${i}`);
  let sum = 0;
  if (flat) for (const key of keys) sum += key.charCodeAt(0); // charCodeAt flattens a rope, without hashing it
  if (sum < 0) throw new Error("unreachable");
  return keys;
}

/** How a run's queue and keys are set up. */
interface Setup {
  /**
   * Record the workqueue_* metrics, as a controller's queue does (compared with the client-go peer's
   * `-metrics` queue); off matches the client-go peer's unnamed queue, which records none.
   */
  metrics: boolean;
  /** Flatten the keys before timing (see makeKeys). */
  flat: boolean;
}

/**
 * `adds` adds cycling over `distinctKeys` keys, consumed by `workers` async workers doing no work. A worker
 * loops as core's controller does: it takes a ready item synchronously and waits only on an empty queue.
 */
async function run(adds: number, distinctKeys: number, workers: number, setup: Setup): Promise<Run> {
  const keys = makeKeys(distinctKeys, setup.flat);
  const metrics = setup.metrics ? new CoreMetrics(new Registry()) : null;
  const queue = new WorkQueue<string>({ name: "bench", metrics });
  let processed = 0;
  const worker = async () => {
    for (;;) {
      const item = queue.tryGet() ?? (await queue.get());
      if (item === undefined) return;
      processed++;
      queue.done(item);
    }
  };

  // Start from a clean heap (under --expose-gc, as npm run bench and bench:peers run): the previous run's
  // million keys would otherwise be marked during this one, whichever run comes next. The collection also
  // moves the queue into the old generation, where a controller's long-lived queue is.
  (globalThis as { gc?: () => void }).gc?.();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const running = Array.from({ length: workers }, worker);
  for (let i = 0; i < adds; i++) {
    queue.add(keys[i % distinctKeys]!);
    if (i % BATCH === BATCH - 1) await nextTurn();
  }
  while (queue.len() > 0) await nextTurn();
  await queue.shutDownWithDrain();
  await Promise.all(running);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { seconds, processed, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** Cycles per second and CPU time per cycle of one run. */
function cycleFigures(scenario: string, r: Run): BenchResult[] {
  return [
    { name: `workqueue add+get+done (${scenario})`, value: r.processed / r.seconds, unit: "ops/s" },
    { name: `workqueue CPU per cycle (${scenario})`, value: (r.cpuSeconds * 1e9) / r.processed, unit: "ns" },
  ];
}

/** Schedules `count` distinct items with delays spread over an hour (heap inserts; nothing comes due). */
function scheduleDelayed(count: number): number {
  const queue = new WorkQueue<string>({ name: "bench-delay", metrics: new CoreMetrics(new Registry()) });
  const started = performance.now();
  for (let i = 0; i < count; i++) queue.addAfter(`namespace/object-${i}`, 1_000 + ((i * 7_919) % 3_600_000));
  const seconds = (performance.now() - started) / 1000;
  queue.shutDown();
  return count / seconds;
}

/** Runs the work queue benchmarks; returns one figure per scenario. */
export async function benchQueue(): Promise<BenchResult[]> {
  // Warm-up: let the JIT settle on both paths (with and without metrics), and let the heap grow to hold a
  // million keys once (the first run that does so otherwise pays for the growth, whichever it is).
  await run(ADDS, ADDS, 2, { metrics: false, flat: true });
  await run(100_000, 1_000, 2, { metrics: true, flat: true });
  const results: BenchResult[] = [];
  for (const workers of [1, 4]) {
    const plural = workers > 1 ? "s" : "";
    // Every add is a new key: each one is a full add -> get -> done cycle. No metrics: compared with the
    // client-go peer's unnamed queue, for which client-go records no metrics (bench/peers.ts).
    const distinct = await run(ADDS, ADDS, workers, { metrics: false, flat: true });
    results.push(...cycleFigures(`distinct keys, ${workers} worker${plural}`, distinct));
    // The same with the workqueue_* metrics recorded, as in a controller (three clock reads per item):
    // compared with the client-go peer's -metrics queue (controller-runtime's metrics provider).
    const metered = await run(ADDS, ADDS, workers, { metrics: true, flat: true });
    results.push(...cycleFigures(`distinct keys with metrics, ${workers} worker${plural}`, metered));
    // With metrics and keys left as V8 built them (ropes): the first add of each also flattens it.
    const ropes = await run(ADDS, ADDS, workers, { metrics: true, flat: false });
    results.push({
      name: `workqueue add+get+done (distinct rope keys with metrics, ${workers} worker${plural})`,
      value: ropes.processed / ropes.seconds,
      unit: "ops/s",
    });
    // 100 hot keys added over and over: most adds merge into an item that is already waiting.
    const hot = await run(ADDS, 100, workers, { metrics: true, flat: true });
    results.push({
      name: `workqueue add (100 hot keys, ${workers} worker${plural})`,
      value: ADDS / hot.seconds,
      unit: "ops/s",
    });
  }
  results.push({ name: "workqueue addAfter (200,000 keys)", value: scheduleDelayed(200_000), unit: "ops/s" });
  return results;
}

function printTable(results: BenchResult[]): void {
  const width = Math.max(...results.map((r) => r.name.length));
  console.log(`${"benchmark".padEnd(width)}  ${"value".padStart(12)}  unit`);
  for (const r of results) {
    const value = Math.round(r.value).toLocaleString("en").padStart(12);
    console.log(`${r.name.padEnd(width)}  ${value}  ${r.unit}`);
  }
}

if (import.meta.main) printTable(await benchQueue());
