// `capstan chart image`: the image reference an operator chart runs with its default values. The chart is the one
// source of that name: the release workflow tags and pushes the image under it, the local image build
// (e2e/images/operator-image.sh) tags its tarball with it, and chart-image.test.ts checks that the packaged chart
// renders exactly it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

interface ImageValues {
  registry?: unknown;
  repository?: unknown;
  tag?: unknown;
  digest?: unknown;
}

/**
 * The operator image `chartDir` renders with its default values, as the capstan-operator library's
 * `capstan-operator.image` helper builds it: `[registry/]repository`, then `@digest` when one is set, else
 * `:tag` (default: the chart's appVersion). `globalRegistry` stands for `global.imageRegistry` (a mirror), which
 * replaces the chart's registry when set.
 */
export function chartImage(chartDir: string, globalRegistry = ""): string {
  const chart = yamlFile(join(chartDir, "Chart.yaml"));
  const values = yamlFile(join(chartDir, "values.yaml"));
  const image = (values.image ?? {}) as ImageValues;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const repository = text(image.repository);
  if (repository === "") throw new Error(`${join(chartDir, "values.yaml")}: image.repository is empty`);
  const registry = globalRegistry || text(image.registry);
  const name = registry === "" ? repository : `${registry}/${repository}`;
  const digest = text(image.digest);
  if (digest !== "") return `${name}@${digest}`;
  const tag = text(image.tag) || text(chart.appVersion);
  if (tag === "")
    throw new Error(`${join(chartDir, "Chart.yaml")}: no appVersion, and values.yaml has no image.tag`);
  return `${name}:${tag}`;
}

function yamlFile(path: string): Record<string, unknown> {
  return (parse(readFileSync(path, "utf8")) as Record<string, unknown> | null) ?? {};
}
