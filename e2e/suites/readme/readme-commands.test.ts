// The commands the README and docs/writing-an-operator.md give a newcomer, each run as a newcomer runs it: in a fresh
// copy of this checkout (its tracked and untracked, not ignored, files: no dist/, no turbo cache) whose node_modules
// is what `npm ci` left, so nothing an earlier CI step built can hide a missing build step (issue 25: `npm start`
// and `npx capstan` needed a CLI nothing had built). `npm start` and `npm test` themselves are .ci/run's first and
// last steps on CI's clean clone. Each command gets its own copy, since each builds what it needs.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigMap, isNotFound } from "@capstan/core";
import { connect, eventually, runCommand } from "@capstan/testing";
import { afterAll, describe, expect, it } from "vitest";
import { Greeting } from "../../../packages/core/examples/greeting.ts";

const repo = fileURLToPath(new URL("../../..", import.meta.url));
const env = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" };
const copies: string[] = [];

/**
 * A fresh copy of the checkout: the files git tracks or would track (what a clone of this tree has), then
 * node_modules as `npm ci` made it (hard links where `link`, a full copy where the command rewrites it: `npm install`
 * writes node_modules/.package-lock.json in place). Workspace links in node_modules are relative, so they point
 * into the copy's own packages, which have no dist/.
 */
async function freshCheckout(link: boolean): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "capstan-readme-"));
  copies.push(dir);
  await runCommand(repo, "bash", [
    "-c",
    'git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d "" f; do [ -e "$f" ] && printf "%s\\0" "$f"; done | tar --null -T - -cf - | tar -xf - -C "$1"',
    "fresh-checkout",
    dir,
  ]);
  await runCommand(repo, "cp", [link ? "-al" : "-a", "node_modules", dir]);
  for (const pkg of ["packages/core", "packages/cli", "packages/testing", "operators/etcd"]) {
    expect(existsSync(join(dir, pkg, "dist")), `${pkg}/dist in a fresh checkout`).toBe(false);
  }
  return dir;
}

afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

describe("the README's commands, from a checkout where nothing is built", () => {
  it("npx capstan --help (docs/writing-an-operator.md's first tool) builds the CLI it needs", async () => {
    const dir = await freshCheckout(true);
    const out = await runCommand(dir, "npx", ["capstan", "--help"]);
    expect(out).toMatch(/^Usage: capstan <command>/m);
    expect(out).toContain("new operator");
  }, 300_000);

  it("writing-an-operator.md's first steps: new operator, npm install, build and test", async () => {
    const dir = await freshCheckout(false);
    await runCommand(dir, "npx", [
      "capstan",
      "new",
      "operator",
      "greeter",
      "--group",
      "greeter.example.com",
      "--kind",
      "Greeter",
    ]);
    await runCommand(dir, "npm", ["install", "--no-audit", "--no-fund"]);
    const out = await runCommand(dir, "npx", [
      "turbo",
      "run",
      "build",
      "test",
      "--filter=@capstan/greeter-operator",
    ]);
    expect(existsSync(join(dir, "operators/greeter/dist/main.js"))).toBe(true);
    expect(out).toMatch(/Tests\s+\d+ passed/);
    expect(out).not.toMatch(/Tests\s+\d+ failed/);
  }, 900_000);

  it("npm run bench builds nothing it lacks and prints its table", async () => {
    const dir = await freshCheckout(true);
    const out = await runCommand(dir, "npm", ["run", "bench"], 600_000);
    expect(out).toMatch(/^benchmark\s+value\s+unit$/m);
  }, 600_000);

  describe("npm run example, against this run's cluster", () => {
    const { client } = connect();
    let example: ChildProcess | undefined;
    const gone = <T>(err: unknown): T | undefined => {
      if (!isNotFound(err)) throw err;
      return undefined;
    };
    const sampleGone = async () =>
      (await client.get(Greeting, "hello", "default").catch(gone)) === undefined &&
      (await client.get(ConfigMap, "hello-greeting", "default").catch(gone)) === undefined;
    afterAll(async () => {
      if (example?.pid !== undefined) {
        try {
          process.kill(-example.pid, "SIGKILL");
        } catch {}
      }
      await removeLeftovers();
    });

    /**
     * The sample and its ConfigMap as a run that did not finish left them, gone: with no example running, nothing
     * removes the Greeting's finalizer, so this does. The example's CRD stays: deleting a CRD seconds after it was
     * made can stall in the API server ("storage is (re)initializing"), and the example applies it again anyway.
     */
    async function removeLeftovers(): Promise<void> {
      if ((await client.get(Greeting, "hello", "default").catch(gone)) !== undefined) {
        await client
          .patch(Greeting, "hello", "default", { metadata: { finalizers: null } }, "merge")
          .catch(gone);
        await client.delete(Greeting, "hello", "default").catch(gone);
      }
      await client.delete(ConfigMap, "hello-greeting", "default").catch(gone);
      await eventually(sampleGone);
    }

    it("installs its CRD and sample, keeps the sample's ConfigMap, finalizes a deleted sample; stops on SIGTERM", async () => {
      await removeLeftovers(); // an earlier run's ConfigMap must not pass for this run's work
      const dir = await freshCheckout(true);
      let output = "";
      // Its own process group, so the whole npm -> sh -> node chain gets the signal; no ports taken on this machine.
      example = spawn("npm", ["run", "example"], {
        cwd: dir,
        detached: true,
        env: { ...env, METRICS_BIND_ADDRESS: "0", HEALTH_PROBE_BIND_ADDRESS: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      example.stdout?.on("data", (d: Buffer) => (output += d.toString()));
      example.stderr?.on("data", (d: Buffer) => (output += d.toString()));
      // "close": every process holding the output (npm, sh, the example) has ended, not only npm.
      const closed = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        example?.on("close", (code, signal) => resolve({ code, signal })),
      );
      const running = () => {
        if (example?.exitCode !== null) throw new Error(`npm run example exited early:\n${output}`);
      };
      const cm = await eventually(
        async () => {
          running();
          return await client.get(ConfigMap, "hello-greeting", "default");
        },
        { timeoutMs: 240_000, intervalMs: 1_000 },
      );
      expect(cm.data).toEqual({ world: "Hello, world!", capstan: "Hello, capstan!" });
      // Deleting the sample: the example's finalizer runs and lets it go; its ConfigMap goes with it.
      await client.delete(Greeting, "hello", "default");
      await eventually(
        async () => {
          running();
          return await sampleGone();
        },
        { timeoutMs: 120_000, intervalMs: 1_000 },
      );
      // As Ctrl-C in a terminal does: the signal to the whole foreground group. npm ends by the signal; the example
      // drains its manager and exits.
      process.kill(-(example.pid as number), "SIGTERM");
      const { code, signal } = await closed;
      expect(code === 0 || signal === "SIGTERM", `exit ${code} ${signal}:\n${output}`).toBe(true);
      expect(output).toContain('"msg":"manager stopped"');
    }, 600_000);
  });
});
