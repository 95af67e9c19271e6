/**
 * The tsup build every operator shares (imported as "@capstan/cli/tsup" from its tsup.config.ts): the library
 * entry with type declarations, and the operator process as one self-contained ESM bundle for the image.
 *
 * @module @capstan/cli/tsup
 */

import type { Options } from "tsup";

/** The banner giving a bundled ESM file the `require` its bundled CommonJS modules call for Node built-ins. */
export const ESM_REQUIRE_BANNER =
  'import { createRequire as __capstanCreateRequire } from "node:module"; const require = __capstanCreateRequire(import.meta.url);';

/**
 * The two builds of an operator package, run at once: `src/index.ts` (ESM, type declarations, dependencies
 * external) and `src/main.ts` -> `dist/main.js` with everything bundled (@capstan/core, @kubernetes/client-node,
 * pino, prom-client, undici...), so the container image holds dist/main.js and no node_modules.
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
      clean: ["!main.js", "!main.js.map"],
    },
    {
      entry: { main: "src/main.ts" },
      format: ["esm"],
      platform: "node",
      target: "node24",
      sourcemap: true,
      splitting: false,
      noExternal: [/.*/],
      banner: { js: ESM_REQUIRE_BANNER },
    },
  ];
}
