// A short diff-like excerpt of how two texts differ, for messages that name a stale generated file.

/**
 * The first region where `before` and `after` differ, as `@@ line N @@` then `-` lines (what is there) and `+`
 * lines (what should be), each side cut after `maxLines` lines. Lines the texts share at the start and the end
 * are left out; equal texts give "".
 */
export function textDiff(before: string, after: string, maxLines = 12): string {
  if (before === after) return "";
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const side = (lines: string[], sign: string): string[] => {
    const changed = lines.slice(head, lines.length - tail);
    const shown = changed.slice(0, maxLines).map((l) => `${sign} ${l}`);
    if (changed.length > maxLines) shown.push(`${sign} ... ${changed.length - maxLines} more lines`);
    return shown;
  };
  return [`@@ line ${head + 1} @@`, ...side(a, "-"), ...side(b, "+")].join("\n");
}
