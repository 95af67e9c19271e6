// The rule and relabeling checks (validate.ts, through selectMonitors) over the table of validation-cases.ts: every
// row gets the verdict Prometheus 3.16 gives it (validate.real.test.ts checks that against the real promtool), a
// refused row says where and why; and the checks that depend on the server's Prometheus version.
import { RE2JS } from "re2js";
import { describe, expect, it, vi } from "vitest";
import { bindingFor, withBinding } from "./bindings.ts";
import { RE2_VERDICTS_KEPT, re2Error } from "./validate.ts";
import { RELABEL_CASES, RULE_CASES } from "./validation-cases.ts";
import { monitorObject, ruleObject, selectingServer, verdict } from "./validation-verdicts.ts";

describe("rule rows", () => {
  it.each(RULE_CASES)("$name", (row) => {
    const f = verdict({ rule: ruleObject(row) });
    expect(f.inConfig, f.message).toBe(row.accepts);
    if (!row.accepts) {
      expect(f.reason).toBe("InvalidRules");
      expect(f.message).toContain(row.message ?? "");
    }
  });
});

describe("relabeling rows", () => {
  it.each(RELABEL_CASES)("$name", (row) => {
    const f = verdict({ monitor: monitorObject(row) });
    expect(f.inConfig, f.message).toBe(row.accepts);
    if (!row.accepts) {
      expect(["InvalidRelabeling", "InvalidRegex"]).toContain(f.reason);
      expect(f.message).toContain(`endpoints[0].${row.list ?? "relabelings"}[0]`);
      expect(f.message).toContain(row.message ?? "");
    }
  });
});

describe("checks by the server's Prometheus version", () => {
  const alert = (summary: string) =>
    ruleObject({
      name: "",
      accepts: true,
      group: { name: "g", rules: [{ alert: "A", expr: "up", annotations: { summary } }] },
    });
  const record = (name: string) =>
    ruleObject({ name: "", accepts: true, group: { name: "g", rules: [{ record: name, expr: "up" }] } });

  it.each<[string, string, boolean]>([
    ["3.5.0", "{{ now }}", false],
    ["3.6.0", "{{ now }}", true],
    ["3.6.0", "{{ toDuration 1 }}", true],
    ["3.7.2", "{{ urlQueryEscape $labels.job }}", false],
    ["3.8.0", "{{ urlQueryEscape $labels.job }}", true],
    ["3.0.0", "{{ humanizeDuration $value }}", true],
  ])("Prometheus %s: %s accepted: %s", (version, summary, accepted) => {
    const f = verdict({ rule: alert(summary) }, selectingServer(version));
    expect(f.inConfig, f.message).toBe(accepted);
    if (!accepted) expect(f.message).toContain(`(Prometheus ${version})`);
  });

  it.each<[string, boolean]>([
    ["3.1.0", true],
    ["3.2.0", false],
  ])("Prometheus %s: braces in a recording rule name accepted: %s", (version, accepted) => {
    expect(verdict({ rule: record("up{a}") }, selectingServer(version)).inConfig).toBe(accepted);
  });

  const expr = (e: string) =>
    ruleObject({ name: "", accepts: true, group: { name: "g", rules: [{ alert: "A", expr: e }] } });

  // PromQL by the server's release, with no feature flags (spec.enableFeatures unset).
  it.each<[string, string, string | undefined]>([
    ["3.5.0", "first_over_time(up[5m])", "it came in 3.7.0"],
    ["3.5.4", "ts_of_max_over_time(up[5m])", "needs --enable-feature=promql-experimental-functions"],
    ["3.13.0", "first_over_time(up[5m])", "needs --enable-feature=promql-experimental-functions"],
    ["3.14.0", "first_over_time(up[5m])", undefined],
    ["3.5.0", "rate(up[5m+1m])", "needs --enable-feature=promql-duration-expr"],
    ["3.14.0", "rate(up[5m+1m])", undefined],
    ["3.15.0", "rate(up[5m] anchored)", "needs --enable-feature=promql-extended-range-selectors"],
    ["3.16.0", "rate(up[5m] anchored)", undefined],
    ["3.16.0", "limitk(1, up)", "promql-experimental-functions"],
    ["3.0.0", "histogram_avg(rate(x[5m]))", undefined],
  ])("Prometheus %s: %s refused for: %s", (version, e, refusal) => {
    const f = verdict({ rule: expr(e) }, selectingServer(version));
    expect(f.inConfig, f.message).toBe(refusal === undefined);
    if (refusal !== undefined) {
      expect(f.reason).toBe("InvalidRules");
      expect(f.message).toContain('PromQL parse error in group "g" rule 1 (alert A)');
      expect(f.message).toContain(`Prometheus ${version}`);
      expect(f.message).toContain(refusal);
    }
  });

  // ...and with the server's spec.enableFeatures: the flags that gate PromQL let their constructs through.
  it.each<[string, string[], string, string | undefined]>([
    ["3.16.0", ["promql-experimental-functions"], "limitk(1, up)", undefined],
    ["3.16.0", ["promql-experimental-functions"], "mad_over_time(up[5m])", undefined],
    ["3.16.0", [], "mad_over_time(up[5m])", "needs --enable-feature=promql-experimental-functions"],
    ["3.16.0", ["exemplar-storage"], 'sort_by_label(up, "job")', "promql-experimental-functions"],
    ["3.13.0", ["promql-experimental-functions"], "first_over_time(up[5m])", undefined],
    ["3.5.0", ["promql-duration-expr"], "rate(up[5m+1m])", undefined],
    ["3.7.0", ["promql-extended-range-selectors"], "rate(up[5m] smoothed)", undefined],
    ["3.10.0", ["promql-binop-fill-modifiers"], "up + fill(0) up", undefined],
    ["3.10.0", [], "up + fill(0) up", "promql-binop-fill-modifiers"],
    // A flag does not bring a function the release lacks.
    ["3.5.0", ["promql-experimental-functions"], "first_over_time(up[5m])", "it came in 3.7.0"],
  ])("Prometheus %s with %j: %s refused for: %s", (version, enableFeatures, e, refusal) => {
    const f = verdict(
      { rule: expr(e) },
      { ...selectingServer(version), spec: { ...selectingServer(version).spec, enableFeatures } },
    );
    expect(f.inConfig, f.message).toBe(refusal === undefined);
    if (refusal !== undefined) expect(f.message).toContain(refusal);
  });

  it("one PrometheusRule, two servers of different releases: each judges it for itself, on its own binding", () => {
    const rule = expr("first_over_time(up[5m]) > 0");
    const lts = { ...selectingServer("3.5.0"), metadata: { name: "lts", namespace: "monitoring" } };
    const current = { ...selectingServer("3.16.0"), metadata: { name: "current", namespace: "monitoring" } };
    const onLts = verdict({ rule }, lts);
    const onCurrent = verdict({ rule }, current);
    // The 3.5 server leaves it out of its configuration (its other rules still load); the 3.16 one loads it.
    expect(onLts).toMatchObject({ inConfig: false, reason: "InvalidRules" });
    expect(onLts.message).toContain('unknown function with name "first_over_time"');
    expect(onLts.message).toContain("Prometheus 3.5.0 does not have it: it came in 3.7.0");
    expect(onCurrent).toMatchObject({ inConfig: true, reason: "Accepted" });
    // The rule's status holds one binding per server, each with that server's verdict (its pods run the configuration).
    const now = "2026-12-01T10:00:00Z";
    const loaded = { loaded: true } as const;
    let status = withBinding(undefined, bindingFor(lts, onLts, undefined, loaded, now));
    status = withBinding(status, bindingFor(current, onCurrent, status, loaded, now));
    expect(
      status.bindings?.map((b) => [b.name, b.conditions?.[0]?.status, b.conditions?.[0]?.reason]),
    ).toEqual([
      ["lts", "False", "InvalidRules"],
      ["current", "True", "Accepted"],
    ]);
  });
});

describe("re2Error", () => {
  it("compiles each regex once: a verdict, accepted or refused, is remembered, the oldest forgotten past the bound", () => {
    const compile = vi.spyOn(RE2JS, "compile");
    try {
      const ok = `memo_${Date.now()}_(a|b)+`;
      const bad = `memo_${Date.now()}_(?=lookahead)`;
      expect(re2Error(ok)).toBeUndefined();
      const refused = re2Error(bad);
      expect(refused).toBeDefined();
      const calls = compile.mock.calls.length;
      expect(re2Error(ok)).toBeUndefined();
      expect(re2Error(bad)).toBe(refused);
      expect(compile.mock.calls.length).toBe(calls);
      // Past the bound the oldest verdicts are dropped (and recomputed when asked again): memory stays bounded.
      for (let i = 0; i < RE2_VERDICTS_KEPT; i++) re2Error(`memo_fill_${i}`);
      const before = compile.mock.calls.length;
      expect(re2Error(ok)).toBeUndefined();
      expect(compile.mock.calls.length).toBeGreaterThan(before);
    } finally {
      compile.mockRestore();
    }
  });
});
