// Suites run one file at a time: some restart the API server or compact etcd under everyone's feet.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["suites/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
