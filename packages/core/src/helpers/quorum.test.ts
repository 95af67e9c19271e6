// Tests of quorum: a strict majority of the voters.
import { describe, expect, it } from "vitest";
import { quorum } from "./quorum.ts";

describe("quorum", () => {
  it.each([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [7, 4],
  ])("of %i voters is %i", (voters, needed) => {
    expect(quorum(voters)).toBe(needed);
  });

  it("is more than half, so two disjoint halves never both have one", () => {
    for (let n = 1; n <= 9; n++) expect(2 * quorum(n)).toBeGreaterThan(n);
  });
});
