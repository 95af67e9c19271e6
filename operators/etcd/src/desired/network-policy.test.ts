// The operator's pod labels for the clusters' NetworkPolicies, from the chart's POD_SELECTOR_LABELS.
import { describe, expect, it } from "vitest";
import { DEFAULT_OPERATOR_POD_LABELS, podSelectorLabels } from "./network-policy.ts";

describe("podSelectorLabels", () => {
  it("reads the chart's selector labels", () => {
    expect(
      podSelectorLabels('{"app.kubernetes.io/instance":"x","app.kubernetes.io/name":"etcd-ops"}'),
    ).toEqual({ "app.kubernetes.io/instance": "x", "app.kubernetes.io/name": "etcd-ops" });
  });

  it("falls back to the default name label when the variable is unset or empty", () => {
    expect(podSelectorLabels(undefined)).toEqual(DEFAULT_OPERATOR_POD_LABELS);
    expect(podSelectorLabels("  ")).toEqual(DEFAULT_OPERATOR_POD_LABELS);
  });

  it.each([
    ["not JSON", "app=x", /POD_SELECTOR_LABELS must be a JSON object/],
    ["an array", '["a"]', /non-empty JSON object/],
    ["an empty object", "{}", /non-empty JSON object/],
    ["a number value", '{"a":1}', /string values/],
  ])("refuses %s, naming the variable", (_, json, error) => {
    expect(() => podSelectorLabels(json)).toThrow(error);
  });
});
