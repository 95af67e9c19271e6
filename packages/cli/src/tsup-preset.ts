/**
 * The tsup build every operator shares (imported as "@capstan/cli/tsup" from its tsup.config.ts): the library
 * entry with type declarations, and the operator process as one self-contained ESM bundle for the image.
 *
 * @module @capstan/cli/tsup
 */

import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Options } from "tsup";

/** The banner giving a bundled ESM file the `require` its bundled CommonJS modules call for Node built-ins. */
export const ESM_REQUIRE_BANNER =
  'import { createRequire as __capstanCreateRequire } from "node:module"; const require = __capstanCreateRequire(import.meta.url);';

/** Where the operator bundle's lazily loaded code goes, beside dist/main.js (the image copies both). */
export const BUNDLE_CHUNKS_DIR = "chunks";

/**
 * The two builds of an operator package, run at once: `src/index.ts` (ESM, type declarations, dependencies
 * external) and `src/main.ts` -> `dist/main.js` with everything bundled (@capstan/core, pino, prom-client,
 * undici...), so the container image holds dist/main.js, dist/chunks/ and no node_modules.
 *
 * What the process imports with `import()` (code it may never run) goes into dist/chunks/, loaded only when
 * imported: @kubernetes/client-node (a kubeconfig with an exec plugin or auth provider; 15 MiB of the bundle,
 * which cost ~47 MiB of RSS and ~0.25 s of CPU at every start when it was inlined), pkijs (the first certificate
 * made), and an operator's own lazily imported steps (etcd's backup Jobs and the AWS SDK they use).
 */
export function operatorTsupConfig(): Options[] {
  return [
    {
      entry: ["src/index.ts"],
      format: ["esm"],
      target: "node24",
      dts: true,
      sourcemap: true,
      // Both builds run at once: the library's clean must spare the bundle's output.
      clean: ["!main.js", "!main.js.map", `!${BUNDLE_CHUNKS_DIR}/**`],
    },
    {
      entry: { main: "src/main.ts" },
      format: ["esm"],
      platform: "node",
      target: "node24",
      sourcemap: true,
      splitting: true,
      noExternal: [/.*/],
      // Every chunk is an ES module of its own, and the CommonJS code in it needs the banner's require too.
      banner: { js: ESM_REQUIRE_BANNER },
      esbuildOptions(options) {
        options.chunkNames = `${BUNDLE_CHUNKS_DIR}/[name]-[hash]`;
      },
      // dist/metafile-esm.json names this build's outputs: chunks of earlier builds (their names carry a hash of
      // their content) are removed, so an image copying dist/chunks/ gets this build's only.
      metafile: true,
      onSuccess: async () => pruneChunks("dist"),
    },
  ];
}

/** Removes the files of `outDir`/chunks/ that the last bundle build (its metafile-esm.json) did not write. */
export function pruneChunks(outDir: string): void {
  let meta: { outputs: Record<string, unknown> };
  try {
    meta = JSON.parse(readFileSync(join(outDir, "metafile-esm.json"), "utf8")) as typeof meta;
  } catch {
    return; // no metafile: nothing known to prune
  }
  const written = new Set(Object.keys(meta.outputs).map((path) => path.split("/").at(-1)));
  const dir = join(outDir, BUNDLE_CHUNKS_DIR);
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return; // no chunks: nothing was imported lazily
  }
  for (const file of files) {
    if (!written.has(file.replace(/\.map$/, ""))) rmSync(join(dir, file), { force: true });
  }
}
