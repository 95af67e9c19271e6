// The published-dependencies check fails when a module a package exports imports a package the package does not
// list as a dependency or peer dependency, `import type` included, and only then.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkPackage, importsOf, packageOf } from "./check-published-deps.ts";

const run = promisify(execFile);
const script = new URL("./check-published-deps.ts", import.meta.url).pathname;
let root: string;

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

function workspace(manifest: Record<string, unknown>): void {
  write("package.json", JSON.stringify({ name: "repo", private: true, workspaces: ["packages/*"] }));
  write(
    "packages/op/package.json",
    JSON.stringify({
      name: "@x/op",
      exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } },
      ...manifest,
    }),
  );
  write("packages/op/src/index.ts", 'export * from "./api/crds.ts";\nexport { run } from "./main.ts";\n');
  // A block-comment opener in a line comment (a glob) must not hide the imports below it.
  write(
    "packages/op/src/api/crds.ts",
    '// writes crds/*.yaml\nimport type { Spec } from "@x/cli";\nexport const s: Spec = {};\n',
  );
  write(
    "packages/op/src/main.ts",
    'import { readFile } from "node:fs/promises";\nimport { Agent } from "undici";\nexport const run = () => [readFile, Agent];\n',
  );
  write("packages/op/src/tool.ts", 'import { build } from "tsup";\nexport const b = build;\n'); // not exported
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "deps-check-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("importsOf and packageOf", () => {
  it.each([
    ['import type { A } from "@x/cli";', ["@x/cli"]],
    ['import { a, type B } from "./a.ts";\nexport * from "./b.ts";', ["./a.ts", "./b.ts"]],
    ['const m = await import("undici");', ["undici"]],
    ['import "side-effect";', ["side-effect"]],
    ['// import { x } from "commented";\n/* import { y } from "also"; */', []],
  ])("%j", (source, specifiers) => expect(importsOf(source)).toEqual(specifiers));

  it.each([
    ["@x/cli/chart", "@x/cli"],
    ["undici", "undici"],
    ["yaml/util", "yaml"],
    ["./a.ts", undefined],
  ])("%s -> %s", (spec, pkg) => expect(packageOf(spec)).toBe(pkg));
});

describe("checkPackage", () => {
  it("names a type-only import of a devDependency and an unlisted import, reached from the exports", () => {
    workspace({ dependencies: {}, devDependencies: { "@x/cli": "1.0.0", tsup: "9.0.0" } });
    expect(
      checkPackage(join(root, "packages/op"), root)
        .map((p) => `${p.from} ${p.imported}`)
        .sort(),
    ).toEqual(["packages/op/src/api/crds.ts @x/cli", "packages/op/src/main.ts undici"]);
  });

  it("passes once they are dependencies or peer dependencies", () => {
    workspace({ dependencies: { undici: "8.0.0" }, peerDependencies: { "@x/cli": "^1.0.0" } });
    expect(checkPackage(join(root, "packages/op"), root)).toEqual([]);
  });
});

describe("the command", () => {
  it("exits 1 naming the import, 0 when every import is listed", async () => {
    workspace({ devDependencies: { "@x/cli": "1.0.0" }, dependencies: { undici: "8.0.0" } });
    const failed = await run(process.execPath, [script, "--root", root]).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain('packages/op/src/api/crds.ts: imports "@x/cli"');
    workspace({ peerDependencies: { "@x/cli": "^1.0.0" }, dependencies: { undici: "8.0.0" } });
    expect((await run(process.execPath, [script, "--root", root])).stdout).toContain("lint:deps:");
  });
});
