// `capstan new operator` into a scratch repository root (new-operator-scratch.ts: the library chart, the base
// tsconfig, Biome's config and this repository's node_modules linked in): every file is there with no placeholder
// left, nothing is overwritten on a second run, the operator (and its e2e suite) as generated type-checks, lints
// clean and passes its own unit tests (the reconciler against the in-memory API server, the planner table, the
// golden builder, and the chart with Helm), and its chart's RBAC is what `capstan rbac --check` derives from its
// controller and rbac.ts. e2e/suites/scaffold installs it on a real cluster.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findHelm } from "./chart.ts";
import { runCli } from "./cli.ts";
import { newOperatorFiles, newOperatorProblem } from "./new-operator.ts";
import { type ScratchRepository, scratchRepository } from "./new-operator-scratch.ts";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const options = { name: "greeter", group: "greeter.example.com", kind: "Greeter" };

describe("newOperatorProblem", () => {
  it.each([
    [{ ...options }, undefined],
    [{ ...options, name: "Greeter" }, /lower-case/],
    [{ ...options, name: "greeter-operator" }, /leave out "-operator"/],
    [{ ...options, kind: "greeter" }, /UpperCamelCase/],
    [{ ...options, group: "greeter" }, /DNS name with at least one dot/],
    [{ ...options, plural: "Greeters" }, /--plural/],
  ])("%j", (o, problem) => {
    const found = newOperatorProblem(o);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });
});

describe("capstan new operator", () => {
  let scratch: ScratchRepository | undefined;
  let root = "";
  const out: string[] = [];
  const err: string[] = [];
  const capstan = (...args: string[]) =>
    runCli(args, { cwd: root, out: (t) => out.push(t), err: (t) => err.push(t) });

  beforeAll(() => {
    scratch = scratchRepository(repo);
    root = scratch.root;
  });
  afterAll(() => scratch?.remove());

  it("writes the operator, its chart, image build, e2e suite and docs page, with no placeholder left", async () => {
    expect(
      await capstan("new", "operator", "greeter", "--group", "greeter.example.com", "--kind", "Greeter"),
    ).toBe(0);
    const expected = [
      "operators/greeter/package.json",
      "operators/greeter/src/api/greeter.ts",
      "operators/greeter/src/plan/plan.ts",
      "operators/greeter/src/desired/config-map.ts",
      "operators/greeter/src/reconcile/controller.ts",
      "operators/greeter/src/main.ts",
      "operators/greeter/testdata/config-map.golden.json",
      "operators/greeter/crds/greeters.greeter.example.com.yaml",
      "charts/greeter-operator/Chart.yaml",
      "charts/greeter-operator/values.schema.json",
      "charts/greeter-operator/templates/crds/greeters.greeter.example.com.yaml",
      "charts/greeter-operator/charts/capstan-operator/Chart.yaml",
      "e2e/images/greeter-operator/build.sh",
      "e2e/suites/greeter/greeter.test.ts",
      "docs/operators/greeter.md",
    ];
    for (const f of expected) expect(existsSync(join(root, f)), f).toBe(true);
    for (const f of newOperatorFiles(options)) {
      expect(readFileSync(join(root, f.path), "utf8"), f.path).not.toMatch(/__[A-Za-z]+__/);
    }
    expect(readFileSync(join(root, "docs/operators/greeter.md"), "utf8")).toContain(
      "### Greeter (`greeter.example.com/v1alpha1`)",
    );
    expect(out.join("")).toContain("npm install");
    // The chart README's values table is generated from values.yaml (and checked by the operator's chart test).
    const readme = readFileSync(join(root, "charts/greeter-operator/README.md"), "utf8");
    expect(readme).toMatch(/\| `crds\.enabled` +\| boolean +\| `true` +\| Install the Greeter CRD/);
  });

  it("refuses to write over an existing operator", async () => {
    err.length = 0;
    expect(
      await capstan("new", "operator", "greeter", "--group", "greeter.example.com", "--kind", "Greeter"),
    ).toBe(2);
    expect(err.join("")).toMatch(/operators\/greeter exists already/);
  });

  it.skipIf(findHelm() === undefined)(
    "passes capstan rbac --check as generated: its chart grants what its controller and rbac.ts need",
    async () => {
      out.length = 0;
      err.length = 0;
      expect(await capstan("rbac", "--check", "--operator", "operators/greeter")).toBe(0);
      expect(err.join("")).toBe("");
      expect(out.join("")).toMatch(/charts\/greeter-operator grants exactly what the operator needs/);
    },
  );

  it("type-checks, lints clean and passes its own unit tests as generated", { timeout: 180_000 }, () => {
    const node = process.execPath; // Node 24, which the repository's scripts run on
    const run = (cwd: string, args: string[]) => {
      try {
        return execFileSync(node, args, {
          cwd,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
        });
      } catch (err) {
        const e = err as Error & { stdout?: string; stderr?: string };
        throw new Error(`${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
      }
    };
    const operator = join(root, "operators", "greeter");
    run(operator, [join(repo, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "."]);
    // Its e2e suite too (the scratch root's e2e/ holds only that suite; scaffold.test.ts in e2e/ runs it).
    run(join(root, "e2e"), [join(repo, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "."]);
    execFileSync(
      join(repo, "node_modules/.bin/biome"),
      ["check", "--vcs-enabled=false", "operators", "charts/greeter-operator", "docs", "e2e"],
      {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const tests = run(operator, [join(repo, "node_modules/vitest/vitest.mjs"), "run"]);
    expect(tests).toMatch(/Tests\s+1\d passed \(1\d\)/);
    expect(tests).not.toMatch(/failed/);
  });
});
