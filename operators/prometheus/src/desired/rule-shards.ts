// How the rule files of one server are spread over Secrets (shards `prometheus-<name>-rules-<i>`): the API server
// refuses a Secret whose data passes 1 MiB, so each shard holds at most RULE_SHARD_BYTES (half of that, as
// prometheus-operator leaves for its rule ConfigMaps: the rest is margin for metadata and managedFields). Files are
// placed first-fit in name order, but a file stays in the shard it is already in while it fits there, so one rule
// changed rewrites only its own shard, and only a changed file that outgrew its shard moves. Pure: (files, the live
// shards) -> shards.

/** Most bytes (file names + contents) the operator puts in one rule shard, unless one file alone is larger. */
export const RULE_SHARD_BYTES = 512 * 1024;
/**
 * The largest rule file (name + contents) the operator writes: alone in its shard, 64 KiB under the API server's
 * 1 MiB limit. A PrometheusRule whose file is larger is refused on its own status (RuleFileTooLarge).
 */
export const MAX_RULE_FILE_BYTES = 1024 * 1024 - 64 * 1024;

/** The bytes a rule file counts against a shard's budget (key and value, as UTF-8). */
export function ruleFileBytes(name: string, text: string): number {
  return Buffer.byteLength(name, "utf8") + Buffer.byteLength(text, "utf8");
}

/**
 * Spreads `files` (file name -> contents) over shards: index i of the answer is shard i's files (sorted by name; an
 * index with no file is an empty object, a shard not needed). `previous` is the live shards, in the same form. In
 * name order, each file unchanged since `previous` stays in its shard; then each changed file stays in its shard if
 * it still fits there; every other file (new, or changed and grown out of its shard) goes to the first shard with
 * room (an empty shard takes any one file). So a rule changed rewrites only its shard (two, if it had to move), an
 * unchanged file never moves, and the same input gives the same shards. Without `previous`, files fill shard 0,
 * then 1, and so on.
 */
export function shardRuleFiles(
  files: Readonly<Record<string, string>>,
  previous: readonly Readonly<Record<string, string>>[] = [],
  budget = RULE_SHARD_BYTES,
): Record<string, string>[] {
  const shards: { files: [string, string][]; bytes: number }[] = [];
  const fits = (i: number, bytes: number) => {
    const s = shards[i];
    return s === undefined || s.files.length === 0 || s.bytes + bytes <= budget;
  };
  const place = (i: number, name: string) => {
    while (shards.length <= i) shards.push({ files: [], bytes: 0 });
    const s = shards[i] as { files: [string, string][]; bytes: number };
    const text = files[name] ?? "";
    s.files.push([name, text]);
    s.bytes += ruleFileBytes(name, text);
  };
  const was = new Map<string, { shard: number; text: string }>();
  previous.forEach((shard, i) => {
    for (const [name, text] of Object.entries(shard)) was.set(name, { shard: i, text });
  });
  const names = Object.keys(files).sort();
  const changed: string[] = [];
  for (const name of names) {
    const before = was.get(name);
    if (before === undefined) continue;
    if (before.text === files[name]) place(before.shard, name);
    else changed.push(name);
  }
  const moving: string[] = [];
  for (const name of changed) {
    const shard = was.get(name)?.shard ?? 0;
    if (fits(shard, ruleFileBytes(name, files[name] ?? ""))) place(shard, name);
    else moving.push(name);
  }
  moving.push(...names.filter((n) => !was.has(n)));
  for (const name of moving.sort()) {
    const bytes = ruleFileBytes(name, files[name] ?? "");
    let i = 0;
    while (!fits(i, bytes)) i++;
    place(i, name);
  }
  return shards.map((s) => Object.fromEntries([...s.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
