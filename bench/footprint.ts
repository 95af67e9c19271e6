// The operators' footprint: each operator started with its sample (idle), then under load (etcd: 20 EtcdClusters of
// 1 member; Vault: 5 VaultClusters; Prometheus: 200 ServiceMonitors and 500 rules), reporting its process's steady
// and peak RSS, V8 heap, CPU per minute and start-up time; prometheus-operator's own Go binary, watching the same
// monitors and rules, beside the Prometheus operator. Figures and how to run it: docs/performance.md, "Footprint".
//   KUBECONFIG=... npm run bench:footprint
//   env: BENCH_FOOTPRINT_MODE=chart|process  chart (default): helm install on the local cluster (the operator pod's
//          process is read on this machine); process: the operator's bundle as a local process, any cluster
//        BENCH_OPERATORS=etcd,vault,prometheus  BENCH_GO_PEER=1 (0: no prometheus-operator)
//        BENCH_SETTLE_S=90 (after the sample or the load, before measuring)  BENCH_WINDOW_S=120 (the measured window)
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { CustomResourceDefinition, Namespace } from "../packages/core/src/api/kinds.ts";
import { Client } from "../packages/core/src/client/client.ts";
import { isNotFound } from "../packages/core/src/client/errors.ts";
import {
  applyDir,
  buildPrometheusOperator,
  kubectl,
  missingGoCrds,
  PROMETHEUS_OPERATOR_VERSION,
  type RunningPeer,
  startChart,
  startGoPeer,
  startProcess,
} from "./footprint/peers.ts";
import { type ProcSample, sample } from "./footprint/proc.ts";
import { loadOf, OPERATORS, type Operator, sampleOf, type Workload } from "./footprint/workloads.ts";
import { median } from "./stats.ts";

const { env } = process;
const MODE = env.BENCH_FOOTPRINT_MODE ?? "chart";
const SETTLE_MS = Number(env.BENCH_SETTLE_S ?? 90) * 1000;
const WINDOW_MS = Number(env.BENCH_WINDOW_S ?? 120) * 1000;
const SAMPLE_EVERY_MS = 2_000;
const operators = (env.BENCH_OPERATORS ?? OPERATORS.join(",")).split(",") as Operator[];
const goPeer = env.BENCH_GO_PEER !== "0";
if (MODE !== "chart" && MODE !== "process") throw new Error("BENCH_FOOTPRINT_MODE must be chart or process");
if (operators.some((o) => !OPERATORS.includes(o))) throw new Error(`BENCH_OPERATORS: some of ${OPERATORS}`);

/** What one phase (idle or loaded) of one peer measured. */
interface Phase {
  steadyRssMiB: number;
  /** VmHWM at the end of the phase: the peak since the process started. */
  peakRssMiB: number;
  /** Node: nodejs_heap_size_used_bytes; Go: go_memstats_heap_inuse_bytes (medians of the window's scrapes). */
  heapUsedMiB: number;
  /** Node: nodejs_heap_size_total_bytes; Go: go_memstats_heap_sys_bytes. */
  heapTotalMiB: number;
  cpuSecondsPerMinute: number;
  loadAverage: number;
}
interface PeerRun {
  operator: Operator;
  peer: string;
  startupSeconds: number;
  idle: Phase;
  loaded: Phase;
}

const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The value of the first series of `name` in a Prometheus text exposition, if any. */
function metric(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Polls `url` until it answers 200; returns when (ms since the epoch). */
async function readyAt(peer: RunningPeer, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(peer.readyUrl, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return Date.now();
    await sleep(100);
  }
  throw new Error(
    `${peer.readyUrl} not ready within ${timeoutMs / 1000} s${peer.log ? ` (log: ${peer.log})` : ""}`,
  );
}

/** Samples the peer's process and metrics every SAMPLE_EVERY_MS for WINDOW_MS. */
async function measure(peer: RunningPeer, go: boolean): Promise<Phase> {
  const samples: ProcSample[] = [];
  const heapUsed: number[] = [];
  const heapTotal: number[] = [];
  const loads: number[] = [];
  const end = Date.now() + WINDOW_MS;
  while (Date.now() < end) {
    samples.push(sample(peer.pid));
    loads.push(loadavg()[0]!);
    const text = await fetch(peer.metricsUrl, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.text(),
      () => "",
    );
    const used = metric(text, go ? "go_memstats_heap_inuse_bytes" : "nodejs_heap_size_used_bytes");
    const total = metric(text, go ? "go_memstats_heap_sys_bytes" : "nodejs_heap_size_total_bytes");
    if (used !== undefined) heapUsed.push(used);
    if (total !== undefined) heapTotal.push(total);
    await sleep(SAMPLE_EVERY_MS);
  }
  const last = sample(peer.pid);
  const first = samples[0]!;
  return {
    steadyRssMiB: median(samples.map((s) => s.rssBytes)) / MiB,
    peakRssMiB: last.hwmBytes / MiB,
    heapUsedMiB: median(heapUsed) / MiB,
    heapTotalMiB: median(heapTotal) / MiB,
    cpuSecondsPerMinute: ((last.cpuSeconds - first.cpuSeconds) / (last.at - first.at)) * 60_000,
    loadAverage: median(loads),
  };
}

/** Creates each object (the CRDs are served by then). */
async function createAll(client: Client, workloads: Workload[]): Promise<void> {
  for (const { kind, object } of workloads) await client.create(kind, object);
}

async function deleteNamespace(client: Client, ns: string): Promise<void> {
  try {
    await client.delete(Namespace, ns);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  for (let i = 0; i < 600; i++) {
    try {
      await client.get(Namespace, ns);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await sleep(1_000);
  }
  console.warn(`namespace ${ns} still terminating after 10 minutes; going on`);
}

/** One peer: started, sample applied and measured, load applied and measured, stopped, namespace deleted. */
async function runPeer(
  client: Client,
  op: Operator,
  peerName: string,
  go: boolean,
  goBinary: string,
): Promise<PeerRun> {
  const ns = `bench-fp-${op}-${go ? "go" : "capstan"}-${Date.now().toString(36)}`;
  await client.create(Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  let peer: RunningPeer | undefined;
  try {
    peer = go
      ? await startGoPeer(goBinary, ns)
      : MODE === "chart"
        ? await startChart(client, op, ns)
        : await startProcess(op, ns);
    const ready = await readyAt(peer);
    const startupSeconds = (ready - peer.startedAt) / 1000;
    console.log(
      `  ${peerName}: ready ${startupSeconds.toFixed(2)} s after its process started; sample applied`,
    );
    await createAll(client, sampleOf(op, ns, go));
    await sleep(SETTLE_MS);
    const idle = await measure(peer, go);
    console.log(
      `  ${peerName}: idle ${idle.steadyRssMiB.toFixed(0)} MiB steady, ${idle.cpuSecondsPerMinute.toFixed(2)} s CPU/min; load applied`,
    );
    await createAll(client, loadOf(op, ns));
    await sleep(SETTLE_MS);
    const loaded = await measure(peer, go);
    console.log(
      `  ${peerName}: loaded ${loaded.steadyRssMiB.toFixed(0)} MiB steady, peak ${loaded.peakRssMiB.toFixed(0)} MiB`,
    );
    return { operator: op, peer: peerName, startupSeconds, idle, loaded };
  } finally {
    await peer?.stop();
    await deleteNamespace(client, ns);
  }
}

function printTable(runs: PeerRun[]): void {
  const rows: [string, (r: PeerRun) => number, number][] = [
    ["start-up to ready (s)", (r) => r.startupSeconds, 2],
    ["idle: steady RSS (MiB)", (r) => r.idle.steadyRssMiB, 0],
    ["idle: peak RSS (MiB)", (r) => r.idle.peakRssMiB, 0],
    ["idle: heap used / total (MiB)", (r) => r.idle.heapUsedMiB, 1],
    ["idle: CPU (s per minute)", (r) => r.idle.cpuSecondsPerMinute, 2],
    ["loaded: steady RSS (MiB)", (r) => r.loaded.steadyRssMiB, 0],
    ["loaded: peak RSS (MiB)", (r) => r.loaded.peakRssMiB, 0],
    ["loaded: heap used (MiB)", (r) => r.loaded.heapUsedMiB, 1],
    ["loaded: CPU (s per minute)", (r) => r.loaded.cpuSecondsPerMinute, 2],
    // The machine's 1-minute load average (median of the window): other work on the node moves every figure above.
    ["idle: load average (1 min)", (r) => r.idle.loadAverage, 1],
    ["loaded: load average (1 min)", (r) => r.loaded.loadAverage, 1],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log(`\n${"".padEnd(width)}  ${runs.map((r) => r.peer.padStart(22)).join("  ")}`);
  for (const [name, of, digits] of rows) {
    const cells = runs.map((r) => {
      const v = of(r).toFixed(digits);
      return (name.startsWith("idle: heap") ? `${v} / ${r.idle.heapTotalMiB.toFixed(1)}` : v).padStart(22);
    });
    console.log(`${name.padEnd(width)}  ${cells.join("  ")}`);
  }
}

async function main(): Promise<void> {
  if (!env.KUBECONFIG) throw new Error("KUBECONFIG is not set: the footprint benchmark needs a cluster");
  const client = new Client({ maxAttempts: 3, requestTimeoutMs: 30_000, userAgent: "capstan-bench" });
  const runs: PeerRun[] = [];
  const addedCrds: string[] = [];
  const out = join(
    import.meta.dirname,
    "results",
    `footprint-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
  );
  /** Written after each peer, so a run that fails later keeps what it measured. */
  const save = () => {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      `${JSON.stringify({ mode: MODE, settleMs: SETTLE_MS, windowMs: WINDOW_MS, runs }, null, 2)}\n`,
    );
  };
  try {
    const version = (await client.raw("/version")) as { gitVersion?: string };
    console.log(
      `cluster: ${client.server.origin}, kube-apiserver ${version.gitVersion}; mode ${MODE}; node ${process.version}`,
    );
    // Process mode runs operators/<op>/dist/main.js as it is: build it first (npx turbo run build).
    if (MODE === "process") {
      for (const op of operators) applyDir(join(import.meta.dirname, "..", "operators", op, "crds"));
    }
    let goBinary = "";
    if (goPeer && operators.includes("prometheus")) {
      goBinary = buildPrometheusOperator();
      const present = new Set(
        (await client.list(CustomResourceDefinition)).items
          .filter((c) => c.spec.group === "monitoring.coreos.com")
          .map((c) => c.spec.names.plural),
      );
      for (const file of missingGoCrds(present)) {
        execFileSync(kubectl, ["apply", "--server-side", "--field-manager=capstan-bench", "-f", file], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        addedCrds.push(file);
      }
      await sleep(3_000);
    }
    for (const op of operators) {
      console.log(`\n${op} operator (settle ${SETTLE_MS / 1000} s, window ${WINDOW_MS / 1000} s)`);
      runs.push(await runPeer(client, op, `${op} (capstan)`, false, goBinary));
      save();
      if (op === "prometheus" && goBinary !== "") {
        runs.push(
          await runPeer(client, op, `prometheus-operator ${PROMETHEUS_OPERATOR_VERSION}`, true, goBinary),
        );
        save();
      }
    }
    printTable(runs);
    console.log(`\nraw figures: ${out}`);
  } finally {
    // The Go peer's own CRDs (its Prometheus, Alertmanager...) go again: `kubectl get prometheus` stays unambiguous.
    for (const file of addedCrds) {
      execFileSync(kubectl, ["delete", "--ignore-not-found", "-f", file], { stdio: "ignore" });
    }
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:footprint: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
});
