// Label selectors: kubectl's string syntax and metav1.LabelSelector, checked against apimachinery's rules.
import { describe, expect, it } from "vitest";
import { labelSelector } from "./labels.ts";

const labels = { app: "web", tier: "front", "example.com/team": "a" };

describe("labelSelector", () => {
  it.each([
    ["", true],
    ["app=web", true],
    ["app==web", true],
    ["app=db", false],
    ["app!=db", true],
    ["missing!=x", true],
    ["app!=web", false],
    ["tier in (front, back)", true],
    ["tier in (back)", false],
    ["missing in (x)", false],
    ["tier notin (back)", true],
    ["missing notin (x)", true],
    ["tier notin (front,back)", false],
    ["app", true],
    ["missing", false],
    ["!missing", true],
    ["!app", false],
    ["example.com/team=a,app=web, tier in (front),!legacy", true],
    ["app=web,tier=back", false],
  ])("%j matches %s", (text, expected) => {
    expect(labelSelector(text).matches(labels)).toBe(expected);
  });

  it("treats a missing label map as empty", () => {
    expect(labelSelector("!app").matches(undefined)).toBe(true);
    expect(labelSelector("app").matches(undefined)).toBe(false);
  });

  it.each([
    ["app=", "app="], // an empty value is valid
    ["app in (a,b)", "app in (a,b)"],
    ["a , b", "a,b"],
  ])("normalises %j to %j", (text, normal) => {
    expect(labelSelector(text).text).toBe(normal);
  });

  it.each([
    ["app in a", /expected '\(' at position 7/],
    ["app in (a", /expected ',' or '\)' at position 9/],
    ["app in ()", /expected at least one value/],
    ["app foo", /expected '=', '==', '!=', 'in', 'notin', ',' or the end/],
    ["=web", /expected a label key at position 0/],
    ["app=web,", /expected a label key at position 8/],
    ["Bad Key=x", /expected '='/],
    ["app=-x", /invalid value "-x" for key "app"/],
    ["-app=x", /invalid label key "-app"/],
  ])("rejects %j with a message saying what was expected", (text, message) => {
    expect(() => labelSelector(text)).toThrow(message);
  });

  it("takes an equality map", () => {
    expect(labelSelector({ app: "web", tier: "front" }).matches(labels)).toBe(true);
    expect(labelSelector({ app: "web", tier: "back" }).matches(labels)).toBe(false);
    expect(labelSelector({}).matches(labels)).toBe(true);
  });

  it("takes a metav1.LabelSelector", () => {
    const sel = labelSelector({
      matchLabels: { app: "web" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["front", "back"] },
        { key: "legacy", operator: "DoesNotExist" },
        { key: "example.com/team", operator: "Exists" },
        { key: "stage", operator: "NotIn", values: ["prod"] },
      ],
    });
    expect(sel.matches(labels)).toBe(true);
    expect(sel.matches({ ...labels, legacy: "1" })).toBe(false);
    expect(sel.matches({ ...labels, stage: "prod" })).toBe(false);
    expect(sel.text).toBe("app=web,tier in (front,back),!legacy,example.com/team,stage notin (prod)");
  });

  it("rejects an invalid metav1.LabelSelector naming the key", () => {
    expect(() => labelSelector({ matchExpressions: [{ key: "tier", operator: "In", values: [] }] })).toThrow(
      /operator In on "tier" needs at least one value/,
    );
    expect(() =>
      labelSelector({ matchExpressions: [{ key: "tier", operator: "Exists", values: ["x"] }] }),
    ).toThrow(/operator Exists on "tier" takes no values/);
  });
});
