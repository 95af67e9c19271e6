// `capstan new operator --standalone`: a repository of its own, outside any Capstan checkout, installing
// @capstan/core, @capstan/promql, @capstan/cli and @capstan/testing from this workspace's `npm pack` tarballs (--capstan-tarballs, as
// a user must until they are published; the rest from npm's cache when it has them): it has no symbolic link (the
// library chart is vendored), and as generated it installs, type-checks (operator and e2e suite), lints clean and
// passes its unit tests.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli.ts";
import { findHelm } from "./find-helm.ts";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Every path under `dir` that is a symbolic link (node_modules aside). */
function links(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.name === "node_modules") return [];
    if (lstatSync(path).isSymbolicLink()) return [path];
    return e.isDirectory() ? links(path) : [];
  });
}

describe("capstan new operator --standalone", () => {
  let tmp = "";
  let root = "";
  const out: string[] = [];
  const err: string[] = [];
  const helm = process.env.CAPSTAN_HELM ?? findHelm();
  // npm under the Node this test runs on (Node 24: the repository's), not whichever node is first on PATH.
  const env = {
    ...process.env,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    npm_config_audit: "false",
    npm_config_fund: "false",
    // The repository has no versions.env, so its chart tests find helm through CAPSTAN_HELM or PATH only, as a
    // user's would: hand them this checkout's (the cached build on a machine without helm on PATH, as CI's).
    ...(helm === undefined ? {} : { CAPSTAN_HELM: helm }),
  };
  const npm = (cwd: string, ...args: string[]) =>
    // A time limit: execFileSync blocks the event loop, so vitest's own test timeout cannot stop an npm that
    // keeps retrying a registry it cannot reach (it hung a CI run for 20 minutes before this).
    execFileSync("npm", args, {
      cwd,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 480_000,
      killSignal: "SIGKILL",
    });

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "capstan-standalone-"));
    root = join(tmp, "widget-operator");
    mkdirSync(join(tmp, "packs"));
    npm(
      repo,
      "pack",
      "-w",
      "@capstan/core",
      "-w",
      "@capstan/promql",
      "-w",
      "@capstan/cli",
      "-w",
      "@capstan/testing",
      "--pack-destination",
      join(tmp, "packs"),
    );
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }), 120_000); // node_modules too

  it("refuses --capstan-tarballs without --standalone, and tarballs that are not there", async () => {
    const io = { cwd: tmp, out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
    const args = ["new", "operator", "widget", "--group", "demo.capstan.dev", "--kind", "Widget"];
    expect(await runCli([...args, "--capstan-tarballs", "packs"], io)).toBe(2);
    expect(err.join("")).toMatch(/--capstan-tarballs goes with --standalone/);
    expect(
      await runCli([...args, "--standalone", "--dir", "elsewhere", "--capstan-tarballs", "nowhere"], io),
    ).toBe(2);
    expect(err.join("")).toMatch(/no capstan-core-<version>\.tgz; in a Capstan checkout run npm run build/);
  });

  it("writes a repository with no link, the library chart vendored and the packages from vendor/", async () => {
    const io = { cwd: tmp, out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
    const args = [
      "new",
      "operator",
      "widget",
      "--group",
      "demo.capstan.dev",
      "--kind",
      "Widget",
      "--standalone",
    ];
    expect(await runCli([...args, "--capstan-tarballs", "packs"], io)).toBe(0);
    for (const f of [
      "package.json",
      "tsconfig.base.json",
      "biome.json",
      ".gitignore",
      "Dockerfile",
      "README.md",
      "vendor/capstan-core-0.1.0.tgz",
      "vendor/capstan-promql-0.1.0.tgz",
      "charts/capstan-operator/Chart.yaml",
      "charts/widget-operator/charts/capstan-operator/Chart.yaml",
      "charts/widget-operator/templates/crds/widgets.demo.capstan.dev.yaml",
      "operators/widget/src/api/widget.ts",
      "operators/widget/testdata/config-map.golden.json",
      "e2e/suites/widget/widget.test.ts",
      "docs/operators/widget.md",
    ]) {
      expect(existsSync(join(root, f)), f).toBe(true);
    }
    expect(existsSync(join(root, "e2e/images"))).toBe(false);
    expect(existsSync(join(root, "node_modules"))).toBe(false);
    expect(links(root)).toEqual([]);
    for (const f of ["tsconfig.base.json", "biome.json"]) {
      expect(readFileSync(join(root, f), "utf8"), `${f}: templates/standalone's copy is stale`).toBe(
        readFileSync(join(repo, f), "utf8"),
      );
    }
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<
      string,
      Record<string, string>
    >;
    expect(pkg.devDependencies?.["@capstan/testing"]).toBe("file:vendor/capstan-testing-0.1.0.tgz");
    expect(pkg.overrides?.["@capstan/core"]).toBe("$@capstan/core");
    // @capstan/cli depends on @capstan/promql, which is not on npm yet either.
    expect(pkg.overrides?.["@capstan/promql"]).toBe("$@capstan/promql");
    expect(readFileSync(join(root, "docs/operators/widget.md"), "utf8")).toMatch(/^# The widget operator/);
    // A second run would write over it: refused.
    expect(await runCli(args.concat("--dir", root), io)).toBe(2);
    expect(err.join("")).toMatch(/is not empty/);
  });

  it("installs, type-checks, lints clean and passes its unit tests as generated", {
    timeout: 600_000,
  }, () => {
    npm(root, "install", "--prefer-offline");
    expect(lstatSync(join(root, "node_modules/@capstan/core")).isSymbolicLink()).toBe(false); // the tarball's
    npm(root, "run", "typecheck");
    npm(root, "run", "lint");
    const tests = npm(root, "test");
    expect(tests).toMatch(/Tests\s+1\d passed \(1\d\)/);
    expect(tests).not.toMatch(/failed/);
  });
});
