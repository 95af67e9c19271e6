// One project for now, "unit" (`npm test`): the API schemas, the monitor selection and the configuration
// generator with its golden files (testdata/), all pure. The "real" project (promtool, a real Prometheus)
// arrives with reconcile/.
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
    ],
  },
});
