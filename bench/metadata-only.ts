// Metadata-only informers on a real API server: N owned Pods cached by a full informer and by a
// metadataOnly(Pod) informer, each in its own process (so its RSS is its own), in the same run.
// Run: KUBECONFIG=... node --expose-gc bench/metadata-only.ts   (env: BENCH_PODS=10000 BENCH_REPEATS=3)
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { ConfigMap, Namespace, Pod } from "../packages/core/src/api/kinds.ts";
import type { Client } from "../packages/core/src/client/client.ts";
import { connect, deleteNamespace } from "./peers/cluster-data.ts";

const MODES = ["full", "metadata"] as const;
type Mode = (typeof MODES)[number];

/** What a child reports once its informer has synced. */
interface Run {
  syncSeconds: number;
  baseRssBytes: number;
  /** Peak RSS (VmHWM) once synced. */
  peakRssBytes: number;
  /** V8 heap in use after two full collections, with the cache held. */
  heapUsedBytes: number;
  /** The same before the informer started: the cache's own heap is the difference. */
  baseHeapUsedBytes: number;
  objects: number;
}

/** A pod as a Deployment's ReplicaSet would make it: labels, an owner, one container with probes and env. */
function pod(namespace: string, i: number, owner: { name: string; uid: string }) {
  const name = `bench-${String(i).padStart(6, "0")}`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      labels: {
        "app.kubernetes.io/name": "bench",
        "app.kubernetes.io/part-of": "capstan-bench",
        index: String(i),
      },
      annotations: { "capstan.dev/bench": "metadata-only" },
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: owner.name, uid: owner.uid, controller: true },
      ],
    },
    spec: {
      // gated: never scheduled, so nothing else writes to these pods while the informers run
      schedulingGates: [{ name: "capstan.dev/bench" }],
      containers: [
        {
          name: "app",
          image: "registry.example/bench/app:1.2.3",
          args: ["--listen=:8080", "--metrics=:9090", "--log-format=json", `--id=${name}`],
          ports: [
            { name: "http", containerPort: 8080 },
            { name: "metrics", containerPort: 9090 },
          ],
          env: Array.from({ length: 8 }, (_, j) => ({ name: `SETTING_${j}`, value: `value-${j}-${i}` })),
          resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
          readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 10 },
          livenessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 20 },
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          },
        },
      ],
    },
  };
}

/** Creates namespace `ns` with one owner ConfigMap and `count` Pods it owns (16 creates in flight). */
async function fill(client: Client, ns: string, count: number): Promise<void> {
  await client.create(Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const owner = await client.create(ConfigMap, { metadata: { name: "owner", namespace: ns } });
  const ref = { name: "owner", uid: owner.metadata.uid ?? "" };
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < count; i = next++) {
      await client.create(Pod, pod(ns, i, ref) as never, { fieldManager: "capstan-bench" });
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  console.log(`created ${count} Pods in ${ns} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Spawns this file as a child informer of `mode`; resolves with its report. */
function runChild(mode: Mode, ns: string, expect: number): Promise<Run> {
  const child = spawn(
    process.execPath,
    ["--expose-gc", import.meta.filename, "child", mode, ns, String(expect)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    let report: Run | undefined;
    createInterface({ input: child.stdout }).on("line", (line) => {
      report = JSON.parse(line) as Run;
    });
    child.on("exit", (code) =>
      report && code === 0 ? resolve(report) : reject(new Error(`${mode} informer exited with ${code}`)),
    );
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

async function main(): Promise<void> {
  const { env } = process; // read here, not by turbo: no turbo.json entry needed
  const pods = Number(env.BENCH_PODS ?? 10_000);
  const repeats = Number(env.BENCH_REPEATS ?? 3);
  const client = await connect();
  // Not bench-peers-*: bench/peers.ts deletes those as leftovers, and must not delete this run's.
  const ns = `bench-metadata-${Date.now().toString(36)}`;
  try {
    await fill(client, ns, pods);
    const runs: Record<Mode, Run[]> = { full: [], metadata: [] };
    for (let r = 0; r < repeats; r++) {
      for (let i = 0; i < MODES.length; i++) {
        const mode = MODES[(i + r) % MODES.length]!;
        const run = await runChild(mode, ns, pods);
        runs[mode].push(run);
        console.log(
          `  #${r + 1} ${mode.padEnd(8)} sync ${run.syncSeconds.toFixed(2)} s, peak RSS ${mib(run.peakRssBytes)} MiB, ` +
            `cache heap ${mib(run.heapUsedBytes - run.baseHeapUsedBytes)} MiB (load average ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    }
    const row = (name: string, of: (run: Run) => number, unit: string, digits = 0) => {
      const [full, meta] = MODES.map((m) => median(runs[m].map(of)));
      console.log(
        `${name.padEnd(34)} ${full!.toFixed(digits).padStart(10)} ${meta!.toFixed(digits).padStart(10)}  ${unit.padEnd(4)} ${(meta! / full!).toFixed(2)}x`,
      );
    };
    console.log(`\n${pods} owned Pods, median of ${repeats}`);
    console.log(`${"".padEnd(34)} ${"full".padStart(10)} ${"metadata".padStart(10)}        metadata/full`);
    row("sync time", (r) => r.syncSeconds, "s", 2);
    row("RSS before start", (r) => r.baseRssBytes / 2 ** 20, "MiB");
    row("peak RSS after sync", (r) => r.peakRssBytes / 2 ** 20, "MiB");
    row("cache heap (after GC)", (r) => (r.heapUsedBytes - r.baseHeapUsedBytes) / 2 ** 20, "MiB", 1);
    row("cache heap per object", (r) => (r.heapUsedBytes - r.baseHeapUsedBytes) / r.objects, "B");
  } finally {
    await deleteNamespace(client, ns);
    await client.close();
  }
}

/** The child: one informer of Pods (full or metadata-only) in `ns`; prints one JSON line once synced. */
async function child(mode: Mode, ns: string, expect: number): Promise<void> {
  const { Client } = await import("../packages/core/src/client/client.ts");
  const { metadataOnly } = await import("../packages/core/src/client/metadata-only.ts");
  const { InformerFactory } = await import("../packages/core/src/cache/informer-factory.ts");
  const gc = globalThis.gc!;
  const vm = (field: string) =>
    Number(
      readFileSync("/proc/self/status", "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m"))?.[1],
    ) * 1024;
  const client = new Client();
  const factory = new InformerFactory({ client });
  const informer = factory.informerFor(mode === "metadata" ? metadataOnly(Pod) : Pod, { namespace: ns });
  gc();
  const baseHeapUsedBytes = process.memoryUsage().heapUsed;
  const baseRssBytes = vm("VmRSS");
  const controller = new AbortController();
  const started = performance.now();
  factory.start(controller.signal);
  await factory.waitForSync();
  const syncSeconds = (performance.now() - started) / 1000;
  const peakRssBytes = vm("VmHWM");
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
  const heapUsedBytes = process.memoryUsage().heapUsed;
  const objects = informer.store.size;
  if (objects !== expect) throw new Error(`${mode}: synced ${objects} Pods, expected ${expect}`);
  console.log(
    JSON.stringify({ syncSeconds, baseRssBytes, peakRssBytes, heapUsedBytes, baseHeapUsedBytes, objects }),
  );
  controller.abort();
  await factory.stopped();
  await client.close();
}

const [role, mode, ns, expect] = process.argv.slice(2);
if (role === "child") await child(mode as Mode, ns!, Number(expect));
else
  await main().catch((err: unknown) => {
    console.error(`bench metadata-only: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
