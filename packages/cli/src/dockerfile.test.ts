// The root Dockerfile builds any operator (ARG OPERATOR): for each directory under operators/, every path it
// copies exists, the workspaces it builds are real ones, and the workspace packages the operator needs at build
// time are among those it copies. (No Docker daemon here to build it; the registry-free image builds under
// e2e/images run the same bundle on the local cluster.)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
const operators = readdirSync(join(root, "operators")).filter((d) =>
  existsSync(join(root, "operators", d, "package.json")),
);
const pkg = (dir: string) =>
  JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as {
    name: string;
    dependencies?: Record<string, string>;
  };
const workspaceNames = new Map(
  ["packages", "operators"]
    .flatMap((p) => readdirSync(join(root, p)).map((d) => join(p, d)))
    .filter((d) => existsSync(join(root, d, "package.json")))
    .map((d) => [pkg(d).name, d] as const),
);

describe.each(operators)("Dockerfile with OPERATOR=%s", (operator) => {
  const text = dockerfile.replace(/\$\{OPERATOR\}/g, operator);
  const copies = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => (m[1] ?? "").split(/\s+/));
  const built = [...text.matchAll(/-w "?(@capstan\/[a-z-]+)"?/g)].map((m) => m[1] ?? "");

  it("copies paths that exist", () => {
    expect(copies.length).toBeGreaterThan(5);
    for (const path of copies) expect(existsSync(join(root, path)), path).toBe(true);
  });

  it("builds the operator's workspace and the packages it needs, all of them copied", () => {
    expect(built).toContain(`@capstan/${operator}-operator`);
    for (const name of built) expect(workspaceNames.has(name), name).toBe(true);
    const copiedDirs = new Set(copies.map((c) => c.replace(/\/(package\.json)?$/, "")));
    const own = pkg(`operators/${operator}`);
    // What the bundle needs (runtime dependencies) and what its tsup config imports, from the workspace; the
    // other operators some tests import are not built.
    const tsupConfig = readFileSync(join(root, "operators", operator, "tsup.config.ts"), "utf8");
    const fromTsup = [...tsupConfig.matchAll(/from "(@capstan\/[a-z-]+)/g)].map((m) => m[1] ?? "");
    expect(fromTsup).toContain("@capstan/cli");
    const needed = [...Object.keys(own.dependencies ?? {}), ...fromTsup]
      .filter((d) => d.startsWith("@capstan/"))
      .map((d) => workspaceNames.get(d) ?? d);
    for (const dir of needed) expect(copiedDirs.has(dir), `${dir} is copied`).toBe(true);
    expect(copiedDirs.has(`operators/${operator}`)).toBe(true);
  });
});

// The entry point's Node.js flags are written in three places: the root Dockerfile, the Dockerfile
// `capstan new operator --standalone` writes, and e2e's registry-free image builder (whose flags the benchmarks run
// with). A flag Node.js does not know stops the image at start ("node: bad option"), so each is tried here on the
// Node.js the repository pins, the version the images run.
describe("the operator images' entry point", () => {
  const fromDockerfile = (path: string) => {
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(join(root, path), "utf8"))?.[1];
    return JSON.parse(entry ?? "[]") as string[];
  };
  const builder = readFileSync(join(root, "e2e/images/operator-image.sh"), "utf8");
  const fromBuilder = JSON.parse(
    (/\\"Entrypoint\\":(\[[^\]]*\])/.exec(builder)?.[1] ?? "[]").replaceAll('\\"', '"'),
  ) as string[];
  const image = fromDockerfile("Dockerfile");

  it("is the same in the root Dockerfile, the standalone template and e2e's image builder", () => {
    expect(image[0]).toBe("node");
    expect(image.at(-1)).toBe("/app/main.js");
    expect(fromDockerfile("packages/cli/templates/standalone/Dockerfile")).toEqual(image);
    expect(fromBuilder).toEqual(image);
  });

  it("passes only flags the pinned Node.js accepts", () => {
    const flags = image.slice(1, -1);
    expect(flags.length).toBeGreaterThan(0);
    const run = spawnSync(process.execPath, [...flags, "-e", "0"], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });
});
