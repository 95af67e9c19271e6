// `capstan crd` on a copy of testdata/widget-operator: the files it writes are the golden ones
// (testdata/widget-operator-generated; CAPSTAN_UPDATE_GOLDEN=1 rewrites them), --check names each stale, missing
// or unexpected file and writes nothing, and bad input fails with a message saying what to fix.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CliResult, runCliCaptured } from "./cli-captured.ts";

const fixture = fileURLToPath(new URL("../testdata/widget-operator/", import.meta.url));
const golden = fileURLToPath(new URL("../testdata/widget-operator-generated/", import.meta.url));
const main = fileURLToPath(new URL("./main.ts", import.meta.url));

/** The files capstan crd writes in the fixture, relative to it. */
const GENERATED = [
  "crds/widgets.example.dev.yaml",
  "crds/gadgets.example.dev.yaml",
  "chart/templates/crds/widgets.example.dev.yaml",
  "chart/templates/crds/gadgets.example.dev.yaml",
  "docs/widget.md",
];

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "capstan-crd-"));
  cpSync(fixture, dir, { recursive: true });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `capstan <args>` in the fixture copy; the exit code and what it printed. */
function capstan(...args: string[]): Promise<CliResult> {
  return runCliCaptured(args, dir);
}

const read = (path: string) => readFileSync(join(dir, path), "utf8");

describe("capstan crd", () => {
  it("writes the CRD YAML, the chart copies and the docs reference as the golden files", async () => {
    const { code, out } = await capstan("crd");
    expect(code).toBe(0);
    expect(out.trim().split("\n").sort()).toEqual(GENERATED.map((f) => `wrote ${f}`).sort());
    for (const file of GENERATED) {
      if (process.env.CAPSTAN_UPDATE_GOLDEN === "1") {
        cpSync(join(dir, file), join(golden, file));
      }
      expect(read(file), `${file} (CAPSTAN_UPDATE_GOLDEN=1 rewrites the golden file)`).toBe(
        readFileSync(join(golden, file), "utf8"),
      );
    }
  });

  it("keeps the docs page's own text and is a no-op the second time", async () => {
    await capstan("crd");
    const page = read("docs/widget.md");
    expect(page.startsWith("# Widget operator\n\nHand-written text before")).toBe(true);
    expect(page.endsWith("\nHand-written text after it stays too.\n")).toBe(true);
    const again = await capstan("crd");
    expect(again).toEqual({
      code: 0,
      out: "capstan crd: 5 generated files of Widget, Gadget are current\n",
      err: "",
    });
  });

  it("--check fails naming every missing file and writes nothing", async () => {
    const { code, err } = await capstan("crd", "--check");
    expect(code).toBe(1);
    for (const f of GENERATED.filter((f) => f.endsWith(".yaml"))) expect(err).toContain(`missing: ${f}`);
    expect(err).toContain("stale: docs/widget.md");
    expect(existsSync(join(dir, "crds"))).toBe(false);
  });

  it("--check passes on current files, then names a stale file with a diff and an unexpected one", async () => {
    await capstan("crd");
    expect((await capstan("crd", "--check")).code).toBe(0);

    const file = "chart/templates/crds/widgets.example.dev.yaml";
    writeFileSync(join(dir, file), read(file).replace("maximum: 9", "maximum: 7"));
    writeFileSync(join(dir, "crds/old.example.dev.yaml"), "kind: CustomResourceDefinition\n");
    const before = read(file);
    const { code, err } = await capstan("crd", "--check");
    expect(code).toBe(1);
    expect(err).toContain(`stale: ${file}`);
    expect(err).toMatch(/@@ line \d+ @@\n- +maximum: 7\n\+ +maximum: 9\n/);
    expect(err).toContain("unexpected: crds/old.example.dev.yaml");
    expect(err).toContain("2 file(s) differ from the schema");
    expect(read(file)).toBe(before);

    const fixed = await capstan("crd");
    expect(fixed.out).toBe(`wrote ${file}\nremoved crds/old.example.dev.yaml\n`);
    expect((await capstan("crd", "--check")).code).toBe(0);
  });

  it("writes an install-if-absent CRD to the chart's crds/ (Helm's), owning that directory too", async () => {
    writeFileSync(
      join(dir, "src/crds.ts"),
      read("src/crds.ts").replace(
        'metadata: { name: "gadgets.example.dev" }',
        'metadata: { name: "gadgets.example.dev", annotations: { "capstan.dev/install-if-absent": "true" } }',
      ),
    );
    expect((await capstan("crd")).code).toBe(0);
    const copy = read("chart/crds/gadgets.example.dev.yaml");
    expect(copy).not.toContain("{{");
    expect(copy).toContain("# Copy of crds/gadgets.example.dev.yaml of @example/widget-operator");
    expect(copy.endsWith(read("crds/gadgets.example.dev.yaml"))).toBe(true);
    expect(existsSync(join(dir, "chart/templates/crds/gadgets.example.dev.yaml"))).toBe(false);
    expect(existsSync(join(dir, "chart/templates/crds/widgets.example.dev.yaml"))).toBe(true);
    expect((await capstan("crd", "--check")).code).toBe(0);

    // A stale or unexpected file there is drift, as in templates/crds/.
    writeFileSync(join(dir, "chart/crds/gadgets.example.dev.yaml"), `${copy}# edited\n`);
    writeFileSync(join(dir, "chart/crds/old.example.dev.yaml"), "kind: CustomResourceDefinition\n");
    const { code, err } = await capstan("crd", "--check");
    expect(code).toBe(1);
    expect(err).toContain("stale: chart/crds/gadgets.example.dev.yaml");
    expect(err).toContain("unexpected: chart/crds/old.example.dev.yaml");
    expect((await capstan("crd")).out).toBe(
      "wrote chart/crds/gadgets.example.dev.yaml\nremoved chart/crds/old.example.dev.yaml\n",
    );
    expect(read("chart/crds/gadgets.example.dev.yaml")).toBe(copy);
  });

  it("runs from another directory with --dir", async () => {
    const { code, out } = await runCollect(["crd", "--dir", relative(tmpdir(), dir)], tmpdir());
    expect(code).toBe(0);
    expect(out).toContain(`wrote ${relative(tmpdir(), join(dir, "crds/widgets.example.dev.yaml"))}`);
  });

  it("names the markers a docs page lacks", async () => {
    writeFileSync(join(dir, "docs/widget.md"), "# Widget operator\n");
    const { code, err } = await capstan("crd");
    expect(code).toBe(2);
    expect(err).toContain('"<!-- BEGIN GENERATED: Widget reference -->"');
    expect(existsSync(join(dir, "crds"))).toBe(false);
  });

  it.each([
    [{ crds: "./src/crds.ts", chart: 3 }, '"capstan.chart" must be a path'],
    [{ docs: "./docs/widget.md" }, '"capstan.crds" is required'],
    [{ crds: "./src/crds.ts", crd: "x" }, 'unknown field "capstan.crd"'],
    [{ crds: "./package.json" }, 'must export "crds"'],
    [{ crds: "./src/crds.ts", chart: "./docs" }, "which holds no Chart.yaml"],
  ])("rejects the config %j, saying what to fix", async (capstanField, message) => {
    const pkg = JSON.parse(read("package.json")) as Record<string, unknown>;
    writeFileSync(join(dir, "package.json"), JSON.stringify({ ...pkg, capstan: capstanField }));
    const { code, err } = await capstan("crd");
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it("rejects a CRD whose name is not <plural>.<group>", async () => {
    writeFileSync(
      join(dir, "src/crds.ts"),
      read("src/crds.ts").replace('name: "gadgets.example.dev"', 'name: "gadget.example.dev"'),
    );
    const { code, err } = await capstan("crd");
    expect(code).toBe(2);
    expect(err).toContain('crds[1]: metadata.name must be "<plural>.<group>" = "gadgets.example.dev"');
  });
});

describe("capstan's command line", () => {
  it("prints usage with --help, and fails on an unknown command or flag", async () => {
    expect(await capstan("--help")).toMatchObject({
      code: 0,
      out: expect.stringContaining("Usage: capstan"),
    });
    const help = await capstan("crd", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toContain("--check");
    expect(help.out).toContain('"crds": "./src/api/crds.ts"');
    expect(await capstan("frobnicate")).toMatchObject({
      code: 2,
      err: expect.stringContaining("unknown command"),
    });
    expect(await capstan("crd", "--chek")).toMatchObject({ code: 2, err: expect.stringContaining("--chek") });
    expect((await capstan()).code).toBe(2);
  });

  it("runs as a Node process: exit code 1 and the drift on stderr with --check, 0 once written", () => {
    const run = (...args: string[]) =>
      execFileSync(process.execPath, [main, ...args], {
        cwd: dir,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    let failure: { status?: number; stderr?: string } = {};
    try {
      run("crd", "--check");
    } catch (err) {
      failure = err as typeof failure;
    }
    expect(failure.status).toBe(1);
    expect(failure.stderr).toContain("missing: crds/widgets.example.dev.yaml");
    expect(run("crd")).toContain("wrote crds/widgets.example.dev.yaml");
    expect(run("crd", "--check")).toContain("are current");
  });
});

async function runCollect(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const { code, out, err } = await runCliCaptured(args, cwd);
  return { code, out: out + err };
}
