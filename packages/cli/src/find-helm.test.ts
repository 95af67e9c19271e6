// Tests of the one helm lookup: its order of preference (CAPSTAN_HELM, the cached build of the pinned HELM_VERSION,
// PATH) on scratch directories holding stand-in binaries, the shell scripts' use of it, and its command form.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkoutVersionsEnv,
  findHelm,
  HELM_LOOKUP_HINT,
  helmCandidates,
  pinnedHelmVersion,
  requireHelm,
} from "./find-helm.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

let dir = "";
let versionsEnv = "";
let cache = "";
let binDir = "";
let named = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "capstan-find-helm-"));
  versionsEnv = join(dir, "versions.env");
  writeFileSync(
    versionsEnv,
    "# pins\nKUBERNETES_VERSION=v1.34.4\nHELM_VERSION=v3.22.0\nETCD_VERSION=v3.6.16\n",
  );
  cache = join(dir, "cache");
  binDir = join(dir, "bin");
  named = join(dir, "named", "helm");
  for (const path of [join(cache, "helm-v3.22.0", "bin", "helm"), join(binDir, "helm"), named]) stub(path);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function stub(path: string, mode = 0o755): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "#!/bin/sh\necho stub\n");
  chmodSync(path, mode);
}

describe("findHelm", () => {
  it("prefers CAPSTAN_HELM, then the cached build of the pinned HELM_VERSION, then helm on PATH", () => {
    const everything = { CAPSTAN_HELM: named, CAPSTAN_CACHE: cache, PATH: binDir };
    expect(findHelm(everything, versionsEnv)).toBe(named);
    const { CAPSTAN_HELM: _, ...noNamed } = everything;
    expect(findHelm(noNamed, versionsEnv)).toBe(join(cache, "helm-v3.22.0", "bin", "helm"));
    rmSync(join(cache, "helm-v3.22.0"), { recursive: true });
    expect(findHelm(noNamed, versionsEnv)).toBe(join(binDir, "helm"));
    rmSync(join(binDir, "helm"));
    expect(findHelm(noNamed, versionsEnv)).toBeUndefined();
    expect(helmCandidates(noNamed, versionsEnv)).toEqual([
      { source: "cache", path: join(cache, "helm-v3.22.0", "bin", "helm"), found: false },
    ]);
  });

  it("takes only the pinned version from the cache, not another one left there", () => {
    stub(join(cache, "helm-v3.99.0", "bin", "helm"));
    writeFileSync(versionsEnv, "HELM_VERSION=v3.21.0\n");
    expect(findHelm({ CAPSTAN_CACHE: cache, PATH: binDir }, versionsEnv)).toBe(join(binDir, "helm"));
    // Outside a checkout (no versions.env) the cache is not looked at at all.
    expect(findHelm({ CAPSTAN_CACHE: cache, PATH: binDir }, null)).toBe(join(binDir, "helm"));
  });

  it("looks a CAPSTAN_HELM without a slash up on PATH, as a shell would (CAPSTAN_HELM=helm)", () => {
    expect(
      findHelm({ CAPSTAN_HELM: "helm", CAPSTAN_CACHE: cache, PATH: `/nonexistent:${binDir}` }, versionsEnv),
    ).toBe(join(binDir, "helm"));
  });

  it("never falls back from a CAPSTAN_HELM that names nothing, and requireHelm says so", () => {
    const env = { CAPSTAN_HELM: join(dir, "typo", "helm"), CAPSTAN_CACHE: cache, PATH: binDir };
    expect(findHelm(env, versionsEnv)).toBeUndefined();
    expect(() => requireHelm(env, versionsEnv)).toThrow(`CAPSTAN_HELM=${join(dir, "typo", "helm")} is not`);
  });

  it("skips files that are not executable, and directories", () => {
    stub(join(binDir, "helm"), 0o644);
    mkdirSync(join(dir, "bin2", "helm"), { recursive: true });
    expect(findHelm({ PATH: [binDir, join(dir, "bin2")].join(":") }, null)).toBeUndefined();
    expect(() => requireHelm({ PATH: binDir }, null)).toThrow(HELM_LOOKUP_HINT);
  });

  it("reads HELM_VERSION from this checkout's e2e/cluster/local/versions.env", () => {
    const file = checkoutVersionsEnv();
    expect(file).toBe(join(root, "e2e", "cluster", "local", "versions.env"));
    expect(pinnedHelmVersion(file!)).toMatch(/^v3\.\d+\.\d+$/);
    expect(checkoutVersionsEnv(tmpdir())).toBeNull();
  });
});

describe("the shell scripts", () => {
  it.each(["e2e/run.sh", "scripts/start.sh", "e2e/cluster/kind/run.sh"])(
    "%s finds helm through find-helm-main.ts, with no rule of its own",
    (script) => {
      const text = readFileSync(join(root, script), "utf8");
      expect(text).toContain("packages/cli/src/find-helm-main.ts");
      expect(text).not.toMatch(/helm-\$HELM_VERSION|command -v helm/);
    },
  );

  it("find-helm-main.ts prints what findHelm chooses, and fails saying why when there is none", () => {
    const main = fileURLToPath(new URL("./find-helm-main.ts", import.meta.url));
    const env = { CAPSTAN_HELM: named, PATH: process.env.PATH ?? "" };
    expect(execFileSync(process.execPath, [main], { env, encoding: "utf8" })).toBe(`${named}\n`);
    const none = spawnSync(process.execPath, [main], {
      env: { CAPSTAN_HELM: join(dir, "none") },
      encoding: "utf8",
    });
    expect(none.status).toBe(1);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain(`CAPSTAN_HELM=${join(dir, "none")} is not`);
  });
});
