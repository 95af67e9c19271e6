// `capstan chart package`: the Helm chart archive of each operator chart, as users install it (from an OCI registry
// after `helm push`), with the capstan-operator library chart inside. In the repository the library is a link under
// the chart's charts/; `helm package` copies what the link points to, and the archive is checked to hold every
// dependency, so a chart whose link broke is never published without its templates.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { usesOperatorLibrary } from "./crd-files.ts";

/** A packaged chart: its directory, the archive written and the paths inside it. */
export interface PackagedChart {
  chartDir: string;
  archive: string;
  entries: string[];
}

interface ChartYaml {
  name?: unknown;
  version?: unknown;
  type?: unknown;
  dependencies?: { name?: unknown }[];
}

/** The operator charts under `chartsDir`: application charts built on the capstan-operator library, sorted. */
export function operatorChartDirs(chartsDir: string): string[] {
  return readdirSync(chartsDir)
    .map((name) => join(chartsDir, name))
    .filter((dir) => existsSync(join(dir, "Chart.yaml")) && chartYaml(dir).type !== "library")
    .filter((dir) => usesOperatorLibrary(dir))
    .sort();
}

/**
 * `helm package` of `chartDir` into `outDir` (created if needed) as `<name>-<version>.tgz`; throws naming the
 * dependency when the archive lacks one of Chart.yaml's dependencies under `<name>/charts/<dependency>/`.
 */
export function packageChart(helm: string, chartDir: string, outDir: string): PackagedChart {
  const chart = chartYaml(chartDir);
  if (typeof chart.name !== "string" || typeof chart.version !== "string") {
    throw new Error(`${join(chartDir, "Chart.yaml")}: needs a name and a version (strings)`);
  }
  mkdirSync(outDir, { recursive: true });
  try {
    // helm notes on stderr that it followed the charts/capstan-operator link: expected here, so not shown.
    execFileSync(helm, ["package", chartDir, "--destination", outDir], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? err).trim();
    throw new Error(`helm package ${chartDir} failed: ${stderr}`);
  }
  const archive = resolve(outDir, `${chart.name}-${chart.version}.tgz`);
  const entries = archiveEntries(archive);
  for (const dep of chart.dependencies ?? []) {
    const name = String(dep.name);
    if (!entries.includes(`${chart.name}/charts/${name}/Chart.yaml`)) {
      throw new Error(
        `${archive} lacks charts/${name}/ (a dependency in ${join(chartDir, "Chart.yaml")}): ` +
          `check that ${join(chartDir, "charts", name)} is a link to the ${name} chart`,
      );
    }
  }
  return { chartDir, archive, entries };
}

/** The paths in a .tgz archive (`tar tzf`). */
export function archiveEntries(archive: string): string[] {
  return execFileSync("tar", ["tzf", archive], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line !== "");
}

function chartYaml(chartDir: string): ChartYaml {
  return (parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8")) as ChartYaml | null) ?? {};
}
