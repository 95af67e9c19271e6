// Checks that keep one bad monitor or rule from breaking a server's whole configuration: what Prometheus would
// refuse at load time (RE2 regular expressions, relabel_config rules, durations, rule fields, the Go templates of
// alerts), found before the configuration is written, with Prometheus' own rules for the version the server runs
// (3.x; where a rule changed within 3.x, per version). Pure; each check returns a message naming the place (group
// and rule, or endpoint and relabeling), the field and what Prometheus says, or undefined when it passes.
import { atLeast, promqlError } from "@capstan/promql";
import { RE2JS } from "re2js";
import type { RelabelConfig } from "../api/monitoring-common.ts";
import { DEFAULT_PROMETHEUS_VERSION } from "../api/prometheus.ts";
import type { Rule, RuleGroup } from "../api/prometheus-rule.ts";
import { goTemplateError } from "./go-template.ts";
import { parsePrometheusDuration } from "./prometheus-duration.ts";

/** How many regexes' verdicts re2Error remembers (the oldest is forgotten first). */
export const RE2_VERDICTS_KEPT = 4096;
/** How many PromQL expressions' verdicts the rule checks remember, per version and feature flags. */
export const PROMQL_VERDICTS_KEPT = 16_384;
const re2Verdicts = new Map<string, string | undefined>();
const promqlVerdicts = new Map<string, string | undefined>();

/**
 * `check()`, remembered in `verdicts` under `key` (at most `kept` of them, the oldest forgotten first). For the pure
 * checks that are most of a selection's cost (compiling RE2, parsing PromQL): every reconcile judges every selected
 * monitor and rule again, and the same ones come back each time (bench/prometheus-scale.ts).
 */
function remembered(
  verdicts: Map<string, string | undefined>,
  kept: number,
  key: string,
  check: () => string | undefined,
): string | undefined {
  if (verdicts.has(key)) return verdicts.get(key);
  const verdict = check();
  if (verdicts.size >= kept) verdicts.delete(verdicts.keys().next().value as string);
  verdicts.set(key, verdict);
  return verdict;
}

/**
 * Whether Prometheus (Go's regexp, RE2 syntax) accepts `regex`, which it anchors as `^(?s:regex)$`: the RE2 syntax
 * error, or undefined. JavaScript's RegExp is no judge: it takes lookaheads and backreferences RE2 refuses.
 * Verdicts are remembered by regex.
 */
export function re2Error(regex: string): string | undefined {
  return remembered(re2Verdicts, RE2_VERDICTS_KEPT, regex, () => {
    try {
      // The bare expression first, so an error quotes the user's text, not the anchored wrapper.
      RE2JS.compile(regex);
      RE2JS.compile(`^(?s:${regex})$`);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  });
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
/** relabel_config's defaults in Prometheus: what a field left out means. */
const DEFAULT_SEPARATOR = ";";
const DEFAULT_REPLACEMENT = "$1";

/** A label name under Prometheus 3's UTF-8 name validation (the configuration sets no other scheme): not empty. */
const validLabelName = (name: string) => name !== "" && name.isWellFormed();

/**
 * A relabeling as Prometheus reads it from the configuration: the fields config.ts writes (an empty sourceLabels,
 * targetLabel or regex and a zero modulus are left out), with Prometheus' defaults for the rest. `regexSet` says
 * whether a regex was written at all: Prometheus tells its own default apart from a regex spelled like it.
 * validate.real.test.ts runs the rendered configuration through promtool, so the two cannot drift apart unseen.
 */
function asPrometheusReadsIt(rc: RelabelConfig) {
  return {
    action: (rc.action || "replace").toLowerCase(),
    sourceLabelsSet: (rc.sourceLabels?.length ?? 0) > 0,
    separator: rc.separator ?? DEFAULT_SEPARATOR,
    targetLabel: rc.targetLabel ?? "",
    regexSet: !!rc.regex,
    modulus: rc.modulus ?? 0,
    replacement: rc.replacement ?? DEFAULT_REPLACEMENT,
  };
}

/**
 * What Prometheus' relabel_config validation (the same in every 3.x) would refuse in `rc` once rendered (`where`
 * names it, e.g. "endpoints[0].relabelings[1]"), in Prometheus' words, or undefined. The regex is checked as RE2.
 */
export function relabelError(rc: RelabelConfig, where: string): string | undefined {
  const r = asPrometheusReadsIt(rc);
  const action = r.action;
  if (!ACTIONS.has(action)) return `${where}: unknown relabel action "${rc.action}"`;
  if (rc.regex !== undefined) {
    const err = re2Error(rc.regex);
    if (err !== undefined) return `invalid regex in ${where}: ${err}`;
  }
  if (action === "hashmod" && r.modulus === 0) {
    return `${where}: relabel configuration for hashmod requires non-zero modulus (set modulus)`;
  }
  if (NEED_TARGET.has(action) && r.targetLabel === "") {
    return `${where}: relabel configuration for ${action} action requires 'target_label' value (set targetLabel)`;
  }
  if (NEED_TARGET.has(action) && !validLabelName(r.targetLabel)) {
    return `${where}: ${JSON.stringify(r.targetLabel)} is invalid 'target_label' for ${action} action`;
  }
  const valueOnly = ["lowercase", "uppercase", "keepequal", "dropequal"].includes(action);
  if (valueOnly && r.replacement !== DEFAULT_REPLACEMENT) {
    return `${where}: 'replacement' can not be set for ${action} action (replacement is ${JSON.stringify(r.replacement)}; leave it out)`;
  }
  if (action === "labelmap" && !validLabelName(r.replacement)) {
    return `${where}: ${JSON.stringify(r.replacement)} is invalid 'replacement' for labelmap action`;
  }
  const notDefault = {
    sourceLabels: r.sourceLabelsSet,
    targetLabel: r.targetLabel !== "",
    regex: r.regexSet,
    modulus: r.modulus !== 0,
    separator: r.separator !== DEFAULT_SEPARATOR,
    replacement: r.replacement !== DEFAULT_REPLACEMENT,
  };
  const extra = (fields: (keyof typeof notDefault)[]) => fields.filter((f) => notDefault[f]).join(", ");
  if (action === "keepequal" || action === "dropequal") {
    const fields = extra(["regex", "modulus", "separator", "replacement"]);
    if (fields !== "") {
      return `${where}: ${action} action requires only 'source_labels' and \`target_label\`, and no other fields (${fields})`;
    }
  }
  if (action === "labeldrop" || action === "labelkeep") {
    const fields = extra(["sourceLabels", "targetLabel", "modulus", "separator", "replacement"]);
    if (fields !== "")
      return `${where}: ${action} action requires only 'regex', and no other fields (${fields})`;
  }
  return undefined;
}

// ---- rules ----

/**
 * The functions of Prometheus' alert templates (the function map of its template package, without `tmpl`, which
 * only console templates get), by the version that added them.
 */
const ALERT_TEMPLATE_FUNCTIONS: [since: string, names: string[]][] = [
  [
    "3.0.0",
    [
      "query",
      "first",
      "label",
      "value",
      "strvalue",
      "args",
      "reReplaceAll",
      "safeHtml",
      "match",
      "title",
      "toUpper",
      "toLower",
      "graphLink",
      "tableLink",
      "sortByLabel",
      "stripPort",
      "stripDomain",
      "humanize",
      "humanize1024",
      "humanizeDuration",
      "humanizePercentage",
      "humanizeTimestamp",
      "toTime",
      "pathPrefix",
      "externalURL",
      "parseDuration",
    ],
  ],
  ["3.6.0", ["now", "toDuration"]],
  ["3.8.0", ["urlQueryEscape"]],
];
/** Variables Prometheus declares before an alert's label or annotation template. */
const ALERT_TEMPLATE_VARIABLES = ["$labels", "$externalLabels", "$externalURL", "$value"];
/** From this version on, a recording rule's name may not hold braces. */
const RECORD_BRACES_REFUSED_SINCE = "3.2.0";

const functionsByVersion = new Map<string, ReadonlySet<string>>();
function alertTemplateFunctions(version: string): ReadonlySet<string> {
  let set = functionsByVersion.get(version);
  if (set === undefined) {
    set = new Set(
      ALERT_TEMPLATE_FUNCTIONS.filter(([since]) => atLeast(version, since)).flatMap(([, n]) => n),
    );
    functionsByVersion.set(version, set);
  }
  return set;
}

/**
 * Whether Prometheus `version` parses `text` as a label or annotation template of alert `alert` (Go's
 * text/template with Prometheus' functions and variables; go-template.ts): the problem, or undefined.
 */
export function alertTemplateError(text: string, alert: string, version: string): string | undefined {
  const err = goTemplateError(text, {
    name: `__alert_${alert}`,
    functions: alertTemplateFunctions(version),
    variables: ALERT_TEMPLATE_VARIABLES,
  });
  return err === undefined ? undefined : `${err.message} at line ${err.line} (Prometheus ${version})`;
}

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** What Prometheus refuses in a set of rule or group labels: the problem, or undefined. */
function labelsError(labels: Record<string, string> | undefined): string | undefined {
  for (const [k, v] of Object.entries(labels ?? {}).sort(byKey)) {
    if (!validLabelName(k) || k === "__name__") return `labels: invalid label name ${JSON.stringify(k)}`;
    if (!String(v).isWellFormed()) return `labels.${k}: invalid label value (not UTF-8)`;
  }
  return undefined;
}

/**
 * What Prometheus `version` (default: the operator's default) would refuse in one rule group of a
 * PrometheusRule, or undefined. Messages name the group and the rule, counted from 1, and the field
 * ('group "g" rule 2 (alert X): template annotations.summary: function "humanise" not defined at line 1
 * (Prometheus 3.16.0)'). PromQL is checked by @capstan/promql (the Prometheus project's own grammar) for that
 * version with the server's `--enable-feature` flags (`features`, spec.enableFeatures; default none), so a function
 * newer than the server's release, or one behind a flag the server does not run with, is refused here instead of
 * breaking the reload.
 */
export function ruleGroupError(
  group: RuleGroup,
  version = DEFAULT_PROMETHEUS_VERSION,
  features: readonly string[] = [],
): string | undefined {
  const g = `group ${JSON.stringify(group.name)}`;
  if (!group.name) return "a rule group has no name";
  if (group.interval !== undefined && !parsePrometheusDuration(group.interval)) {
    return `${g}: interval "${group.interval}" is not a positive Prometheus duration`;
  }
  if (group.query_offset !== undefined && parsePrometheusDuration(group.query_offset) === undefined) {
    return `${g}: query_offset "${group.query_offset}" is not a Prometheus duration`;
  }
  const labels = labelsError(group.labels);
  if (labels !== undefined) return `${g}: ${labels}`;
  for (const [i, rule] of (group.rules ?? []).entries()) {
    const err = ruleError(rule, version, features);
    if (err !== undefined) {
      const name = rule.alert ? ` (alert ${rule.alert})` : rule.record ? ` (record ${rule.record})` : "";
      return err.startsWith("PromQL")
        ? `PromQL parse error in ${g} rule ${i + 1}${name}: ${err.slice("PromQL: ".length)}`
        : `${g} rule ${i + 1}${name}: ${err}`;
    }
  }
  return undefined;
}

function ruleError(rule: Rule, version: string, features: readonly string[]): string | undefined {
  if (!rule.alert === !rule.record) return "set exactly one of alert and record";
  if (typeof rule.expr !== "number") {
    if ((rule.expr ?? "").trim() === "") return "expr is empty";
    const expr = rule.expr ?? "";
    const err = remembered(
      promqlVerdicts,
      PROMQL_VERDICTS_KEPT,
      `${version}\n${features.join(",")}\n${expr}`,
      () => promqlError(expr, { version, features }),
    );
    if (err !== undefined) return `PromQL: ${err}`;
  }
  for (const field of ["for", "keep_firing_for"] as const) {
    const v = rule[field];
    if (v !== undefined && parsePrometheusDuration(v) === undefined) {
      return `${field} "${v}" is not a Prometheus duration`;
    }
  }
  if (rule.record) {
    // Prometheus refuses what would matter only: a non-zero duration, a non-empty map.
    for (const field of ["for", "keep_firing_for"] as const) {
      const v = rule[field];
      if (v !== undefined && parsePrometheusDuration(v) !== 0) return `a recording rule takes no ${field}`;
    }
    if (Object.keys(rule.annotations ?? {}).length > 0) return "a recording rule takes no annotations";
    if (!rule.record.isWellFormed()) return "record: invalid recording rule name (not UTF-8)";
    if (/[{}]/.test(rule.record) && atLeast(version, RECORD_BRACES_REFUSED_SINCE)) {
      return `record: braces in the recording rule name, which Prometheus ${version} refuses (should they be in expr?)`;
    }
  }
  const labels = labelsError(rule.labels);
  if (labels !== undefined) return labels;
  for (const k of Object.keys(rule.annotations ?? {}).sort()) {
    if (!validLabelName(k)) return `annotations: invalid annotation name ${JSON.stringify(k)}`;
  }
  if (rule.alert) {
    for (const field of ["labels", "annotations"] as const) {
      for (const [k, v] of Object.entries(rule[field] ?? {}).sort(byKey)) {
        const err = alertTemplateError(String(v), rule.alert, version);
        if (err !== undefined) return `template ${field}.${k}: ${err}`;
      }
    }
  }
  return undefined;
}
