// Builds @capstan/cli: the library entries (src/index.ts, src/chart.ts, src/find-helm.ts, src/tsup-preset.ts) with
// type declarations, and the command (src/main.ts -> dist/main.js, started by bin/capstan.js).
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/chart.ts", "src/find-helm.ts", "src/tsup-preset.ts", "src/main.ts"],
  format: ["esm"],
  target: "node24",
  dts: { entry: ["src/index.ts", "src/chart.ts", "src/find-helm.ts", "src/tsup-preset.ts"] },
  sourcemap: true,
  clean: true,
});
