// Table tests of statusMergePatch: no patch for an equal status, the whole status otherwise, nulls for
// fields that went away.
import { describe, expect, it } from "vitest";
import { statusMergePatch } from "./status-patch.ts";

type S = Record<string, unknown>;

describe("statusMergePatch", () => {
  it.each<[string, S | undefined, S, S | undefined]>([
    [
      "equal: nothing to write",
      { phase: "Running", replicas: 3 },
      { phase: "Running", replicas: 3 },
      undefined,
    ],
    [
      "equal with nested objects and arrays",
      { members: [{ name: "a", ok: true }], tls: { notAfter: "x" } },
      { members: [{ name: "a", ok: true }], tls: { notAfter: "x" } },
      undefined,
    ],
    ["no live status: all of next", undefined, { phase: "Pending" }, { phase: "Pending" }],
    ["empty next and no live status: nothing", undefined, {}, undefined],
    [
      "a changed field: the whole next status",
      { phase: "Pending", replicas: 3 },
      { phase: "Running", replicas: 3 },
      { phase: "Running", replicas: 3 },
    ],
    [
      "a field gone: null",
      { phase: "Running", leader: "a" },
      { phase: "Running" },
      { phase: "Running", leader: null },
    ],
    [
      "a nested field gone: the nested object is sent whole",
      { tls: { notAfter: "x", serial: "1" } },
      { tls: { notAfter: "x" } },
      { tls: { notAfter: "x" } },
    ],
    ["a shorter array", { sealed: ["a", "b"] }, { sealed: ["a"] }, { sealed: ["a"] }],
    [
      "a new field",
      { phase: "Running" },
      { phase: "Running", active: "a" },
      { phase: "Running", active: "a" },
    ],
  ])("%s", (_name, live, next, expected) => {
    expect(statusMergePatch(live, next)?.status).toEqual(expected);
  });

  it("does not change its inputs", () => {
    const live = { phase: "Running", leader: "a" };
    const next = { phase: "Degraded" };
    statusMergePatch(live, next);
    expect(live).toEqual({ phase: "Running", leader: "a" });
    expect(next).toEqual({ phase: "Degraded" });
  });
});
