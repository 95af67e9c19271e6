import { describe, expect, it } from "vitest";
import { eventually } from "./eventually.ts";

describe("eventually", () => {
  it("returns the value once the function stops throwing", async () => {
    let n = 0;
    const v = await eventually(
      () => {
        n++;
        if (n < 3) throw new Error("not yet");
        return n;
      },
      { intervalMs: 1 },
    );
    expect(v).toBe(3);
  });

  it("treats false as not yet", async () => {
    let n = 0;
    await expect(eventually(() => ++n > 2, { intervalMs: 1 })).resolves.toBe(true);
  });

  it("fails with the message and the last error after the timeout", async () => {
    await expect(
      eventually(
        () => {
          throw new Error("pod is Pending");
        },
        { timeoutMs: 20, intervalMs: 5, message: "pod becomes Ready" },
      ),
    ).rejects.toThrow(/pod becomes Ready not met after 20 ms .*pod is Pending/);
  });
});
