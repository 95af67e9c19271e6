import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Examples import "@capstan/core" and "@capstan/core/testing" as users do; test them against the sources.
    alias: [
      {
        find: /^@capstan\/core\/testing$/,
        replacement: fileURLToPath(new URL("./src/testing/index.ts", import.meta.url)),
      },
      { find: /^@capstan\/core$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
    ],
  },
  test: {
    include: ["src/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 20_000,
  },
});
