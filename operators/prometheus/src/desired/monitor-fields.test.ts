// Every field a ServiceMonitor or PodMonitor may carry reaches the scrape job, or refuses the monitor naming it, or
// is one of the few that change nothing (issue 29 item 4): the table of monitor-field-cases.ts against the fields of
// Capstan's CRD schema and of prometheus-operator's CRDs (testdata/prometheus-operator-monitor-fields.json), so a
// field accepted but dropped fails here. Then the new scrape settings by the server's release and feature flags,
// and the values Prometheus refuses.
import { readFileSync } from "node:fs";
import type { JSONSchemaProps } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { PodMonitor } from "../api/pod-monitor.ts";
import { podMonitorSpecSchema } from "../api/pod-monitor.ts";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import { type ServiceMonitor, serviceMonitorSpecSchema } from "../api/service-monitor.ts";
import { renderConfig } from "./config.ts";
import {
  ENDPOINT_LISTS,
  FIELD_CASES,
  fieldCaseMonitor,
  fieldCaseServer,
  type MonitorKindName,
} from "./monitor-field-cases.ts";
import { parseByteSize, parseQuantity } from "./scrape-settings.ts";
import { type MonitorFeedback, selectMonitors } from "./select.ts";

const KINDS: readonly MonitorKindName[] = ["ServiceMonitor", "PodMonitor"];
const ENDPOINTS = ENDPOINT_LISTS;

/** Field paths of a CRD schema under spec, in the form of the testdata file (x.y, x[], x{}). */
function schemaPaths(schema: JSONSchemaProps, at = "", out: string[] = []): string[] {
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, JSONSchemaProps>)) {
    const path = at === "" ? k : `${at}.${k}`;
    out.push(path);
    schemaPaths(v, path, out);
  }
  if (schema.items !== undefined) schemaPaths(schema.items as JSONSchemaProps, `${at}[]`, out);
  const extra = schema.additionalProperties;
  if (extra !== undefined && typeof extra === "object") schemaPaths(extra as JSONSchemaProps, `${at}{}`, out);
  return out;
}

const upstream = JSON.parse(
  readFileSync(new URL("../../testdata/prometheus-operator-monitor-fields.json", import.meta.url), "utf8"),
) as Record<MonitorKindName, string[]>;
const ours: Record<MonitorKindName, string[]> = {
  ServiceMonitor: schemaPaths(serviceMonitorSpecSchema as unknown as JSONSchemaProps),
  PodMonitor: schemaPaths(podMonitorSpecSchema as unknown as JSONSchemaProps),
};

/** A path as the table writes it: `endpoint.` for either kind's endpoint list. */
const tablePath = (kind: MonitorKindName, path: string) =>
  path.startsWith(`${ENDPOINTS[kind]}[].`) ? `endpoint.${path.slice(ENDPOINTS[kind].length + 3)}` : path;
/** The leaves: paths no other path extends. */
const leaves = (paths: string[]) =>
  paths.filter((p) => !paths.some((q) => q !== p && [".", "[]", "{}"].some((sep) => q.startsWith(p + sep))));
const covers = (field: string, path: string) =>
  path === field || [".", "[]", "{}"].some((sep) => path.startsWith(field + sep));
const rowsFor = (kind: MonitorKindName) => FIELD_CASES.filter((r) => (r.kinds ?? KINDS).includes(kind));

describe("every field a monitor may carry is in the table", () => {
  it.each(
    KINDS.flatMap((kind) => [
      [kind, "Capstan's CRD schema", ours[kind]] as const,
      [kind, "prometheus-operator's CRD", upstream[kind]] as const,
    ]),
  )("%s fields of %s", (kind, _source, paths) => {
    const rows = rowsFor(kind);
    const uncovered = leaves(paths)
      .map((p) => tablePath(kind, p))
      .filter((p) => !rows.some((r) => covers(r.field, p)));
    expect(
      uncovered,
      "add a row to monitor-field-cases.ts: render the field, refuse it, or say why it changes nothing",
    ).toEqual([]);
  });

  it.each(KINDS)("every %s row names a field that exists", (kind) => {
    const all = [...ours[kind], ...upstream[kind]].map((p) => tablePath(kind, p));
    const stale = rowsFor(kind).filter((r) => !all.some((p) => covers(r.field, p) || covers(p, r.field)));
    expect(stale.map((r) => r.field)).toEqual([]);
  });

  it("Capstan's CRD names only prometheus-operator's fields", () => {
    for (const kind of KINDS) expect(ours[kind].filter((p) => !upstream[kind].includes(p))).toEqual([]);
  });
});

// ---- judging one row ----

const server = (overrides: Partial<PrometheusSpec> = {}): Prometheus =>
  fieldCaseServer({ server: overrides });
const monitor = fieldCaseMonitor;

function judge(kind: MonitorKindName, p: Prometheus, m: ServiceMonitor | PodMonitor) {
  const selection = selectMonitors(
    p,
    [],
    {
      serviceMonitors: kind === "ServiceMonitor" ? [m as ServiceMonitor] : [],
      podMonitors: kind === "PodMonitor" ? [m as PodMonitor] : [],
      rules: [],
    },
    [],
    [],
  );
  return { feedback: selection.feedback[0] as MonitorFeedback, yaml: renderConfig(p, selection).yaml };
}

const matches = (yaml: string, what: string | RegExp) =>
  typeof what === "string" ? yaml.includes(what) : what.test(yaml);

describe("each field reaches the scrape job, refuses the monitor, or changes nothing", () => {
  const rows = KINDS.flatMap((kind) => rowsFor(kind).map((row) => ({ kind, ...row })));
  it.each(rows)("$kind $field", ({ kind, ...row }) => {
    const p = server(row.server);
    const without = judge(kind, p, monitor(kind, row, false));
    const withIt = judge(kind, p, monitor(kind, row, true));
    const o = row.outcome;
    if ("refused" in o) {
      expect(withIt.feedback).toMatchObject({ inConfig: false, reason: o.refused });
      expect(withIt.feedback.message).toContain(row.field.split(".").at(-1));
      return;
    }
    expect(withIt.feedback.inConfig, withIt.feedback.message).toBe(true);
    if ("renders" in o) {
      expect(matches(without.yaml, o.renders), `without ${row.field}:\n${without.yaml}`).toBe(false);
      expect(matches(withIt.yaml, o.renders), `with ${row.field}:\n${withIt.yaml}`).toBe(true);
    } else if ("omits" in o) {
      expect(without.yaml).toContain(o.omits);
      expect(withIt.yaml).not.toContain(o.omits);
    } else {
      expect(o.inert.length).toBeGreaterThan(20);
      expect(withIt.yaml).toBe(without.yaml);
    }
  });
});

// ---- the new scrape settings, by release and flags ----

const sm = (spec: Record<string, unknown>, endpoint: Record<string, unknown> = {}): ServiceMonitor => ({
  metadata: { name: "m", namespace: "app", generation: 1 },
  spec: { selector: { matchLabels: { app: "web" } }, endpoints: [{ port: "web", ...endpoint }], ...spec },
});
const onServer = (spec: Partial<PrometheusSpec>, m: ServiceMonitor) =>
  judge("ServiceMonitor", server(spec), m);

describe("native histograms by the server's release", () => {
  it.each<[string, string[], Record<string, unknown>, string | undefined, string | RegExp | undefined]>([
    // Before 3.8.0 there is no scrape_native_histograms: the native-histograms flag scrapes them for every job.
    ["3.5.0", [], { scrapeNativeHistograms: true }, "--enable-feature=native-histograms", undefined],
    ["3.5.0", ["native-histograms"], { scrapeNativeHistograms: true }, undefined, undefined],
    ["3.7.3", [], { scrapeNativeHistograms: false }, undefined, undefined],
    [
      "3.7.3",
      ["native-histograms"],
      { scrapeNativeHistograms: false },
      "cannot turn them off for one",
      undefined,
    ],
    // ...and without the flag, 3.0 to 3.7 drop the histograms converted to NHCB.
    ["3.0.0", [], { convertClassicHistogramsToNHCB: true }, "drops the converted histograms", undefined],
    [
      "3.0.0",
      ["native-histograms"],
      { convertClassicHistogramsToNHCB: true },
      undefined,
      "convert_classic_histograms_to_nhcb: true",
    ],
    [
      "3.0.0",
      [],
      { convertClassicHistogramsToNHCB: false },
      undefined,
      "convert_classic_histograms_to_nhcb: false",
    ],
    ["3.8.0", [], { scrapeNativeHistograms: true }, undefined, "scrape_native_histograms: true"],
    [
      "3.8.0",
      [],
      { convertClassicHistogramsToNHCB: true },
      undefined,
      "convert_classic_histograms_to_nhcb: true",
    ],
    [
      "3.16.0",
      ["native-histograms"],
      { scrapeNativeHistograms: false },
      undefined,
      "scrape_native_histograms: false",
    ],
  ])("Prometheus %s %j: %j refused for %j", (version, enableFeatures, spec, refusal, renders) => {
    const { feedback, yaml } = onServer({ version, enableFeatures }, sm(spec));
    expect(feedback.inConfig, feedback.message).toBe(refusal === undefined);
    if (refusal !== undefined) {
      expect(feedback.reason).toBe("UnsupportedField");
      expect(feedback.message).toContain(`spec.${Object.keys(spec)[0]}`);
      expect(feedback.message).toContain(`Prometheus ${version}`);
      expect(feedback.message).toContain(refusal);
    } else if (renders !== undefined) expect(yaml).toContain(renders);
    else expect(yaml).not.toMatch(/native_histograms|nhcb/);
  });

  it("the other settings are in every 3.x: the oldest release renders them", () => {
    const { feedback, yaml } = onServer(
      { version: "3.0.0" },
      sm(
        {
          attachMetadata: { node: true },
          bodySizeLimit: "1GiB",
          scrapeProtocols: ["PrometheusText1.0.0"],
          scrapeClassicHistograms: true,
          nativeHistogramBucketLimit: 10,
          nativeHistogramMinBucketFactor: 2,
        },
        { trackTimestampsStaleness: true },
      ),
    );
    expect(feedback.inConfig, feedback.message).toBe(true);
    for (const key of [
      "node: true",
      "body_size_limit: 1GiB",
      "- PrometheusText1.0.0",
      "always_scrape_classic_histograms: true",
      "native_histogram_bucket_limit: 10",
      "native_histogram_min_bucket_factor: 2",
      "track_timestamps_staleness: true",
    ]) {
      expect(yaml).toContain(key);
    }
  });
});

describe("values Prometheus refuses", () => {
  it.each<[Record<string, unknown>, string]>([
    [{ bodySizeLimit: "10mb" }, 'spec.bodySizeLimit "10mb" is not a byte size'],
    [{ bodySizeLimit: "10M" }, 'spec.bodySizeLimit "10M"'],
    [{ bodySizeLimit: "99999999999EB" }, "spec.bodySizeLimit"],
    [
      { scrapeProtocols: ["PrometheusProto", "PrometheusProto"] },
      "spec.scrapeProtocols: PrometheusProto is listed twice",
    ],
    [{ scrapeProtocols: ["Protobuf"] }, 'spec.scrapeProtocols[0] "Protobuf" is not a scrape protocol'],
    [{ fallbackScrapeProtocol: "text" }, 'spec.fallbackScrapeProtocol "text"'],
    [{ nativeHistogramBucketLimit: -1 }, "spec.nativeHistogramBucketLimit -1"],
    [{ nativeHistogramMinBucketFactor: "1.1x" }, 'spec.nativeHistogramMinBucketFactor "1.1x"'],
    [{ attachMetadata: { node: "yes" } }, 'spec.attachMetadata.node "yes"'],
    [{ targetLimit: 1.5 }, "spec.targetLimit 1.5"],
    [{ scrapeClassicHistograms: "true" }, 'spec.scrapeClassicHistograms "true"'],
  ])("%j", (spec, message) => {
    const { feedback } = onServer({}, sm(spec));
    expect(feedback).toMatchObject({ inConfig: false, reason: "InvalidField" });
    expect(feedback.message).toContain(message);
  });

  it("an endpoint's trackTimestampsStaleness must be a boolean", () => {
    const { feedback } = onServer({}, sm({}, { trackTimestampsStaleness: "yes" }));
    expect(feedback).toMatchObject({ reason: "InvalidField" });
    expect(feedback.message).toContain("endpoints[0].trackTimestampsStaleness");
  });

  it.each<[string, number | undefined]>([
    ["0", 0],
    ["512B", 512],
    ["10KB", 10240],
    ["10KiB", 10240],
    ["1.5MB", 1.5 * 2 ** 20],
    [".5GiB", 2 ** 29],
    ["1EB", 2 ** 60],
    ["10kB", undefined],
    ["10", undefined],
    ["-1KB", undefined],
    ["1GB512MB", undefined],
  ])(
    "body size %s is %s bytes (units.ParseBase2Bytes, on prometheus-operator's spellings)",
    (text, bytes) => {
      expect(parseByteSize(text)).toBe(bytes);
    },
  );

  it.each<[unknown, number | undefined]>([
    [2, 2],
    ["1.1", 1.1],
    ["1100m", 1.1],
    ["11e-1", 1.1],
    ["1Ki", 1024],
    ["2k", 2000],
    ["+.5", 0.5],
    ["1.1x", undefined],
    [true, undefined],
  ])("quantity %j is %s", (value, number) => {
    expect(parseQuantity(value)).toBe(number);
  });
});
