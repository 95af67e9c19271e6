// The rule and relabeling checks (validate.ts, through selectMonitors) over the table of validation-cases.ts: every
// row gets the verdict Prometheus 3.16 gives it (validate.real.test.ts checks that against the real promtool), a
// refused row says where and why; and the checks that depend on the server's Prometheus version.
import { describe, expect, it } from "vitest";
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
});
