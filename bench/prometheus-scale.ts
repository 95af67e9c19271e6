// The Prometheus operator at scale: its real reconcile (reconcilePrometheus: observe, selectMonitors, renderConfig,
// the rule shards, apply, bindings, status) against core's in-memory API server (@capstan/core/testing), over a
// generated cluster (bench/prometheus-scale-objects.ts) of 500 ServiceMonitors in 50 namespaces, 1,000 rules and
// 2,000 Pods behind 500 Services, and the same at a tenth of that. Reports the cold (first) reconcile, the warm
// steady reconcile (median and p95; it must write nothing: the bench fails if it does), the configuration's size
// (raw and gzipped), the rule shards, the pure stages' times, CPU time and heap growth, and the 500/50 ratio.
// There is no runnable Go peer for config generation here: the ratio between the scales is the comparison.
// Run: npm run bench:prometheus-scale   (env: BENCH_REPEATS=20 warm reconciles per scale)
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  Namespace,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  type SecretObject,
  Service,
  ServiceAccount,
  StatefulSet,
} from "@capstan/core";
import { FakeApiServer, reconcileOnce, WRITE_VERBS } from "@capstan/core/testing";
import { Registry } from "prom-client";
import type { PrometheusRule } from "../operators/prometheus/src/api/prometheus-rule.ts";
import type { ServiceMonitor } from "../operators/prometheus/src/api/service-monitor.ts";
import { renderConfig } from "../operators/prometheus/src/desired/config.ts";
import { CONFIG_KEY, GENERATION_ANNOTATION } from "../operators/prometheus/src/desired/objects.ts";
import { shardRuleFiles } from "../operators/prometheus/src/desired/rule-shards.ts";
import {
  type PodLike,
  type ServiceLike,
  selectMonitors,
} from "../operators/prometheus/src/desired/select.ts";
import { PrometheusOperatorMetrics } from "../operators/prometheus/src/reconcile/metrics.ts";
import { ControllerState } from "../operators/prometheus/src/reconcile/options.ts";
import { reconcilePrometheus } from "../operators/prometheus/src/reconcile/reconcile.ts";
import { RenderCache } from "../operators/prometheus/src/reconcile/render-cache.ts";
import { KINDS } from "../operators/prometheus/src/reconcile/test-fixture.ts";
import { generate, type Scale, SERVER, SERVER_POD_IP } from "./prometheus-scale-objects.ts";
import { median } from "./stats.ts";

const HERE = import.meta.dirname;
const { env } = process; // read here, not by turbo: no turbo.json entry needed
const repeats = Number(env.BENCH_REPEATS ?? 20);
if (!Number.isInteger(repeats) || repeats < 1) throw new Error("BENCH_REPEATS must be a positive integer");
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc (npm run bench:prometheus-scale does)");

const SCALES: Record<"small" | "large", Scale> = {
  small: { monitors: 50, rules: 100, pods: 200, namespaces: 5 },
  large: { monitors: 500, rules: 1000, pods: 2000, namespaces: 50 },
};
/** Every kind the reconcile reads, so that each reconcileOnce primes its cache before the timed reconcile. */
const CACHED_KINDS = [
  ...KINDS,
  Namespace,
  Pod,
  Service,
  Secret,
  ServiceAccount,
  Role,
  RoleBinding,
  StatefulSet,
  PodDisruptionBudget,
];

/** One reconcile, timed around reconcilePrometheus alone (the harness's cache priming is not counted). */
interface Sample {
  ms: number;
  /** CPU of the whole process during the reconcile: the in-memory API server's handling of its requests too. */
  cpuMs: number;
  /** Write requests the API server received (Events included), by "verb Kind[/subresource]". */
  writes: Record<string, number>;
  requests: number;
}

const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]!;
const count = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const heapMiB = () => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

async function reconcile(server: FakeApiServer, state: ControllerState, metrics: PrometheusOperatorMetrics) {
  const first = server.log.length;
  let sample: Omit<Sample, "writes" | "requests"> | undefined;
  const run = await reconcileOnce(
    async (req, ctx) => {
      const cpu = process.cpuUsage();
      const start = performance.now();
      try {
        return await reconcilePrometheus(req, ctx, {
          metrics,
          state,
          runtimeInfo: async () => ({ reloadConfigSuccess: true, lastConfigTime: "2026-01-01T00:00:00Z" }),
          // The server's pod has loaded whatever generation the config Secret holds (as a healthy reloader says).
          reloaderState: async (ip) => {
            const secret = server.objects.get("/api/v1/secrets")?.get(`${SERVER.namespace}/prometheus-main`);
            const id = secret?.metadata.annotations?.[GENERATION_ANNOTATION];
            return ip === SERVER_POD_IP && id ? { accepted: id, refused: "", message: "" } : undefined;
          },
        });
      } finally {
        const used = process.cpuUsage(cpu);
        sample = { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
      }
    },
    { server, kinds: CACHED_KINDS, request: SERVER, timeoutMs: 120_000 },
  );
  run.expectNoError();
  const writes: Record<string, number> = {};
  const log = server.log.slice(first);
  for (const r of log.filter((x) => WRITE_VERBS.has(x.verb))) {
    const key = `${r.verb} ${r.kind}${r.subresource ? `/${r.subresource}` : ""}`;
    writes[key] = (writes[key] ?? 0) + 1;
  }
  return { ...sample!, writes, requests: run.requests.length };
}

/** The bytes of a Secret's data (keys and decoded values). */
const secretBytes = (s: SecretObject) =>
  Object.entries(s.data ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.from(v, "base64").length, 0);

/** Median CPU ms of `f` over `times` calls (CPU, not wall time: the figure holds on a loaded machine). */
function cpuTime(times: number, f: () => unknown): number {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = process.cpuUsage();
    f();
    const used = process.cpuUsage(start);
    ms.push((used.user + used.system) / 1000);
  }
  return median(ms);
}

type Figures = Record<string, number>;

async function benchScale(name: string, scale: Scale): Promise<Figures> {
  const { objects, server: p } = generate(scale);
  const of = <T>(kind: string) => objects.filter((o) => o.kind === kind) as unknown as T[];

  // The whole reconcile against the in-memory API server.
  const server = await new FakeApiServer({ kinds: CACHED_KINDS, historyLimit: 100_000 }).start();
  try {
    server.seed(...objects);
    const state = new ControllerState();
    const metrics = new PrometheusOperatorMetrics(new Registry());
    const heapSeeded = heapMiB();
    const cold = await reconcile(server, state, metrics);
    const heapCold = heapMiB();
    // A second pass may still settle what the first could not know (the pods' accepted generation, last-good).
    const settle = await reconcile(server, state, metrics);
    const heapWarmStart = heapMiB();
    const warm: Sample[] = [];
    for (let i = 0; i < repeats; i++) {
      const s = await reconcile(server, state, metrics);
      if (count(s.writes) > 0) {
        throw new Error(
          `STEADY RECONCILE WROTE (${name}, warm run ${i + 1}): ${JSON.stringify(s.writes)}: a steady reconcile must make no writes`,
        );
      }
      warm.push(s);
    }
    const heapWarmEnd = heapMiB();

    // The pure stages, on what the cache would hand them, after the reconciles: as a steady reconcile runs them.
    const namespaces = of<{ metadata: { name?: string } }>("Namespace");
    const services = of<ServiceLike>("Service");
    const pods = of<PodLike>("Pod");
    const monitors = {
      serviceMonitors: of<ServiceMonitor>("ServiceMonitor"),
      podMonitors: [],
      rules: of<PrometheusRule>("PrometheusRule"),
    };
    const selection = selectMonitors(p, namespaces, monitors, services, pods);
    const refused = selection.feedback.filter((f) => f.reason !== "Accepted");
    if (refused.length > 0)
      throw new Error(`${refused.length} objects not accepted: ${JSON.stringify(refused[0])}`);
    const config = renderConfig(p, selection);
    const stageRuns = 5;
    const selectMs = cpuTime(stageRuns, () => selectMonitors(p, namespaces, monitors, services, pods));
    const renderMs = cpuTime(stageRuns, () => renderConfig(p, selection));
    const shardMs = cpuTime(stageRuns, () => shardRuleFiles(config.rules));
    // What a steady reconcile pays instead of renderConfig: the render cache's key, then its hit.
    const cache = new RenderCache();
    cache.config("bench", p, selection);
    const cachedMs = cpuTime(stageRuns, () => cache.config("bench", p, selection));

    const secrets = [...(server.objects.get("/api/v1/secrets")?.values() ?? [])] as SecretObject[];
    const configSecret = secrets.find((s) => s.metadata.name === "prometheus-main");
    const gz = Buffer.from(configSecret?.data?.[CONFIG_KEY] ?? "", "base64");
    const raw = gunzipSync(gz);
    const shards = secrets
      .filter((s) => /^prometheus-main-rules-\d+$/.test(s.metadata.name ?? ""))
      .map(secretBytes);
    const ms = warm.map((s) => s.ms);
    console.log(
      `${name}: cold ${cold.ms.toFixed(0)} ms (${count(cold.writes)} writes: ${JSON.stringify(cold.writes)}), ` +
        `settle ${settle.ms.toFixed(0)} ms (${count(settle.writes)} writes${count(settle.writes) ? `: ${JSON.stringify(settle.writes)}` : ""}), ` +
        `warm median ${median(ms).toFixed(0)} ms, p95 ${p95(ms).toFixed(0)} ms over ${repeats}, 0 writes; ` +
        `warm requests per reconcile ${warm[0]?.requests}`,
    );
    return {
      "cold reconcile (ms)": cold.ms,
      "cold reconcile CPU (ms)": cold.cpuMs,
      "cold reconcile writes": count(cold.writes),
      "second reconcile writes": count(settle.writes),
      "warm reconcile, median (ms)": median(ms),
      "warm reconcile, p95 (ms)": p95(ms),
      "warm reconcile CPU, median (ms)": median(warm.map((s) => s.cpuMs)),
      "warm reconcile writes": count(Object.assign({}, ...warm.map((s) => s.writes))),
      "warm reconcile requests": median(warm.map((s) => s.requests)),
      "selectMonitors, steady, CPU (ms)": selectMs,
      "renderConfig, steady, CPU (ms)": renderMs,
      "renderConfig through the render cache, inputs unchanged, CPU (ms)": cachedMs,
      "shardRuleFiles, steady, CPU (ms)": shardMs,
      "prometheus.yml raw (KiB)": raw.length / 1024,
      "prometheus.yml gzipped (KiB)": gz.length / 1024,
      "scrape jobs": (raw.toString("utf8").match(/^ {2}- job_name:/gm) ?? []).length,
      "rule shards": shards.length,
      "rule shards total (KiB)": shards.reduce((a, b) => a + b, 0) / 1024,
      "largest rule shard (KiB)": Math.max(0, ...shards) / 1024,
      "heap: growth over cold reconcile (MiB)": heapCold - heapSeeded,
      [`heap: growth over ${repeats} warm reconciles (MiB)`]: heapWarmEnd - heapWarmStart,
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  console.log(
    `node ${process.version}; ${repeats} warm reconciles per scale; no Go peer generates this configuration, ` +
      "so the comparison is the 500/50 ratio (per object: ratio / 10; 1.0 is linear)\n",
  );
  // JIT warm-up: the first scale measured would otherwise pay for compiling the operator's code.
  await benchScale("warm-up (5 monitors, not reported)", { monitors: 5, rules: 10, pods: 20, namespaces: 1 });
  const small = await benchScale("50 monitors", SCALES.small);
  const large = await benchScale("500 monitors", SCALES.large);
  const s = SCALES.small;
  const l = SCALES.large;
  const head = [
    "figure",
    `${s.monitors} SM / ${s.rules} rules / ${s.pods} pods`,
    `${l.monitors} SM / ${l.rules} rules / ${l.pods} pods`,
    "ratio",
    "ratio per object",
  ];
  const rows = Object.keys(large).map((k) => {
    const [a, b] = [small[k] ?? Number.NaN, large[k] ?? Number.NaN];
    const digits = Math.abs(b) >= 100 ? 0 : 1;
    const ratio = a === 0 ? "-" : `${(b / a).toFixed(1)}x`;
    const perObject = a === 0 ? "-" : (b / a / (l.monitors / s.monitors)).toFixed(2);
    return [k, a.toFixed(digits), b.toFixed(digits), ratio, perObject];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  console.log(
    `\n${line(head)}\n|${widths.map((w, i) => `${i === 0 ? "-" : ""}${"-".repeat(w + 1)}${i === 0 ? "" : ":"}`).join("|")}|`,
  );
  for (const r of rows) console.log(line(r));
  const out = join(
    HERE,
    "results",
    `prometheus-scale-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
  );
  mkdirSync(dirname(out), { recursive: true });
  console.log(
    `\nload average during the run: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} (1, 5, 15 min)`,
  );
  writeFileSync(out, `${JSON.stringify({ repeats, scales: SCALES, small, large }, null, 2)}\n`);
  console.log(`\nraw figures: ${out}`);
}

main().catch((err: unknown) => {
  console.error(`bench:prometheus-scale: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
