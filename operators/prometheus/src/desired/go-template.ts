// What Go's text/template parser (Go 1.23 and later) refuses in a template: the check Prometheus makes on alert
// labels and annotations when it loads a rule file (the parse only, never an execution). Scanning and parsing follow
// text/template/parse's grammar: `{{ }}` actions with trim markers and comments; pipelines of commands with
// declarations (`$x :=`, `$x =`); if/else if/with/else with/range/break/continue/end; define, block and template;
// strings, raw strings, characters and numbers as Go spells them; functions must be known and variables declared
// (in scope: a control structure's variables end with its {{end}}, a define or block body sees only `$`). Pure.
// Written for Capstan from the behaviour of Go's parser, and tested against the real promtool
// (validation-cases.ts).

/** What the parse needs besides the text. */
export interface GoTemplateScope {
  /** The template's own name (Prometheus: `__alert_<alert>`): a `define` of it with a body is a second definition. */
  name: string;
  /** Function names besides Go's builtins. */
  functions: ReadonlySet<string>;
  /** Variables declared before the text (each with its `$`), e.g. Prometheus' `$labels`. */
  variables: readonly string[];
}

/** Where and why the parse fails: Go's message and the line (from 1) it names. */
export interface GoTemplateError {
  message: string;
  line: number;
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

class TemplateSyntaxError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}

// ---- scanning ----

type Kind =
  | "text"
  | "open"
  | "close"
  | "space"
  | "declare"
  | "assign"
  | "pipe"
  | "lparen"
  | "rparen"
  | "string"
  | "raw"
  | "char"
  | "number"
  | "complex"
  | "variable"
  | "field"
  | "dot"
  | "identifier"
  | "bool"
  | "nil"
  | "keyword"
  | "other"
  | "eof"
  | "error";

interface Token {
  kind: Kind;
  text: string;
  line: number;
}

const KEYWORDS = new Set([
  "block",
  "break",
  "continue",
  "define",
  "else",
  "end",
  "if",
  "range",
  "template",
  "with",
]);
const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\n";
const WORD_CHAR = /^[\p{L}\p{Nd}_]$/u;
const isWordChar = (c: string | undefined) => c !== undefined && WORD_CHAR.test(c);

/** `U+002D '-'`, as Go's %#U prints a character. */
function codePoint(c: string): string {
  const hex = (c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return `U+${hex} '${c}'`;
}

/**
 * The tokens of `text`, ending with an eof token, or with an error token where the scanner gives up (the parser
 * reports it when it reaches it). Comments are dropped; trim markers only trim text, which a parse ignores.
 */
function scan(text: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  let line = 1;
  const push = (kind: Kind, from: number, to: number) => {
    out.push({ kind, text: text.slice(from, to), line });
    line += countLines(text, from, to);
  };
  const fail = (message: string): Token[] => {
    out.push({ kind: "error", text: message, line });
    return out;
  };
  /** Whether `}}` or ` -}}` starts at `at`: the length of the closing delimiter, or 0. */
  const closeAt = (at: number): number =>
    isSpace(text[at]) && text[at + 1] === "-" && text.startsWith("}}", at + 2)
      ? 4
      : text.startsWith("}}", at)
        ? 2
        : 0;
  /** Whether a word, field or variable may end before `at`. */
  const terminatorAt = (at: number): boolean => {
    const c = text[at];
    return c === undefined || isSpace(c) || ".,|:()".includes(c) || text.startsWith("}}", at);
  };
  /** The end of the word characters from `at`. */
  const wordEnd = (at: number): number => {
    let p = at;
    for (const c of text.slice(at)) {
      if (!isWordChar(c)) break;
      p += c.length;
    }
    return p;
  };
  const charAt = (at: number) => String.fromCodePoint(text.codePointAt(at) ?? 0);

  for (;;) {
    // Text up to the next action.
    const open = text.indexOf("{{", pos);
    if (open < 0) {
      if (pos < text.length) push("text", pos, text.length);
      out.push({ kind: "eof", text: "", line });
      return out;
    }
    if (open > pos) push("text", pos, open);
    pos = open + 2;
    const trimLeft = text[pos] === "-" && isSpace(text[pos + 1]);
    const body = pos + (trimLeft ? 2 : 0);
    if (text.startsWith("/*", body)) {
      const end = text.indexOf("*/", body + 2);
      if (end < 0) return fail("unclosed comment");
      const close = closeAt(end + 2);
      if (close === 0) return fail("comment ends before closing delimiter");
      line += countLines(text, open, end + 2 + close);
      pos = end + 2 + close;
      continue;
    }
    push("open", open, pos);
    pos = body;
    let parens = 0;
    // Inside the action.
    for (;;) {
      const close = closeAt(pos);
      if (close > 0) {
        if (parens > 0) return fail("unclosed left paren");
        push("close", pos, pos + close);
        pos += close;
        break;
      }
      const c = text[pos];
      if (c === undefined) return fail("unclosed action");
      const start = pos;
      if (isSpace(c)) {
        while (isSpace(text[pos]) && closeAt(pos) !== 4) pos++;
        if (pos > start) push("space", start, pos);
        continue;
      }
      if (c === "=") {
        push("assign", start, ++pos);
      } else if (c === ":") {
        if (text[pos + 1] !== "=") return fail("expected :=");
        pos += 2;
        push("declare", start, pos);
      } else if (c === "|") {
        push("pipe", start, ++pos);
      } else if (c === '"' || c === "'") {
        const end = quotedEnd(text, pos);
        if (end < 0)
          return fail(c === '"' ? "unterminated quoted string" : "unterminated character constant");
        pos = end;
        push(c === '"' ? "string" : "char", start, pos);
      } else if (c === "`") {
        const end = text.indexOf("`", pos + 1);
        if (end < 0) return fail("unterminated raw quoted string");
        pos = end + 1;
        push("raw", start, pos);
      } else if (c === "$" || (c === "." && !/[0-9]/.test(text[pos + 1] ?? ""))) {
        // A variable, or a field (a dot alone when nothing follows).
        pos = terminatorAt(pos + 1) ? pos + 1 : wordEnd(pos + 1);
        if (!terminatorAt(pos)) return fail(`bad character ${codePoint(charAt(pos))}`);
        push(c === "$" ? "variable" : pos === start + 1 ? "dot" : "field", start, pos);
      } else if (c === "+" || c === "-" || c === "." || (c >= "0" && c <= "9")) {
        const first = numberEnd(text, pos);
        if (!first.ok) return fail(`bad number syntax: ${goQuote(text.slice(start, first.end))}`);
        pos = first.end;
        if (text[pos] === "+" || text[pos] === "-") {
          const second = numberEnd(text, pos);
          pos = second.end;
          if (!second.ok || text[pos - 1] !== "i") {
            return fail(`bad number syntax: ${goQuote(text.slice(start, pos))}`);
          }
          push("complex", start, pos);
        } else {
          push("number", start, pos);
        }
      } else if (isWordChar(charAt(pos))) {
        pos = wordEnd(pos);
        if (!terminatorAt(pos)) return fail(`bad character ${codePoint(charAt(pos))}`);
        const word = text.slice(start, pos);
        push(
          KEYWORDS.has(word)
            ? "keyword"
            : word === "true" || word === "false"
              ? "bool"
              : word === "nil"
                ? "nil"
                : "identifier",
          start,
          pos,
        );
      } else if (c === "(") {
        parens++;
        push("lparen", start, ++pos);
      } else if (c === ")") {
        if (--parens < 0) return fail("unexpected right paren");
        push("rparen", start, ++pos);
      } else if (c >= " " && c <= "~") {
        push("other", start, ++pos);
      } else {
        return fail(`unrecognized character in action: ${codePoint(charAt(pos))}`);
      }
    }
  }
}

function countLines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (text[i] === "\n") n++;
  return n;
}

/** The end (after the closing quote) of the string or character constant opening at `at`, or -1. */
function quotedEnd(text: string, at: number): number {
  const quote = text[at];
  for (let p = at + 1; p < text.length; p++) {
    const c = text[p];
    if (c === "\n") return -1;
    if (c === "\\") {
      if (p + 1 >= text.length || text[p + 1] === "\n") return -1;
      p++;
    } else if (c === quote) {
      return p + 1;
    }
  }
  return -1;
}

/**
 * How far Go's number scanner reads from `at` (a sign, a base prefix, digits with underscores, a fraction, an
 * exponent, an imaginary `i`), and whether it liked it: a letter or digit right after the number spoils it.
 */
function numberEnd(text: string, at: number): { ok: boolean; end: number } {
  let p = at;
  const take = (set: string) => {
    if (p < text.length && set.includes(text[p] as string)) {
      p++;
      return true;
    }
    return false;
  };
  const run = (set: string) => {
    while (take(set));
  };
  take("+-");
  let digits = "0123456789_";
  if (take("0")) {
    if (take("xX")) digits = "0123456789abcdefABCDEF_";
    else if (take("oO")) digits = "01234567_";
    else if (take("bB")) digits = "01_";
  }
  run(digits);
  if (take(".")) run(digits);
  if (digits.length === 11 && take("eE")) {
    take("+-");
    run("0123456789_");
  }
  if (digits.length === 23 && take("pP")) {
    take("+-");
    run("0123456789_");
  }
  take("i");
  if (isWordChar(text[p])) return { ok: false, end: p + 1 };
  return { ok: true, end: p };
}

/** `s` as Go's %q would print it (near enough for messages). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

// ---- literals ----

/** Whether Go reads the escapes of a quoted string or character body: the error, or undefined. */
function escapesError(body: string, quote: string): string | undefined {
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== "\\") continue;
    const len = escapeLength(body, i, quote);
    if (len === 0) return "invalid syntax";
    i += len - 1;
  }
  return undefined;
}

/** The length of the escape sequence at `i` of `s` inside `quote`s, or 0 if Go refuses it. */
function escapeLength(s: string, i: number, quote: string): number {
  const c = s[i + 1];
  if (c === undefined) return 0;
  if ("abfnrtv\\".includes(c)) return 2;
  if (c === "'" || c === '"') return c === quote ? 2 : 0;
  const hex = (n: number) => {
    const digits = s.slice(i + 2, i + 2 + n);
    return digits.length === n && /^[0-9a-fA-F]+$/.test(digits) ? Number.parseInt(digits, 16) : undefined;
  };
  if (c === "x") return hex(2) === undefined ? 0 : 4;
  if (c === "u" || c === "U") {
    const n = c === "u" ? 4 : 8;
    const v = hex(n);
    const valid = v !== undefined && v <= 0x10ffff && !(v >= 0xd800 && v <= 0xdfff);
    return valid ? n + 2 : 0;
  }
  if (c >= "0" && c <= "7") {
    const digits = s.slice(i + 1, i + 4);
    return /^[0-7]{3}$/.test(digits) && Number.parseInt(digits, 8) <= 255 ? 4 : 0;
  }
  return 0;
}

/** Go's verdict on a character constant token ('a', '\n', '\u00e9'): the error, or undefined. */
function charError(token: string): string | undefined {
  const body = token.slice(1, -1);
  if (body === "" || body === "'") return "invalid syntax";
  const len =
    body[0] === "\\" ? escapeLength(body, 0, "'") : String.fromCodePoint(body.codePointAt(0) ?? 0).length;
  if (len === 0) return "invalid syntax";
  return len === body.length ? undefined : `malformed character constant: ${token}`;
}

/** Whether Go's underscore rule holds: only between digits, or after a base prefix. */
function underscoresOk(s: string): boolean {
  const t = s.replace(/^[+-]/, "");
  if (!t.includes("_")) return true;
  let saw = /^0[bBoOxX]/.test(t) ? "0" : "^";
  const hex = /^0[xX]/.test(t);
  for (const c of t.slice(saw === "0" ? 2 : 0)) {
    if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) saw = "0";
    else if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
    } else {
      if (saw === "_") return false;
      saw = "!";
    }
  }
  return saw !== "_";
}

/** Whether strconv.ParseInt/ParseUint (base 0) read `s` as an integer that fits 64 bits. */
function integerOk(s: string): boolean {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (m === null || !underscoresOk(s)) return false;
  const digits = (m[2] as string).replaceAll("_", "");
  if (/^0[xXoObB]$/.test(digits)) return false;
  const value = BigInt(/^0[0-7]/.test(digits) ? `0o${digits.slice(1)}` : digits === "" ? "0" : digits);
  return m[1] === "-" ? value <= 2n ** 63n : value < 2n ** 64n;
}

/** Whether strconv.ParseFloat reads `s` as a finite float. */
function floatOk(s: string): boolean {
  const decimal = /^[+-]?([0-9][0-9_]*\.?[0-9_]*|\.[0-9][0-9_]*)([eE][+-]?[0-9][0-9_]*)?$/;
  const hex = /^[+-]?0[xX]([0-9a-fA-F_]*\.?[0-9a-fA-F_]*)[pP][+-]?[0-9][0-9_]*$/;
  if (decimal.test(s)) {
    return underscoresOk(s) && Number.isFinite(Number(s.replaceAll("_", "")));
  }
  const m = hex.exec(s);
  return m !== null && /[0-9a-fA-F]/.test(m[1] as string) && underscoresOk(s);
}

/** Go's verdict on a number token (text/template's NumberNode): the error, or undefined. */
function numberError(token: string, kind: "number" | "complex"): string | undefined {
  if (kind === "complex") {
    const split = /^([+-]?[^+-]+(?:[eEpP][+-][^+-]*)?)([+-].*)i$/.exec(token);
    return split !== null && floatOk(split[1] as string) && floatOk(split[2] as string)
      ? undefined
      : `illegal number syntax: ${goQuote(token)}`;
  }
  if (token.endsWith("i") && floatOk(token.slice(0, -1))) return undefined;
  if (integerOk(token)) return undefined;
  if (floatOk(token)) return /[.eEpP]/.test(token) ? undefined : `integer overflow: ${goQuote(token)}`;
  return `illegal number syntax: ${goQuote(token)}`;
}

// ---- parsing ----

/** What the parser needs to know of a parsed piece. */
type Node =
  | { kind: "text"; empty: boolean }
  | { kind: "action" | "control" | "break" }
  | { kind: "end" | "else" };

/** An operand's class, for the pipeline rules (what may follow a pipe, what may take a field). */
type Operand = "literal" | "dot" | "nil" | "field" | "variable" | "identifier" | "pipeline" | "chain";

class Parser {
  private i = 0;
  private vars: string[];
  private rangeDepth = 0;
  /** Templates defined with a body so far. */
  private readonly defined = new Set<string>();

  private readonly tokens: Token[];
  private readonly scope: GoTemplateScope;

  constructor(tokens: Token[], scope: GoTemplateScope) {
    this.tokens = tokens;
    this.scope = scope;
    this.vars = ["$", ...scope.variables];
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

  private unexpected(t: Token, context: string): never {
    this.fail(`unexpected ${describe(t)} in ${context}`, t.line);
  }

  private expect(kind: Kind, context: string): Token {
    const t = this.nextNonSpace();
    if (t.kind !== kind) this.unexpected(t, context);
    return t;
  }

  // -- structure --

  /** Runs `body` as a separate template (define, block): only `$` is declared, no range is open. */
  private separately<T>(body: () => T): T {
    const [vars, depth] = [this.vars, this.rangeDepth];
    this.vars = ["$"];
    this.rangeDepth = 0;
    try {
      return body();
    } finally {
      [this.vars, this.rangeDepth] = [vars, depth];
    }
  }

  private addTemplate(name: string, nonEmpty: boolean): void {
    if (!nonEmpty) return;
    if (this.defined.has(name)) this.fail(`template: multiple definition of template ${goQuote(name)}`);
    this.defined.add(name);
  }

  /** `{{define "name"}}` (already read) ... `{{end}}`. */
  private definition(): void {
    const context = "define clause";
    const name = this.nextNonSpace();
    if (name.kind !== "string" && name.kind !== "raw") this.unexpected(name, context);
    this.stringLiteral(name);
    this.expect("close", context);
    const [list, end] = this.separately(() => this.itemList());
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
          if (this.rangeDepth === 0) this.fail(`{{${t.text}}} outside {{range}}`);
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
    const saved = this.vars.length;
    this.pipeline(context, "close");
    if (context === "range") this.rangeDepth++;
    const [, next] = this.itemList();
    if (context === "range") this.rangeDepth--;
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
    this.vars.length = saved;
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
    const [list, end] = this.separately(() => this.itemList());
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
        this.vars.push(v.text);
        break;
      }
      if (after.kind === "other" && after.text === ",") {
        this.next();
        this.vars.push(v.text);
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
        if (!GO_TEMPLATE_BUILTINS.has(t.text) && !this.scope.functions.has(t.text)) {
          this.fail(`function ${goQuote(t.text)} not defined`, t.line);
        }
        return "identifier";
      case "dot":
        return "dot";
      case "nil":
        return "nil";
      case "variable":
        if (!this.vars.includes(t.text)) this.fail(`undefined variable ${goQuote(t.text)}`, t.line);
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

/** The value of a string or raw string token whose escapes are valid (for template names). */
function unquote(token: string): string {
  if (token.startsWith("`")) return token.slice(1, -1).replaceAll("\r", "");
  const body = token.slice(1, -1);
  const simple: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const len = escapeLength(body, i, '"');
    const e = body.slice(i + 1, i + len);
    const kind = e[0] as string;
    out +=
      simple[kind] ??
      (kind === "x" || kind === "u" || kind === "U"
        ? String.fromCodePoint(Number.parseInt(e.slice(1), 16))
        : /[0-7]/.test(kind)
          ? String.fromCodePoint(Number.parseInt(e, 8))
          : kind);
    i += len - 1;
  }
  return out;
}

/** A token as Go's parser names it in "unexpected ..." messages. */
function describe(t: Token): string {
  if (t.kind === "eof") return "EOF";
  if (t.kind === "keyword" || t.kind === "dot" || t.kind === "nil") return `<${t.text}>`;
  return t.text.length > 10 ? `${goQuote(t.text.slice(0, 10))}...` : goQuote(t.text);
}
