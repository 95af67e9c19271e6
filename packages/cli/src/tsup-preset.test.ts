// Tests of the operator tsup preset: the library build spares the bundle's files, the bundle inlines every
// dependency and carries the require() banner, which must be valid ESM that yields a working require.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ESM_REQUIRE_BANNER, operatorTsupConfig } from "./tsup-preset.ts";

describe("operatorTsupConfig", () => {
  const [lib, bundle] = operatorTsupConfig();

  it("builds the library entry with declarations, sparing main.js", () => {
    expect(lib).toMatchObject({ entry: ["src/index.ts"], format: ["esm"], target: "node24", dts: true });
    expect(lib?.clean).toEqual(["!main.js", "!main.js.map"]);
  });

  it("bundles src/main.ts with every dependency inlined", () => {
    expect(bundle).toMatchObject({ entry: { main: "src/main.ts" }, platform: "node", splitting: false });
    const noExternal = bundle?.noExternal as RegExp[];
    expect(noExternal.every((r) => r instanceof RegExp)).toBe(true);
    for (const dep of ["@capstan/core", "@kubernetes/client-node", "pino"]) {
      expect(noExternal.some((r) => r.test(dep))).toBe(true);
    }
    expect(bundle?.banner).toEqual({ js: ESM_REQUIRE_BANNER });
    expect(bundle?.dts).toBeUndefined();
  });

  it("the banner gives an ES module a working require", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-tsup-preset-"));
    try {
      const file = join(dir, "bundle.mjs");
      await writeFile(file, `${ESM_REQUIRE_BANNER}\nprocess.stdout.write(require("node:path").sep);\n`);
      // A plain node process: the test runner's own module loader would provide a require anyway.
      expect(execFileSync(process.execPath, [file], { encoding: "utf8" })).toBe("/");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
