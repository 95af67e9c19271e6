import { describe, expect, it } from "vitest";
import { textDiff } from "./text-diff.ts";

describe("textDiff", () => {
  it.each([
    ["equal texts", "a\nb\n", "a\nb\n", 12, ""],
    ["one changed line", "a\nb\nc\n", "a\nB\nc\n", 12, "@@ line 2 @@\n- b\n+ B"],
    ["an added line", "a\nc\n", "a\nb\nc\n", 12, "@@ line 2 @@\n+ b"],
    ["a removed last line", "a\nb\n", "a\n", 12, "@@ line 2 @@\n- b"],
    ["a long change, cut", "x\n1\n2\n3\n", "x\n", 2, "@@ line 2 @@\n- 1\n- 2\n- ... 1 more lines"],
  ])("%s", (_name, before, after, max, expected) => {
    expect(textDiff(before, after, max)).toBe(expected);
  });
});
