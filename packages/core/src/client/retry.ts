// Retry-on-conflict: re-runs a read-modify-write while the API server answers 409 Conflict (client-go's retry).

import { sleepOrThrow } from "../util/sleep.ts";
import { isConflict } from "./errors.ts";

/** How often and how long to retry; the defaults are client-go's `retry.DefaultRetry`. */
export interface RetryOptions {
  /** Attempts in all, the first included; default 5. */
  steps?: number;
  /** Wait before the second attempt, in ms; default 10. */
  delayMs?: number;
  /** The wait is multiplied by this after each retry; default 1.0 (constant). */
  factor?: number;
  /** Each wait is lengthened by up to this fraction of itself, at random; default 0.1. */
  jitter?: number;
  /** Aborting stops at once: a pending wait rejects with the signal's reason, and no further attempt runs. */
  signal?: AbortSignal;
}

/**
 * Runs `fn`; while it throws a Conflict ApiError (409, reason Conflict), waits and runs it again, up to
 * `steps` attempts, then rethrows the last conflict. Any other error is rethrown at once.
 * `fn` must re-read the object on each attempt:
 * `retryOnConflict(async () => { const o = await client.get(...); ...; return client.update(kind, o) })`.
 */
export function retryOnConflict<T>(fn: () => Promise<T>, options?: RetryOptions): Promise<T> {
  return retryOn(isConflict, fn, options);
}

/** The general form of {@link retryOnConflict}: retries while `retriable(err)` is true. */
export async function retryOn<T>(
  retriable: (err: unknown) => boolean,
  fn: () => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const { steps = 5, factor = 1.0, jitter = 0.1, signal } = options;
  if (!Number.isInteger(steps) || steps < 1)
    throw new RangeError(`steps must be an integer >= 1, got ${steps}`);
  let delay = options.delayMs ?? 10;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn();
    } catch (err) {
      if (attempt >= steps || !retriable(err)) throw err;
    }
    await sleepOrThrow(jitter > 0 ? delay + Math.random() * jitter * delay : delay, signal);
    delay *= factor;
  }
}
