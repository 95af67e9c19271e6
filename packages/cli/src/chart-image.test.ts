// `capstan chart image` and the release's one source of image names: each packaged operator chart renders, with its
// default values, exactly the reference `chartImage` computes; that reference is what the local image build tags
// (e2e/images/operator-image.sh --ref) and what the release workflow pushes (it asks `capstan chart image`); and the
// versions a release tag must match agree (chart version, appVersion, the operator's package version).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { deploymentPodSpec, findHelm, helmTemplate } from "./chart.ts";
import { chartImage } from "./chart-image.ts";
import { operatorChartDirs, packageChart } from "./chart-package.ts";
import { runCliCaptured } from "./cli-captured.ts";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const charts = operatorChartDirs(join(repo, "charts"));
const helm = findHelm();

/** A throwaway chart directory with this Chart.yaml and values.yaml. */
function fakeChart(chart: object, values: object): string {
  const dir = mkdtempSync(join(tmpdir(), "capstan-chart-image-"));
  writeFileSync(join(dir, "Chart.yaml"), JSON.stringify(chart));
  writeFileSync(join(dir, "values.yaml"), JSON.stringify(values));
  return dir;
}

describe("chartImage", () => {
  const chart = { name: "x-operator", version: "1.2.3", appVersion: "1.2.3" };
  it("registry/repository:appVersion by default, the tag when one is set, @digest over both", () => {
    const image = { registry: "ghcr.io", repository: "org/x-operator", tag: "", digest: "" };
    expect(chartImage(fakeChart(chart, { image }))).toBe("ghcr.io/org/x-operator:1.2.3");
    expect(chartImage(fakeChart(chart, { image: { ...image, tag: "9" } }))).toBe("ghcr.io/org/x-operator:9");
    const digest = `sha256:${"b".repeat(64)}`;
    expect(chartImage(fakeChart(chart, { image: { ...image, tag: "9", digest } }))).toBe(
      `ghcr.io/org/x-operator@${digest}`,
    );
  });

  it("no registry: the repository alone; a global registry (mirror) replaces the chart's", () => {
    expect(chartImage(fakeChart(chart, { image: { repository: "capstan.local/x-operator" } }))).toBe(
      "capstan.local/x-operator:1.2.3",
    );
    expect(
      chartImage(fakeChart(chart, { image: { registry: "ghcr.io", repository: "o/x" } }), "mirror:5000"),
    ).toBe("mirror:5000/o/x:1.2.3");
  });

  it("refuses a chart it cannot name an image for", () => {
    expect(() => chartImage(fakeChart(chart, { image: {} }))).toThrow(/image.repository is empty/);
    expect(() =>
      chartImage(fakeChart({ name: "x", version: "1.0.0" }, { image: { repository: "r" } })),
    ).toThrow(/no appVersion/);
  });

  it("`capstan chart image` prints one reference per chart", async () => {
    const out = await runCliCaptured(["chart", "image", ...charts], repo);
    expect(out.code, out.err).toBe(0);
    expect(out.out.trim().split("\n")).toEqual(charts.map((c) => chartImage(c)));
  });
});

describe.each(charts.map((dir) => [basename(dir), dir]))("%s: the image a release pushes", (name, dir) => {
  const op = name.replace(/-operator$/, "");
  const chartYaml = parse(readFileSync(join(dir, "Chart.yaml"), "utf8")) as {
    version: string;
    appVersion: string;
  };

  it("is published under the project's registry, tagged with the chart's appVersion", () => {
    expect(chartImage(dir)).toBe(`ghcr.io/capstan-dev/capstan/${name}:${chartYaml.appVersion}`);
  });

  it("versions agree: chart version, appVersion and the operator's package version (the tag checks all three)", () => {
    const pkg = JSON.parse(readFileSync(join(repo, "operators", op, "package.json"), "utf8")) as {
      version: string;
    };
    expect(chartYaml.appVersion).toBe(chartYaml.version);
    expect(pkg.version).toBe(chartYaml.appVersion);
  });

  it("is the reference the local image build tags", () => {
    const ref = execFileSync("bash", [join(repo, "e2e/images/operator-image.sh"), "--ref", op], {
      encoding: "utf8",
      env: { ...process.env, [`${op.toUpperCase()}_OPERATOR_IMAGE`]: "" },
    }).trim();
    expect(ref).toBe(chartImage(dir));
  });
});

describe.skipIf(helm === undefined)("packaged charts render the image the release pushes", () => {
  let out = "";
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), "capstan-release-"));
    mkdirSync(out, { recursive: true });
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each(charts.map((dir) => [basename(dir), dir]))("%s", (_name, dir) => {
    const archive = packageChart(helm!, dir, out).archive;
    const image = (set: string[] = []) =>
      deploymentPodSpec(helmTemplate(helm!, archive, { set })).containers[0]?.image;
    expect(image()).toBe(chartImage(dir));
    expect(image(["global.imageRegistry=mirror.example.com"])).toBe(chartImage(dir, "mirror.example.com"));
  });
});

describe("the release workflow", () => {
  const workflow = parse(readFileSync(join(repo, ".github/workflows/release.yml"), "utf8")) as {
    on: { push: { tags: string[] } };
    jobs: Record<string, { steps: { run?: string; with?: Record<string, unknown> }[] }>;
  };
  /** A GitHub Actions expression as the workflow writes it: `${{ e }}`. */
  const expr = (e: string) => `\${{ ${e} }}`;
  const runs = (job: string) => (workflow.jobs[job]?.steps ?? []).map((s) => s.run ?? "").join("\n");

  it("runs on version tags and pushes each image under the reference its chart runs", () => {
    expect(workflow.on.push.tags).toEqual(["v[0-9]+.[0-9]+.[0-9]+*"]);
    expect(runs("images")).toContain(`npx capstan chart image "charts/${expr("matrix.operator")}-operator"`);
    const build = workflow.jobs.images?.steps.find((s) => s.with?.["build-args"] !== undefined);
    expect(build?.with).toMatchObject({
      tags: expr("steps.ref.outputs.ref"),
      platforms: "linux/amd64,linux/arm64",
      push: true,
      sbom: true,
    });
    expect(runs("images")).toMatch(/cosign sign --yes .*@\$\{\{ steps\.build\.outputs\.digest \}\}/);
  });

  it("pushes and signs the archives `npm run charts:package` writes", () => {
    const rootPackage = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(rootPackage.scripts["charts:package"]).toContain("capstan chart package --out dist/charts");
    expect(runs("charts")).toContain("npm run charts:package");
    expect(runs("charts")).toMatch(/helm" push "\$archive" oci:\/\/ghcr\.io\/capstan-dev\/capstan\/charts/);
    expect(runs("charts")).toContain("cosign sign --yes");
  });
});
