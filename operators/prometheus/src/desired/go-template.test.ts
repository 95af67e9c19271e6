// The Go template parse check on its own: Go's messages and lines, scopes of variables, definitions, literals.
// The verdicts Prometheus gives alert templates are in validation-cases.ts (checked against the real promtool).
import { describe, expect, it } from "vitest";
import { goTemplateError } from "./go-template.ts";

const scope = { name: "main", functions: new Set(["humanize"]), variables: ["$labels"] };
const check = (text: string) => goTemplateError(text, scope);

describe("goTemplateError", () => {
  it.each([
    "plain text, no actions",
    "{{ $labels.job | humanize | printf `%s` }}",
    "{{ with $x := $labels.job }}{{ $x }}{{ else with $labels.b }}{{ . }}{{ end }}",
    '{{ block "b" . }}{{ .X }}{{ end }}{{ template "b" }}',
    '{{ define "main" }}   {{/* blank */}}   {{ end }}',
    "{{ range $i, $e := . }}{{ continue }}{{ end }}",
    "{{ -1 }} {{ +2.5 }} {{ 1e-3 }} {{ 0o17 }} {{ 0b1 }} {{ 1_000 }} {{ 2i }} {{ 1+2i }} {{ '\\u00e9' }}",
    '{{ "\\a\\b\\f\\n\\r\\t\\v\\\\\\"\\x41\\101\\u00e9\\U0001F600" }}',
    "{{ (1).X }} {{ nil }}",
    "{{- $labels -}}\n{{- $labels }}",
  ])("accepts %j", (text) => {
    expect(check(text)).toBeUndefined();
  });

  it.each<[string, string, number]>([
    ["a\nb\n{{ humanise 1 }}", 'function "humanise" not defined', 3],
    ["{{ if true }}\n{{ $y := 1 }}\n{{ end }}{{ $y }}", 'undefined variable "$y"', 3],
    ['{{ define "d" }}{{ $labels }}{{ end }}', 'undefined variable "$labels"', 1],
    ['{{ block "b" . }}{{ $labels }}{{ end }}', 'undefined variable "$labels"', 1],
    ['{{ define "main" }}body{{ end }}', 'template: multiple definition of template "main"', 1],
    [
      '{{ define "d" }}a{{ end }}{{ define "d" }}b{{ end }}',
      'template: multiple definition of template "d"',
      1,
    ],
    ["{{ if true }}a{{ else }}b{{ else }}c{{ end }}", "expected end; found {{else}}", 1],
    ["{{ range . }}{{ else if true }}{{ end }}", "unexpected <if> in input", 1],
    ["{{ range . }}x{{ else }}{{ break }}{{ end }}", "{{break}} outside {{range}}", 1],
    ["{{ $a, $b := . }}", "too many declarations in command", 1],
    ["{{ range $a, 1 }}{{ end }}", "range can only initialize variables", 1],
    ["{{ () }}", "missing value for parenthesized pipeline", 1],
    ["{{ 'a }}", "unterminated character constant", 1],
    ["{{ `a }}", "unterminated raw quoted string", 1],
    ["{{/* a */ x }}", "comment ends before closing delimiter", 1],
    ["{{ 1x }}", 'bad number syntax: "1x"', 1],
    ["{{ 99999999999999999999 }}", 'integer overflow: "99999999999999999999"', 1],
    ['{{ "\\u00" }}', "invalid syntax", 1],
    ['{{ "a".b }}', 'unexpected . after term "\\"a\\""', 1],
    ["{{ \u00a7 }}", "unrecognized character in action: U+00A7 '\u00a7'", 1],
  ])("refuses %j: %s", (text, message, line) => {
    expect(check(text)).toEqual({ message, line });
  });
});
