// The rule and relabeling checks against the real promtool, row by row over validation-cases.ts: each rule row's
// PrometheusRule rendered as its rule file (`promtool check rules`), each relabeling row's ServiceMonitor rendered
// into the server's configuration (`promtool check config`); promtool, the table and selectMonitors give the same
// verdict on every row, and on rules judged with a server's feature flags (promtool given the same flags); every
// row again for a 3.5.0 server through promtool 3.5.0 (prometheus-binaries.ts' older releases). The
// "real" project (`npm run test:real`); without promtool it fails, saying how to build it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OLDER_PROMTOOL_RELEASES, promtoolOf } from "../prometheus-binaries.ts";
import { promtoolCheckConfig, promtoolCheckRules } from "../promtool-check.ts";
import { renderConfig } from "./config.ts";
import { none } from "./config-fixtures.ts";
import { renderRuleFile } from "./rule-file.ts";
import { RELABEL_CASES, RULE_CASES } from "./validation-cases.ts";
import { monitorObject, ruleObject, selectingServer, verdict } from "./validation-verdicts.ts";

let work = "";
let n = 0;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "capstan-validate-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("promtool check rules and selectMonitors agree", () => {
  it.each(RULE_CASES)("$name", (row) => {
    const rule = ruleObject(row);
    const result = promtoolCheckRules(join(work, `rules-${n++}.yaml`), renderRuleFile(rule));
    expect(result.output).toMatch(row.accepts ? /SUCCESS/ : /FAILED/);
    expect(result.ok, result.output).toBe(row.accepts);
    const f = verdict({ rule });
    expect(f.inConfig, f.message).toBe(row.accepts);
  });
});

describe("promtool check config and selectMonitors agree", () => {
  it.each(RELABEL_CASES)("$name", (row) => {
    const monitor = monitorObject(row);
    const out = renderConfig(selectingServer(), {
      ...none,
      serviceMonitors: [{ object: monitor, namespaces: ["app"] }],
    });
    const result = promtoolCheckConfig(join(work, `config-${n++}`), out);
    expect(result.ok, result.output).toBe(row.accepts);
    const f = verdict({ monitor });
    expect(f.inConfig, f.message).toBe(row.accepts);
  });
});

describe("a server's feature flags: promtool with the same --enable-feature and selectMonitors agree", () => {
  // Rules judged for a server with spec.enableFeatures, and promtool check rules run with those flags.
  it.each<[string, string[]]>([
    ["limitk(1, up)", []],
    ["limitk(1, up)", ["promql-experimental-functions"]],
    ["mad_over_time(up[5m])", []],
    ["mad_over_time(up[5m])", ["promql-experimental-functions", "exemplar-storage"]],
    ["up + fill(0) up", []],
    ["up + fill(0) up", ["promql-binop-fill-modifiers"]],
  ])("%s with %j", (expr, enableFeatures) => {
    const rule = ruleObject({ name: "", accepts: true, group: { name: "g", rules: [{ alert: "A", expr }] } });
    const result = promtoolCheckRules(join(work, `flags-${n++}.yaml`), renderRuleFile(rule), enableFeatures);
    const server = selectingServer();
    const f = verdict({ rule }, { ...server, spec: { ...server.spec, enableFeatures } });
    expect(f.inConfig, `${f.message}\npromtool: ${result.output}`).toBe(result.ok);
  });
});

// The same rows for a server of an older release, against that release's own promtool: the rows' `accepts` are
// 3.16's verdicts, so here the check is that selectMonitors, judging for that release, gives its promtool's verdict.
describe.each(OLDER_PROMTOOL_RELEASES)(
  "for a %s server, that release's promtool and selectMonitors agree",
  (release) => {
    const binary = promtoolOf(release);
    const server = selectingServer(release);

    it.each(RULE_CASES)("rules: $name", (row) => {
      const rule = ruleObject(row);
      const result = promtoolCheckRules(join(work, `rules-${n++}.yaml`), renderRuleFile(rule), [], binary);
      const f = verdict({ rule }, server);
      expect(f.inConfig, `${f.message}\npromtool ${release}: ${result.output}`).toBe(result.ok);
    });

    it.each(RELABEL_CASES)("relabeling: $name", (row) => {
      const monitor = monitorObject(row);
      const out = renderConfig(server, {
        ...none,
        serviceMonitors: [{ object: monitor, namespaces: ["app"] }],
      });
      const result = promtoolCheckConfig(join(work, `config-${n++}`), out, binary);
      const f = verdict({ monitor }, server);
      expect(f.inConfig, `${f.message}\npromtool ${release}: ${result.output}`).toBe(result.ok);
    });
  },
);

/** A seeded generator (mulberry32), so the generated templates are the same on every run. */
function random(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Valid alert templates with one to three random edits each: deletions, insertions, copied pieces. */
function mutatedTemplates(count: number, seed: number): string[] {
  const valid = [
    "{{ $value | humanize }}",
    "{{ range $k, $v := $labels }}{{ $k }}={{ $v }} {{ end }}",
    "{{ if gt $value 1.0 }}high{{ else if lt $value 0.5 }}low{{ else }}mid{{ end }}",
    "{{ with $labels.job }}{{ . }}{{ else with $labels.x }}y{{ end }}",
    '{{ define "x" }}a{{ end }}{{ template "x" . }}',
    '{{ block "b" . }}{{ .Foo }}{{ end }}',
    '{{- /* c */ -}} {{ printf "%s\\t%d" $labels.job 3 }}',
    "{{ (index $labels \"a\").X }} {{ 'x' }} {{ 0x1p-2 }} {{ 1_000.5e1_0 }}",
    "{{ range $labels }}{{ if . }}{{ break }}{{ else }}{{ continue }}{{ end }}{{ end }}",
    "{{ $x := 1 }}{{ $x = 2 }}{{ $x }}",
    'a\n{{ $value }}\nb {{ "\\u00e9\\x41\\101" }}',
    '{{ `raw\n` | printf "%s" }}',
    "{{ and 1 (or 2 3) | not }}",
  ];
  const alphabet = "{}$.()|\"'`-=:,/* \n\tabcx019_ifendrangeelse";
  const rnd = random(seed);
  return Array.from({ length: count }, () => {
    let s = valid[rnd(valid.length)] as string;
    for (let edits = 1 + rnd(3); edits > 0; edits--) {
      const p = rnd(s.length + 1);
      const op = rnd(3);
      if (op === 0) s = s.slice(0, p) + s.slice(p + 1);
      else if (op === 1) s = s.slice(0, p) + alphabet[rnd(alphabet.length)] + s.slice(p);
      else {
        const q = rnd(s.length + 1);
        s = s.slice(0, p) + s.slice(q, q + 1 + rnd(6)) + s.slice(p);
      }
    }
    return s;
  });
}

describe("generated alert templates", () => {
  it("promtool and selectMonitors refuse the same ones", () => {
    const templates = mutatedTemplates(400, 29);
    const rules = templates.map((summary, i) => ({ alert: `A${i}`, expr: "up", annotations: { summary } }));
    const rule = ruleObject({ name: "generated", accepts: true, group: { name: "g", rules } });
    const result = promtoolCheckRules(join(work, "generated.yaml"), renderRuleFile(rule));
    const refusedByPromtool = new Set(
      [...result.output.matchAll(/rule (\d+), "A\d+"/g)].map((m) => Number(m[1]) - 1),
    );
    const disagreements = templates.flatMap((text, i) => {
      const alone = ruleObject({ name: "", accepts: true, group: { name: "g", rules: [rules[i] as never] } });
      const refusedByUs = !verdict({ rule: alone }).inConfig;
      return refusedByUs === refusedByPromtool.has(i)
        ? []
        : [`${JSON.stringify(text)}: promtool ${refusedByPromtool.has(i) ? "refuses" : "accepts"}`];
    });
    expect(refusedByPromtool.size).toBeGreaterThan(100);
    expect(refusedByPromtool.size).toBeLessThan(templates.length);
    expect(disagreements).toEqual([]);
  });
});
