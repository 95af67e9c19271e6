// Side-by-side benchmarks against client-go and @kubernetes/client-node on one real API server:
// informer sync time, peak RSS and update events/s (each peer in its own process), and work queue throughput.
// Run: KUBECONFIG=... npm run bench:peers
//   (env: BENCH_SIZES=10000,50000 BENCH_REPEATS=3 BENCH_UPDATES=20000; BENCH_QUEUE=0 skips the work queue;
//   BENCH_SIZES= runs the work queue only, without a cluster; BENCH_CAPSTAN_NODE_FLAGS, see below)
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Client } from "../packages/core/src/client/client.ts";
import { buildCore, buildGoPeer, CAPSTAN_NODE_FLAGS, javaScriptChild } from "./peers/build.ts";
import {
  connect,
  deleteLeftovers,
  deleteNamespace,
  fillNamespace,
  writeUpdates,
} from "./peers/cluster-data.ts";
import { compareWithRecorded, type InformerRecord, lastRecorded, record, targets } from "./peers/recorded.ts";
import { benchQueue } from "./queue.ts";
import { median } from "./stats.ts";

const HERE = import.meta.dirname;
const PEERS = ["capstan", "client-go", "client-node"] as const;
type Peer = (typeof PEERS)[number];

const { env } = process; // read here, not by turbo: no turbo.json entry needed
/** Informer sizes; BENCH_SIZES= (empty) runs no informer, and then needs no cluster (the work queue only). */
const sizes = (env.BENCH_SIZES ?? "10000,50000").split(",").filter(Boolean).map(Number);
const repeats = Number(env.BENCH_REPEATS ?? 3);
const updates = Number(env.BENCH_UPDATES ?? 20_000);
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !(repeats >= 1) || !(updates >= 1)) {
  throw new Error("BENCH_SIZES must be positive integers, BENCH_REPEATS and BENCH_UPDATES >= 1");
}

/** What one informer child reports (both JSON lines merged), plus what the runner measured around it. */
interface InformerRun {
  syncSeconds: number;
  /** CPU time (user + system, every thread) from starting the informer to synced. */
  syncCpuSeconds: number;
  /** RSS with the peer's code loaded, before its informer starts. */
  baseRssBytes: number;
  syncPeakRssBytes: number;
  updateSeconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
  /** From spawning the process to its "synced" line: includes process start and module loading. */
  startToSyncSeconds: number;
  /** The rate the writer achieved while this peer watched. */
  writerPerSecond: number;
}

/** The command line of one informer peer. */
function informerCommand(peer: Peer, goPeer: string, ns: string, expect: number): [string, string[]] {
  if (peer === "client-go") {
    return [goPeer, ["informer", "-namespace", ns, "-expect", String(expect), "-updates", String(updates)]];
  }
  const flags = peer === "capstan" ? CAPSTAN_NODE_FLAGS : [];
  return [process.execPath, [...flags, informerChild(), peer, ns, String(expect), String(updates)]];
}

/** bench/peers/informer-child.ts as plain JavaScript (see javaScriptChild). */
const informerChild = () => javaScriptChild(join(HERE, "peers", "informer-child.ts"));

/** Reads a child's JSON lines, one per phase; rejects if it exits before sending `phase`. */
function phases(child: ChildProcess): (phase: string) => Promise<Record<string, number>> {
  const seen = new Map<string, Record<string, number>>();
  const waiting = new Map<string, (line: Record<string, number>) => void>();
  let exited: Error | undefined;
  const failed = new Set<(err: Error) => void>();
  createInterface({ input: child.stdout! }).on("line", (text) => {
    const line = JSON.parse(text) as Record<string, number> & { phase: string };
    seen.set(line.phase, line);
    waiting.get(line.phase)?.(line);
  });
  child.on("exit", (code) => {
    exited = new Error(`${child.spawnfile} exited with code ${code}`);
    for (const reject of failed) reject(exited);
  });
  return (phase) =>
    new Promise((resolve, reject) => {
      const line = seen.get(phase);
      if (line) return resolve(line);
      if (exited) return reject(exited);
      waiting.set(phase, resolve);
      failed.add(reject);
    });
}

/** One informer peer: spawn, wait for its sync, drive the writer, wait until it saw every update. */
async function runInformer(
  client: Client,
  peer: Peer,
  goPeer: string,
  ns: string,
  size: number,
  expect: number,
) {
  const [command, args] = informerCommand(peer, goPeer, ns, expect);
  const spawned = performance.now();
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const exit = new Promise((resolve) => child.on("exit", resolve));
  try {
    const next = phases(child);
    const synced = await next("synced");
    const startToSyncSeconds = (performance.now() - spawned) / 1000;
    const writerPerSecond = await writeUpdates(client, ns, size, updates);
    const updated = await within(STALL_MS, next("updated"), `${peer} stalled: not every update arrived`);
    await exit;
    return { ...synced, ...updated, startToSyncSeconds, writerPerSecond } as unknown as InformerRun;
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

/** How long a peer may take to receive the last update once the writer is done. */
const STALL_MS = 120_000;

/** `promise`, or a rejection with `message` after `ms`. */
async function within<T>(ms: number, promise: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const mib = (bytes: number) => bytes / 2 ** 20;

/** One figure for every peer, printed with `digits` decimals. */
interface Row {
  name: string;
  unit: string;
  digits: number;
  values: Partial<Record<Peer, number>>;
}

function printRows(title: string, rows: Row[]): void {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map((r) => `${r.name} (${r.unit})`.length));
  console.log(
    `${"".padEnd(width)}  ${PEERS.map((p) => p.padStart(12)).join("  ")}  capstan/client-go  capstan/client-node`,
  );
  for (const row of rows) {
    const cells = PEERS.map((p) => (row.values[p] === undefined ? "-" : row.values[p].toFixed(row.digits)));
    const ratio = (peer: Peer) => {
      const [a, b] = [row.values.capstan, row.values[peer]];
      return a === undefined || b === undefined ? "-" : `${(a / b).toFixed(2)}x`;
    };
    console.log(
      `${`${row.name} (${row.unit})`.padEnd(width)}  ${cells.map((c) => c.padStart(12)).join("  ")}  ${ratio("client-go").padStart(17)}  ${ratio("client-node").padStart(19)}`,
    );
  }
}

/** One work queue figure of one peer: cycles per second and CPU time per cycle, one entry per run. */
interface QueueFigures {
  opsPerSec: number[];
  cpuNsPerOp: number[];
}

/** The work queue scenarios: workers, and whether the workqueue_* metrics are recorded. */
const QUEUE_SCENARIOS = [
  { workers: 1, metrics: false },
  { workers: 4, metrics: false },
  { workers: 1, metrics: true },
  { workers: 4, metrics: true },
] as const;

/**
 * Work queue: @capstan/core (bench/queue.ts, one thread) vs client-go's workqueue (goroutines), alternately:
 * capstan's whole queue bench, then the client-go peer once per scenario with its default GOMAXPROCS and
 * with GOMAXPROCS=1, `repeats` times. Without metrics: capstan's `metrics: null` against client-go's unnamed
 * queue (no metrics). With metrics: capstan's workqueue_* metrics against a controller-runtime queue
 * (rate-limiting, named, controller-runtime's prometheus metrics provider).
 */
async function benchQueues(goPeer: string): Promise<{ rows: Row[]; raw: unknown }> {
  const key = (workers: number, metrics: boolean) => `${workers}${metrics ? "m" : ""}`;
  const empty = () =>
    Object.fromEntries(
      QUEUE_SCENARIOS.map((q) => [key(q.workers, q.metrics), { opsPerSec: [], cpuNsPerOp: [] }]),
    ) as Record<string, QueueFigures>;
  const capstan = empty();
  const goDefault = empty();
  const goOneCore = empty();
  for (let r = 0; r < repeats; r++) {
    for (const result of await benchQueue()) {
      const m = result.name.match(
        /^workqueue (add\+get\+done|CPU per cycle) \(distinct keys( with metrics)?, (\d) worker/,
      );
      if (!m) continue;
      const figures = capstan[key(Number(m[3]), m[2] !== undefined)]!;
      (m[1] === "CPU per cycle" ? figures.cpuNsPerOp : figures.opsPerSec).push(result.value);
    }
    console.log(`  queue #${r + 1} capstan done (load average ${loadavg()[0]!.toFixed(1)})`);
    for (const { workers, metrics } of QUEUE_SCENARIOS) {
      for (const [target, env] of [
        [goDefault, {}],
        [goOneCore, { GOMAXPROCS: "1" }],
      ] as const) {
        const args = ["queue", "-workers", String(workers), ...(metrics ? ["-metrics"] : [])];
        const out = execFileSync(goPeer, args, { env: { ...process.env, ...env }, encoding: "utf8" });
        const line = JSON.parse(out) as { opsPerSec: number; cpuNsPerOp: number };
        target[key(workers, metrics)]!.opsPerSec.push(line.opsPerSec);
        target[key(workers, metrics)]!.cpuNsPerOp.push(line.cpuNsPerOp);
      }
    }
    console.log(`  queue #${r + 1} client-go done (load average ${loadavg()[0]!.toFixed(1)})`);
  }
  const rows: Row[] = [];
  for (const { workers, metrics } of QUEUE_SCENARIOS) {
    const k = key(workers, metrics);
    const scenario = `1e6 distinct keys, ${workers} worker${workers > 1 ? "s" : ""}${metrics ? ", metrics" : ""}`;
    const row = (name: string, unit: string, go: Record<string, QueueFigures>, of: keyof QueueFigures) => ({
      name,
      unit,
      digits: 0,
      values: { capstan: median(capstan[k]![of]), "client-go": median(go[k]![of]) },
    });
    rows.push(row(`add+get+done, ${scenario}`, "ops/s", goDefault, "opsPerSec"));
    rows.push(row("  same, client-go with GOMAXPROCS=1", "ops/s", goOneCore, "opsPerSec"));
    rows.push(row("  CPU per cycle", "ns", goDefault, "cpuNsPerOp"));
    rows.push(row("  CPU per cycle, client-go with GOMAXPROCS=1", "ns", goOneCore, "cpuNsPerOp"));
  }
  return { rows, raw: { capstan, goDefault, goOneCore } };
}

/** Informers on `size` ConfigMaps: every peer `repeats` times, in a rotating order, medians per figure. */
async function benchInformers(
  client: Client,
  goPeer: string,
  size: number,
): Promise<{ rows: Row[]; raw: unknown; medians: InformerRecord[string] }> {
  const ns = `bench-peers-${size}-${Date.now().toString(36)}`;
  try {
    const expect = await fillNamespace(client, ns, size);
    const runs: Record<Peer, InformerRun[]> = { capstan: [], "client-go": [], "client-node": [] };
    for (let r = 0; r < repeats; r++) {
      for (let i = 0; i < PEERS.length; i++) {
        const peer = PEERS[(i + r) % PEERS.length]!;
        const run = await runInformer(client, peer, goPeer, ns, size, expect);
        runs[peer].push(run);
        console.log(
          `  ${size} #${r + 1} ${peer.padEnd(11)} sync ${run.syncSeconds.toFixed(2)} s (CPU ${run.syncCpuSeconds.toFixed(2)} s), peak RSS ${mib(run.peakRssBytes).toFixed(0)} MiB, ` +
            `${Math.round(updates / run.updateSeconds)} updates/s, ${((run.cpuSeconds * 1e6) / updates).toFixed(0)} µs CPU/update ` +
            `(load average ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    }
    const figure = (name: string, unit: string, digits: number, of: (run: InformerRun) => number): Row => ({
      name,
      unit,
      digits,
      values: Object.fromEntries(PEERS.map((p) => [p, median(runs[p].map(of))])),
    });
    const rows = [
      figure("sync time", "s", 2, (r) => r.syncSeconds),
      figure("CPU time to sync", "s", 2, (r) => r.syncCpuSeconds),
      figure("sync time incl. process start", "s", 2, (r) => r.startToSyncSeconds),
      figure("RSS before start (code loaded)", "MiB", 0, (r) => mib(r.baseRssBytes)),
      figure("peak RSS after sync", "MiB", 0, (r) => mib(r.syncPeakRssBytes)),
      figure("peak RSS after updates", "MiB", 0, (r) => mib(r.peakRssBytes)),
      figure("update events received", "events/s", 0, (r) => updates / r.updateSeconds),
      figure("CPU per update event", "µs", 0, (r) => (r.cpuSeconds * 1e6) / updates),
      figure("writer rate meanwhile", "writes/s", 0, (r) => r.writerPerSecond),
    ];
    const medians = Object.fromEntries(
      PEERS.map((p) => [
        p,
        {
          syncSeconds: median(runs[p].map((r) => r.syncSeconds)),
          syncCpuSeconds: median(runs[p].map((r) => r.syncCpuSeconds)),
          baseRssMiB: median(runs[p].map((r) => mib(r.baseRssBytes))),
          syncPeakRssMiB: median(runs[p].map((r) => mib(r.syncPeakRssBytes))),
        },
      ]),
    );
    return { rows, raw: runs, medians };
  } finally {
    await deleteNamespace(client, ns);
  }
}

/** Runs everything; the cluster is checked first so a missing one fails at once. */
async function main(): Promise<void> {
  const client = sizes.length > 0 ? await connect() : undefined;
  try {
    if (client) await deleteLeftovers(client);
    buildCore();
    const goPeer = buildGoPeer("client-go");
    const goVersion = execFileSync("go", ["env", "GOVERSION"], { encoding: "utf8" }).trim();
    console.log(`node ${process.version}, ${goVersion}, client-go v0.34.4, @kubernetes/client-node 2.0.1`);
    console.log(`capstan's Node.js flags: ${CAPSTAN_NODE_FLAGS.join(" ") || "(Node's defaults)"}`);
    console.log(`sizes ${sizes.join(", ")}; ${repeats} runs each, medians; ${updates} updates per run\n`);

    const results: Record<string, unknown> = {};
    const informerMedians: InformerRecord = {};
    const recorded = lastRecorded();
    const tables: [string, Row[]][] = [];
    if (env.BENCH_QUEUE !== "0") {
      const queue = await benchQueues(goPeer);
      results.queue = queue.raw;
      printRows("work queue (median of runs)", queue.rows);
      tables.push(["work queue", queue.rows]);
    }
    for (const size of sizes) {
      const informers = await benchInformers(client!, goPeer, size);
      results[`informer-${size}`] = informers.raw;
      informerMedians[size] = informers.medians;
      tables.push([`informer, ${size} ConfigMaps`, informers.rows]);
      printRows(`informer, ${size} ConfigMaps (median of ${repeats})`, informers.rows);
    }

    console.log("\n==== summary ====");
    for (const [title, rows] of tables) printRows(title, rows);
    if (sizes.length > 0) {
      console.log(
        `\ncapstan compared with the last recorded run, ${recorded?.source ?? "(none: nothing to compare)"}:`,
      );
      for (const line of compareWithRecorded(informerMedians, recorded?.figures ?? {}))
        console.log(`  ${line}`);
      console.log("\ninformer targets (issue 31):");
      for (const line of targets(informerMedians)) console.log(`  ${line}`);
      if (env.BENCH_RECORD === "1") {
        record(informerMedians);
        console.log("recorded as bench/peers/recorded-informer.json (BENCH_RECORD=1)");
      }
    }
    const out = join(HERE, "results", `peers-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify({ sizes, repeats, updates, informerMedians, results }, null, 2)}\n`);
    console.log(`\nraw figures: ${out}`);
  } finally {
    await client?.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:peers: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
