// Builds @capstan/core: two ESM entries with type declarations, the public API (src/index.ts) and the test kit
// (src/testing/index.ts, imported as "@capstan/core/testing"); code they share lives in shared chunks.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", "testing/index": "src/testing/index.ts" },
  format: ["esm"],
  target: "node24",
  dts: true,
  sourcemap: true,
  clean: true,
});
