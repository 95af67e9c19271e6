// `capstan new operator`: a new operator in the repository's one shape (api/ -> plan/ -> desired/ -> reconcile/ ->
// main.ts), with its chart on the capstan-operator library chart, an image build, an e2e suite and a docs page,
// from the templates in packages/cli/templates/operator (real files with __placeholders__, linted with the repo).
// Then `capstan crd` writes its CRD YAML, the chart's CRD copy and values schema and the docs reference, and the
// builder's golden file is written from the builder itself.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
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
const STANDALONE_TEMPLATES = fileURLToPath(new URL("../templates/standalone/", import.meta.url));
/** This package's directory (src/ and dist/ are both one level down). */
const CLI_PACKAGE = fileURLToPath(new URL("../", import.meta.url));

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

function substitute(text: string, subs: [string, string][], markdown = false): string {
  let out = text;
  // Biome formats the Markdown templates and reads `__name__` there as bold: `**name**`.
  if (markdown) for (const [from, to] of subs) out = out.replaceAll(`**${from.slice(2, -2)}**`, to);
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
  return templateFiles(TEMPLATES, o);
}

function templateFiles(
  dir: string,
  o: NewOperatorOptions,
): { path: string; content: string; executable: boolean }[] {
  const subs = substitutions(o);
  return walk(dir).map((file) => ({
    // `x.template` is written as `x`, `gitignore.template` as `.gitignore` (npm pack drops .gitignore files, and a
    // biome.json among the templates would be read as a nested Biome configuration).
    path: substitute(relative(dir, file), subs)
      .replace(/^(gitignore|dockerignore)\.template$/, ".$1")
      .replace(/\.template$/, ""),
    content: substitute(readFileSync(file, "utf8"), subs, file.endsWith(".md")),
    executable: file.endsWith(".sh"),
  }));
}

/**
 * Writes a new operator into the repository at `root`; refuses to overwrite anything. Returns the files written
 * (relative to `root`).
 */
export async function writeNewOperator(
  root: string,
  o: NewOperatorOptions,
  mode: { standalone?: boolean } = {},
): Promise<string[]> {
  const problem = newOperatorProblem(o);
  if (problem !== undefined) throw new Error(problem);
  if (!existsSync(join(root, "charts", "capstan-operator", "Chart.yaml"))) {
    throw new Error(
      `${root} has no charts/capstan-operator: run capstan new operator at the root of a Capstan repository (or pass --dir), or make a repository of its own with --standalone`,
    );
  }
  // A standalone repository has no e2e/images scripts (the registry-free image build is the Capstan repository's).
  const files = newOperatorFiles(o).filter((f) => !(mode.standalone && f.path.startsWith("e2e/images/")));
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
  // The library chart: linked in a Capstan repository, vendored (copied) in a standalone one.
  const link = join(root, "charts", `${o.name}-operator`, "charts", "capstan-operator");
  mkdirSync(dirname(link), { recursive: true });
  if (mode.standalone) cpSync(join(root, "charts", "capstan-operator"), link, { recursive: true });
  else symlinkSync("../../capstan-operator", link);

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

/** What `capstan new operator --standalone` is asked for besides the operator. */
export interface StandaloneOptions {
  /**
   * A directory holding `npm pack` tarballs of @capstan/core, @capstan/promql (which @capstan/cli depends on),
   * @capstan/cli and @capstan/testing: copied into the repository's vendor/ and installed from there (until the
   * packages are on npm).
   */
  capstanTarballs?: string;
}

/** The charts/capstan-operator library chart: shipped in this package (npm pack copies it), or the repository's. */
function libraryChart(): string {
  const found = [
    join(CLI_PACKAGE, "charts", "capstan-operator"),
    join(CLI_PACKAGE, "..", "..", "charts", "capstan-operator"),
  ].find((dir) => existsSync(join(dir, "Chart.yaml")));
  if (found === undefined) {
    throw new Error(`no capstan-operator library chart in ${CLI_PACKAGE}charts: reinstall @capstan/cli`);
  }
  return found;
}

/** The node_modules directory this CLI loads @capstan/core from (a workspace's, or the one npx installed into). */
function capstanNodeModules(): string | undefined {
  for (let dir = CLI_PACKAGE; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules");
    if (existsSync(join(candidate, "@capstan", "core", "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Copies the npm pack tarballs of @capstan/core, @capstan/promql, @capstan/cli and @capstan/testing from `from` into
 * the repository's vendor/ and returns the root package.json fields that install them: devDependencies on the files,
 * and overrides (`$@capstan/core`...) so every dependent (the workspaces, @capstan/cli's own dependencies on
 * @capstan/core and @capstan/promql) gets them. (An override with a file: path would resolve relative to each
 * dependent.)
 */
function vendorTarballs(
  root: string,
  from: string,
): { devDependencies: Record<string, string>; overrides: Record<string, string> } {
  const names = existsSync(from) ? readdirSync(from) : [];
  const devDependencies: Record<string, string> = {};
  const overrides: Record<string, string> = {};
  for (const pkg of ["core", "promql", "cli", "testing"]) {
    const last = names
      .filter((n) => n.startsWith(`capstan-${pkg}-`) && n.endsWith(".tgz"))
      .sort()
      .at(-1);
    if (last === undefined) {
      throw new Error(
        `--capstan-tarballs ${from}: no capstan-${pkg}-<version>.tgz; in a Capstan checkout run npm run build && npm pack -w @capstan/core -w @capstan/promql -w @capstan/cli -w @capstan/testing --pack-destination ${from}`,
      );
    }
    mkdirSync(join(root, "vendor"), { recursive: true });
    cpSync(join(from, last), join(root, "vendor", last));
    devDependencies[`@capstan/${pkg}`] = `file:vendor/${last}`;
    overrides[`@capstan/${pkg}`] = `$@capstan/${pkg}`;
  }
  return { devDependencies, overrides };
}

/**
 * Writes a standalone repository for a new operator into `dir` (new or empty): the operator in the same layout as
 * in a Capstan repository (operators/<name>, charts/<name>-operator on a vendored copy of the capstan-operator
 * library chart, e2e/suites/<name>, docs/operators/<name>.md), with its own root package.json (npm workspaces,
 * the tools pinned), tsconfig.base.json, biome.json, Dockerfile and README. Returns the files written.
 */
export async function writeStandaloneOperator(
  dir: string,
  o: NewOperatorOptions,
  options: StandaloneOptions = {},
): Promise<string[]> {
  const problem = newOperatorProblem(o);
  if (problem !== undefined) throw new Error(problem);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new Error(`${dir} is not empty: give --standalone a new directory for the repository (--dir)`);
  }
  const library = libraryChart();
  const vendored =
    options.capstanTarballs === undefined ? undefined : vendorTarballs(dir, options.capstanTarballs);
  const files = templateFiles(STANDALONE_TEMPLATES, o);
  for (const f of files) {
    const path = join(dir, f.path);
    mkdirSync(dirname(path), { recursive: true });
    let content = f.content;
    if (f.path === "package.json" && vendored !== undefined) {
      const pkg = JSON.parse(content) as Record<string, Record<string, string> | undefined>;
      pkg.devDependencies = { ...pkg.devDependencies, ...vendored.devDependencies };
      pkg.overrides = { ...pkg.overrides, ...vendored.overrides };
      content = `${JSON.stringify(pkg, null, 2)}\n`;
    }
    writeFileSync(path, content);
  }
  cpSync(library, join(dir, "charts", "capstan-operator"), { recursive: true });
  // Generating the golden file and the CRD YAML loads the operator's schema, which imports @capstan/core: from
  // this CLI's own node_modules, linked in while the repository has none of its own.
  const modules = join(dir, "node_modules");
  const linked = !existsSync(modules) ? capstanNodeModules() : undefined;
  if (linked !== undefined) symlinkSync(linked, modules);
  try {
    const written = await writeNewOperator(dir, o, { standalone: true });
    formatWithBiome(
      dir,
      files.map((f) => f.path).filter((p) => /\.(json|ts|md)$/.test(p)),
    );
    const vendor = Object.values(vendored?.devDependencies ?? {}).map((spec) => spec.replace(/^file:/, ""));
    return [...files.map((f) => f.path), ...vendor, ...written, "charts/capstan-operator/"].sort();
  } finally {
    if (linked !== undefined) rmSync(modules);
  }
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
