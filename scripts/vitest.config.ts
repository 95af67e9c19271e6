// The tests of the repository's own scripts (the lint checks under scripts/lint/), run by `npm run test:scripts`
// (part of `npm run test:unit`).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { root: "scripts", include: ["**/*.test.ts"], testTimeout: 60_000 },
});
