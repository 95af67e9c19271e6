// The table behind the rule and relabeling checks of validate.ts (issue 29, items 1 and 2): each row is a rule group
// or a relabel_config with the verdict Prometheus 3.16's promtool gives it once the operator has rendered it
// (`check rules` on the rule file, `check config` on the scrape configuration). validate.test.ts runs every row
// through selectMonitors; validate.real.test.ts runs every row through the real promtool as well, so the table,
// the validator and Prometheus agree. `message` is part of what the validator says about a refused row. Test support.
import type { RelabelConfig } from "../api/monitoring-common.ts";
import type { Rule, RuleGroup } from "../api/prometheus-rule.ts";

export interface RuleCase {
  name: string;
  group: RuleGroup;
  accepts: boolean;
  /** Part of the validator's message for a refused row. */
  message?: string;
}

export interface RelabelCase {
  name: string;
  relabeling: RelabelConfig;
  /** Where the relabeling goes (default relabelings: the target's relabel_configs). */
  list?: "relabelings" | "metricRelabelings";
  accepts: boolean;
  message?: string;
}

/** A group with one alert whose `summary` annotation is `template`. */
const annotation = (template: string): RuleGroup => ({
  name: "g",
  rules: [{ alert: "A", expr: "up == 0", annotations: { summary: template } }],
});

/** A group with one recording rule `rule` (record and expr defaulted). */
const recording = (rule: Partial<Rule> = {}): RuleGroup => ({
  name: "g",
  rules: [{ record: "job:up:sum", expr: "sum by (job) (up)", ...rule }],
});

/** One row per Prometheus template or rule-field verdict. */
export const RULE_CASES: RuleCase[] = [
  // Go templates of alert labels and annotations: what text/template's parser refuses.
  { name: "humanize in a pipeline", group: annotation("{{ $value | humanize }}"), accepts: true },
  {
    name: "an undefined function (humanise)",
    group: annotation("{{ humanise $value }}"),
    accepts: false,
    message: 'annotations.summary: function "humanise" not defined',
  },
  {
    name: "the four predefined variables",
    group: annotation("{{ $labels.job }} {{ $externalLabels.cluster }} {{ $externalURL }} {{ $value }}"),
    accepts: true,
  },
  {
    name: "an undefined variable ($lables)",
    group: annotation("{{ $lables.job }}"),
    accepts: false,
    message: 'undefined variable "$lables"',
  },
  { name: "a variable declared before use", group: annotation("{{ $x := 1 }}{{ $x }}"), accepts: true },
  {
    name: "an unclosed {{if}}",
    group: annotation("{{ if gt $value 1.0 }}high"),
    accepts: false,
    message: "unexpected EOF",
  },
  {
    name: "if, else and end",
    group: annotation("{{ if gt $value 1.0 }}high{{ else }}low{{ end }}"),
    accepts: true,
  },
  {
    name: "else if chains",
    group: annotation('{{ if eq $labels.a "x" }}x{{ else if eq $labels.a "y" }}y{{ else }}z{{ end }}'),
    accepts: true,
  },
  {
    name: "an {{end}} with nothing to end",
    group: annotation("a{{ end }}"),
    accepts: false,
    message: "{{end}}",
  },
  { name: "an {{else}} outside if", group: annotation("{{ else }}"), accepts: false, message: "{{else}}" },
  { name: "an unclosed action", group: annotation("{{ $value "), accepts: false, message: "unclosed action" },
  { name: "braces inside a string", group: annotation('{{ "}}" }} and {{ `{{` }}'), accepts: true },
  {
    name: "range declaring key and value",
    group: annotation("{{ range $k, $v := $labels }}{{ $k }}={{ $v }} {{ end }}"),
    accepts: true,
  },
  {
    name: "a range variable used after its end",
    group: annotation("{{ range $k, $v := $labels }}{{ end }}{{ $k }}"),
    accepts: false,
    message: 'undefined variable "$k"',
  },
  { name: "with and dot", group: annotation("{{ with $labels.job }}{{ . }}{{ end }}"), accepts: true },
  {
    name: "a dash in a label name after a dot",
    group: annotation("{{ $labels.job-name }}"),
    accepts: false,
    message: "bad character U+002D '-'",
  },
  {
    name: "index for a label name with a dash",
    group: annotation('{{ index $labels "job-name" }}'),
    accepts: true,
  },
  {
    name: "break outside range",
    group: annotation("{{ break }}"),
    accepts: false,
    message: "{{break}} outside {{range}}",
  },
  { name: "break inside range", group: annotation("{{ range $labels }}{{ break }}{{ end }}"), accepts: true },
  { name: "a comment", group: annotation("{{/* a comment */}}ok {{- /* trimmed */ -}} ok"), accepts: true },
  {
    name: "a comment not right after the delimiter",
    group: annotation("{{ /* not a comment */ }}"),
    accepts: false,
    message: 'unexpected "/"',
  },
  { name: "trim markers", group: annotation("a {{- $value -}} b"), accepts: true },
  {
    name: "a dash without a space is a number",
    group: annotation("{{-$value}}"),
    accepts: false,
    message: 'illegal number syntax: "-"',
  },
  { name: "printf with a format", group: annotation('{{ printf "%.2f" $value }}'), accepts: true },
  {
    name: "a constant after a pipe",
    group: annotation("{{ $value | 2 }}"),
    accepts: false,
    message: "non executable command in pipeline stage 2",
  },
  { name: "a trailing pipe", group: annotation('{{ $value | printf "%.1f" | }}'), accepts: true },
  {
    name: "a define body does not see $labels",
    group: annotation('{{ define "x" }}{{ $labels.job }}{{ end }}'),
    accepts: false,
    message: 'undefined variable "$labels"',
  },
  {
    name: "a template call to an unknown name",
    group: annotation('{{ template "nowhere" }}'),
    accepts: true,
  },
  {
    name: "an unknown escape in a string",
    group: annotation('{{ "\\q" }}'),
    accepts: false,
    message: "invalid syntax",
  },
  {
    name: "two characters in a character constant",
    group: annotation("{{ 'ab' }}"),
    accepts: false,
    message: "malformed character constant",
  },
  { name: "a bad octal number", group: annotation("{{ 08 }}"), accepts: false, message: '"08"' },
  { name: "hex and float numbers", group: annotation("{{ 0x1F }} {{ 1.5e3 }} {{ 'a' }}"), accepts: true },
  {
    name: "functions of Prometheus 3.6 and 3.8",
    group: annotation("{{ urlQueryEscape $labels.job }} {{ toDuration $value }} {{ now }}"),
    accepts: true,
  },
  {
    name: "tmpl exists only for console templates",
    group: annotation('{{ tmpl "x" . }}'),
    accepts: false,
    message: 'function "tmpl" not defined',
  },
  { name: "assigning an undeclared variable parses", group: annotation("{{ $y = 1 }}"), accepts: true },
  {
    name: "a dot with no field",
    group: annotation("{{ $labels. }}"),
    accepts: false,
    message: "unexpected <.> in operand",
  },
  {
    name: "a template in an alert label",
    group: { name: "g", rules: [{ alert: "A", expr: "up", labels: { severity: "{{ humanise 1 }}" } }] },
    accepts: false,
    message: 'labels.severity: function "humanise" not defined',
  },
  {
    name: "labels of a recording rule are not templates",
    group: recording({ labels: { x: "{{ humanise }}" } }),
    accepts: true,
  },
  {
    name: "an unclosed left paren",
    group: annotation("{{ (humanize $value }}"),
    accepts: false,
    message: "unclosed left paren",
  },
  {
    name: "a nested action",
    group: annotation("{{ {{ $value }}"),
    accepts: false,
    message: 'unexpected "{"',
  },
  // Rule fields.
  { name: "a recording rule with colons", group: recording(), accepts: true },
  {
    name: "a recording rule name with a dash (UTF-8 names)",
    group: recording({ record: "job-up" }),
    accepts: true,
  },
  {
    name: "braces in a recording rule name",
    group: recording({ record: 'up{job="a"}' }),
    accepts: false,
    message: "braces",
  },
  { name: "for: 0s on a recording rule", group: recording({ for: "0s" }), accepts: true },
  { name: "empty annotations on a recording rule", group: recording({ annotations: {} }), accepts: true },
  {
    name: "for on a recording rule",
    group: recording({ for: "5m" }),
    accepts: false,
    message: "a recording rule takes no for",
  },
  {
    name: "annotations on a recording rule",
    group: recording({ annotations: { a: "b" } }),
    accepts: false,
    message: "a recording rule takes no annotations",
  },
  {
    name: "a __name__ label",
    group: recording({ labels: { __name__: "x" } }),
    accepts: false,
    message: 'labels: invalid label name "__name__"',
  },
  {
    name: "an empty label name",
    group: { name: "g", rules: [{ alert: "A", expr: "up", labels: { "": "x" } }] },
    accepts: false,
    message: 'labels: invalid label name ""',
  },
  {
    name: "an empty annotation name",
    group: { name: "g", rules: [{ alert: "A", expr: "up", annotations: { "": "x" } }] },
    accepts: false,
    message: 'annotations: invalid annotation name ""',
  },
  {
    name: "a __name__ group label",
    group: { name: "g", labels: { __name__: "x" }, rules: [{ record: "r", expr: "up" }] },
    accepts: false,
    message: 'group "g": labels: invalid label name "__name__"',
  },
  { name: "label names with dots and dashes", group: recording({ labels: { "a.b-c": "x" } }), accepts: true },
];

/** One row per relabel_config verdict (Prometheus' relabel.Config validation, on the rendered configuration). */
export const RELABEL_CASES: RelabelCase[] = [
  {
    name: "lowercase with a replacement",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "lowercase", replacement: "x" },
    accepts: false,
    message: "'replacement' can not be set for lowercase action",
  },
  {
    name: "lowercase with an empty replacement",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "lowercase", replacement: "" },
    accepts: false,
    message: "replacement",
  },
  {
    name: "Uppercase (any case) with a replacement",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a relabel replacement, not a JS template.
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "Uppercase", replacement: "${1}" },
    accepts: false,
    message: "'replacement' can not be set for uppercase action",
  },
  {
    name: "uppercase spelling out replacement $1",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "uppercase", replacement: "$1" },
    accepts: true,
  },
  {
    name: "lowercase without a replacement",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "lowercase" },
    accepts: true,
  },
  {
    name: "lowercase with a replacement, in metricRelabelings",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "lowercase", replacement: "x" },
    list: "metricRelabelings",
    accepts: false,
    message: "metricRelabelings[0]",
  },
  {
    name: "labeldrop spelling out separator, replacement and regex",
    relabeling: { action: "labeldrop", regex: "(.*)", separator: ";", replacement: "$1" },
    accepts: true,
  },
  {
    name: "labelkeep spelling out separator",
    relabeling: { action: "labelkeep", regex: "__.*|job|instance", separator: ";" },
    accepts: true,
  },
  {
    name: "labeldrop with another separator",
    relabeling: { action: "labeldrop", regex: "tmp_.*", separator: "," },
    accepts: false,
    message: "labeldrop action requires only 'regex', and no other fields",
  },
  {
    name: "labeldrop with a replacement",
    relabeling: { action: "labeldrop", regex: "tmp_.*", replacement: "x" },
    accepts: false,
    message: "replacement",
  },
  {
    name: "labeldrop with targetLabel",
    relabeling: { action: "labeldrop", regex: "tmp_.*", targetLabel: "x" },
    accepts: false,
    message: "targetLabel",
  },
  {
    name: "labeldrop with sourceLabels",
    relabeling: { action: "labeldrop", regex: "tmp_.*", sourceLabels: ["a"] },
    accepts: false,
    message: "sourceLabels",
  },
  {
    name: "labeldrop with empty sourceLabels (not rendered)",
    relabeling: { action: "labeldrop", regex: "tmp_.*", sourceLabels: [] },
    accepts: true,
  },
  {
    name: "keepequal spelling out separator and replacement",
    relabeling: {
      sourceLabels: ["a"],
      targetLabel: "b",
      action: "keepequal",
      separator: ";",
      replacement: "$1",
    },
    accepts: true,
  },
  {
    name: "keepequal with regex (.*): any regex is refused",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "keepequal", regex: "(.*)" },
    accepts: false,
    message: "keepequal action requires only 'source_labels' and `target_label`, and no other fields (regex)",
  },
  {
    name: "keepequal with an empty regex (not rendered)",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "keepequal", regex: "" },
    accepts: true,
  },
  {
    name: "dropequal with a modulus",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "dropequal", modulus: 2 },
    accepts: false,
    message: "modulus",
  },
  {
    name: "dropequal with another separator",
    relabeling: { sourceLabels: ["a"], targetLabel: "b", action: "dropequal", separator: "" },
    accepts: false,
    message: "separator",
  },
  {
    name: "keepequal without targetLabel",
    relabeling: { sourceLabels: ["a"], action: "keepequal" },
    accepts: false,
    message: "relabel configuration for keepequal action requires 'target_label' value",
  },
  {
    name: "hashmod without modulus",
    relabeling: { sourceLabels: ["a"], targetLabel: "t", action: "hashmod" },
    accepts: false,
    message: "relabel configuration for hashmod requires non-zero modulus",
  },
  {
    name: "hashmod spelling out separator and replacement",
    relabeling: {
      sourceLabels: ["a"],
      targetLabel: "t",
      action: "hashmod",
      modulus: 8,
      separator: ";",
      replacement: "$1",
    },
    accepts: true,
  },
  {
    name: "labelmap with an empty replacement",
    relabeling: { action: "labelmap", regex: "__meta_(.+)", replacement: "" },
    accepts: false,
    message: "\"\" is invalid 'replacement' for labelmap action",
  },
  {
    name: "labelmap with the default replacement",
    relabeling: { action: "labelmap", regex: "__meta_kubernetes_pod_label_(.+)", replacement: "$1" },
    accepts: true,
  },
  {
    name: "replace into a templated target label",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a relabel target label, not a JS template.
    relabeling: { sourceLabels: ["a"], regex: "(.+)", targetLabel: "${1}", separator: ";" },
    accepts: true,
  },
  {
    name: "replace without targetLabel",
    relabeling: { sourceLabels: ["a"], action: "replace" },
    accepts: false,
    message: "relabel configuration for replace action requires 'target_label' value",
  },
  {
    name: "keep with an empty regex and separator",
    relabeling: { sourceLabels: ["a"], action: "keep", regex: "", separator: "" },
    accepts: true,
  },
  {
    name: "a lookahead in the regex",
    relabeling: { sourceLabels: ["a"], regex: "a(?=b)", targetLabel: "x" },
    accepts: false,
    message: "invalid regex",
  },
  {
    name: "drop spelling out every default",
    relabeling: { sourceLabels: ["a"], action: "drop", regex: "(.*)", separator: ";", replacement: "$1" },
    accepts: true,
  },
];
