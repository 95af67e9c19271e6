// `capstan new operator`: a new operator in the repository's one shape (api/ -> plan/ -> desired/ -> reconcile/ ->
// main.ts), with its chart on the capstan-operator library chart, an image build, an e2e suite and a docs page,
// from the templates in packages/cli/templates/operator (real files with __placeholders__, linted with the repo).
// Then `capstan crd` writes its CRD YAML, the chart's CRD copy and values schema and the docs reference, and the
// builder's golden file is written from the builder itself.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { planCrdFiles, writePlan } from "./crd-files.ts";

/** What `capstan new operator` is asked for. */
export interface NewOperatorOptions {
  /** The operator's name, e.g. "greeter": operators/greeter, charts/greeter-operator, @capstan/greeter-operator. */
  name: string;
  /** The API group of its kind, e.g. "greeter.example.com". */
  group: string;
  /** The kind, e.g. "Greeter". */
  kind: string;
  /** The plural resource name; default: the kind in lower case + "s". */
  plural?: string;
}

const TEMPLATES = fileURLToPath(new URL("../templates/operator/", import.meta.url));

/** Why the options cannot make an operator, or undefined. */
export function newOperatorProblem(o: NewOperatorOptions): string | undefined {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(o.name) || o.name.length > 40)
    return `name "${o.name}": lower-case letters, digits and dashes, starting with a letter, at most 40 characters`;
  if (o.name.endsWith("-operator"))
    return `name "${o.name}": leave out "-operator" (the chart and image add it)`;
  if (!/^[A-Z][A-Za-z0-9]{0,62}$/.test(o.kind)) return `--kind "${o.kind}": UpperCamelCase, e.g. Greeter`;
  if (!/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,}$/.test(o.group))
    return `--group "${o.group}": a DNS name with at least one dot, e.g. ${o.name}.example.com`;
  const plural = o.plural ?? `${o.kind.toLowerCase()}s`;
  if (!/^[a-z][a-z0-9]*$/.test(plural)) return `--plural "${plural}": lower-case letters and digits`;
  return undefined;
}

/** The placeholders of the templates and their values. */
function substitutions(o: NewOperatorOptions): [string, string][] {
  return [
    ["__name__", o.name],
    ["__NAME__", o.name.toUpperCase().replaceAll("-", "_")],
    ["__group__", o.group],
    ["__Kind__", o.kind],
    ["__kinds__", o.plural ?? `${o.kind.toLowerCase()}s`],
    ["__kind__", o.kind.toLowerCase()],
  ];
}

function substitute(text: string, subs: [string, string][]): string {
  let out = text;
  for (const [from, to] of subs) out = out.replaceAll(from, to);
  return out;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** The files of a new operator, relative to the repository root, with their text. */
export function newOperatorFiles(
  o: NewOperatorOptions,
): { path: string; content: string; executable: boolean }[] {
  const subs = substitutions(o);
  return walk(TEMPLATES).map((file) => ({
    path: substitute(relative(TEMPLATES, file), subs),
    content: substitute(readFileSync(file, "utf8"), subs),
    executable: file.endsWith(".sh"),
  }));
}

/**
 * Writes a new operator into the repository at `root`; refuses to overwrite anything. Returns the files written
 * (relative to `root`).
 */
export async function writeNewOperator(root: string, o: NewOperatorOptions): Promise<string[]> {
  const problem = newOperatorProblem(o);
  if (problem !== undefined) throw new Error(problem);
  if (!existsSync(join(root, "charts", "capstan-operator", "Chart.yaml"))) {
    throw new Error(
      `${root} has no charts/capstan-operator: run capstan new operator at the root of a Capstan repository (or pass --dir)`,
    );
  }
  const files = newOperatorFiles(o);
  for (const dir of [`operators/${o.name}`, `charts/${o.name}-operator`, `e2e/suites/${o.name}`]) {
    if (existsSync(join(root, dir)))
      throw new Error(`${dir} exists already: choose another name or remove it`);
  }
  const clash = files.find((f) => existsSync(join(root, f.path)));
  if (clash !== undefined) throw new Error(`${clash.path} exists already: nothing was written`);
  for (const f of files) {
    const path = join(root, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.content);
    if (f.executable) chmodSync(path, 0o755);
  }
  const link = join(root, "charts", `${o.name}-operator`, "charts", "capstan-operator");
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync("../../capstan-operator", link);

  const packageDir = join(root, "operators", o.name);
  // The builder's golden file, from the builder itself (review it: it is what the test holds the builder to).
  const builder = (await import(pathToFileURL(join(packageDir, "src/desired/config-map.ts")).href)) as {
    desiredConfigMap: (obj: unknown) => unknown;
  };
  const { sample } = (await import(pathToFileURL(join(packageDir, "src/api/sample.ts")).href)) as {
    sample: unknown;
  };
  const golden = join(packageDir, "testdata", "config-map.golden.json");
  mkdirSync(dirname(golden), { recursive: true });
  writeFileSync(golden, `${JSON.stringify(builder.desiredConfigMap(sample), null, 2)}\n`);

  const { written } = writePlan(await planCrdFiles(packageDir));
  formatWithBiome(root, [
    `operators/${o.name}`,
    `charts/${o.name}-operator`,
    `docs/operators/${o.name}.md`,
    `e2e/suites/${o.name}`,
  ]);
  return [
    ...files.map((f) => f.path),
    relative(root, link),
    relative(root, golden),
    ...written.map((p) => relative(root, p)).filter((p) => !files.some((f) => f.path === p)),
  ].sort();
}

/**
 * Formats the new files as the repository's Biome configuration says (the placeholders' values change line
 * lengths and import order), when the repository has Biome; skipped otherwise.
 */
function formatWithBiome(root: string, paths: string[]): void {
  const biome = join(root, "node_modules", ".bin", "biome");
  if (!existsSync(biome) || !existsSync(join(root, "biome.json"))) return;
  execFileSync(biome, ["check", "--write", "--vcs-enabled=false", ...paths], { cwd: root, stdio: "ignore" });
}
