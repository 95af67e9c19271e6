// Tests for retryOnConflict / retryOn, with fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "./errors.ts";
import { retryOn, retryOnConflict } from "./retry.ts";

const conflict = () => new ApiError(409, "Conflict", "the object has been modified", undefined, undefined);

/** An fn that throws the given errors in turn, then returns "ok". */
function scripted(...errors: Error[]) {
  return vi.fn(async () => {
    const err = errors.shift();
    if (err) throw err;
    return "ok";
  });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("retryOnConflict", () => {
  it("runs fn again after each conflict and returns its result", async () => {
    const fn = scripted(conflict(), conflict());
    const done = retryOnConflict(fn);
    await vi.runAllTimersAsync();
    await expect(done).resolves.toBe("ok");
    expect(fn).toHaveBeenCalledTimes(3);
  });

  it("waits between attempts rather than retrying at once", async () => {
    const fn = scripted(conflict());
    const done = retryOnConflict(fn, { delayMs: 1000, jitter: 0 });
    await vi.advanceTimersByTimeAsync(999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toBe("ok");
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("gives up after `steps` attempts and rethrows the last conflict", async () => {
    const errors = Array.from({ length: 10 }, conflict);
    const fn = scripted(...errors);
    const done = retryOnConflict(fn, { steps: 3 });
    const settled = expect(done).rejects.toBe(errors[2]);
    await vi.runAllTimersAsync();
    await settled;
    expect(fn).toHaveBeenCalledTimes(3);
  });

  it("defaults to 5 attempts", async () => {
    const fn = scripted(...Array.from({ length: 10 }, conflict));
    const settled = expect(retryOnConflict(fn)).rejects.toMatchObject({ code: 409 });
    await vi.runAllTimersAsync();
    await settled;
    expect(fn).toHaveBeenCalledTimes(5);
  });

  it("rethrows any other error at once, without retrying", async () => {
    const exists = new ApiError(409, "AlreadyExists", "exists", undefined, undefined);
    for (const err of [
      new ApiError(422, "Invalid", "bad", undefined, undefined),
      exists,
      new Error("boom"),
    ]) {
      const fn = scripted(err);
      await expect(retryOnConflict(fn)).rejects.toBe(err);
      expect(fn).toHaveBeenCalledTimes(1);
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects promptly when the signal aborts during a wait, and runs fn no more", async () => {
    const ac = new AbortController();
    const fn = scripted(conflict(), conflict());
    const done = retryOnConflict(fn, { delayMs: 60_000, signal: ac.signal });
    await vi.advanceTimersByTimeAsync(0);
    expect(fn).toHaveBeenCalledTimes(1);
    const reason = new Error("stopping");
    ac.abort(reason);
    await expect(done).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
    await vi.runAllTimersAsync();
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("does not run fn when the signal is already aborted", async () => {
    const ac = new AbortController();
    ac.abort(new Error("gone"));
    const fn = scripted();
    await expect(retryOnConflict(fn, { signal: ac.signal })).rejects.toThrow("gone");
    expect(fn).not.toHaveBeenCalled();
  });

  it("rejects steps below 1", async () => {
    await expect(retryOnConflict(scripted(), { steps: 0 })).rejects.toThrow(RangeError);
  });
});

describe("retryOn", () => {
  it("retries while the predicate holds, growing the wait by `factor`", async () => {
    const busy = () => new Error("busy");
    const fn = scripted(busy(), busy(), busy());
    const done = retryOn((e) => (e as Error).message === "busy", fn, { delayMs: 100, factor: 2, jitter: 0 });
    await vi.advanceTimersByTimeAsync(0);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(100); // 1st wait: 100
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(199); // 2nd wait: 200
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(fn).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(400); // 3rd wait: 400
    await expect(done).resolves.toBe("ok");
    expect(fn).toHaveBeenCalledTimes(4);
  });

  it("keeps each jittered wait within delay x (1 + jitter)", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.999);
    try {
      const fn = scripted(new Error("x"));
      const done = retryOn(() => true, fn, { delayMs: 1000, jitter: 0.5 });
      await vi.advanceTimersByTimeAsync(1400);
      expect(fn).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(100);
      await expect(done).resolves.toBe("ok");
    } finally {
      vi.restoreAllMocks();
    }
  });
});
