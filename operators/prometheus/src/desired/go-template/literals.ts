// Go's verdicts on the literals of a template (strconv's rules, as text/template/parse applies them): the escapes of
// strings and characters, numbers that overflow or break the underscore rule, and the value of a template name. Pure.

/** `s` as Go's %q would print it (near enough for messages). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Whether Go reads the escapes of a quoted string or character body: the error, or undefined. */
export function escapesError(body: string, quote: string): string | undefined {
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
export function charError(token: string): string | undefined {
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
export function numberError(token: string, kind: "number" | "complex"): string | undefined {
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

/** The value of a string or raw string token whose escapes are valid (for template names). */
export function unquote(token: string): string {
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
