// Runs every benchmark and prints one table. `npm run bench` (Node 24, --expose-gc for memory figures).
// Peer comparisons (client-go, client-node's makeInformer) on a real API server: `npm run bench:peers`
// (bench/peers.ts); figures in docs/performance.md.
import { benchInformerMemory } from "./informer-memory.ts";
import { benchListDecode } from "./list-decode.ts";
import { type BenchResult, benchQueue } from "./queue.ts";

const results: BenchResult[] = [
  ...(await benchQueue()),
  ...(await benchInformerMemory()),
  ...(await benchListDecode()),
];
const width = Math.max(...results.map((r) => r.name.length));
console.log(`\n${"benchmark".padEnd(width)}  ${"value".padStart(14)}  unit`);
for (const r of results) {
  const value = r.value >= 100 ? Math.round(r.value).toLocaleString("en-US") : r.value.toFixed(2);
  console.log(`${r.name.padEnd(width)}  ${value.padStart(14)}  ${r.unit}`);
}
