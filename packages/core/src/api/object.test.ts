import { describe, expect, it } from "vitest";
import { keyOf, parseKey } from "./object.ts";

describe("object keys", () => {
  it("round-trips namespaced and cluster-scoped keys", () => {
    expect(keyOf({ metadata: { namespace: "ns", name: "a" } })).toBe("ns/a");
    expect(keyOf({ metadata: { name: "node1" } })).toBe("node1");
    expect(parseKey("ns/a")).toEqual({ namespace: "ns", name: "a" });
    expect(parseKey("node1")).toEqual({ namespace: "", name: "node1" });
  });
});
