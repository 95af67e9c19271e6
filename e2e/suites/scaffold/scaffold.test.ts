// `capstan new operator` installs as generated: an operator generated into a scratch repository outside this one
// (packages/cli/src/new-operator-scratch.ts, the CLI's unit test's helper) is built and unit-tested, its image is
// packed from its bundle (its e2e/images/<name>-operator/build.sh) and imported into the real node, and its own
// generated e2e suite, run from the generated tree, installs its chart, applies its sample and sees it reconciled.
// Skipped unless the cluster has a real node and Helm (not on CAPSTAN_NODE=kwok).
import { rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CustomResourceDefinition, isNotFound } from "@capstan/core";
import { connect, realNodeSuitesEnabled, runCommand } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScratchRepository, scratchRepository } from "../../../packages/cli/src/new-operator-scratch.ts";

const repo = fileURLToPath(new URL("../../..", import.meta.url));
const name = "widget";
const crdName = "widgets.demo.capstan.dev";
const images = join(process.env.CAPSTAN_CACHE ?? join(homedir(), ".cache", "capstan"), "images");

if (!realNodeSuitesEnabled) {
  console.warn(
    "suites/scaffold skipped: it runs a generated operator's image on a real node with Helm (CAPSTAN_REAL_NODE=1 " +
      "and CAPSTAN_HELM, set by e2e/run.sh on the local cluster with its real node; not on CAPSTAN_NODE=kwok)",
  );
}

describe.skipIf(!realNodeSuitesEnabled)("a generated operator, installed as generated", () => {
  const { client } = connect();
  const node = process.execPath;
  let scratch: ScratchRepository | undefined;
  let root = "";
  let tarball = "";
  let built = false; // each step needs the one before
  let imported = false;

  beforeAll(() => {
    scratch = scratchRepository(repo, "capstan-scaffold-");
    root = scratch.root;
  });

  afterAll(async () => {
    scratch?.remove();
    if (tarball !== "") rmSync(tarball, { force: true });
    // The generated suite applies its CRD and Helm keeps CRDs: remove it, with any Widget left.
    await client.delete(CustomResourceDefinition, crdName).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }, 120_000);

  it("is generated, built and unit-tested", { timeout: 600_000 }, async () => {
    const cli = join(repo, "packages/cli/bin/capstan.js");
    await runCommand(root, node, [
      cli,
      "new",
      "operator",
      name,
      "--group",
      "demo.capstan.dev",
      "--kind",
      "Widget",
    ]);
    const operator = join(root, "operators", name);
    await runCommand(operator, node, [join(repo, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "."]);
    await runCommand(operator, node, [join(repo, "node_modules/tsup/dist/cli-default.js")]);
    const tests = await runCommand(operator, node, [join(repo, "node_modules/vitest/vitest.mjs"), "run"]);
    expect(tests).toMatch(/Tests\s+\d+ passed/);
    expect(tests).not.toMatch(/failed/);
    built = true;
  });

  it("packs its image and imports it into the real node", { timeout: 600_000 }, async () => {
    if (!built) throw new Error("the generated operator did not build: see the step before");
    const out = await runCommand(root, "bash", [
      join(root, "e2e/images", `${name}-operator`, "build.sh"),
      images,
    ]);
    tarball = out.trim().split("\n").at(-1) ?? "";
    expect(tarball).toBe(join(images, `${name}-operator_0.1.0.tar`));
    await runCommand(repo, "bash", [join(repo, "e2e/cluster/local/node.sh"), "import", tarball]);
    imported = true;
  });

  it("passes its own e2e suite: chart installed, sample reconciled", { timeout: 600_000 }, async () => {
    if (!imported) throw new Error("no image of the generated operator on the node: see the step before");
    const out = await runCommand(join(root, "e2e"), node, [
      join(repo, "node_modules/vitest/vitest.mjs"),
      "run",
      `suites/${name}`,
    ]);
    expect(out).toMatch(/Tests\s+2 passed \(2\)/);
    expect(out).not.toMatch(/skipped/);
  });
});
