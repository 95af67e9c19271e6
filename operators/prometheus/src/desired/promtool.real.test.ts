// The real promtool (built with the Prometheus image by e2e/images/prometheus/build.sh, cached in
// $CAPSTAN_CACHE/prometheus-<version>/bin, default ~/.cache/capstan, or CAPSTAN_PROMTOOL) over the generated configuration: every golden
// case passes `promtool check config` (which also checks the rule files it lists), and what selectMonitors
// refuses, rendered anyway, promtool refuses too, so the checks in validate.ts mean what Prometheus means; and 450
// rules spread over rule shards, laid out as the pods' projected volume lays them, are the files rule_files lists.
// The "real" project (`npm run test:real`); without promtool it fails, saying how to build it (never skips).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuleGroup } from "../api/prometheus-rule.ts";
import type { Endpoint, ServiceMonitor } from "../api/service-monitor.ts";
import { prometheusBinary } from "../prometheus-binaries.ts";
import { type PromtoolResult, promtoolCheckConfig } from "../promtool-check.ts";
import { renderConfig } from "./config.ts";
import { GOLDEN_CASES, manyRules, none, prometheus } from "./config-fixtures.ts";
import { FIELD_CASES, fieldCaseMonitor, fieldCaseServer } from "./monitor-field-cases.ts";
import { ruleShardSecrets } from "./objects/secrets.ts";
import { shardRuleFiles } from "./rule-shards.ts";
import { type SelectedMonitors, selectMonitors } from "./select.ts";

let work = "";

/** `promtool check config` of the configuration rendered for `p` and `selected` (see promtool-check.ts). */
function check(name: string, selected: SelectedMonitors, p = prometheus()): PromtoolResult {
  return promtoolCheckConfig(join(work, name.replace(/[^a-z0-9]+/gi, "-")), renderConfig(p, selected));
}

const sm = (endpoint: Endpoint, spec: Record<string, unknown> = {}): ServiceMonitor => ({
  metadata: { name: "bad", namespace: "app" },
  spec: { selector: { matchLabels: { app: "web" } }, endpoints: [endpoint], ...spec },
});
const services = [
  {
    metadata: { name: "web", namespace: "app", labels: { app: "web" } },
    spec: { ports: [{ name: "m", port: 1 }] },
  },
];

describe("promtool check config", () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "capstan-promtool-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each(GOLDEN_CASES)("accepts the golden case: $name", ({ name, prometheus: p, selected }) => {
    const result = check(name, selected, p);
    expect(result.output).not.toMatch(/FAILED/);
    expect(result.ok).toBe(true);
  });

  // Each monitor selectMonitors refuses; rendered anyway, promtool must refuse the configuration as well.
  it.each<[string, Endpoint]>([
    ["a lookahead", { port: "m", relabelings: [{ sourceLabels: ["a"], regex: "a(?=b)", targetLabel: "x" }] }],
    [
      "a backreference",
      { port: "m", metricRelabelings: [{ sourceLabels: ["a"], regex: "(a)\\1", action: "drop" }] },
    ],
    ["replace without targetLabel", { port: "m", relabelings: [{ sourceLabels: ["a"], action: "replace" }] }],
    [
      "hashmod without modulus",
      { port: "m", relabelings: [{ sourceLabels: ["a"], targetLabel: "t", action: "hashmod" }] },
    ],
    [
      "labeldrop with sourceLabels",
      { port: "m", relabelings: [{ sourceLabels: ["a"], regex: "x", action: "labeldrop" }] },
    ],
    ["scrapeTimeout above interval", { port: "m", interval: "10s", scrapeTimeout: "20s" }],
    [
      "authorization type Basic",
      { port: "m", authorization: { type: "Basic", credentials: { name: "s", key: "k" } } },
    ],
    [
      "a client certificate without its key",
      { port: "m", tlsConfig: { cert: { secret: { name: "s", key: "c" } } } },
    ],
  ])("refuses what selectMonitors refuses: %s", (name, endpoint) => {
    const monitor = sm(endpoint);
    const selection = selectMonitors(
      prometheus({ serviceMonitorSelector: {}, serviceMonitorNamespaceSelector: {} }),
      [],
      { serviceMonitors: [monitor], podMonitors: [], rules: [] },
      services,
      [],
    );
    expect(selection.feedback[0]!.inConfig).toBe(false);
    expect(check(name, { ...none, serviceMonitors: [{ object: monitor, namespaces: ["app"] }] }).ok).toBe(
      false,
    );
  });

  it.each<[string, RuleGroup]>([
    ["an unclosed bracket", { name: "g", rules: [{ alert: "A", expr: "sum(up" }] }],
    ["for on a recording rule", { name: "g", rules: [{ record: "r", expr: "up", for: "5m" }] }],
    [
      "a broken template",
      { name: "g", rules: [{ alert: "A", expr: "up", annotations: { s: "{{ $value " } }] },
    ],
  ])("refuses the rule selectMonitors refuses: %s", (name, group) => {
    const rule = { metadata: { name: "bad", namespace: "app" }, spec: { groups: [group] } };
    const selection = selectMonitors(
      prometheus({ ruleSelector: {}, ruleNamespaceSelector: {} }),
      [],
      { serviceMonitors: [], podMonitors: [], rules: [rule] },
      [],
      [],
    );
    expect(selection.feedback[0]!.inConfig).toBe(false);
    expect(check(name, { ...none, rules: [rule] }).ok).toBe(false);
  });
});

describe("promtool check config over every monitor field", () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "capstan-promtool-fields-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  // Each field the table says reaches the scrape job, as the operator renders it: the real Prometheus loads it.
  const rendering = FIELD_CASES.filter((r) => !("refused" in r.outcome)).flatMap((row) =>
    (row.kinds ?? (["ServiceMonitor", "PodMonitor"] as const)).map((kind) => ({ kind, ...row })),
  );
  it.each(rendering)("accepts $kind $field", ({ kind, ...row }) => {
    const p = fieldCaseServer(row);
    const m = fieldCaseMonitor(kind, row, true);
    const selection = selectMonitors(
      p,
      [],
      {
        serviceMonitors: kind === "ServiceMonitor" ? [m as ServiceMonitor] : [],
        podMonitors: kind === "PodMonitor" ? [m as never] : [],
        rules: [],
      },
      [],
      [],
    );
    expect(selection.feedback[0]!.inConfig, selection.feedback[0]!.message).toBe(true);
    const result = check(`${kind}-${row.field}`, selection, p);
    expect(result.ok, result.output).toBe(true);
  });

  // What selectMonitors refuses as a value Prometheus refuses, rendered anyway: promtool refuses it too.
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ["a body size in lowercase", { bodySizeLimit: "10mb" }, {}],
    ["a scrape protocol listed twice", { scrapeProtocols: ["PrometheusProto", "PrometheusProto"] }, {}],
    ["an unknown scrape protocol", { scrapeProtocols: ["Protobuf"] }, {}],
    ["a negative bucket limit", { nativeHistogramBucketLimit: -1 }, {}],
    // (not "yes": Prometheus' YAML 1.1 reads a plain yes as true, and Capstan's CRD takes only booleans anyway)
    ["a staleness flag that is not a boolean", {}, { trackTimestampsStaleness: "sometimes" }],
  ])("refuses what selectMonitors refuses: %s", (name, spec, endpoint) => {
    const monitor = sm({ port: "m", ...endpoint } as Endpoint, spec);
    const selection = selectMonitors(
      prometheus({ serviceMonitorSelector: {}, serviceMonitorNamespaceSelector: {} }),
      [],
      { serviceMonitors: [monitor], podMonitors: [], rules: [] },
      services,
      [],
    );
    expect(selection.feedback[0]).toMatchObject({ inConfig: false, reason: "InvalidField" });
    expect(check(name, { ...none, serviceMonitors: [{ object: monitor, namespaces: ["app"] }] }).ok).toBe(
      false,
    );
  });
});

describe("promtool over the rule shards", () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "capstan-promtool-shards-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("450 rules: the shard Secrets, projected into one directory as the pods see it, are every file rule_files lists", () => {
    const p = prometheus();
    p.metadata.uid = "u-1";
    const out = renderConfig(p, { ...none, rules: manyRules(450) });
    const secrets = ruleShardSecrets(p, shardRuleFiles(out.rules));
    expect(secrets.length).toBeGreaterThan(1);
    const root = join(work, "shards");
    mkdirSync(join(root, "config"), { recursive: true });
    mkdirSync(join(root, "rules"), { recursive: true });
    writeFileSync(
      join(root, "config", "prometheus.yml"),
      out.yaml.replaceAll("/etc/prometheus/", `${root}/`),
    );
    for (const s of secrets) {
      for (const [file, b64] of Object.entries(s.data ?? {}))
        writeFileSync(join(root, "rules", file), Buffer.from(b64, "base64"));
    }
    const output = execFileSync(
      prometheusBinary("promtool"),
      ["check", "config", join(root, "config", "prometheus.yml")],
      {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, POD_NAME: "prometheus-main-0" },
      },
    );
    expect(output.match(/SUCCESS: 1 rules found/g)).toHaveLength(450);
  });
});
