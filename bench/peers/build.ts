// Builds what the benchmarks run: @capstan/core's dist (the Node peers import it) and a Go peer's binary, cached
// in ~/.cache/capstan/bench by a hash of its sources. Shared by bench/peers.ts and bench/controller.ts.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** Builds @capstan/core's dist when a source file is newer than it. */
export function buildCore(): void {
  const src = join(import.meta.dirname, "..", "..", "packages", "core", "src");
  const dist = join(src, "..", "dist", "index.js");
  const built = existsSync(dist) ? statSync(dist).mtimeMs : 0;
  const files = readdirSync(src, { recursive: true, encoding: "utf8" });
  if (files.every((file) => statSync(join(src, file)).mtimeMs <= built)) return;
  console.log("building @capstan/core (its dist is missing or older than its sources)");
  execFileSync("npm", ["run", "build", "--workspace", "@capstan/core"], { stdio: "inherit" });
}

/**
 * Builds the Go peer in bench/peers/<name> (client-go, controller-runtime) unless a build of the same sources is
 * cached; returns the binary's path.
 */
export function buildGoPeer(name: string): string {
  const dir = join(import.meta.dirname, name);
  const hash = createHash("sha256");
  for (const file of readdirSync(dir).sort()) {
    if (/\.(go|mod|sum)$/.test(file)) hash.update(file).update(readFileSync(join(dir, file)));
  }
  const binary = join(
    homedir(),
    ".cache",
    "capstan",
    "bench",
    `${name}-peer-${hash.digest("hex").slice(0, 16)}`,
  );
  if (existsSync(binary)) return binary;
  mkdirSync(dirname(binary), { recursive: true });
  console.log(`building the ${name} peer (first run: a few minutes) -> ${binary}`);
  try {
    execFileSync("go", ["build", "-o", binary, "."], { cwd: dir, stdio: "inherit" });
  } catch (err) {
    throw new Error(`cannot build bench/peers/${name} (is Go 1.24+ on PATH?): ${(err as Error).message}`);
  }
  return binary;
}

/**
 * A benchmark child (bench/peers/<name>.ts) as plain JavaScript, its types stripped once: Node's TypeScript support
 * loads a WebAssembly compiler that adds ~16 MiB of RSS and CPU at start, which a built operator never pays.
 * Written under bench/results/ so that packages resolve from the repository's node_modules.
 */
export function javaScriptChild(source: string): string {
  const out = join(
    import.meta.dirname,
    "..",
    "results",
    `${source.split("/").at(-1)!.replace(/\.ts$/, "")}.mjs`,
  );
  if (!existsSync(out) || statSync(out).mtimeMs < statSync(source).mtimeMs) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, stripTypeScriptTypes(readFileSync(source, "utf8")));
  }
  return out;
}

/**
 * The Node.js flags of the operator images' entry point, read from e2e/images/operator-image.sh (the root Dockerfile
 * and the standalone template have the same, a cli test checks): what an operator process runs with.
 */
export function imageNodeFlags(): string[] {
  const script = readFileSync(
    join(import.meta.dirname, "..", "..", "e2e", "images", "operator-image.sh"),
    "utf8",
  );
  const entry = /"Entrypoint\\":\[([^\]]*)\]/.exec(script)?.[1] ?? "";
  return [...entry.matchAll(/\\"(--[^"\\]+)\\"/g)].map((m) => m[1]!);
}

/**
 * The flags the capstan peers run with: the images' (imageNodeFlags); BENCH_CAPSTAN_NODE_FLAGS overrides them ("" for
 * Node's defaults).
 */
const { env } = process; // read here, not by turbo: no turbo.json entry needed
export const CAPSTAN_NODE_FLAGS =
  env.BENCH_CAPSTAN_NODE_FLAGS === undefined
    ? imageNodeFlags()
    : env.BENCH_CAPSTAN_NODE_FLAGS.split(" ").filter(Boolean);

/**
 * A benchmark child (bench/peers/<name>.ts) bundled as an operator's process is (@capstan/cli/tsup's preset:
 * one ESM file, what it only import()s in chunks beside it), into bench/results/<name>/main.js: the capstan peer
 * then loads what an operator image loads, not @capstan/core's dist and its dependencies file by file from
 * node_modules (~9 MiB more RSS at start). Rebuilt when the child or @capstan/core's dist is newer.
 */
export async function bundledChild(source: string): Promise<string> {
  const name = source.split("/").at(-1)!.replace(/\.ts$/, "");
  const outDir = join(import.meta.dirname, "..", "results", name);
  const out = join(outDir, "main.js");
  const core = join(import.meta.dirname, "..", "..", "packages", "core", "dist", "index.js");
  if (
    existsSync(out) &&
    statSync(out).mtimeMs >= Math.max(statSync(source).mtimeMs, statSync(core).mtimeMs)
  ) {
    return out;
  }
  const [{ build }, { operatorTsupConfig }] = await Promise.all([
    import("tsup"),
    import("../../packages/cli/src/tsup-preset.ts"),
  ]);
  // The preset's bundle, without its pruning of a package's dist/ (this build has an outDir of its own).
  const { onSuccess: _prune, metafile: _metafile, ...bundle } = operatorTsupConfig()[1]!;
  await build({ ...bundle, entry: { main: source }, outDir, sourcemap: false, silent: true, config: false });
  return out;
}
