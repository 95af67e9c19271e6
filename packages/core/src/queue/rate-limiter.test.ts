import { describe, expect, it } from "vitest";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from "./rate-limiter.ts";

describe("ItemExponentialFailureRateLimiter", () => {
  it("doubles per failure from 5 ms, caps at 1000 s, and forget resets", () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    const delays = Array.from({ length: 20 }, () => limiter.when("a"));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(5 * 2 ** 17); // 655.36 s, still under the cap
    expect(delays.slice(18)).toEqual([1_000_000, 1_000_000]);
    expect(limiter.numRequeues("a")).toBe(20);

    expect(limiter.when("b")).toBe(5); // per item
    limiter.forget("a");
    expect(limiter.numRequeues("a")).toBe(0);
    expect(limiter.when("a")).toBe(5);
    expect(limiter.numRequeues("b")).toBe(1);
  });

  it("stays at the cap after very many failures", () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    for (let i = 0; i < 2000; i++) limiter.when("a");
    expect(limiter.when("a")).toBe(1000);
  });

  it("rejects a base above the cap", () => {
    expect(() => new ItemExponentialFailureRateLimiter(10, 5)).toThrow(RangeError);
  });
});

describe("BucketRateLimiter", () => {
  it("lets the burst through, then spaces reservations 1/qps apart", () => {
    let now = 1_000;
    const limiter = new BucketRateLimiter<string>(10, 100, () => now);
    const first = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
    expect(first.every((d) => d === 0)).toBe(true);
    expect([limiter.when("x"), limiter.when("y"), limiter.when("z")]).toEqual([100, 200, 300]);

    // 1 s later 10 tokens have been refilled: 3 pay the debt, 7 are free, the next waits 100 ms.
    now += 1_000;
    expect(Array.from({ length: 8 }, () => limiter.when("x"))).toEqual([0, 0, 0, 0, 0, 0, 0, 100]);
    expect(limiter.numRequeues("x")).toBe(0);
    limiter.forget("x");
    expect(limiter.when("x")).toBe(200);
  });

  it("refills no more than the burst", () => {
    let now = 0;
    const limiter = new BucketRateLimiter<string>(10, 2, () => now);
    now += 60_000;
    expect([limiter.when("a"), limiter.when("a"), limiter.when("a")]).toEqual([0, 0, 100]);
  });
});

describe("MaxOfRateLimiter", () => {
  it("takes the longest delay, forgets everywhere, reports the most requeues", () => {
    const now = 0;
    const exponential = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const bucket = new BucketRateLimiter<string>(1, 2, () => now);
    const limiter = new MaxOfRateLimiter(exponential, bucket);

    expect(limiter.when("a")).toBe(5); // exponential 5, bucket 0
    expect(limiter.when("a")).toBe(10); // exponential 10, bucket 0
    expect(limiter.when("b")).toBe(1_000); // exponential 5, bucket 1000: the bucket was asked every time
    expect(limiter.numRequeues("a")).toBe(2);

    limiter.forget("a");
    expect(exponential.numRequeues("a")).toBe(0);
    expect(limiter.numRequeues("a")).toBe(0);
  });

  it("defaultControllerRateLimiter backs off per item from 5 ms", () => {
    const limiter = defaultControllerRateLimiter<string>();
    expect([limiter.when("a"), limiter.when("a"), limiter.when("a")]).toEqual([5, 10, 20]);
    expect(limiter.numRequeues("a")).toBe(3);
    limiter.forget("a");
    expect(limiter.when("a")).toBe(5);
  });
});
