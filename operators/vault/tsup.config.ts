// Builds @capstan/vault-operator: the library entry (src/index.ts, with type declarations, dependencies external)
// and the operator process (src/main.ts -> dist/main.js, one self-contained ESM bundle for the container image).
import { defineConfig } from "tsup";

export default defineConfig([
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
    // Everything is bundled (@capstan/core, @kubernetes/client-node, pino, pkijs, prom-client, undici...):
    // the image holds dist/main.js and no node_modules.
    noExternal: [/.*/],
    // Bundled CommonJS modules call require() for Node built-ins; give the ESM bundle one.
    banner: {
      js: 'import { createRequire as __capstanCreateRequire } from "node:module"; const require = __capstanCreateRequire(import.meta.url);',
    },
  },
]);
