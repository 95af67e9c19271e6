// The end-to-end suites: one file at a time, against the cluster in KUBECONFIG (npm run test:e2e).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["suites/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
