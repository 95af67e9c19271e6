// Informer memory: heap bytes per cached object, with the default transform (managedFields dropped) and without.
// Run: node --expose-gc bench/informer-memory.ts

import type { KubeObject } from "../packages/core/src/api/object.ts";
import { Informer } from "../packages/core/src/cache/informer.ts";
import type { ListerWatcher } from "../packages/core/src/cache/list-watch.ts";
import type { ListResult, WatchEvent } from "../packages/core/src/client/client.ts";

/** One benchmark figure, in the shape bench/run.ts collects. */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
}

const PAGE_SIZE = 500;
const DATA_KEYS = ["application.yaml", "logging.properties", "features.json", "limits.conf"];

/** A realistic ConfigMap as the API server sends it: labels, annotations, ~1.5 KB managedFields, ~1 KB data. */
export function configMapJson(i: number): string {
  const ns = `team-${i % 50}`;
  const app = `service-${i % 400}`;
  const time = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString().replace(/\.\d+Z$/, "Z");
  const hex = (seed: number, len: number) => {
    let s = "";
    let x = seed * 2654435761;
    while (s.length < len) {
      x = (x * 1103515245 + 12345) % 2147483648;
      s += x.toString(16);
    }
    return s.slice(0, len);
  };
  const labels = {
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/instance": `${app}-${i}`,
    "app.kubernetes.io/managed-by": "Helm",
    "app.kubernetes.io/part-of": "platform",
    "app.kubernetes.io/version": `1.${i % 30}.${i % 7}`,
    "helm.sh/chart": `${app}-0.${i % 12}.0`,
  };
  const annotations = {
    "meta.helm.sh/release-name": app,
    "meta.helm.sh/release-namespace": ns,
    "checksum/config": hex(i, 64),
  };
  const fieldsOf = (o: Record<string, string>) =>
    Object.fromEntries([[".", {}], ...Object.keys(o).map((k) => [`f:${k}`, {}])]);
  const data = Object.fromEntries(
    DATA_KEYS.map((k, j) => [k, `# ${k} for ${app}\n${hex(i * 7 + j, 220)}\n`]),
  );
  const managedFields = [
    {
      manager: "helm",
      operation: "Update",
      apiVersion: "v1",
      time,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:data": fieldsOf(data),
        "f:metadata": { "f:annotations": fieldsOf(annotations), "f:labels": fieldsOf(labels) },
      },
    },
    {
      manager: "kubectl-client-side-apply",
      operation: "Update",
      apiVersion: "v1",
      time,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": {
          "f:annotations": { "f:kubectl.kubernetes.io/last-applied-configuration": {} },
          "f:labels": { "f:app.kubernetes.io/name": {}, "f:app.kubernetes.io/part-of": {} },
        },
      },
    },
    {
      manager: "config-syncer",
      operation: "Apply",
      apiVersion: "v1",
      time,
      fieldsType: "FieldsV1",
      fieldsV1: { "f:data": { "f:features.json": {}, "f:limits.conf": {} } },
    },
  ];
  return JSON.stringify({
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: {
      name: `${app}-config-${i}`,
      namespace: ns,
      uid: `${hex(i, 8)}-${hex(i + 1, 4)}-4${hex(i + 2, 3)}-8${hex(i + 3, 3)}-${hex(i + 4, 12)}`,
      resourceVersion: String(100_000 + i),
      creationTimestamp: time,
      labels,
      annotations,
      managedFields,
    },
    data,
  });
}

/** Lists `n` ConfigMaps, page by page, each page parsed from fresh JSON; its watch stays silent. */
function syntheticListerWatcher(n: number): ListerWatcher<KubeObject> {
  return {
    async list({ limit, continue: cont }): Promise<ListResult<KubeObject>> {
      const start = cont === undefined ? 0 : Number(cont);
      const end = Math.min(n, start + (limit || n));
      const items: string[] = [];
      for (let i = start; i < end; i++) items.push(configMapJson(i));
      const more = end < n ? `,"continue":"${end}"` : "";
      return JSON.parse(
        `{"items":[${items.join(",")}],"resourceVersion":"${100_000 + n}"${more}}`,
      ) as ListResult<KubeObject>;
    },
    async *watch({ signal }): AsyncGenerator<WatchEvent<KubeObject>> {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    },
  };
}

/** Heap in use after full collections, once pending callbacks have had a turn to let go of garbage. */
async function collect(): Promise<number> {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error("run with node --expose-gc bench/informer-memory.ts");
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap bytes the informer holds per object once synced on `n` objects. */
async function bytesPerObject(n: number, transform?: (obj: KubeObject) => KubeObject): Promise<number> {
  const before = await collect();
  const informer = new Informer(syntheticListerWatcher(n), {
    pageSize: PAGE_SIZE,
    ...(transform === undefined ? {} : { transform }),
  });
  const controller = new AbortController();
  const done = informer.start(controller.signal);
  await informer.waitForSync();
  const after = await collect();
  if (informer.store.size !== n) throw new Error(`synced ${informer.store.size} objects, expected ${n}`);
  controller.abort();
  await done;
  return (after - before) / n;
}

/** The median of three measurements, so one disturbed collection cannot skew the figure. */
async function median(measure: () => Promise<number>): Promise<number> {
  const runs = [await measure(), await measure(), await measure()].sort((a, b) => a - b);
  return runs[1]!;
}

/** Feeds `objects` synthetic ConfigMaps through an Informer, with and without dropping managedFields. */
export async function benchInformerMemory(objects = 20_000): Promise<BenchResult[]> {
  const identity = (o: KubeObject) => o;
  await bytesPerObject(1_000); // warm up: compile the code paths so they do not count below
  await bytesPerObject(1_000, identity);
  const dropped = await median(() => bytesPerObject(objects));
  const kept = await median(() => bytesPerObject(objects, identity));
  return [
    {
      name: "informer heap per object (managedFields dropped, default)",
      value: Math.round(dropped),
      unit: "bytes",
    },
    { name: "informer heap per object (no transform)", value: Math.round(kept), unit: "bytes" },
    {
      name: "informer heap saved by dropping managedFields",
      value: Math.round((1 - dropped / kept) * 1000) / 10,
      unit: "%",
    },
  ];
}

if (import.meta.main) {
  const objects = 20_000;
  const wire = configMapJson(0).length;
  const mf = JSON.stringify(JSON.parse(configMapJson(0)).metadata.managedFields).length;
  console.log(`informer memory: ${objects} ConfigMaps, ${wire} bytes of JSON each (${mf} of managedFields)`);
  for (const r of await benchInformerMemory(objects)) console.log(`  ${r.name}: ${r.value} ${r.unit}`);
}
