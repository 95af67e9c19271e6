// Reads the "capstan" field of an operator's package.json: where its CRDs are declared and where they are written.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The "capstan" field of an operator's package.json, with every path resolved against the package directory. */
export interface OperatorConfig {
  /** The directory holding package.json. */
  packageDir: string;
  /** The package's `name`, named in generated files' headers. */
  packageName: string;
  /** `capstan.crds` as written: the module exporting the CRDs, relative to the package directory. */
  crdsModule: string;
  /** `capstan.crdDir` (default `./crds`): where `<plural>.<group>.yaml` files are written. */
  crdDir: string;
  /** `capstan.docs`: the Markdown page holding each kind's generated reference between its markers. */
  docs?: string;
  /** `capstan.chart`: the Helm chart whose `templates/crds/` (or Helm's `crds/`, for an install-if-absent CRD) holds a copy of each CRD. */
  chart?: string;
  /** `capstan.rbac` as written: the module exporting the operator's `access` (OperatorAccess), for `capstan rbac`. */
  rbacModule?: string;
}

const KEYS = ["crds", "crdDir", "docs", "chart", "rbac"];

/** Reads `<packageDir>/package.json`; throws naming the field when the "capstan" field is missing or wrong. */
export function readOperatorConfig(packageDir: string): OperatorConfig {
  const file = join(packageDir, "package.json");
  let pkg: { name?: unknown; capstan?: unknown };
  try {
    pkg = JSON.parse(readFileSync(file, "utf8")) as typeof pkg;
  } catch (err) {
    throw new Error(`cannot read ${file} (run capstan in an operator package, or pass --dir): ${err}`);
  }
  const example = '"capstan": { "crds": "./src/api/crds.ts", "docs": "...", "chart": "..." }';
  const cfg = pkg.capstan;
  if (typeof cfg !== "object" || cfg === null || Array.isArray(cfg)) {
    throw new Error(`${file} has no "capstan" object: add ${example}`);
  }
  const fields = cfg as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!KEYS.includes(key))
      throw new Error(`${file}: unknown field "capstan.${key}" (known: ${KEYS.join(", ")})`);
  }
  const path = (key: string): string | undefined => {
    const value = fields[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value === "") {
      throw new Error(
        `${file}: "capstan.${key}" must be a path relative to the package, got ${JSON.stringify(value)}`,
      );
    }
    return value;
  };
  const crds = path("crds");
  if (crds === undefined) throw new Error(`${file}: "capstan.crds" is required: ${example}`);
  const packageName = typeof pkg.name === "string" ? pkg.name : packageDir;
  const docs = path("docs");
  const chart = path("chart");
  const rbac = path("rbac");
  return {
    packageDir,
    packageName,
    crdsModule: crds,
    crdDir: resolve(packageDir, path("crdDir") ?? "./crds"),
    ...(docs === undefined ? {} : { docs: resolve(packageDir, docs) }),
    ...(chart === undefined ? {} : { chart: resolve(packageDir, chart) }),
    ...(rbac === undefined ? {} : { rbacModule: rbac }),
  };
}
