// Pod ordinals: `<cluster>-<ordinal>` names only, no leading zeros.
import { describe, expect, it } from "vitest";
import { ordinalOf } from "./ordinal.ts";

describe("ordinalOf", () => {
  it.each([
    ["demo-0", 0],
    ["demo-12", 12],
    ["demo-01", undefined],
    ["demo-x", undefined],
    ["other-1", undefined],
  ])("ordinalOf(%s)", (name, o) => expect(ordinalOf("demo", name)).toBe(o));
});
