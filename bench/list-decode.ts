// List decoding: CPU to turn a list response into cached objects, three ways, on two synthetic lists fed in
// 64 KiB chunks as a socket delivers them: 10,000 ConfigMaps as the API server sends them
// (bench/informer-memory.ts: labels, annotations, ~1.5 KB of managedFields, ~1 KB of data), and 5,000 copies
// of a CoreDNS Pod taken from the local cluster (bench/list-decode-pod.json: 7.5 KB, 3 KB of it managedFields
// written by kube-controller-manager and the kubelet). The three ways:
// - whole body: the chunks joined, one JSON.parse, then managedFields dropped (what the client did before);
// - ListDecoder: items parsed in batches as the chunks arrive, then managedFields dropped;
// - ListDecoder with dropManagedFields: managedFields left out of the text before parsing (the default).
// Run: node --expose-gc bench/list-decode.ts (or as part of `npm run bench`).

import { readFileSync } from "node:fs";
import { dropManagedFields } from "../packages/core/src/cache/store.ts";
import { ListDecoder } from "../packages/core/src/client/list-decoder.ts";
import { type BenchResult, configMapJson } from "./informer-memory.ts";
import { median } from "./stats.ts";

const { env } = process; // read here, not by turbo: no turbo.json entry needed
const REPEATS = Number(env.BENCH_REPEATS ?? 9);
const CHUNK = 64 * 1024;

type Way = "whole body" | "ListDecoder" | "ListDecoder, dropManagedFields";
const WAYS: Way[] = ["whole body", "ListDecoder", "ListDecoder, dropManagedFields"];

/** Decodes `chunks` one way; returns the objects as a cache would keep them. */
function decode(way: Way, chunks: Buffer[]): unknown[] {
  const kept: unknown[] = [];
  if (way === "whole body") {
    const list = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { items: { metadata: object }[] };
    for (const item of list.items) kept.push(dropManagedFields(item as never));
    return kept;
  }
  const dropping = way === "ListDecoder, dropManagedFields";
  const decoder = new ListDecoder<{ metadata: object }>(
    (items) => {
      for (const item of items) kept.push(dropping ? item : dropManagedFields(item as never));
    },
    { dropManagedFields: dropping },
  );
  for (const chunk of chunks) decoder.write(chunk);
  decoder.end();
  return kept;
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** `count` items from `item(i)` as one list body, cut in socket-sized chunks. */
function listChunks(kind: string, count: number, item: (i: number) => string): Buffer[] {
  const items: string[] = [];
  for (let i = 0; i < count; i++) items.push(item(i));
  const body = Buffer.from(
    `{"kind":"${kind}List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[${items.join(",")}]}`,
  );
  const chunks: Buffer[] = [];
  for (let i = 0; i < body.length; i += CHUNK) chunks.push(body.subarray(i, i + CHUNK));
  return chunks;
}

/** Median CPU ms of each way on one list. */
function measure(label: string, chunks: Buffer[], count: number): BenchResult[] {
  const times: Record<Way, number[]> = {
    "whole body": [],
    ListDecoder: [],
    "ListDecoder, dropManagedFields": [],
  };
  for (let r = 0; r < REPEATS + 1; r++) {
    for (const way of WAYS) {
      globalThis.gc?.();
      const before = cpuMs();
      const kept = decode(way, chunks);
      const ms = cpuMs() - before;
      if (kept.length !== count) throw new Error(`${way}: ${kept.length} objects, expected ${count}`);
      if (r > 0) times[way].push(ms); // the first round warms up
    }
  }
  const mib = (chunks.reduce((n, c) => n + c.length, 0) / 2 ** 20).toFixed(1);
  return WAYS.map((way) => ({
    name: `list decode, ${label} (${mib} MiB), ${way}`,
    value: median(times[way]),
    unit: "ms CPU",
  }));
}

export async function benchListDecode(): Promise<BenchResult[]> {
  const pod = JSON.parse(readFileSync(new URL("list-decode-pod.json", import.meta.url), "utf8")) as {
    metadata: { name: string };
  };
  const podJson = (i: number) => JSON.stringify({ ...pod, metadata: { ...pod.metadata, name: `pod-${i}` } });
  return [
    ...measure("10000 ConfigMaps", listChunks("ConfigMap", 10_000, configMapJson), 10_000),
    ...measure("5000 Pods", listChunks("Pod", 5_000, podJson), 5_000),
  ];
}

if (import.meta.main) {
  for (const r of await benchListDecode()) console.log(`${r.name}: ${r.value.toFixed(1)} ${r.unit}`);
}
