// `capstan crd`'s work: the files an operator's CRDs generate (crds/*.yaml, the docs page's reference blocks, the
// chart's CRD copies in templates/crds/ or Helm's crds/, and its values.schema.json), compared with what is on disk
// (drift) or written there.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CustomResourceDefinitionObject } from "@capstan/core";
import { parse } from "yaml";
import { chartValuesFiles } from "./chart-docs.ts";
import { type ChartValuesSpec, operatorValuesSchema } from "./chart-values.ts";
import { type OperatorConfig, readOperatorConfig } from "./config.ts";
import { renderCrdReference, spliceGeneratedBlock } from "./crd-reference.ts";
import { chartCrdDir, crdFileName, renderChartCrd, renderCrdYaml } from "./crd-yaml.ts";
import type { GeneratedFile } from "./generated-file.ts";
import { textDiff } from "./text-diff.ts";

export type { GeneratedFile } from "./generated-file.ts";

/** What `capstan crd` generates for an operator, and the directories whose every `.yaml` file it owns. */
export interface CrdPlan {
  config: OperatorConfig;
  crds: CustomResourceDefinitionObject[];
  files: GeneratedFile[];
  /** crds/, and the chart's templates/crds/ and crds/: a `.yaml` file there that is not generated is stale. */
  ownedDirs: string[];
}

/** A generated file that differs from what is on disk. */
export interface Drift {
  /** Absolute path. */
  path: string;
  /** missing: not on disk; stale: different text; unexpected: in an owned directory but not generated. */
  state: "missing" | "stale" | "unexpected";
  /** For a stale file, a diff-like excerpt: `-` what is on disk, `+` what the schema generates. */
  diff: string;
}

/**
 * Imports the module named by `capstan.crds` and returns its `crds` export (an array of CRD objects, or a function
 * returning one); throws naming the module and the CRD when one is not a well-formed v1 CRD.
 */
export async function loadCrds(config: OperatorConfig): Promise<CustomResourceDefinitionObject[]> {
  const file = resolve(config.packageDir, config.crdsModule);
  let mod: { crds?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as typeof mod;
  } catch (err) {
    if ((err as { code?: unknown }).code === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw new Error(
        `Node ${process.versions.node} cannot import ${config.crdsModule}: capstan crd needs Node 24 or later, which runs .ts modules (run it through npm run or npx in the repository, whose node devDependency is Node 24)`,
      );
    }
    throw err;
  }
  const value: unknown = typeof mod.crds === "function" ? (mod.crds as () => unknown)() : mod.crds;
  if (!Array.isArray(value) || value.length === 0) {
    throw new Error(
      `${config.crdsModule} must export "crds": a non-empty array of CustomResourceDefinition objects (or a function returning one)`,
    );
  }
  const seen = new Set<string>();
  return value.map((v: unknown, i) => {
    const crd = v as Partial<CustomResourceDefinitionObject> | null;
    const where = `${config.crdsModule}: crds[${i}]`;
    if (crd?.apiVersion !== "apiextensions.k8s.io/v1" || crd.kind !== "CustomResourceDefinition") {
      throw new Error(
        `${where} must have apiVersion apiextensions.k8s.io/v1 and kind CustomResourceDefinition`,
      );
    }
    const expected = `${crd.spec?.names?.plural}.${crd.spec?.group}`;
    if (crd.metadata?.name !== expected) {
      throw new Error(
        `${where}: metadata.name must be "<plural>.<group>" = "${expected}", got "${crd.metadata?.name}"`,
      );
    }
    if (seen.has(expected)) throw new Error(`${where}: ${expected} is declared twice`);
    seen.add(expected);
    return crd as CustomResourceDefinitionObject;
  });
}

/** True when the chart in `chartDir` depends on the capstan-operator library chart (whose values the schema holds). */
export function usesOperatorLibrary(chartDir: string): boolean {
  const chart = parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8")) as {
    dependencies?: { name?: string }[];
  } | null;
  return (chart?.dependencies ?? []).some((d) => d.name === "capstan-operator");
}

/** The optional `chartValues` export of the `capstan.crds` module: the operator's own chart values. */
async function loadChartValues(config: OperatorConfig): Promise<ChartValuesSpec> {
  const mod = (await import(pathToFileURL(resolve(config.packageDir, config.crdsModule)).href)) as {
    chartValues?: unknown;
  };
  const value = mod.chartValues;
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(
      `${config.crdsModule}: "chartValues" must be an object: { properties: { <value>: <JSON schema> } }`,
    );
  }
  return value as ChartValuesSpec;
}

/** Everything `capstan crd` would write for the operator in `packageDir`; reads the docs page, writes nothing. */
export async function planCrdFiles(packageDir: string): Promise<CrdPlan> {
  const config = readOperatorConfig(packageDir);
  const crds = await loadCrds(config);
  const source = `${config.crdsModule.replace(/^\.\//, "")} in ${config.packageName}`;
  const files: GeneratedFile[] = [];
  const ownedDirs = [config.crdDir];
  const chart = config.chart;
  if (chart !== undefined) {
    if (!existsSync(join(chart, "Chart.yaml"))) {
      throw new Error(`"capstan.chart" is ${chart}, which holds no Chart.yaml`);
    }
    ownedDirs.push(join(chart, "templates", "crds"), join(chart, "crds"));
  }
  // A chart on the capstan-operator library labels its CRDs: the templates with capstan-operator.crdLabels, Helm's
  // crds/ (not rendered) with the labels of those that do not depend on the release.
  const labels =
    chart !== undefined && usesOperatorLibrary(chart)
      ? {
          labels: "capstan-operator.crdLabels",
          staticLabels: {
            "app.kubernetes.io/name": basename(chart),
            "app.kubernetes.io/component": "crds",
            "app.kubernetes.io/part-of": "capstan",
          },
        }
      : {};
  for (const crd of crds) {
    const file = crdFileName(crd);
    const yaml = renderCrdYaml(crd, source);
    files.push({ path: join(config.crdDir, file), content: yaml });
    if (chart !== undefined) {
      files.push({
        path: join(chart, chartCrdDir(crd), file),
        content: renderChartCrd(file, yaml, config.packageName, labels),
      });
    }
  }
  if (config.chart !== undefined && usesOperatorLibrary(config.chart)) {
    const kinds = [...new Set(crds.map((c) => c.spec.names.kind))];
    const generic = operatorValuesSchema(basename(config.chart), kinds, await loadChartValues(config));
    files.push(...chartValuesFiles(config.chart, generic));
  }
  if (config.docs !== undefined) {
    if (!existsSync(config.docs)) throw new Error(`"capstan.docs" is ${config.docs}, which does not exist`);
    let page = readFileSync(config.docs, "utf8");
    for (const crd of crds) {
      page = spliceGeneratedBlock(page, crd.spec.names.kind, renderCrdReference(crd, source));
    }
    files.push({ path: config.docs, content: page });
  }
  return { config, crds, files, ownedDirs };
}

/** How the files on disk differ from what the schema generates (empty when everything is current). */
export function planDrift(plan: CrdPlan): Drift[] {
  const drift: Drift[] = [];
  for (const { path, content } of plan.files) {
    if (!existsSync(path)) {
      drift.push({ path, state: "missing", diff: "" });
      continue;
    }
    const current = readFileSync(path, "utf8");
    if (current !== content) drift.push({ path, state: "stale", diff: textDiff(current, content) });
  }
  const generated = new Set(plan.files.map((f) => f.path));
  for (const path of unexpectedFiles(plan.ownedDirs, generated))
    drift.push({ path, state: "unexpected", diff: "" });
  return drift;
}

/** The drift of the operator in `packageDir`: what `capstan crd --check` reports. */
export async function crdDrift(packageDir: string): Promise<Drift[]> {
  return planDrift(await planCrdFiles(packageDir));
}

/**
 * Writes every generated file that differs from what is on disk and removes the `.yaml` files of the owned
 * directories that are no longer generated; returns the paths written and removed.
 */
export function writePlan(plan: CrdPlan): { written: string[]; removed: string[] } {
  const written: string[] = [];
  const removed: string[] = [];
  for (const d of planDrift(plan)) {
    if (d.state === "unexpected") {
      rmSync(d.path);
      removed.push(d.path);
      continue;
    }
    const file = plan.files.find((f) => f.path === d.path)!;
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.content);
    written.push(file.path);
  }
  return { written, removed };
}

/** A drift as one message line (plus its diff), with the path relative to `from`. */
export function formatDrift(d: Drift, from: string): string {
  const path = relative(from, d.path);
  switch (d.state) {
    case "missing":
      return `missing: ${path} (capstan crd writes it)`;
    case "unexpected":
      return `unexpected: ${path} (not generated from any declared CRD; capstan crd removes it)`;
    case "stale":
      return `stale: ${path} (differs from what capstan crd generates from the schema and values.yaml; it rewrites it)\n${d.diff}`;
  }
}

function unexpectedFiles(dirs: string[], generated: Set<string>): string[] {
  return dirs.flatMap((dir) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((name) => name.endsWith(".yaml") || name.endsWith(".yml"))
          .map((name) => join(dir, name))
          .filter((path) => !generated.has(path))
          .sort()
      : [],
  );
}
