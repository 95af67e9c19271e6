// One informer peer in its own process, so its RSS is its own: syncs a namespace's ConfigMaps, reports, then
// counts update events until `updates` arrived. Same JSON lines as the client-go peer (see client-go/main.go).
// Run by bench/peers.ts: node bench/peers/informer-child.ts capstan|client-node NAMESPACE EXPECT UPDATES
import { readFileSync } from "node:fs";

/** A peer under test: starts an informer and resolves once its cache holds the first list. */
type StartInformer = (
  namespace: string,
  onUpdate: () => void,
) => Promise<{ size: () => number; stop: () => Promise<void> }>;

const [peer = "", namespace = "", expectArg = "", updatesArg = ""] = process.argv.slice(2);
const expect = Number(expectArg);
const updates = Number(updatesArg);
const TIMEOUT_MS = 5 * 60_000;

/**
 * @capstan/core's shared informer (from an InformerFactory, as the manager's cache gets it) with its defaults (a list
 * at resourceVersion 0 decoded while it arrives, managedFields left out), from the built package. To measure one lever
 * at a time, BENCH_CAPSTAN_OPTIONS (JSON, e.g. {"watchList":true,"pageSize":0}) overrides informer options and
 * BENCH_CAPSTAN_CLIENT (JSON, e.g. {"requestsHttp2":true}) client options.
 */
async function loadCapstan(): Promise<StartInformer> {
  const { Client, ConfigMap, InformerFactory } = await import("@capstan/core");
  const { env } = process; // read here, not by turbo
  const informerOptions = JSON.parse(env.BENCH_CAPSTAN_OPTIONS || "{}") as Record<string, unknown>;
  const clientOptions = JSON.parse(env.BENCH_CAPSTAN_CLIENT || "{}") as Record<string, unknown>;
  return async (ns, onUpdate) => {
    const client = new Client(clientOptions);
    const factory = new InformerFactory({ client, informerOptions });
    const informer = factory.informerFor(ConfigMap, { namespace: ns });
    informer.addEventHandler({ onUpdate });
    const controller = new AbortController();
    factory.start(controller.signal);
    await informer.waitForSync();
    return {
      size: () => informer.store.size,
      stop: async () => {
        controller.abort();
        await factory.stopped();
        await client.close();
      },
    };
  };
}

/** @kubernetes/client-node's makeInformer as its README shows it: start() resolves after list + watch. */
async function loadClientNode(): Promise<StartInformer> {
  const k8s = await import("@kubernetes/client-node");
  return async (ns, onUpdate) => {
    const kc = new k8s.KubeConfig();
    kc.loadFromDefault();
    const api = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      api.listNamespacedConfigMap({ namespace: ns }),
    );
    informer.on("update", onUpdate);
    await informer.start();
    return { size: () => informer.list(ns).length, stop: () => informer.stop() };
  };
}

/** One "Vm...: N kB" field of /proc/self/status in bytes (VmHWM: peak RSS), as the client-go peer reads it. */
function procStatusBytes(field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync("/proc/self/status", "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m"));
  return line ? Number(line[1]) * 1024 : 0;
}

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

const load = (
  { capstan: loadCapstan, "client-node": loadClientNode } as Record<string, () => Promise<StartInformer>>
)[peer];
if (load === undefined || !namespace || !Number.isInteger(expect) || !Number.isInteger(updates)) {
  console.error("usage: informer-child.ts capstan|client-node NAMESPACE EXPECT UPDATES");
  process.exit(2);
}
const timeout = setTimeout(() => {
  console.error(
    `${peer}: timed out after ${TIMEOUT_MS / 1000} s (received ${received} of ${updates} updates)`,
  );
  process.exit(1);
}, TIMEOUT_MS);

let received = 0;
let firstUpdate = 0;
let allUpdated: () => void = () => {};
const updated = new Promise<number>((resolve) => {
  allUpdated = () => resolve(performance.now());
});
const onUpdate = () => {
  received++;
  if (received === 1) firstUpdate = performance.now();
  if (received === updates) allUpdated();
};

const start = await load(); // module loading is not part of the sync time (the client-go binary is loaded too)
const baseRssBytes = procStatusBytes("VmRSS");
const started = performance.now();
const cpuAtStart = cpuSeconds();
const informer = await start(namespace, onUpdate);
const syncSeconds = (performance.now() - started) / 1000;
const syncCpuSeconds = cpuSeconds() - cpuAtStart;
if (informer.size() !== expect) {
  console.error(`${peer}: synced ${informer.size()} objects, expected ${expect}`);
  process.exit(1);
}
emit({
  phase: "synced",
  syncSeconds,
  syncCpuSeconds,
  baseRssBytes,
  syncPeakRssBytes: procStatusBytes("VmHWM"),
});

const cpuBefore = cpuSeconds();
const last = await updated;
emit({
  phase: "updated",
  updates,
  updateSeconds: (last - firstUpdate) / 1000,
  cpuSeconds: cpuSeconds() - cpuBefore,
  peakRssBytes: procStatusBytes("VmHWM"),
  objectsInCache: informer.size(),
});
clearTimeout(timeout);
await informer.stop();
process.exit(0); // client-node may keep a socket open after stop(); the figures are out
