// Tests of managedBySelectors: one selector per kind, in order, on the managed-by label; an empty name refused.
import { describe, expect, it } from "vitest";
import { ConfigMap, Pod, Secret } from "../api/kinds.ts";
import { labelSelector } from "../api/labels.ts";
import { MANAGED_BY_LABEL, managedBySelectors } from "./managed-by.ts";

describe("managedBySelectors", () => {
  it("selects each kind by the managed-by label", () => {
    expect(managedBySelectors("capstan-x-operator", [Pod, ConfigMap, Secret])).toEqual([
      { kind: Pod, labelSelector: "app.kubernetes.io/managed-by=capstan-x-operator" },
      { kind: ConfigMap, labelSelector: "app.kubernetes.io/managed-by=capstan-x-operator" },
      { kind: Secret, labelSelector: "app.kubernetes.io/managed-by=capstan-x-operator" },
    ]);
  });

  it.each([
    [{ [MANAGED_BY_LABEL]: "capstan-x-operator" }, true],
    [{ [MANAGED_BY_LABEL]: "helm" }, false],
    [{}, false],
  ])("the selector matches labels %j: %s", (labels, expected) => {
    const [selector] = managedBySelectors("capstan-x-operator", [Pod]);
    expect(labelSelector(selector?.labelSelector ?? "").matches(labels)).toBe(expected);
  });

  it("no kinds, no selectors; an empty operator name is refused", () => {
    expect(managedBySelectors("capstan-x-operator", [])).toEqual([]);
    expect(() => managedBySelectors("", [Pod])).toThrow(/managedBy must name the operator/);
  });
});
