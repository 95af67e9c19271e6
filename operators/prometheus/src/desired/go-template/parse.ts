// Go text/template's parser (text/template/parse/parse.go), as far as it refuses a template: the grammar of actions,
// pipelines, commands and operands over the scanner's tokens (scan.ts), the literals checked as Go reads them
// (literals.ts) and the names as Go resolves them (names.ts). The first refusal is thrown as a TemplateSyntaxError,
// with Go's message and the line it names.
import { charError, escapesError, goQuote, numberError, unquote } from "./literals.ts";
import { type GoTemplateScope, TemplateNames } from "./names.ts";
import type { Kind, Token } from "./scan.ts";

/** A refusal: Go's message and the line (from 1) it names. */
export class TemplateSyntaxError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}

/** What the parser needs to know of a parsed piece. */
type Node =
  | { kind: "text"; empty: boolean }
  | { kind: "action" | "control" | "break" }
  | { kind: "end" | "else" };

/** An operand's class, for the pipeline rules (what may follow a pipe, what may take a field). */
type Operand = "literal" | "dot" | "nil" | "field" | "variable" | "identifier" | "pipeline" | "chain";

/** The parser of one template's tokens: {@link Parser.parseAll} throws at the first refusal. */
export class Parser {
  private i = 0;
  private readonly tokens: Token[];
  private readonly scope: GoTemplateScope;
  private readonly names: TemplateNames;

  constructor(tokens: Token[], scope: GoTemplateScope) {
    this.tokens = tokens;
    this.scope = scope;
    this.names = new TemplateNames(scope);
  }

  parseAll(): void {
    while (this.peek().kind !== "eof") {
      if (this.peek().kind === "open") {
        const at = this.i;
        this.next();
        const first = this.nextNonSpace();
        if (first.kind === "keyword" && first.text === "define") {
          this.definition();
          continue;
        }
        this.i = at;
      }
      const node = this.textOrAction();
      if (node.kind === "end" || node.kind === "else") this.fail(`unexpected {{${node.kind}}}`);
    }
    // The template itself comes last; with Prometheus' variable definitions it is never empty.
    this.addTemplate(this.scope.name, true);
  }

  // -- tokens --

  private peek(): Token {
    return this.tokens[this.i] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind === "error") throw new TemplateSyntaxError(t.text, t.line);
    if (t.kind !== "eof") this.i++;
    return t;
  }

  /** Skips spaces and returns the next token without taking it. */
  private peekNonSpace(): Token {
    while (this.peek().kind === "space") this.i++;
    return this.peek();
  }

  private nextNonSpace(): Token {
    this.peekNonSpace();
    return this.next();
  }

  private backup(): void {
    this.i--;
  }

  private fail(message: string, line = this.tokens[Math.max(this.i - 1, 0)]?.line ?? 1): never {
    throw new TemplateSyntaxError(message, line);
  }

  /** Fails with `message` (a check's answer) unless it is undefined. */
  private check(message: string | undefined, line: number): void {
    if (message !== undefined) this.fail(message, line);
  }

  private unexpected(t: Token, context: string): never {
    this.fail(`unexpected ${describe(t)} in ${context}`, t.line);
  }

  private expect(kind: Kind, context: string): Token {
    const t = this.nextNonSpace();
    if (t.kind !== kind) this.unexpected(t, context);
    return t;
  }

  // -- structure --

  private addTemplate(name: string, nonEmpty: boolean): void {
    const err = this.names.defineError(name, nonEmpty);
    if (err !== undefined) this.fail(err);
  }

  /** `{{define "name"}}` (already read) ... `{{end}}`. */
  private definition(): void {
    const context = "define clause";
    const name = this.nextNonSpace();
    if (name.kind !== "string" && name.kind !== "raw") this.unexpected(name, context);
    this.stringLiteral(name);
    this.expect("close", context);
    const [list, end] = this.names.separately(() => this.itemList());
    if (end.kind !== "end") this.fail(`unexpected {{else}} in ${context}`);
    this.addTemplate(unquote(name.text), list.some(nonEmpty));
  }

  /** Nodes up to an {{end}} or {{else}}, which is returned with them. */
  private itemList(): [Node[], Node] {
    const list: Node[] = [];
    while (this.peekNonSpace().kind !== "eof") {
      const node = this.textOrAction();
      if (node.kind === "end" || node.kind === "else") return [list, node];
      list.push(node);
    }
    this.fail("unexpected EOF");
  }

  private textOrAction(): Node {
    const t = this.nextNonSpace();
    if (t.kind === "text") return { kind: "text", empty: GO_BLANK.test(t.text) };
    if (t.kind === "open") return this.action();
    this.unexpected(t, "input");
  }

  private action(): Node {
    const t = this.nextNonSpace();
    if (t.kind === "keyword") {
      switch (t.text) {
        case "block":
          return this.block();
        case "break":
        case "continue": {
          const after = this.nextNonSpace();
          if (after.kind !== "close") this.unexpected(after, `{{${t.text}}}`);
          if (!this.names.inRange) this.fail(`{{${t.text}}} outside {{range}}`);
          return { kind: "break" };
        }
        case "else": {
          const after = this.peekNonSpace();
          if (!(after.kind === "keyword" && (after.text === "if" || after.text === "with")))
            this.expect("close", "else");
          return { kind: "else" };
        }
        case "end":
          this.expect("close", "end");
          return { kind: "end" };
        case "if":
        case "range":
        case "with":
          this.control(t.text);
          return { kind: "control" };
        case "template":
          return this.templateCall();
      }
    }
    this.backup();
    this.pipeline("command", "close");
    return { kind: "action" };
  }

  /** if/range/with: pipeline, body, optional else (or else if / else with), end. */
  private control(context: string): void {
    const saved = this.names.beginScope();
    this.pipeline(context, "close");
    if (context === "range") this.names.enterRange();
    const [, next] = this.itemList();
    if (context === "range") this.names.leaveRange();
    if (next.kind === "else") {
      const chained = this.peek();
      if (chained.kind === "keyword" && chained.text === context && context !== "range") {
        this.next();
        this.control(context);
      } else {
        const [, end] = this.itemList();
        if (end.kind !== "end") this.fail("expected end; found {{else}}");
      }
    }
    this.names.endScope(saved);
  }

  private templateName(t: Token, context: string): string {
    if (t.kind !== "string" && t.kind !== "raw") this.unexpected(t, context);
    this.stringLiteral(t);
    return unquote(t.text);
  }

  private templateCall(): Node {
    const context = "template clause";
    this.templateName(this.nextNonSpace(), context);
    if (this.nextNonSpace().kind !== "close") {
      this.backup();
      this.pipeline(context, "close");
    }
    return { kind: "control" };
  }

  private block(): Node {
    const context = "block clause";
    const name = this.templateName(this.nextNonSpace(), context);
    this.pipeline(context, "close");
    const [list, end] = this.names.separately(() => this.itemList());
    if (end.kind !== "end") this.fail(`unexpected {{else}} in ${context}`);
    this.addTemplate(name, list.some(nonEmpty));
    return { kind: "control" };
  }

  // -- pipelines --

  private pipeline(context: string, end: "close" | "rparen"): void {
    let declared = 0;
    for (;;) {
      const v = this.peekNonSpace();
      if (v.kind !== "variable") break;
      const at = this.i;
      this.next();
      const after = this.peekNonSpace();
      if (after.kind === "declare" || after.kind === "assign") {
        this.next();
        this.names.declare(v.text);
        break;
      }
      if (after.kind === "other" && after.text === ",") {
        this.next();
        this.names.declare(v.text);
        declared++;
        if (context === "range" && declared < 2) {
          const k = this.peekNonSpace().kind;
          if (k === "variable" || k === "close" || k === "rparen") continue;
          this.fail("range can only initialize variables");
        }
        this.fail(`too many declarations in ${context}`);
      }
      this.i = at;
      break;
    }
    const commands: Operand[] = [];
    for (;;) {
      const t = this.nextNonSpace();
      if (t.kind === end) break;
      if (!OPERAND_STARTS.has(t.kind)) this.unexpected(t, context);
      this.backup();
      commands.push(this.command());
    }
    if (commands.length === 0) this.fail(`missing value for ${context}`);
    commands.forEach((first, i) => {
      if (i > 0 && (first === "literal" || first === "dot" || first === "nil")) {
        this.fail(`non executable command in pipeline stage ${i + 1}`);
      }
    });
  }

  /** One command of a pipeline (operands up to a pipe or the end): the class of its first operand. */
  private command(): Operand {
    const operands: Operand[] = [];
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand !== undefined) operands.push(operand);
      const t = this.next();
      if (t.kind === "space") continue;
      if (t.kind === "close" || t.kind === "rparen") this.backup();
      else if (t.kind !== "pipe") this.unexpected(t, "operand");
      break;
    }
    const first = operands[0];
    if (first === undefined) this.fail("empty command");
    return first;
  }

  private operand(): Operand | undefined {
    const start = this.peekNonSpace();
    const term = this.term();
    if (term === undefined || this.peek().kind !== "field") return term;
    while (this.peek().kind === "field") this.next();
    if (term === "literal" || term === "dot" || term === "nil") {
      this.fail(`unexpected . after term ${goQuote(start.text)}`);
    }
    return term === "field" || term === "variable" ? term : "chain";
  }

  private term(): Operand | undefined {
    const t = this.nextNonSpace();
    switch (t.kind) {
      case "identifier":
        this.check(this.names.functionError(t.text), t.line);
        return "identifier";
      case "dot":
        return "dot";
      case "nil":
        return "nil";
      case "variable":
        this.check(this.names.variableError(t.text), t.line);
        return "variable";
      case "field":
        return "field";
      case "bool":
        return "literal";
      case "char": {
        const err = charError(t.text);
        if (err !== undefined) this.fail(err, t.line);
        return "literal";
      }
      case "number":
      case "complex": {
        const err = numberError(t.text, t.kind);
        if (err !== undefined) this.fail(err, t.line);
        return "literal";
      }
      case "lparen":
        this.pipeline("parenthesized pipeline", "rparen");
        return "pipeline";
      case "string":
      case "raw":
        this.stringLiteral(t);
        return "literal";
    }
    this.backup();
    return undefined;
  }

  private stringLiteral(t: Token): void {
    if (t.kind !== "string") return;
    const err = escapesError(t.text.slice(1, -1), '"');
    if (err !== undefined) this.fail(err, t.line);
  }
}

const OPERAND_STARTS = new Set<Kind>([
  "bool",
  "char",
  "complex",
  "dot",
  "field",
  "identifier",
  "number",
  "nil",
  "raw",
  "string",
  "variable",
  "lparen",
]);

/** Text Go's bytes.TrimSpace leaves nothing of (Unicode white space). */
const GO_BLANK = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** Whether a node makes a template body count as defined (Go: anything but blank text and comments). */
function nonEmpty(n: Node): boolean {
  return n.kind !== "text" || !n.empty;
}

/** A token as Go's parser names it in "unexpected ..." messages. */
function describe(t: Token): string {
  if (t.kind === "eof") return "EOF";
  if (t.kind === "keyword" || t.kind === "dot" || t.kind === "nil") return `<${t.text}>`;
  return t.text.length > 10 ? `${goQuote(t.text.slice(0, 10))}...` : goQuote(t.text);
}
