// Checks that keep one bad monitor or rule from breaking a server's whole configuration: what Prometheus would
// refuse at load time (RE2 regular expressions, relabel_config rules, durations, rule fields), found before the
// configuration is written. Pure; each check returns a message naming the field, or undefined when it passes.
import { promqlError } from "@capstan/cli/promql";
import { RE2JS } from "re2js";
import type { RelabelConfig } from "../api/monitoring-common.ts";
import type { Rule, RuleGroup } from "../api/prometheus-rule.ts";

const DURATION_UNITS: [string, number][] = [
  ["y", 365 * 24 * 3600 * 1000],
  ["w", 7 * 24 * 3600 * 1000],
  ["d", 24 * 3600 * 1000],
  ["h", 3600 * 1000],
  ["m", 60 * 1000],
  ["s", 1000],
  ["ms", 1],
];
const DURATION = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** Milliseconds of a Prometheus duration ("30s", "1h30m", "15d", "0"), or undefined if Prometheus would refuse it. */
export function parsePrometheusDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (text === "") return undefined;
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  let total = 0;
  DURATION_UNITS.forEach(([, ms], i) => {
    const n = m[i + 1];
    if (n !== undefined) total += Number(n) * ms;
  });
  return total;
}

/**
 * Whether Prometheus (Go's regexp, RE2 syntax) accepts `regex`, which it anchors as `^(?s:regex)$`: the RE2 syntax
 * error, or undefined. JavaScript's RegExp is no judge: it takes lookaheads and backreferences RE2 refuses.
 */
export function re2Error(regex: string): string | undefined {
  try {
    // The bare expression first, so an error quotes the user's text, not the anchored wrapper.
    RE2JS.compile(regex);
    RE2JS.compile(`^(?s:${regex})$`);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const ACTIONS = new Set([
  "replace",
  "keep",
  "drop",
  "hashmod",
  "labelmap",
  "labeldrop",
  "labelkeep",
  "lowercase",
  "uppercase",
  "keepequal",
  "dropequal",
]);
const NEED_TARGET = new Set(["replace", "hashmod", "lowercase", "uppercase", "keepequal", "dropequal"]);

/**
 * What Prometheus's relabel_config validation would refuse in `rc` (`where` names it, e.g.
 * "endpoints[0].relabelings[1]"), or undefined. The regex is checked as RE2.
 */
export function relabelError(rc: RelabelConfig, where: string): string | undefined {
  const action = (rc.action ?? "replace").toLowerCase();
  if (!ACTIONS.has(action)) return `${where}: unknown action "${rc.action}"`;
  if (rc.regex !== undefined) {
    const err = re2Error(rc.regex);
    if (err !== undefined) return `invalid regex in ${where}: ${err}`;
  }
  if (action === "hashmod" && !rc.modulus) return `${where}: action hashmod needs a non-zero modulus`;
  if (NEED_TARGET.has(action) && !rc.targetLabel) return `${where}: action ${action} needs targetLabel`;
  if (action === "labeldrop" || action === "labelkeep") {
    const extra = (["sourceLabels", "targetLabel", "modulus", "separator", "replacement"] as const).filter(
      (k) => rc[k] !== undefined && !(k === "sourceLabels" && rc.sourceLabels?.length === 0),
    );
    if (extra.length > 0) return `${where}: action ${action} takes only regex, not ${extra.join(", ")}`;
  }
  if (action === "keepequal" || action === "dropequal") {
    const extra = (["regex", "modulus", "separator", "replacement"] as const).filter(
      (k) => rc[k] !== undefined,
    );
    if (extra.length > 0) {
      return `${where}: action ${action} takes only sourceLabels and targetLabel, not ${extra.join(", ")}`;
    }
  }
  return undefined;
}

/** Whether the Go template `text` (an alert label or annotation) has balanced `{{` and `}}`; the problem or undefined. */
export function templateShapeError(text: string): string | undefined {
  let inAction = false;
  for (let i = 0; i < text.length; i++) {
    const two = text.slice(i, i + 2);
    if (!inAction) {
      if (two === "{{") {
        inAction = true;
        i++;
      }
      continue;
    }
    const ch = text[i] as string;
    if (ch === '"' || ch === "`") {
      // A string inside an action may hold braces: skip it.
      const start = i;
      i++;
      while (i < text.length && text[i] !== ch) {
        if (ch === '"' && text[i] === "\\") i++;
        i++;
      }
      if (i >= text.length) return `unterminated string starting at offset ${start}`;
    } else if (two === "}}") {
      inAction = false;
      i++;
    } else if (two === "{{") {
      return `'{{' at offset ${i} inside an action`;
    }
  }
  return inAction ? "unclosed '{{'" : undefined;
}

/**
 * What Prometheus would refuse in one rule group of a PrometheusRule, or undefined. Messages name the group and
 * the rule ("PromQL parse error in group g rule 2 (alert X): unexpected end of input at 1:14"), rules counted
 * from 1. PromQL is checked by @capstan/cli/promql (the Prometheus project's own grammar).
 */
export function ruleGroupError(group: RuleGroup): string | undefined {
  const g = `group ${JSON.stringify(group.name)}`;
  if (!group.name) return "a rule group has no name";
  if (group.interval !== undefined && !parsePrometheusDuration(group.interval)) {
    return `${g}: interval "${group.interval}" is not a positive Prometheus duration`;
  }
  if (group.query_offset !== undefined && parsePrometheusDuration(group.query_offset) === undefined) {
    return `${g}: query_offset "${group.query_offset}" is not a Prometheus duration`;
  }
  for (const [i, rule] of (group.rules ?? []).entries()) {
    const err = ruleError(rule);
    if (err !== undefined) {
      const name = rule.alert ? ` (alert ${rule.alert})` : rule.record ? ` (record ${rule.record})` : "";
      return err.startsWith("PromQL")
        ? `PromQL parse error in ${g} rule ${i + 1}${name}: ${err.slice("PromQL: ".length)}`
        : `${g} rule ${i + 1}${name}: ${err}`;
    }
  }
  return undefined;
}

function ruleError(rule: Rule): string | undefined {
  if (!rule.alert === !rule.record) return "set exactly one of alert and record";
  if (typeof rule.expr !== "number") {
    if ((rule.expr ?? "").trim() === "") return "expr is empty";
    const err = promqlError(rule.expr ?? "");
    if (err !== undefined) return `PromQL: ${err}`;
  }
  if (rule.record) {
    for (const field of ["for", "keep_firing_for", "annotations"] as const) {
      if (rule[field] !== undefined) return `a recording rule takes no ${field}`;
    }
  }
  for (const field of ["for", "keep_firing_for"] as const) {
    const v = rule[field];
    if (v !== undefined && parsePrometheusDuration(v) === undefined) {
      return `${field} "${v}" is not a Prometheus duration`;
    }
  }
  if (rule.alert) {
    for (const field of ["labels", "annotations"] as const) {
      for (const [k, v] of Object.entries(rule[field] ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
        const err = templateShapeError(v);
        if (err !== undefined) return `template error in ${field}.${k}: ${err}`;
      }
    }
  }
  return undefined;
}
