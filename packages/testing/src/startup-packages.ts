// Which npm packages a process loads when it starts, for tests that keep rarely used code (the AWS SDK, client-node,
// pkijs) out of an operator's start: the modules an operator's main.ts imports statically are imported in a child
// Node.js process (TypeScript sources run with Node's type stripping) whose module hooks record every resolved URL.
// The operator bundle's build keeps what is reached only through import() in chunks of its own (@capstan/cli/tsup),
// so what this sees at the source level is what the bundle loads at start.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Records each resolved module's URL, imports the files given as arguments, prints the URLs as JSON. */
const PROBE = `
import { registerHooks } from "node:module";
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
for (const file of process.argv.slice(1)) await import(file);
process.stdout.write(JSON.stringify([...seen]));
`;

/** The package (`name` or `@scope/name`) of a module URL under node_modules, if it is one. */
export function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf("/node_modules/");
  if (at < 0) return undefined;
  const [first = "", second = ""] = url.slice(at + "/node_modules/".length).split("/");
  return first.startsWith("@") ? `${first}/${second}` : first;
}

/** The files `main` imports statically (relative paths resolved; bare specifiers as they are). */
export function staticImports(main: string): string[] {
  const source = readFileSync(main, "utf8");
  const specifiers = [...source.matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);
  return specifiers.map((s) => (s.startsWith(".") ? resolve(dirname(main), s) : s));
}

/**
 * The npm packages loaded by importing what `main` (an operator's src/main.ts) imports statically, without running
 * main itself (it would start the operator), sorted. The child runs in `main`'s directory, so bare specifiers
 * resolve as they do for it.
 */
export async function startupPackages(main: string): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    ["--input-type=module", "--eval", PROBE, ...staticImports(main)],
    { cwd: dirname(main), maxBuffer: 16 << 20 },
  );
  const urls = JSON.parse(stdout) as string[];
  return [...new Set(urls.map(packageOf).filter((p) => p !== undefined))].sort();
}
