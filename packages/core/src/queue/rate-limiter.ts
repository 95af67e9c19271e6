// Rate limiters for the work queue: how long an item waits before it is retried (client-go's workqueue limiters).

/** Decides how long an item waits before it is (re)queued. Items are compared as Map keys (strings by value). */
export interface RateLimiter<T> {
  /** Delay in ms before `item` may be processed again; records one more requeue of it. */
  when(item: T): number;
  /** Clears what the limiter remembers about `item` (call it once the item succeeded). */
  forget(item: T): void;
  /** How many times `item` has been requeued since it was last forgotten. */
  numRequeues(item: T): number;
}

/** Per-item exponential backoff: `baseDelayMs * 2^failures`, capped at `maxDelayMs`. */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly failures = new Map<T, number>();

  constructor(baseDelayMs = 5, maxDelayMs = 1_000_000) {
    if (!(baseDelayMs >= 0) || !(maxDelayMs >= baseDelayMs)) {
      throw new RangeError(`need 0 <= baseDelayMs <= maxDelayMs, got ${baseDelayMs} and ${maxDelayMs}`);
    }
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
  }

  when(item: T): number {
    const failures = this.failures.get(item) ?? 0;
    this.failures.set(item, failures + 1);
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * A token bucket shared by all items (like golang.org/x/time/rate): `burst` tokens, refilled at `qps` per second.
 * `when()` reserves a token and returns how long to wait for it; it keeps no per-item state.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly now: () => number;
  /** Tokens available at `last`; negative when reservations are waiting for future tokens. */
  private tokens: number;
  private last: number;

  /** `now` is a millisecond clock (default `performance.now`); inject one in tests. */
  constructor(qps = 10, burst = 100, now: () => number = () => performance.now()) {
    if (!(qps > 0 && Number.isFinite(qps)) || !(burst >= 1)) {
      throw new RangeError(`need a finite qps > 0 and burst >= 1, got qps ${qps} and burst ${burst}`);
    }
    this.qps = qps;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.last = now();
  }

  when(_item: T): number {
    const now = this.now();
    const refilled = (Math.max(0, now - this.last) * this.qps) / 1000;
    this.tokens = Math.min(this.burst, this.tokens + refilled) - 1;
    this.last = now;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** Combines limiters: the longest delay wins; `forget` clears them all. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    // Every limiter is asked (not just until the largest): each records the requeue or reserves its token.
    let delay = 0;
    for (const limiter of this.limiters) delay = Math.max(delay, limiter.when(item));
    return delay;
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let requeues = 0;
    for (const limiter of this.limiters) requeues = Math.max(requeues, limiter.numRequeues(item));
    return requeues;
  }
}

/** controller-runtime's default: max(per-item exponential 5 ms .. 1000 s, bucket of 100 refilled at 10 qps). */
export function defaultControllerRateLimiter<T>(): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000),
    new BucketRateLimiter<T>(10, 100),
  );
}
