// Two projects: "unit" (`npm test`: the API schemas, the monitor selection and the configuration generator with
// its golden files in testdata/, all pure) and "real" (`npm run test:real`: the real promtool over the generated
// configuration, from the binary e2e/images/prometheus/build.sh caches; fails without it).
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
