// CPU per API request through @capstan/core's Client, one transport setting at a time, on a real API server: the
// controller benchmark's requests (a ConfigMap create and a status-like merge patch, plus a GET) sent N times by a
// child process per variant, which reports its CPU time over the timed requests (after a warm-up). Variants run in
// a rotating order, each in a fresh process; no test asserts these figures.
// Run: KUBECONFIG=... node bench/request-cost.ts   (env: BENCH_REQUESTS=1500 BENCH_REPEATS=3 BENCH_CONCURRENCY=1,4)
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Namespace } from "../packages/core/src/api/kinds.ts";
import { Client } from "../packages/core/src/client/client.ts";
import { isNotFound } from "../packages/core/src/client/errors.ts";
import { buildCore, CAPSTAN_NODE_FLAGS } from "./peers/build.ts";
import { median } from "./stats.ts";

const { env } = process;

/** What the child runs: each variant names the Client options it is built with. */
const VARIANTS: Record<string, Record<string, unknown>> = {
  "http2 (requests and watches)": { requestsHttp2: true },
  "http/1.1 keep-alive": { requestsHttp2: false },
  ...(env.BENCH_VARIANTS_JSON ? (JSON.parse(env.BENCH_VARIANTS_JSON) as Record<string, never>) : {}),
};

if (process.argv[2] === "child") {
  // node bench/request-cost.ts child NAMESPACE REQUESTS CONCURRENCY OPTIONS_JSON
  const [, , , ns = "", requestsArg = "", concurrencyArg = "", optionsJson = "{}"] = process.argv;
  const core = await import(join(import.meta.dirname, "..", "packages", "core", "dist", "index.js"));
  const client = new core.Client({ ...JSON.parse(optionsJson), userAgent: "capstan-bench" });
  const requests = Number(requestsArg);
  const concurrency = Number(concurrencyArg);
  let next = 0;
  /** Three requests per step, as a reconcile that creates a ConfigMap and patches it: POST, PATCH, GET. */
  const step = async (tag: string, i: number) => {
    const name = `${tag}-${i}`;
    await client.create(core.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: ns },
      data: { message: `hello ${i}` },
    });
    await client.patch(core.ConfigMap, name, ns, { data: { observed: String(i) } });
    await client.get(core.ConfigMap, name, ns);
  };
  const run = async (tag: string, steps: number) => {
    next = 0;
    const lane = async () => {
      for (let i = next++; i < steps; i = next++) await step(tag, i);
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
  };
  await run("warm", 100);
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await run("cm", Math.ceil(requests / 3));
  const wall = performance.now() - t0;
  const { user, system } = process.cpuUsage(cpu);
  await client.close();
  process.stdout.write(
    `${JSON.stringify({ requests: Math.ceil(requests / 3) * 3, cpuMicros: user + system, wallMs: wall })}\n`,
  );
  process.exit(0);
}

const requests = Number(env.BENCH_REQUESTS ?? 1500);
const repeats = Number(env.BENCH_REPEATS ?? 3);
const concurrencies = (env.BENCH_CONCURRENCY ?? "1,4").split(",").map(Number);

async function recreate(client: Client, ns: string): Promise<void> {
  try {
    await client.delete(Namespace, ns);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  for (;;) {
    try {
      await client.get(Namespace, ns);
    } catch (err) {
      if (isNotFound(err)) break;
      throw err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await client.create(Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
}

async function main(): Promise<void> {
  if (!env.KUBECONFIG)
    throw new Error("KUBECONFIG is not set: the request cost benchmark needs an API server");
  buildCore();
  const client = new Client({ userAgent: "capstan-bench" });
  const names = Object.keys(VARIANTS);
  console.log(
    `node ${process.version}, ${requests} requests per run (POST, PATCH, GET of ConfigMaps), ${repeats} runs, flags ${CAPSTAN_NODE_FLAGS.join(" ")}`,
  );
  const ns = "bench-request-cost";
  try {
    for (const concurrency of concurrencies) {
      const perRequest: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let r = 0; r < repeats; r++) {
        for (let i = 0; i < names.length; i++) {
          const name = names[(i + r) % names.length]!;
          await recreate(client, ns);
          const out = spawnSync(
            process.execPath,
            [
              ...CAPSTAN_NODE_FLAGS,
              import.meta.filename,
              "child",
              ns,
              String(requests),
              String(concurrency),
              JSON.stringify(VARIANTS[name]),
            ],
            {
              encoding: "utf8",
              stdio: ["ignore", "pipe", "inherit"],
              env: { ...env, BENCH_VARIANTS_JSON: "" },
            },
          );
          if (out.status !== 0) throw new Error(`${name}: child exited with ${out.status}`);
          const res = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as {
            requests: number;
            cpuMicros: number;
            wallMs: number;
          };
          perRequest[name]!.push(res.cpuMicros / res.requests);
          wall[name]!.push((res.wallMs * 1000) / res.requests);
          console.log(
            `  concurrency ${concurrency} #${r + 1} ${name.padEnd(30)} ${(res.cpuMicros / res.requests).toFixed(0)} µs CPU/request, ` +
              `${((res.wallMs * 1000) / res.requests).toFixed(0)} µs wall/request (load average ${loadavg()[0]!.toFixed(1)})`,
          );
        }
      }
      console.log(`\nconcurrency ${concurrency}, medians of ${repeats}:`);
      const base = median(perRequest[names[0]!]!);
      for (const name of names) {
        const cpu = median(perRequest[name]!);
        console.log(
          `  ${name.padEnd(30)} ${cpu.toFixed(0).padStart(5)} µs CPU/request (${(cpu / base).toFixed(2)}x)  ${median(wall[name]!).toFixed(0).padStart(6)} µs wall/request`,
        );
      }
      console.log("");
    }
  } finally {
    try {
      await client.delete(Namespace, ns);
    } catch {}
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench/request-cost: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
