// `npm run lint:deps` (with knip): what a package exports must need only what it lists as a dependency or a peer
// dependency. Walks each workspace package's public entries (package.json "exports", dist paths read as their
// src/*.ts sources), follows relative imports, and fails on any package imported there, `import type` included
// (a published .d.ts keeps it), that is only a devDependency or not listed at all. knip checks the rest (unused and
// unlisted dependencies, unlisted binaries) but, like TypeScript's emit, looks through type-only imports.
//
//   node scripts/lint/check-published-deps.ts [--root DIR]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Entries allowed to import a package they do not list, each with why; to be emptied. */
export const ALLOWLIST: Readonly<Record<string, string>> = {};

interface Manifest {
  name?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  workspaces?: string[];
}

/** A package imported by a module a package exports, without being a dependency or peer dependency. */
export interface Undeclared {
  pkg: string;
  imported: string;
  from: string;
}

const IMPORT =
  /(?:^|[\s;}])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s+["']([^"']+)["']/gm;

/** The module specifiers a TypeScript source imports or re-exports (type-only ones too). */
export function importsOf(source: string): string[] {
  // Line comments first: one may hold "/*" (a glob, a path) that is no block comment.
  const code = source.replace(/^\s*\/\/.*$/gm, "").replace(/\/\*[\s\S]*?\*\//g, "");
  return [...code.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3] ?? "").filter((s) => s !== "");
}

/** The package name of a bare specifier ("@scope/name/sub" -> "@scope/name"); undefined for a relative path. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const BUILTINS = new Set(builtinModules);

/** The src/*.ts files of a package's "exports" (dist/x.js or dist/x.d.ts read as src/x.ts). */
function entryFiles(dir: string, exportsField: unknown): string[] {
  const targets: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") targets.push(v);
    else if (v !== null && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  walk(exportsField);
  const files = new Set<string>();
  for (const t of targets) {
    if (!/\.(m?js|d\.ts)$/.test(t)) continue;
    const src = t.replace(/^\.\/dist\//, "./src/").replace(/\.d\.ts$|\.m?js$/, ".ts");
    const path = resolve(dir, src);
    if (existsSync(path)) files.add(path);
  }
  return [...files];
}

/** Undeclared packages reached from the exports of the package in `dir`. */
export function checkPackage(dir: string, base = dir): Undeclared[] {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...(manifest.name === undefined ? [] : [manifest.name]),
  ]);
  const found: Undeclared[] = [];
  const seen = new Set<string>();
  const queue = entryFiles(dir, manifest.exports);
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of importsOf(readFileSync(file, "utf8"))) {
      const pkg = packageOf(spec);
      if (pkg === undefined) {
        const target = resolve(dirname(file), spec);
        if (target.endsWith(".ts") && existsSync(target)) queue.push(target);
        continue;
      }
      if (spec.startsWith("node:") || BUILTINS.has(pkg) || declared.has(pkg)) continue;
      found.push({ pkg: relative(base, dir), imported: pkg, from: relative(base, file) });
    }
  }
  return found;
}

/** Workspace package directories of the repository at `base` (its package.json "workspaces", `dir/*` patterns). */
export function workspaceDirs(base: string): string[] {
  const root = JSON.parse(readFileSync(join(base, "package.json"), "utf8")) as Manifest;
  return (root.workspaces ?? []).flatMap((pattern) => {
    if (!pattern.endsWith("/*"))
      return existsSync(join(base, pattern, "package.json")) ? [join(base, pattern)] : [];
    const parent = join(base, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(parent, e.name, "package.json")))
      .map((e) => join(parent, e.name));
  });
}

function main(argv: string[]): number {
  const i = argv.indexOf("--root");
  const base = i >= 0 ? resolve(argv[i + 1] ?? ".") : fileURLToPath(new URL("../..", import.meta.url));
  const problems = workspaceDirs(base)
    .flatMap((dir) => checkPackage(dir, base))
    .filter((p) => !(`${p.from} ${p.imported}` in ALLOWLIST));
  if (problems.length === 0) {
    console.log("lint:deps: every package's exports import only its dependencies and peer dependencies");
    return 0;
  }
  for (const p of problems) {
    console.error(
      `${p.from}: imports "${p.imported}", which ${p.pkg}/package.json does not list in dependencies or peerDependencies, but ${p.pkg} exports this module: list it (a peer dependency when only its types are needed), or keep the module out of the exports`,
    );
  }
  return 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
