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
}

/** `adds` adds cycling over `distinctKeys` keys, consumed by `workers` async workers doing no work. */
async function run(adds: number, distinctKeys: number, workers: number): Promise<Run> {
  const keys = Array.from({ length: distinctKeys }, (_, i) => `namespace/object-${i}`);
  const queue = new WorkQueue<string>({ name: "bench", metrics: new CoreMetrics(new Registry()) });
  let processed = 0;
  const worker = async () => {
    for (let item = await queue.get(); item !== undefined; item = await queue.get()) {
      processed++;
      queue.done(item);
    }
  };

  const started = performance.now();
  const running = Array.from({ length: workers }, worker);
  for (let i = 0; i < adds; i++) {
    queue.add(keys[i % distinctKeys]!);
    if (i % BATCH === BATCH - 1) await nextTurn();
  }
  while (queue.len() > 0) await nextTurn();
  await queue.shutDownWithDrain();
  await Promise.all(running);
  return { seconds: (performance.now() - started) / 1000, processed };
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
  await run(100_000, 1_000, 2); // warm-up: let the JIT settle before measuring
  const results: BenchResult[] = [];
  for (const workers of [1, 4]) {
    const plural = workers > 1 ? "s" : "";
    // Every add is a new key: each one is a full add -> get -> done cycle.
    const distinct = await run(ADDS, ADDS, workers);
    results.push({
      name: `workqueue add+get+done (distinct keys, ${workers} worker${plural})`,
      value: distinct.processed / distinct.seconds,
      unit: "ops/s",
    });
    // 100 hot keys added over and over: most adds merge into an item that is already waiting.
    const hot = await run(ADDS, 100, workers);
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
