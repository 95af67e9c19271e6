// The operator process loads no CLI: @capstan/cli is a build and test tool (its tsup preset, its chart checks), so
// it is a dev dependency only, and the code the bundle is built from imports nothing from it but types, which
// the build erases. PromQL is checked by @capstan/promql.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL(".", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};

/** The operator's own source files: what src/main.ts and src/index.ts can reach (tests left out). */
function sources(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) => {
    const path = join(d, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("runtime dependencies", () => {
  it("has @capstan/promql, not @capstan/cli, among its dependencies", () => {
    expect(pkg.dependencies?.["@capstan/promql"]).toBeDefined();
    expect(pkg.dependencies?.["@capstan/cli"]).toBeUndefined();
    expect(pkg.devDependencies?.["@capstan/cli"]).toBeDefined();
  });

  it("imports nothing but types from @capstan/cli", () => {
    const files = sources(dir);
    expect(files.length).toBeGreaterThan(20);
    const valueImports = files.flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/^import\s+(?!type\s)[^;]*?from\s+"(@capstan\/cli[^"]*)"/gms)].map(
        (m) => `${f.slice(dir.length)}: ${m[1]}`,
      ),
    );
    expect(valueImports).toEqual([]);
  });
});
