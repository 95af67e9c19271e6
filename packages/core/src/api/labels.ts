// Label selectors as Kubernetes defines them: the string form (`app=web,tier in (a,b),!legacy`) and the
// metav1.LabelSelector form (matchLabels + matchExpressions), compiled once into a matcher.

/** metav1.LabelSelector: every matchLabels pair and every expression must hold. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  values?: string[];
}

/**
 * What a cache list or a predicate accepts as a label selector: an equality map (`{ app: "web" }`), a
 * selector string in kubectl's syntax, or a metav1.LabelSelector.
 */
export type LabelSelectorInput = Record<string, string> | string | LabelSelector;

/** A compiled selector: `matches(labels)` is true when every requirement holds. */
export interface LabelMatcher {
  matches(labels: Record<string, string> | undefined): boolean;
  /** The selector in its string form, as the API server's `labelSelector` parameter takes it. */
  readonly text: string;
}

type Op = "=" | "!=" | "in" | "notin" | "exists" | "!";
interface Requirement {
  key: string;
  op: Op;
  values: string[];
}

/** Compiles a selector; throws an Error naming the position and what was expected for a malformed string. */
export function labelSelector(input: LabelSelectorInput): LabelMatcher {
  const requirements = typeof input === "string" ? parse(input) : fromObject(input);
  for (const r of requirements) validate(r);
  return {
    text: requirements.map(format).join(","),
    matches(labels) {
      const have = labels ?? {};
      for (const r of requirements) if (!holds(r, have)) return false;
      return true;
    },
  };
}

function isSelectorObject(input: Record<string, string> | LabelSelector): input is LabelSelector {
  const keys = Object.keys(input);
  return (
    keys.length > 0 &&
    keys.every((k) => k === "matchLabels" || k === "matchExpressions") &&
    Object.values(input).every((v) => typeof v === "object")
  );
}

function fromObject(input: Record<string, string> | LabelSelector): Requirement[] {
  if (!isSelectorObject(input)) {
    return Object.entries(input).map(([key, value]) => ({ key, op: "=" as const, values: [value] }));
  }
  const out: Requirement[] = Object.entries(input.matchLabels ?? {}).map(([key, value]) => ({
    key,
    op: "=" as const,
    values: [value],
  }));
  for (const e of input.matchExpressions ?? []) {
    const values = e.values ?? [];
    switch (e.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) {
          throw new Error(`label selector: operator ${e.operator} on "${e.key}" needs at least one value`);
        }
        out.push({ key: e.key, op: e.operator === "In" ? "in" : "notin", values });
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) {
          throw new Error(`label selector: operator ${e.operator} on "${e.key}" takes no values`);
        }
        out.push({ key: e.key, op: e.operator === "Exists" ? "exists" : "!", values: [] });
        break;
      default:
        throw new Error(
          `label selector: unknown operator "${String(e.operator)}" on "${e.key}" (In, NotIn, Exists, DoesNotExist)`,
        );
    }
  }
  return out;
}

function holds(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case "=":
      return has && value === r.values[0];
    case "!=":
      return !has || value !== r.values[0];
    case "in":
      return has && r.values.includes(value as string);
    case "notin":
      return !has || !r.values.includes(value as string);
    case "exists":
      return has;
    case "!":
      return !has;
  }
}

function format(r: Requirement): string {
  switch (r.op) {
    case "=":
    case "!=":
      return `${r.key}${r.op}${r.values[0]}`;
    case "in":
    case "notin":
      return `${r.key} ${r.op} (${r.values.join(",")})`;
    case "exists":
      return r.key;
    case "!":
      return `!${r.key}`;
  }
}

// A qualified name (optional DNS-subdomain prefix and "/") and a label value, as apimachinery validates them.
const NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function validate(r: Requirement): void {
  if (!NAME.test(r.key)) throw new Error(`label selector: invalid label key "${r.key}"`);
  for (const v of r.values) {
    if (!VALUE.test(v)) throw new Error(`label selector: invalid value "${v}" for key "${r.key}"`);
  }
}

/** Parses kubectl's selector syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-separated. */
function parse(text: string): Requirement[] {
  const out: Requirement[] = [];
  let i = 0;
  const fail = (expected: string): never => {
    throw new Error(`label selector "${text}": expected ${expected} at position ${i}`);
  };
  const skipSpace = () => {
    while (text[i] === " " || text[i] === "\t") i++;
  };
  const word = (): string => {
    skipSpace();
    const start = i;
    while (i < text.length && !" \t,=!()".includes(text[i] as string)) i++;
    return text.slice(start, i);
  };
  skipSpace();
  if (i === text.length) return out;
  for (;;) {
    skipSpace();
    if (text[i] === "!") {
      i++;
      const key = word();
      if (!key) fail("a label key after '!'");
      out.push({ key, op: "!", values: [] });
    } else {
      const key = word();
      if (!key) fail("a label key");
      skipSpace();
      if (text.startsWith("==", i) || text.startsWith("!=", i)) {
        const op = text[i] === "!" ? "!=" : "=";
        i += 2;
        out.push({ key, op, values: [word()] });
      } else if (text[i] === "=") {
        i++;
        out.push({ key, op: "=", values: [word()] });
      } else if (i === text.length || text[i] === ",") {
        out.push({ key, op: "exists", values: [] });
      } else {
        const op = word();
        if (op !== "in" && op !== "notin") fail("'=', '==', '!=', 'in', 'notin', ',' or the end");
        skipSpace();
        if (text[i] !== "(") fail("'('");
        i++;
        const values: string[] = [];
        for (;;) {
          values.push(word());
          skipSpace();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === ")") {
            i++;
            break;
          }
          fail("',' or ')'");
        }
        if (values.length === 1 && values[0] === "") fail("at least one value");
        out.push({ key, op: op as Op, values });
      }
    }
    skipSpace();
    if (i === text.length) return out;
    if (text[i] !== ",") fail("','");
    i++;
  }
}
