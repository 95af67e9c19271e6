import { describe, expect, it } from "vitest";
import type { KubeObject } from "../api/object.ts";
import { oldestOpenRequest } from "./requests.ts";

const req = (name: string, created: string, open = true) =>
  ({ apiVersion: "x/v1", kind: "R", metadata: { name, creationTimestamp: created }, open }) as KubeObject & {
    open: boolean;
  };

describe("oldestOpenRequest", () => {
  it("takes the oldest open request, the name breaking a tie, and skips the ended ones", () => {
    const rs = [
      req("c", "2026-12-07T00:00:02Z"),
      req("b", "2026-12-07T00:00:01Z"),
      req("a", "2026-12-07T00:00:01Z"),
      req("old", "2026-12-07T00:00:00Z", false),
    ];
    expect(oldestOpenRequest(rs, (r) => r.open)?.metadata.name).toBe("a");
    expect(oldestOpenRequest(rs, () => false)).toBeUndefined();
  });
});
