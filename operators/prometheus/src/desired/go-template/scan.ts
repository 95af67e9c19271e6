// Go text/template's scanner (text/template/parse/lex.go): the tokens of a template's text, `{{ }}` actions with
// their trim markers, comments dropped; strings, raw strings, characters and numbers read as far as Go reads them,
// and where Go's scanner gives up, an error token with its message. Pure.
import { goQuote } from "./literals.ts";

/** A token's kind. */
export type Kind =
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

/** A token: its kind, its text, the line (from 1) it starts on. */
export interface Token {
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
export function scan(text: string): Token[] {
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
