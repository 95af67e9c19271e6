// Two projects: "unit" (`npm test`: pure code, golden files, the in-memory API server) and "real"
// (`npm run test:real`: the client and the controller against real Vault servers on 127.0.0.1, from the binary
// e2e/images/vault/build.sh caches; the README's test command runs it with the integration suites, after
// that build).
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
          globalSetup: ["./src/vault/real-setup.ts"],
          testTimeout: 20_000,
        },
      },
    ],
  },
});
