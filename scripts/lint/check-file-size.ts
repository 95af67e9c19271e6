// `npm run lint:size`: no non-test TypeScript source over 600 lines (issue 30: split a module by concept before it
// grows past what one reader holds in mind). Counts the lines of every .ts file under the roots below, tests
// (*.test.ts) left out, and fails naming each file over the limit that the allowlist does not name.
//
//   node scripts/lint/check-file-size.ts [--root DIR] [--max N]
//
// --root checks another tree (the tests use a temporary one); --max changes the limit.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The most lines a non-test source file may have. */
export const MAX_LINES = 600;

/** Where sources live, relative to the repository root; globs are not needed: `*` stands for every directory. */
export const ROOTS = ["packages/*/src", "operators/*/src", "e2e", "scripts", "bench"];

/**
 * Files allowed over the limit for now, each with why. Empty since the Vault and Prometheus splits (issue 30 item 2):
 * a file that must grow past the limit while another change splits it is listed here with that change named.
 */
export const ALLOWLIST: Readonly<Record<string, string>> = {};

const SKIP_DIRS = new Set(["node_modules", "dist", ".turbo", "coverage"]);

/** Lines of a text as `wc -l` counts them, plus a last line without a newline. */
export function countLines(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** The directories a root pattern names under `base` ("packages/*\/src" -> every packages/<x>/src). */
function expand(base: string, pattern: string): string[] {
  let dirs = [base];
  for (const part of pattern.split("/")) {
    dirs = dirs.flatMap((d) => {
      if (part !== "*") return [join(d, part)];
      try {
        return readdirSync(d, { withFileTypes: true })
          .filter((e) => e.isDirectory() && !SKIP_DIRS.has(e.name))
          .map((e) => join(d, e.name));
      } catch {
        return [];
      }
    });
  }
  return dirs;
}

function* sources(dir: string): Generator<string> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) yield* sources(path);
    } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts")) {
      yield path;
    }
  }
}

/** A file over the limit. */
export interface Oversize {
  file: string;
  lines: number;
}

/** Files under `base` over `max` lines, not allowlisted; and allowlisted files now within the limit. */
export function checkFileSizes(
  base: string,
  options: { max?: number; roots?: readonly string[]; allowlist?: Readonly<Record<string, string>> } = {},
): { over: Oversize[]; allowedOver: Oversize[]; staleAllowlist: string[] } {
  const max = options.max ?? MAX_LINES;
  const allowlist = options.allowlist ?? ALLOWLIST;
  const seen = new Set<string>();
  const over: Oversize[] = [];
  const allowedOver: Oversize[] = [];
  for (const root of options.roots ?? ROOTS) {
    for (const dir of expand(base, root)) {
      for (const path of sources(dir)) {
        const file = relative(base, path).split("\\").join("/");
        if (seen.has(file)) continue;
        seen.add(file);
        const lines = countLines(readFileSync(path, "utf8"));
        if (lines <= max) continue;
        (file in allowlist ? allowedOver : over).push({ file, lines });
      }
    }
  }
  const staleAllowlist = Object.keys(allowlist).filter(
    (f) => seen.has(f) && !allowedOver.some((o) => o.file === f),
  );
  return { over: over.sort((a, b) => b.lines - a.lines), allowedOver, staleAllowlist };
}

function main(argv: string[]): number {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const base = arg("--root") ?? fileURLToPath(new URL("../..", import.meta.url));
  const max = Number(arg("--max") ?? MAX_LINES);
  const { over, allowedOver, staleAllowlist } = checkFileSizes(base, { max });
  for (const f of staleAllowlist) {
    console.log(
      `note: ${f} is within ${max} lines now: remove it from ALLOWLIST in scripts/lint/check-file-size.ts`,
    );
  }
  if (over.length === 0) {
    console.log(
      `lint:size: no non-test source over ${max} lines` +
        (allowedOver.length > 0
          ? ` (allowlisted for now: ${allowedOver.map((o) => `${o.file} ${o.lines}`).join(", ")})`
          : ""),
    );
    return 0;
  }
  for (const o of over) {
    console.error(
      `${o.file}: ${o.lines} lines, over ${max}: split it by concept (one module per concern, each with its own tests)`,
    );
  }
  console.error(`lint:size: ${over.length} file(s) over ${max} lines`);
  return 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
