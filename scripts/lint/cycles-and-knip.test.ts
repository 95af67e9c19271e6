// The import-cycle check (dependency-cruiser with the repository's .dependency-cruiser.mjs) and the dependency
// check (knip, on the issue types knip.jsonc includes) fail on a deliberate violation in a temporary project:
// a circle (also one made only of type imports), an unused dependency, an unlisted one, an unlisted binary.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => join(repo, "node_modules", ".bin", name);
let root: string;

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

async function outcome(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd: root });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: (e.stdout ?? "") + (e.stderr ?? "") };
  }
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lint-check-"));
  copyFileSync(join(repo, "tsconfig.base.json"), join(root, "tsconfig.base.json"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("lint:cycles (dependency-cruiser)", () => {
  const cruise = () =>
    outcome(bin("depcruise"), [
      "--config",
      join(repo, ".dependency-cruiser.mjs"),
      "--validate",
      "--output-type",
      "err",
      "src",
    ]);

  it.each([
    [
      "a value circle",
      'import { b } from "./b.ts";\nexport const a = () => b;\n',
      'import { a } from "./a.ts";\nexport const b = () => a;\n',
    ],
    [
      "a circle with a type-only import",
      'import { b } from "./b.ts";\nexport type A = { n: number };\nexport const a = b;\n',
      'import type { A } from "./a.ts";\nexport const b: A = { n: 1 };\n',
    ],
    [
      "a circle of type-only imports",
      'import type { B } from "./b.ts";\nexport type A = { b?: B };\n',
      'import type { A } from "./a.ts";\nexport type B = { a?: A };\n',
    ],
  ])("fails on %s", async (_, a, b) => {
    write("src/a.ts", a);
    write("src/b.ts", b);
    const { code, out } = await cruise();
    expect(code).not.toBe(0);
    expect(out).toContain("no-circular");
  });

  it("passes without a circle", async () => {
    write("src/a.ts", 'import type { B } from "./b.ts";\nexport const a: B = { n: 1 };\n');
    write("src/b.ts", "export type B = { n: number };\n");
    expect(await cruise()).toMatchObject({ code: 0 });
  });
});

describe("lint:deps (knip)", () => {
  const knip = () => outcome(bin("knip"), ["--include", "dependencies,unlisted,binaries", "--no-progress"]);

  it("fails on an unused dependency, an unlisted dependency and an unlisted binary", async () => {
    write(
      "package.json",
      JSON.stringify({
        name: "fixture",
        type: "module",
        scripts: { build: "some-unlisted-tool --out dist" },
        dependencies: { "left-pad": "1.3.0" },
      }),
    );
    write("index.ts", 'import { request } from "undici";\nexport const r = request;\n');
    const { code, out } = await knip();
    expect(code).not.toBe(0);
    expect(out).toMatch(/Unused dependencies[\s\S]*left-pad/);
    expect(out).toMatch(/Unlisted dependencies[\s\S]*undici/);
    expect(out).toMatch(/Unlisted binaries[\s\S]*some-unlisted-tool/);
  });

  it("passes when every dependency is listed and used", async () => {
    write(
      "package.json",
      JSON.stringify({ name: "fixture", type: "module", dependencies: { undici: "8.13.1" } }),
    );
    write("index.ts", 'import { request } from "undici";\nexport const r = request;\n');
    expect(await knip()).toMatchObject({ code: 0 });
  });
});
