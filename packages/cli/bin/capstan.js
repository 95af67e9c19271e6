#!/usr/bin/env node
// The `capstan` command: runs the built CLI (dist/main.js). In a source checkout where nothing is built yet (right
// after `npm ci`), it first builds @capstan/cli and what it depends on through turbo, saying so on stderr; an
// installed package always ships dist/.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/main.js", import.meta.url);
if (!existsSync(main) && existsSync(new URL("../src/main.ts", import.meta.url))) {
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  process.stderr.write(
    "capstan: no dist/ in this source checkout yet: building @capstan/cli first (turbo)\n",
  );
  try {
    // The repository's turbo; stdout to stderr, so `capstan ... > file` gets only the command's own output.
    execFileSync(
      "npm",
      ["exec", "--", "turbo", "run", "build", "--filter=@capstan/cli", "--output-logs=errors-only"],
      {
        cwd: repo,
        stdio: ["ignore", process.stderr, "inherit"],
      },
    );
  } catch {
    process.stderr.write(
      `capstan: building @capstan/cli failed; run \`npm run build\` in ${repo} and try again\n`,
    );
    process.exit(1);
  }
}
await import(main.href);
