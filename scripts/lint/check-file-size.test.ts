// The file-size check fails on a non-test source over the limit and only then: a temporary tree with files of
// 600 and 601 lines, a long test file and an allowlisted file, checked by the function and by the command.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkFileSizes, countLines } from "./check-file-size.ts";

const run = promisify(execFile);
const script = new URL("./check-file-size.ts", import.meta.url).pathname;
let root: string;

function file(path: string, lines: number): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), "const x = 1;\n".repeat(lines));
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "size-check-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("countLines", () => {
  it.each([
    ["", 0],
    ["a", 1],
    ["a\n", 1],
    ["a\nb", 2],
    ["a\nb\n", 2],
  ])("%j -> %i", (text, n) => expect(countLines(text)).toBe(n));
});

describe("checkFileSizes", () => {
  it("names a source over the limit, not one at it, not a test, not dist/ or node_modules/", () => {
    file("packages/core/src/at-limit.ts", 600);
    file("packages/core/src/client/over.ts", 601);
    file("packages/core/src/client/over.test.ts", 900);
    file("packages/core/dist/bundle.ts", 900);
    file("operators/etcd/src/node_modules/x/index.ts", 900);
    file("e2e/suites/fixture.ts", 700);
    const { over } = checkFileSizes(root, { allowlist: {} });
    expect(over).toEqual([
      { file: "e2e/suites/fixture.ts", lines: 700 },
      { file: "packages/core/src/client/over.ts", lines: 601 },
    ]);
  });

  it("lets an allowlisted file pass and reports an allowlisted file that no longer needs it", () => {
    file("operators/vault/src/api/big.ts", 700);
    file("operators/vault/src/plan/small.ts", 10);
    const allowlist = { "operators/vault/src/api/big.ts": "why", "operators/vault/src/plan/small.ts": "why" };
    const result = checkFileSizes(root, { allowlist });
    expect(result.over).toEqual([]);
    expect(result.allowedOver).toEqual([{ file: "operators/vault/src/api/big.ts", lines: 700 }]);
    expect(result.staleAllowlist).toEqual(["operators/vault/src/plan/small.ts"]);
  });
});

describe("the command", () => {
  it("exits 1 naming the file over the limit, 0 when there is none", async () => {
    file("operators/etcd/src/plan/plan.ts", 601);
    const failed = await run(process.execPath, [script, "--root", root]).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain(
      "operators/etcd/src/plan/plan.ts: 601 lines, over 600",
    );
    file("operators/etcd/src/plan/plan.ts", 600);
    const passed = await run(process.execPath, [script, "--root", root]);
    expect(passed.stdout).toContain("no non-test source over 600 lines");
  });
});
