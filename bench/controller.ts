// Controller throughput, Capstan vs controller-runtime on one real API server: N custom resources
// (BenchWidget) each reconciled into a ConfigMap by the same logic in both peers (bench/peers/controller-child.ts,
// bench/peers/controller-runtime/main.go). Measures the time to converge and the API requests made, as ratios.
// Run: KUBECONFIG=... npm run bench:controller   (env: BENCH_CRS=1000 BENCH_REPEATS=3 BENCH_WORKERS=1,4)
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { CustomResourceDefinition, defineKind, Namespace } from "../packages/core/src/api/kinds.ts";
import type { KubeObject } from "../packages/core/src/api/object.ts";
import { Client } from "../packages/core/src/client/client.ts";
import { isNotFound } from "../packages/core/src/client/errors.ts";
import { buildCore, buildGoPeer, bundledChild, CAPSTAN_NODE_FLAGS } from "./peers/build.ts";
import { median } from "./stats.ts";

const HERE = import.meta.dirname;
const ALL_PEERS = ["capstan", "controller-runtime"] as const;
type Peer = (typeof ALL_PEERS)[number];

const { env } = process;
const crs = Number(env.BENCH_CRS ?? 1000);
const repeats = Number(env.BENCH_REPEATS ?? 3);
const workerCounts = (env.BENCH_WORKERS ?? "1,4").split(",").map(Number);
/** BENCH_PEERS=capstan runs one peer alone (no ratios): for a quick look or debugging. */
const PEERS = ALL_PEERS.filter((p) => (env.BENCH_PEERS ?? ALL_PEERS.join(",")).split(",").includes(p));
if (
  !Number.isInteger(crs) ||
  crs < 1 ||
  !(repeats >= 1) ||
  workerCounts.some((w) => !Number.isInteger(w) || w < 1)
) {
  throw new Error("BENCH_CRS and BENCH_REPEATS must be >= 1, BENCH_WORKERS positive integers (e.g. 1,4)");
}

interface BenchWidget extends KubeObject {
  spec: { message: string };
  status?: { observedGeneration?: number; configMap?: string };
}
const GROUP = "bench.capstan.dev";
const BenchWidget = defineKind<BenchWidget>({
  group: GROUP,
  version: "v1alpha1",
  kind: "BenchWidget",
  plural: "benchwidgets",
  namespaced: true,
});
/** The resources whose apiserver_request_total counts are the peers' work. */
const RESOURCES = new Set(["benchwidgets", "configmaps"]);
const NAMESPACE_PREFIX = "bench-ctrl-";
/** Requests in flight at once while creating the widgets. */
const CONCURRENCY = 16;
/** How long a peer may take to converge. */
const CONVERGE_TIMEOUT_MS = 300_000;
/** After converging, the peer keeps running this long (trailing reconciles of its own status writes). */
const SETTLE_MS = 2_000;

/** What one run of one peer measured. */
interface Run {
  /** From the peer's "starting" line (code loaded, manager about to start) to the last widget converged. */
  convergeSeconds: number;
  /** From spawning the process to the last widget converged. */
  spawnToConvergeSeconds: number;
  /** apiserver_request_total deltas on benchwidgets and configmaps, by verb (and subresource). */
  serverRequests: Record<string, number>;
  /** The peer's own rest_client_requests_total by method (every request, discovery included). */
  clientRequests: Record<string, number>;
  cpuSeconds: number;
  peakRssBytes: number;
  loadAverage: number;
}

/**
 * The capstan peer's Node.js flags: the images' (CAPSTAN_NODE_FLAGS) and the old generation's bound the charts set
 * for their default memory limit of 256Mi (NODE_OPTIONS, five eighths of the limit), as an operator pod runs;
 * BENCH_CAPSTAN_NODE_FLAGS replaces both.
 */
const NODE_FLAGS =
  env.BENCH_CAPSTAN_NODE_FLAGS === undefined
    ? [...CAPSTAN_NODE_FLAGS, "--max-old-space-size=160"]
    : CAPSTAN_NODE_FLAGS;

if (PEERS.length === 0) throw new Error(`BENCH_PEERS must name some of ${ALL_PEERS.join(", ")}`);

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** A client for KUBECONFIG's cluster; throws a clear error when none is set or it does not answer. */
async function connect(): Promise<Client> {
  if (!env.KUBECONFIG)
    throw new Error("KUBECONFIG is not set: the controller benchmark needs a running API server");
  const client = new Client({ maxAttempts: 2, requestTimeoutMs: 30_000, userAgent: "capstan-bench" });
  try {
    const version = (await client.raw("/version")) as { gitVersion?: string };
    console.log(`cluster: ${client.server.origin}, kube-apiserver ${version.gitVersion ?? "?"}`);
  } catch (err) {
    throw new Error(
      `no API server reachable at ${client.server.origin} (KUBECONFIG=${env.KUBECONFIG}): ${err}`,
    );
  }
  return client;
}

/** Installs the BenchWidget CRD (server-side apply, idempotent) and waits until it is established. */
async function installCrd(client: Client): Promise<void> {
  const name = `benchwidgets.${GROUP}`;
  await client.apply(
    CustomResourceDefinition,
    {
      metadata: { name },
      spec: {
        group: GROUP,
        names: {
          kind: "BenchWidget",
          plural: "benchwidgets",
          singular: "benchwidget",
          listKind: "BenchWidgetList",
        },
        scope: "Namespaced",
        versions: [
          {
            name: "v1alpha1",
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    required: ["message"],
                    properties: { message: { type: "string" } },
                  },
                  status: {
                    type: "object",
                    properties: { observedGeneration: { type: "integer" }, configMap: { type: "string" } },
                  },
                },
              },
            },
          },
        ],
      },
    },
    { fieldManager: "capstan-bench", force: true },
  );
  for (let i = 0; ; i++) {
    const crd = await client.get(CustomResourceDefinition, name);
    if (crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) return;
    if (i > 100) throw new Error(`CRD ${name} did not become Established within 20 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs `task(0..count-1)` with at most CONCURRENCY calls in flight. */
async function parallel(count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < count; i = next++) await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, lane));
}

/** Creates `ns` with `crs` BenchWidgets and waits for the controller manager's kube-root-ca.crt in it. */
async function fillNamespace(client: Client, ns: string): Promise<void> {
  await client.create(Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  await parallel(crs, (i) =>
    client.create(BenchWidget, {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: "BenchWidget",
      metadata: { name: `w-${String(i).padStart(5, "0")}`, namespace: ns },
      spec: { message: `hello ${i}` },
    }),
  );
  // kube-root-ca.crt is created by kube-controller-manager in every new namespace: not a peer's request.
  for (let i = 0; ; i++) {
    try {
      await client.raw(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`);
      return;
    } catch (err) {
      if (!isNotFound(err) || i > 100) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Deletes `ns` and waits until it is gone, so its cleanup requests do not land in the next run's counts. */
async function deleteNamespace(client: Client, ns: string): Promise<void> {
  try {
    await client.delete(Namespace, ns);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  for (let i = 0; i < 1200; i++) {
    try {
      await client.get(Namespace, ns);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`namespace ${ns} was not deleted within 5 minutes`);
}

/** Deletes the bench-ctrl-* namespaces an interrupted run left behind. */
async function deleteLeftovers(client: Client): Promise<void> {
  const { items } = await client.list(Namespace);
  for (const ns of items) {
    const name = ns.metadata.name ?? "";
    if (name.startsWith(NAMESPACE_PREFIX)) {
      console.log(`deleting ${name}, left by an interrupted run`);
      await deleteNamespace(client, name);
    }
  }
}

/** apiserver_request_total on RESOURCES, summed by "VERB resource[/subresource]". */
async function serverRequestCounts(client: Client): Promise<Record<string, number>> {
  const text = String(await client.raw("/metrics"));
  const counts: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labels = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!] as [string, string]),
    );
    if (!RESOURCES.has(labels.resource ?? "")) continue;
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ""}`;
    counts[key] = (counts[key] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return counts;
}

function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const d = value - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/**
 * Lists the namespace's widgets, then watches them from that list; `listed` resolves once the list is done
 * (so the runner's own LIST falls before the peer's request counts start), `converged` when every widget
 * reports its ConfigMap at its generation. The runner's WATCH ends after the counts are taken, and the API
 * server records a watch when it ends, so it is not counted either.
 */
function convergence(
  client: Client,
  ns: string,
  signal: AbortSignal,
): { listed: Promise<void>; converged: Promise<number> } {
  const list = client.list(BenchWidget, { namespace: ns });
  const converged = (async () => {
    const done = new Set<string>();
    const check = (w: BenchWidget) => {
      const name = w.metadata.name ?? "";
      if (w.status?.configMap === `${name}-cm` && w.status.observedGeneration === w.metadata.generation) {
        done.add(name);
      }
    };
    const { items, resourceVersion } = await list;
    for (const w of items) check(w);
    for await (const e of client.watch(BenchWidget, { namespace: ns, resourceVersion, signal })) {
      if (e.type === "ERROR") throw new Error(`watch of ${ns} failed: ${JSON.stringify(e.object)}`);
      if (e.type === "ADDED" || e.type === "MODIFIED") check(e.object);
      if (done.size === crs) return performance.now();
    }
    throw new Error(`watch of ${ns} ended before every widget converged (${done.size} of ${crs})`);
  })();
  void converged.catch(() => {}); // awaited (with a timeout) by the caller
  return { listed: list.then(() => {}), converged };
}

/** Reads a child's JSON lines, one per phase; rejects if it exits before sending `phase`. */
function phases(
  child: ChildProcess,
): (phase: string) => Promise<{ at: number; line: Record<string, unknown> }> {
  const seen = new Map<string, { at: number; line: Record<string, unknown> }>();
  const waiting = new Map<string, (v: { at: number; line: Record<string, unknown> }) => void>();
  const failed = new Set<(err: Error) => void>();
  let exited: Error | undefined;
  createInterface({ input: child.stdout! }).on("line", (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    const value = { at: performance.now(), line };
    seen.set(String(line.phase), value);
    waiting.get(String(line.phase))?.(value);
  });
  child.on("exit", (code) => {
    exited = new Error(`${child.spawnfile} exited with code ${code}`);
    for (const reject of failed) reject(exited);
  });
  return (phase) =>
    new Promise((resolve, reject) => {
      const value = seen.get(phase);
      if (value) return resolve(value);
      if (exited) return reject(exited);
      waiting.set(phase, resolve);
      failed.add(reject);
    });
}

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

/** One peer on a fresh namespace of `crs` widgets, from spawn to converged, then stopped and counted. */
async function runPeer(
  client: Client,
  peer: Peer,
  goPeer: string,
  capstanChild: string,
  workers: number,
  id: string,
): Promise<Run> {
  const ns = `${NAMESPACE_PREFIX}${peer}-${workers}-${id}`;
  await fillNamespace(client, ns);
  const watching = new AbortController();
  try {
    const { listed, converged } = convergence(client, ns, watching.signal);
    await listed;
    const before = await serverRequestCounts(client);
    const [command, args] =
      peer === "controller-runtime"
        ? [goPeer, ["controller", "-namespace", ns, "-workers", String(workers)]]
        : [process.execPath, [...NODE_FLAGS, capstanChild, ns, String(workers)]];
    const spawned = performance.now();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    const exit = new Promise((resolve) => child.on("exit", resolve));
    try {
      const next = phases(child);
      const starting = await next("starting");
      const done = await within(
        CONVERGE_TIMEOUT_MS,
        converged,
        `${peer} did not converge ${crs} widgets in ${ns}`,
      );
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      child.kill("SIGTERM");
      const stopped = await within(60_000, next("stopped"), `${peer} did not stop within 60 s of SIGTERM`);
      await exit;
      await new Promise((r) => setTimeout(r, 1_000)); // the server records a watch when it ends
      const after = await serverRequestCounts(client);
      return {
        convergeSeconds: (done - starting.at) / 1000,
        spawnToConvergeSeconds: (done - spawned) / 1000,
        serverRequests: delta(after, before),
        clientRequests: stopped.line.requests as Record<string, number>,
        cpuSeconds: Number(stopped.line.cpuSeconds),
        peakRssBytes: Number(stopped.line.peakRssBytes),
        loadAverage: loadavg()[0]!,
      };
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  } finally {
    watching.abort();
    await deleteNamespace(client, ns);
  }
}

/** One figure for both peers. */
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
    `${"".padEnd(width)}  ${PEERS.map((p) => p.padStart(18)).join("  ")}  capstan/controller-runtime`,
  );
  for (const row of rows) {
    const cells = PEERS.map((p) => (row.values[p] ?? Number.NaN).toFixed(row.digits).padStart(18));
    const [a, b] = [row.values.capstan, row.values["controller-runtime"]];
    const ratio = a === undefined || b === undefined ? "-" : `${(a / b).toFixed(2)}x`;
    console.log(`${`${row.name} (${row.unit})`.padEnd(width)}  ${cells.join("  ")}  ${ratio.padStart(26)}`);
  }
}

async function main(): Promise<void> {
  const client = await connect();
  try {
    await deleteLeftovers(client);
    buildCore();
    const goPeer = PEERS.includes("controller-runtime") ? buildGoPeer("controller-runtime") : "";
    const capstanChild = await bundledChild(join(HERE, "peers", "controller-child.ts"));
    await installCrd(client);
    const goVersion = execFileSync("go", ["env", "GOVERSION"], { encoding: "utf8" }).trim();
    console.log(`node ${process.version}, ${goVersion}, controller-runtime v0.22.5 (client-go v0.34.4)`);
    console.log(
      `capstan's Node.js flags: ${NODE_FLAGS.join(" ") || "(Node's defaults)"}; bundled: ${capstanChild}`,
    );
    console.log(`${crs} BenchWidgets; workers ${workerCounts.join(", ")}; ${repeats} runs each, medians\n`);

    const runs: Record<string, Record<Peer, Run[]>> = {};
    const tables: [string, Row[]][] = [];
    for (const workers of workerCounts) {
      const byPeer: Record<Peer, Run[]> = { capstan: [], "controller-runtime": [] };
      runs[`workers-${workers}`] = byPeer;
      for (let r = 0; r < repeats; r++) {
        for (let i = 0; i < PEERS.length; i++) {
          const peer = PEERS[(i + r) % PEERS.length]!;
          const run = await runPeer(
            client,
            peer,
            goPeer,
            capstanChild,
            workers,
            `${r}-${Date.now().toString(36)}`,
          );
          byPeer[peer].push(run);
          console.log(
            `  ${workers} worker(s) #${r + 1} ${peer.padEnd(18)} converged in ${run.convergeSeconds.toFixed(2)} s, ` +
              `${sum(run.serverRequests)} requests on the server (${JSON.stringify(run.serverRequests)}), ` +
              `${sum(run.clientRequests)} sent, ${run.cpuSeconds.toFixed(2)} s CPU (load average ${run.loadAverage.toFixed(1)})`,
          );
        }
      }
      const figure = (name: string, unit: string, digits: number, of: (run: Run) => number): Row => ({
        name,
        unit,
        digits,
        values: Object.fromEntries(PEERS.map((p) => [p, median(byPeer[p].map(of))])),
      });
      const rows = [
        figure("time to converge", "s", 2, (r) => r.convergeSeconds),
        figure("  incl. process start", "s", 2, (r) => r.spawnToConvergeSeconds),
        figure("API requests, server side", "requests", 0, (r) => sum(r.serverRequests)),
        figure("API requests, sent by the peer", "requests", 0, (r) => sum(r.clientRequests)),
        figure("CPU time of the peer", "s", 2, (r) => r.cpuSeconds),
        figure("peak RSS of the peer", "MiB", 0, (r) => r.peakRssBytes / 2 ** 20),
      ];
      const title = `${crs} widgets, ${workers} worker${workers > 1 ? "s" : ""} (median of ${repeats})`;
      tables.push([title, rows]);
      printRows(title, rows);
    }
    console.log("\n==== summary ====");
    for (const [title, rows] of tables) printRows(title, rows);
    const out = join(HERE, "results", `controller-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify({ crs, repeats, workerCounts, runs }, null, 2)}\n`);
    console.log(`\nraw figures: ${out}`);
  } finally {
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:controller: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
