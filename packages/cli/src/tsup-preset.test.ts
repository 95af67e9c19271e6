// Tests of the operator tsup preset: the library build spares the bundle's files, the bundle inlines every
// dependency and carries the require() banner, which must be valid ESM that yields a working require.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "tsup";
import { describe, expect, it } from "vitest";
import { BUNDLE_CHUNKS_DIR, ESM_REQUIRE_BANNER, operatorTsupConfig, pruneChunks } from "./tsup-preset.ts";

describe("operatorTsupConfig", () => {
  const [lib, bundle] = operatorTsupConfig();

  it("builds the library entry with declarations, sparing main.js", () => {
    expect(lib).toMatchObject({ entry: ["src/index.ts"], format: ["esm"], target: "node24", dts: true });
    expect(lib?.clean).toEqual(["!main.js", "!main.js.map", `!${BUNDLE_CHUNKS_DIR}/**`]);
  });

  it("bundles src/main.ts with every dependency inlined", () => {
    expect(bundle).toMatchObject({ entry: { main: "src/main.ts" }, platform: "node", splitting: true });
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

  it("keeps what main.js only import()s out of it, in dist/chunks/, loaded when imported", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-tsup-split-"));
    try {
      await writeFile(join(dir, "eager.ts"), 'export const eager: string = "EAGER_CODE";\n');
      await writeFile(join(dir, "lazy.ts"), 'export const lazy: string = "LAZY_CODE";\n');
      await writeFile(
        join(dir, "main.ts"),
        'import { eager } from "./eager.ts";\nconst { lazy } = await import("./lazy.ts");\nprocess.stdout.write(eager + " " + lazy);\n',
      );
      // This build's own outDir, without the preset's pruning of the package's dist/.
      const { onSuccess: _prune, metafile: _metafile, ...options } = bundle!;
      await build({
        ...options,
        entry: { main: join(dir, "main.ts") },
        outDir: join(dir, "dist"),
        sourcemap: false,
        silent: true,
        config: false,
      });
      const main = await readFile(join(dir, "dist", "main.js"), "utf8");
      expect(main).toContain("EAGER_CODE");
      expect(main).not.toContain("LAZY_CODE");
      const chunks = await readdir(join(dir, "dist", BUNDLE_CHUNKS_DIR));
      const texts = await Promise.all(
        chunks.map((c) => readFile(join(dir, "dist", BUNDLE_CHUNKS_DIR, c), "utf8")),
      );
      expect(texts.some((t) => t.includes("LAZY_CODE"))).toBe(true);
      const out = execFileSync(process.execPath, [join(dir, "dist", "main.js")], { encoding: "utf8" });
      expect(out).toBe("EAGER_CODE LAZY_CODE");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("prunes the chunks an earlier build left, keeping the last build's (its metafile)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-tsup-prune-"));
    try {
      await mkdir(join(dir, BUNDLE_CHUNKS_DIR));
      for (const f of ["chunk-NEW.js", "chunk-NEW.js.map", "chunk-OLD.js", "chunk-OLD.js.map"]) {
        await writeFile(join(dir, BUNDLE_CHUNKS_DIR, f), "");
      }
      const outputs = {
        "dist/main.js": {},
        "dist/chunks/chunk-NEW.js": {},
        "dist/chunks/chunk-NEW.js.map": {},
      };
      await writeFile(join(dir, "metafile-esm.json"), JSON.stringify({ outputs }));
      pruneChunks(dir);
      expect((await readdir(join(dir, BUNDLE_CHUNKS_DIR))).sort()).toEqual([
        "chunk-NEW.js",
        "chunk-NEW.js.map",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
