// Two projects: "unit" (`npm test`: the API schemas, the monitor selection, the configuration generator and the
// objects with their golden files in testdata/, the reconciler against core's in-memory API server) and "real"
// (`npm run test:real`: the real promtool over the generated configuration and over the shared PromQL check's
// table and the charts' rules, the real prometheus scraping operator-shaped registries for the charts' dashboards
// and alerts, from the binaries e2e/images/prometheus/build.sh caches, and the reloader script under the real
// busybox; each fails without its binary, saying how to get it).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts"],
          exclude: ["src/**/*.real.test.ts"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "real",
          include: ["src/**/*.real.test.ts"],
          testTimeout: 20_000,
        },
      },
    ],
  },
});
