// The names a template may use, on their own (go-template.test.ts has them through the parse, against Go's messages).
import { describe, expect, it } from "vitest";
import { TemplateNames } from "./names.ts";

const scope = { name: "__alert_A", functions: new Set(["humanize"]), variables: ["$labels"] };

describe("TemplateNames", () => {
  it.each([
    ["printf", undefined],
    ["humanize", undefined],
    ["humanise", 'function "humanise" not defined'],
  ])("function %s: %s", (name, message) => {
    expect(new TemplateNames(scope).functionError(name)).toBe(message);
  });

  it("knows `$` and the caller's variables, and ends a scope's own with it", () => {
    const names = new TemplateNames(scope);
    expect(names.variableError("$")).toBeUndefined();
    expect(names.variableError("$labels")).toBeUndefined();
    const mark = names.beginScope();
    names.declare("$x");
    expect(names.variableError("$x")).toBeUndefined();
    names.endScope(mark);
    expect(names.variableError("$x")).toBe('undefined variable "$x"');
  });

  it("runs a define or block body with only `$` and no range open, then restores both", () => {
    const names = new TemplateNames(scope);
    names.declare("$x");
    names.enterRange();
    names.separately(() => {
      expect(names.variableError("$")).toBeUndefined();
      expect(names.variableError("$labels")).toBe('undefined variable "$labels"');
      expect(names.variableError("$x")).toBe('undefined variable "$x"');
      expect(names.inRange).toBe(false);
    });
    expect(names.variableError("$x")).toBeUndefined();
    expect(names.inRange).toBe(true);
    names.leaveRange();
    expect(names.inRange).toBe(false);
  });

  it("defines a template with a body once; an empty body defines nothing", () => {
    const names = new TemplateNames(scope);
    expect(names.defineError("t", false)).toBeUndefined();
    expect(names.defineError("t", true)).toBeUndefined();
    expect(names.defineError("t", false)).toBeUndefined();
    expect(names.defineError("t", true)).toBe('template: multiple definition of template "t"');
  });
});
