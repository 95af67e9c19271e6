// eventually(): retry an assertion until it passes or a deadline passes, then fail with the last error.

export interface EventuallyOptions {
  /** Default 30 s. */
  timeoutMs?: number;
  /** Pause between attempts; default 200 ms. */
  intervalMs?: number;
  /** Prefixes the final error, e.g. "pod becomes Ready". */
  message?: string;
}

/**
 * Runs `fn` until it returns without throwing, and resolves with its value. A function that returns
 * `false` counts as a failed attempt too. Fails with the last error once `timeoutMs` has passed.
 */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, false>> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 200;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await fn();
      if (value !== false) return value as Exclude<T, false>;
      last = new Error("returned false");
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const reason = last instanceof Error ? last.message : String(last);
      const err = new Error(
        `${options.message ?? "condition"} not met after ${timeoutMs} ms (${attempt} attempts): ${reason}`,
      );
      err.cause = last;
      throw err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
