// What Go's text/template parser (Go 1.23 and later) refuses in a template: the check Prometheus makes on alert
// labels and annotations when it loads a rule file (the parse only, never an execution). Scanning and parsing follow
// text/template/parse's grammar: `{{ }}` actions with trim markers and comments; pipelines of commands with
// declarations (`$x :=`, `$x =`); if/else if/with/else with/range/break/continue/end; define, block and template;
// strings, raw strings, characters and numbers as Go spells them; functions must be known and variables declared
// (in scope: a control structure's variables end with its {{end}}, a define or block body sees only `$`). Pure.
// Written for Capstan from the behaviour of Go's parser, and tested against the real promtool
// (validation-cases.ts).
import type { GoTemplateScope } from "./go-template/names.ts";
import { Parser, TemplateSyntaxError } from "./go-template/parse.ts";
import { scan } from "./go-template/scan.ts";

export { GO_TEMPLATE_BUILTINS, type GoTemplateScope } from "./go-template/names.ts";

/** Where and why the parse fails: Go's message and the line (from 1) it names. */
export interface GoTemplateError {
  message: string;
  line: number;
}

/** The first error Go's parser would report for `text`, or undefined when it parses. */
export function goTemplateError(text: string, scope: GoTemplateScope): GoTemplateError | undefined {
  try {
    new Parser(scan(text), scope).parseAll();
    return undefined;
  } catch (err) {
    if (err instanceof TemplateSyntaxError) return { message: err.message, line: err.line };
    throw err;
  }
}
