// Tests of waitFor: undefined and throws mean "not yet", false is a value, and giving up names what and why.
import { describe, expect, it } from "vitest";
import { waitFor } from "./wait-for.ts";

describe("waitFor", () => {
  it("retries through undefined and thrown errors, then resolves with the value", async () => {
    let n = 0;
    const v = await waitFor(
      "three",
      async () => {
        n++;
        if (n === 1) throw new Error("not up");
        return n < 3 ? undefined : n;
      },
      5_000,
      1,
    );
    expect(v).toBe(3);
  });

  it("false is a value, not a retry", async () => {
    await expect(waitFor("a flag", async () => false, 5_000, 1)).resolves.toBe(false);
  });

  it("gives up naming what it waited for and the last error", async () => {
    await expect(
      waitFor(
        "a leader",
        async () => {
          throw new Error("connection refused");
        },
        10,
        2,
      ),
    ).rejects.toThrow("gave up waiting for a leader: Error: connection refused");
    await expect(waitFor("a leader", async () => undefined, 10, 2)).rejects.toThrow(
      "gave up waiting for a leader: not yet",
    );
  });
});
