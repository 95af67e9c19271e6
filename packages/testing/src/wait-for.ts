// waitFor(): poll an operand until it yields a value (undefined and thrown errors both mean "not yet"), as the
// operators' real-process tests wait for a leader, an unsealed node or a caught-up learner.

/**
 * Polls `check` until it returns a value other than undefined (or stops throwing) and resolves with it; gives up
 * after `ms` with an error naming `what` and the last error. Unlike {@link eventually}, `false` is a value.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${String(last ?? "not yet")}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
