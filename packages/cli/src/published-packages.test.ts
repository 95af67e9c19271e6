// What a user of the published packages (@capstan/core, @capstan/testing, @capstan/promql, @capstan/cli) meets on
// npm: a README and the licence in the tarball, where the source and the issue tracker are, engines without an upper
// bound, caret ranges for runtime dependencies, one prom-client (a peer dependency: an operator's metrics and core's
// must land in one registry), and export maps that CommonJS `require()` can load too (Node 24 loads ES modules
// through it). Reads the workspace's own package.json files; the require() check loads the built dist (CI builds
// first; turbo builds these packages before this test).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface PackageJson {
  name: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
  engines?: { node?: string };
  exports?: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const workspaces = ["packages", "operators"].flatMap((parent) =>
  readdirSync(join(root, parent)).map((d) => join(parent, d)),
);
const published = workspaces
  .filter((dir) => existsSync(join(root, dir, "package.json")))
  .map((dir) => ({
    dir,
    pkg: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as PackageJson,
  }))
  .filter(({ pkg }) => pkg.private !== true);
const rootPkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;

describe("published packages", () => {
  it("are the four library packages", () => {
    expect(published.map((p) => p.pkg.name).sort()).toEqual([
      "@capstan/cli",
      "@capstan/core",
      "@capstan/promql",
      "@capstan/testing",
    ]);
  });

  describe.each(published)("$pkg.name", ({ dir, pkg }) => {
    it("has a README and the licence, and says where its source and issue tracker are", () => {
      expect(existsSync(join(root, dir, "README.md")), `${dir}/README.md`).toBe(true);
      expect(readFileSync(join(root, dir, "LICENSE"), "utf8")).toBe(
        readFileSync(join(root, "LICENSE"), "utf8"),
      );
      expect(pkg.license).toBe("Apache-2.0");
      expect(pkg.repository).toEqual({ ...rootPkg.repository, directory: dir });
      expect(pkg.homepage).toBe(rootPkg.homepage);
      expect(pkg.bugs).toEqual(rootPkg.bugs);
    });

    it("puts no upper bound on Node.js and takes caret ranges of its runtime dependencies", () => {
      expect(pkg.engines?.node).toMatch(/^>=\d+\.\d+\.\d+$/);
      for (const [dep, range] of Object.entries({ ...pkg.dependencies, ...pkg.peerDependencies })) {
        expect(range, dep).toMatch(/^\^\d/);
      }
    });

    it("takes prom-client as a peer dependency, never as its own copy", () => {
      expect(pkg.dependencies?.["prom-client"]).toBeUndefined();
      if (pkg.peerDependencies?.["prom-client"] !== undefined) {
        expect(pkg.devDependencies?.["prom-client"], "a dev copy to build and test with").toBeDefined();
      }
    });

    it("has a default condition on every export, so require() loads it", () => {
      const entries = Object.entries(pkg.exports ?? {}).filter(([sub]) => sub !== "./package.json");
      expect(entries.length).toBeGreaterThan(0);
      const script: string[] = [];
      for (const [sub, target] of entries) {
        expect(typeof target === "object" && target.default, `${sub}: default`).toBeTruthy();
        script.push(`require(${JSON.stringify(`${pkg.name}${sub.slice(1)}`)});`);
      }
      // A CommonJS script in the package's directory; Node prints nothing and exits 0 when every require() works.
      const out = execFileSync(process.execPath, ["--input-type=commonjs", "-e", script.join("\n")], {
        cwd: join(root, dir),
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      expect(out).toBe("");
    });
  });
});
