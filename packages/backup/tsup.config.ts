// Builds @capstan/backup: one ESM entry (src/index.ts) with type declarations; the operators bundle it.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  target: "node24",
  dts: true,
  sourcemap: true,
  clean: true,
});
