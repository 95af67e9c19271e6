// Unit tests: pure code, golden files, the reconciler against core's in-memory API server, the chart with Helm.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    testTimeout: 20_000,
  },
});
