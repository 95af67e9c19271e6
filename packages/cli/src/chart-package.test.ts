// `capstan chart package`: each operator chart's archive holds the capstan-operator library chart (which the
// repository links under charts/), renders with `helm template` from the archive to the same objects as from the
// directory, and a chart whose link is gone is refused, naming the dependency. Skipped without Helm.
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findHelm, helmTemplate } from "./chart.ts";
import { archiveEntries, operatorChartDirs, packageChart } from "./chart-package.ts";
import { runCliCaptured } from "./cli-captured.ts";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const charts = join(repo, "charts");
const helm = findHelm();

/** Value sets that turn on every optional object the library renders. */
const MODES: { name: string; set: string[] }[] = [
  { name: "defaults", set: [] },
  {
    name: "everything on",
    set: [
      "serviceMonitor.enabled=true",
      "prometheusRule.enabled=true",
      "dashboard.enabled=true",
      "podDisruptionBudget.enabled=true",
      "replicas=2",
      "watchNamespace=apps",
      "global.commonLabels.team=storage",
    ],
  },
];

describe("operatorChartDirs", () => {
  it("finds the operator charts, not the library", () => {
    expect(operatorChartDirs(charts).map((d) => basename(d))).toEqual(
      readdirSync(charts)
        .filter((c) => c.endsWith("-operator") && c !== "capstan-operator")
        .sort(),
    );
  });
});

describe.skipIf(helm === undefined)("capstan chart package", () => {
  let out = "";
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), "capstan-package-"));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each(operatorChartDirs(charts).map((d) => basename(d)))(
    "%s: the archive holds the library chart and renders as the directory does",
    (name) => {
      const packaged = packageChart(helm!, join(charts, name), out);
      expect(basename(packaged.archive)).toMatch(new RegExp(`^${name}-\\d+\\.\\d+\\.\\d+.*\\.tgz$`));
      expect(packaged.entries).toContain(`${name}/charts/capstan-operator/Chart.yaml`);
      expect(packaged.entries).toContain(`${name}/charts/capstan-operator/templates/_helpers.tpl`);
      expect(packaged.entries).toContain(`${name}/values.schema.json`);
      expect(packaged.entries).toContain(`${name}/README.md`);
      for (const mode of MODES) {
        const fromArchive = helmTemplate(helm!, packaged.archive, { set: mode.set });
        const fromDir = helmTemplate(helm!, join(charts, name), { set: mode.set });
        expect(fromArchive.length, mode.name).toBeGreaterThan(5);
        expect(fromArchive, mode.name).toEqual(fromDir);
      }
    },
  );

  it("refuses a chart whose library link is gone, naming it", () => {
    const copy = mkdtempSync(join(tmpdir(), "capstan-nolink-"));
    try {
      const [first] = operatorChartDirs(charts);
      cpSync(first!, join(copy, "chart"), { recursive: true, dereference: false });
      rmSync(join(copy, "chart", "charts", "capstan-operator"));
      expect(() => packageChart(helm!, join(copy, "chart"), join(copy, "out"))).toThrow(/capstan-operator/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it("packages every operator chart from the repository root", async () => {
    const run = await runCliCaptured(["chart", "package", "--out", out, "--helm", helm!], repo);
    const printed = run.out + run.err;
    expect(run.code).toBe(0);
    const archives = printed.trim().split("\n");
    expect(archives).toHaveLength(operatorChartDirs(charts).length);
    for (const line of archives) {
      const archive = resolve(repo, line.replace(/^packaged /, ""));
      expect(archiveEntries(archive).some((e) => e.endsWith("/charts/capstan-operator/Chart.yaml"))).toBe(
        true,
      );
    }
  });
});
