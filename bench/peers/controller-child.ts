// The capstan peer of bench/controller.ts, in its own process: one controller that reconciles every
// BenchWidget (bench.capstan.dev/v1alpha1) of a namespace into a ConfigMap, the same logic as the
// controller-runtime peer (controller-runtime/main.go): get the widget from the cache, create or update its
// ConfigMap with a controller owner reference, and patch the status once.
// Prints {"phase":"starting"} before the manager starts and {"phase":"stopped",...} with its request
// counts once SIGTERM stopped it. Run by bench/controller.ts: node bench/peers/controller-child.ts NAMESPACE WORKERS
import { readFileSync } from "node:fs";
import type { ConfigMap as ConfigMapKind, KubeObject, ObjectOf } from "@capstan/core";

const [namespace = "", workersArg = ""] = process.argv.slice(2);
const workers = Number(workersArg);
if (!namespace || !Number.isInteger(workers) || workers < 1) {
  console.error("usage: controller-child.ts NAMESPACE WORKERS");
  process.exit(2);
}

interface BenchWidget extends KubeObject {
  spec: { message: string };
  status?: { observedGeneration?: number; configMap?: string };
}
type ConfigMap = ObjectOf<typeof ConfigMapKind>;

// Module loading is not timed (the Go peer's binary is loaded too): the runner times from "starting".
const {
  Client,
  ConfigMap,
  CoreMetrics,
  controller,
  defineKind,
  Manager,
  setControllerReference,
  silentLogger,
} = await import("@capstan/core");

const BenchWidget = defineKind<BenchWidget>({
  group: "bench.capstan.dev",
  version: "v1alpha1",
  kind: "BenchWidget",
  plural: "benchwidgets",
  namespaced: true,
});

/** Whether `live` already holds `data` and is controlled by `owner` (controllerutil.CreateOrUpdate's no-op). */
function upToDate(live: ConfigMap, data: Record<string, string>, owner: BenchWidget): boolean {
  const keys = Object.keys(live.data ?? {});
  return (
    keys.length === Object.keys(data).length &&
    keys.every((k) => live.data?.[k] === data[k]) &&
    live.metadata.ownerReferences?.find((r) => r.controller)?.uid === owner.metadata.uid
  );
}

const metrics = new CoreMetrics();
/** BENCH_CAPSTAN_CLIENT_OPTIONS (JSON ClientOptions, e.g. {"requestsHttp2":true}): one lever at a time. */
const { env } = process; // read here, not by turbo: no turbo.json entry needed
const clientOptions = JSON.parse(env.BENCH_CAPSTAN_CLIENT_OPTIONS || "{}") as Record<string, unknown>;
const mgr = new Manager({
  name: "bench-controller",
  namespace,
  metrics,
  client: new Client({ ...clientOptions, metrics, userAgent: "bench-controller (capstan)" }),
  logger: silentLogger,
  metricsPort: null,
  healthPort: null,
});
mgr.add(
  controller({
    name: "benchwidget",
    for: BenchWidget,
    owns: [ConfigMap],
    maxConcurrentReconciles: workers,
    reconcile: async (req, ctx) => {
      const widget = await ctx.cache.get(BenchWidget, req.name, req.namespace);
      if (widget === undefined) return;
      const name = `${req.name}-cm`;
      const data = { message: widget.spec.message };
      const live = await ctx.cache.get(ConfigMap, name, req.namespace);
      if (live === undefined) {
        const cm: ConfigMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
        setControllerReference(widget, BenchWidget, cm);
        await ctx.client.create(ConfigMap, cm);
      } else if (!upToDate(live, data, widget)) {
        const cm = structuredClone(live);
        cm.data = data;
        setControllerReference(widget, BenchWidget, cm);
        await ctx.client.update(ConfigMap, cm);
      }
      const generation = widget.metadata.generation;
      if (widget.status?.observedGeneration !== generation || widget.status?.configMap !== name) {
        await ctx.client.patchStatus(BenchWidget, req.name, req.namespace, {
          status: { observedGeneration: generation, configMap: name },
        });
      }
    },
  }),
);

const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
process.stdout.write(`${JSON.stringify({ phase: "starting" })}\n`);
await mgr.start(stop.signal);

/** rest_client_requests_total summed by method, as the Go peer reports it. */
const requests: Record<string, number> = {};
for (const v of (await metrics.restClientRequests.get()).values) {
  const method = String(v.labels.method);
  requests[method] = (requests[method] ?? 0) + v.value;
}
const { user, system } = process.cpuUsage();
const hwm = readFileSync("/proc/self/status", "utf8").match(/^VmHWM:\s+(\d+) kB$/m);
const peakRssBytes = hwm ? Number(hwm[1]) * 1024 : 0;
process.stdout.write(
  `${JSON.stringify({ phase: "stopped", requests, cpuSeconds: (user + system) / 1e6, peakRssBytes })}\n`,
);
await mgr.client.close();
process.exit(0);
