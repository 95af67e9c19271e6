// The informer benchmark against its last recorded run, and against its targets (issue 31): each run's medians
// are saved beside its raw figures (bench/results/peers-*.json, not committed); the newest earlier run there is
// "the last recorded run", else the run docs/performance.md reports (bench/peers/recorded-informer.json,
// committed; BENCH_RECORD=1 replaces it with this run's figures).
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The medians of one peer at one size. */
export interface InformerFigures {
  syncSeconds: number;
  syncCpuSeconds: number;
  baseRssMiB: number;
  syncPeakRssMiB: number;
}
/** size -> peer -> figures. */
export type InformerRecord = Record<string, Record<string, InformerFigures>>;

const RECORD = join(import.meta.dirname, "recorded-informer.json");
const RESULTS = join(import.meta.dirname, "..", "results");

/** The last recorded run: the newest bench/results/peers-*.json with medians, else the committed record. */
export function lastRecorded(): { source: string; figures: InformerRecord } | undefined {
  const files = existsSync(RESULTS)
    ? readdirSync(RESULTS)
        .filter((f) => /^peers-.*\.json$/.test(f))
        .sort()
        .reverse()
    : [];
  for (const file of files) {
    const json = JSON.parse(readFileSync(join(RESULTS, file), "utf8")) as {
      informerMedians?: InformerRecord;
    };
    if (json.informerMedians && Object.keys(json.informerMedians).length > 0) {
      return { source: `bench/results/${file}`, figures: json.informerMedians };
    }
  }
  if (!existsSync(RECORD)) return undefined;
  const json = JSON.parse(readFileSync(RECORD, "utf8")) as { date: string; figures: InformerRecord };
  return { source: `bench/peers/recorded-informer.json (${json.date})`, figures: json.figures };
}

/** Writes this run's medians as the committed record (BENCH_RECORD=1). */
export function record(figures: InformerRecord): void {
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(RECORD, `${JSON.stringify({ date, figures }, null, 2)}\n`);
}

/** How much worse a figure may get before the comparison says "regressed": time and CPU 20%, RSS 10%. */
const TOLERANCE: Record<keyof InformerFigures, number> = {
  syncSeconds: 0.2,
  syncCpuSeconds: 0.2,
  baseRssMiB: 0.1,
  syncPeakRssMiB: 0.1,
};

/**
 * Lines comparing capstan's figures with the last recorded run's. Times and CPU depend on the machine's load as
 * much as on the code, so where client-go ran in both runs they are judged by capstan's ratio to client-go (then ->
 * now); RSS by its value.
 */
export function compareWithRecorded(now: InformerRecord, last: InformerRecord): string[] {
  const lines: string[] = [];
  for (const [size, peers] of Object.entries(now)) {
    const before = last[size]?.capstan;
    const capstan = peers.capstan;
    if (capstan === undefined) continue;
    if (before === undefined) {
      lines.push(`${size}: no recorded run at this size`);
      continue;
    }
    const [goNow, goThen] = [peers["client-go"], last[size]?.["client-go"]];
    for (const key of Object.keys(TOLERANCE) as (keyof InformerFigures)[]) {
      const relative = goNow !== undefined && goThen !== undefined && !key.endsWith("RssMiB");
      const [then, current] = relative
        ? [before[key] / goThen[key], capstan[key] / goNow[key]]
        : [before[key], capstan[key]];
      const change = current / then - 1;
      const verdict = change > TOLERANCE[key] ? "REGRESSED" : change < -TOLERANCE[key] ? "improved" : "same";
      const unit = relative ? "x client-go" : "";
      lines.push(
        `${size} ${key.padEnd(15)} ${then.toFixed(2).padStart(7)}${unit} -> ${current.toFixed(2).padStart(7)}${unit} (${change >= 0 ? "+" : ""}${(change * 100).toFixed(0)}%) ${verdict}` +
          (relative ? ` (capstan ${before[key].toFixed(2)} -> ${capstan[key].toFixed(2)})` : ""),
      );
    }
  }
  return lines;
}

/** Cache growth per object: (peak RSS after sync - RSS with the code loaded) / objects, in bytes. */
const growthPerObject = (f: InformerFigures, size: number) =>
  ((f.syncPeakRssMiB - f.baseRssMiB) * 2 ** 20) / size;

/** Lines with issue 31's informer targets, each reached or not, from this run's medians. */
export function targets(now: InformerRecord): string[] {
  const lines: string[] = [];
  for (const [sizeText, peers] of Object.entries(now)) {
    const size = Number(sizeText);
    const { capstan, "client-go": go, "client-node": node } = peers;
    if (capstan === undefined) continue;
    const check = (name: string, ratio: number, limit: number) =>
      lines.push(
        `${size} ${name.padEnd(42)} ${ratio.toFixed(2)}x (target <= ${limit}x) ${ratio <= limit ? "reached" : "NOT reached"}`,
      );
    if (node) check("sync time / client-node", capstan.syncSeconds / node.syncSeconds, 1.0);
    if (go) {
      check("sync time / client-go", capstan.syncSeconds / go.syncSeconds, size >= 50_000 ? 1.0 : 1.5);
      check(
        "cache growth per object / client-go",
        growthPerObject(capstan, size) / growthPerObject(go, size),
        1.0,
      );
      lines.push(
        `${size} ${"CPU time to sync (capstan, client-go)".padEnd(42)} ${capstan.syncCpuSeconds.toFixed(2)} s, ${go.syncCpuSeconds.toFixed(2)} s (${(capstan.syncCpuSeconds / go.syncCpuSeconds).toFixed(2)}x; reported)`,
      );
    }
  }
  return lines;
}
