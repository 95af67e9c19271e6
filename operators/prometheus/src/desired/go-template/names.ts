// The names a template may use, checked as Go's parser checks them while it parses: functions must be Go's builtins
// or the caller's (Prometheus' template functions), variables must be declared and in scope (a control structure's
// variables end with its {{end}}; a define or block body sees only `$`), {{break}} and {{continue}} must be inside a
// {{range}}, and a template is defined with a body at most once. Pure: each check answers Go's message, or undefined.
import { goQuote } from "./literals.ts";

/** What the parse needs besides the text. */
export interface GoTemplateScope {
  /** The template's own name (Prometheus: `__alert_<alert>`): a `define` of it with a body is a second definition. */
  name: string;
  /** Function names besides Go's builtins. */
  functions: ReadonlySet<string>;
  /** Variables declared before the text (each with its `$`), e.g. Prometheus' `$labels`. */
  variables: readonly string[];
}

/** Functions text/template defines for every template. */
export const GO_TEMPLATE_BUILTINS: ReadonlySet<string> = new Set([
  "and",
  "call",
  "html",
  "index",
  "slice",
  "js",
  "len",
  "not",
  "or",
  "print",
  "printf",
  "println",
  "urlquery",
  "eq",
  "ge",
  "gt",
  "le",
  "lt",
  "ne",
]);

/** What is declared and defined at a point of the parse. */
export class TemplateNames {
  private vars: string[];
  private rangeDepth = 0;
  /** Templates defined with a body so far. */
  private readonly defined = new Set<string>();

  private readonly scope: GoTemplateScope;

  constructor(scope: GoTemplateScope) {
    this.scope = scope;
    this.vars = ["$", ...scope.variables];
  }

  /** Go's message when `name` is not a function the template may call. */
  functionError(name: string): string | undefined {
    if (GO_TEMPLATE_BUILTINS.has(name) || this.scope.functions.has(name)) return undefined;
    return `function ${goQuote(name)} not defined`;
  }

  /** Go's message when the variable `name` (with its `$`) is not in scope. */
  variableError(name: string): string | undefined {
    return this.vars.includes(name) ? undefined : `undefined variable ${goQuote(name)}`;
  }

  /** Declares the variable `name` (with its `$`) until the scope it is declared in ends. */
  declare(name: string): void {
    this.vars.push(name);
  }

  /** Where the current scope begins: {@link endScope} with it drops every variable declared since. */
  beginScope(): number {
    return this.vars.length;
  }

  endScope(mark: number): void {
    this.vars.length = mark;
  }

  /** Whether {{break}} and {{continue}} are allowed here: inside a {{range}} of the current template. */
  get inRange(): boolean {
    return this.rangeDepth > 0;
  }

  enterRange(): void {
    this.rangeDepth++;
  }

  leaveRange(): void {
    this.rangeDepth--;
  }

  /** Runs `body` as a separate template (define, block): only `$` is declared, no range is open. */
  separately<T>(body: () => T): T {
    const [vars, depth] = [this.vars, this.rangeDepth];
    this.vars = ["$"];
    this.rangeDepth = 0;
    try {
      return body();
    } finally {
      [this.vars, this.rangeDepth] = [vars, depth];
    }
  }

  /**
   * Records the definition of template `name`; one whose body is empty (`nonEmpty` false) defines nothing. Go's
   * message when a template of that name already has a body.
   */
  defineError(name: string, nonEmpty: boolean): string | undefined {
    if (!nonEmpty) return undefined;
    if (this.defined.has(name)) return `template: multiple definition of template ${goQuote(name)}`;
    this.defined.add(name);
    return undefined;
  }
}
