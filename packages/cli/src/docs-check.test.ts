// Every TypeScript block in the docs and the package READMEs compiles against the workspace's packages (built
// first: turbo builds them before this test), and the checker itself finds what it should.
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { blocksOf, checkDocBlocks, docBlocks } from "./docs-check.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const tsconfig = join(root, "tsconfig.base.json");
const markdown = (dir: string): string[] =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(dir, f));
const documents = [
  "README.md",
  ...markdown("docs"),
  ...["core", "testing", "cli"].map((p) => `packages/${p}/README.md`),
];

describe("docs code blocks", () => {
  it("every ```ts block in docs/ and the READMEs type-checks", { timeout: 60_000 }, () => {
    const blocks = blocksOf(root, documents);
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    const errors = checkDocBlocks(blocks, tsconfig).map((e) => `${e.doc}:${e.line}: ${e.message}`);
    expect(errors).toEqual([]);
  });
});

describe("docBlocks and checkDocBlocks", () => {
  const doc = [
    "# A page",
    "",
    "<!-- check in packages/core",
    'import { Manager } from "@capstan/core";',
    "-->",
    "",
    "```ts",
    'const m = new Manager({ name: "x" });',
    "const n: number = m;",
    "```",
    "",
    "<!-- check: skip -->",
    "```ts",
    "this is not TypeScript",
    "```",
    "",
    "```ts",
    'const s: string = "fine";',
    "```",
    "",
    "````markdown",
    "<!-- check in nowhere -->",
    "```ts",
    "shown as text, not checked",
    "```",
    "````",
  ].join("\n");

  it("reads each block with the prelude, directory and skip its directive gives", () => {
    const blocks = docBlocks(doc, "docs/page.md", root);
    expect(blocks.map((b) => ({ line: b.line, dir: b.dir, skip: b.skip, prelude: b.prelude }))).toEqual([
      {
        line: 8,
        dir: join(root, "packages/core"),
        skip: false,
        prelude: 'import { Manager } from "@capstan/core";',
      },
      { line: 14, dir: join(root, "docs"), skip: true, prelude: "" },
      { line: 18, dir: join(root, "docs"), skip: false, prelude: "" },
    ]);
  });

  it("reports a type error at its line in the document, and nothing for a skipped or correct block", () => {
    const errors = checkDocBlocks(docBlocks(doc, "docs/page.md", root), tsconfig);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ doc: "docs/page.md", line: 9 });
    expect(errors[0]?.message).toMatch(/Manager.*not assignable to type 'number'/);
  });

  it("reports a block that uses a name nobody declared (no prelude)", () => {
    const errors = checkDocBlocks(
      docBlocks("```ts\nreconcileGreeting();\n```\n", "docs/x.md", root),
      tsconfig,
    );
    expect(errors.map((e) => `${e.line}: ${e.message}`)).toEqual([
      "2: Cannot find name 'reconcileGreeting'.",
    ]);
  });
});
