// samples/prometheus.yaml is a Prometheus the schema accepts: known fields only, values matching their patterns.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROMETHEUS_DURATION_PATTERN } from "./monitoring-common.ts";
import { prometheusSchema, SCRAPE_DURATION_PATTERN } from "./prometheus.ts";

type Schema = { properties?: Record<string, Schema> };
const sample = parse(readFileSync(new URL("../../samples/prometheus.yaml", import.meta.url), "utf8")) as {
  apiVersion: string;
  kind: string;
  spec: Record<string, unknown>;
};

describe("samples/prometheus.yaml", () => {
  it("is a Prometheus with only fields the schema declares", () => {
    expect([sample.apiVersion, sample.kind]).toEqual(["monitoring.capstan.dev/v1alpha1", "Prometheus"]);
    const declared = Object.keys((prometheusSchema as Schema).properties!.spec!.properties!);
    expect(Object.keys(sample.spec).filter((k) => !declared.includes(k))).toEqual([]);
  });
  it("has valid durations", () => {
    expect(String(sample.spec.scrapeInterval)).toMatch(new RegExp(SCRAPE_DURATION_PATTERN));
    expect(String(sample.spec.retention)).toMatch(new RegExp(PROMETHEUS_DURATION_PATTERN));
  });
});
