import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { WatchEvent } from "../client/client.ts";
import { ApiError } from "../client/errors.ts";
import {
  bookmark,
  cm,
  connectionReset,
  ev,
  FakeListerWatcher,
  gone,
  page,
} from "../testing/fake-lister-watcher.ts";
import { Backoff, Reflector, type ReflectorOptions } from "./reflector.ts";

type CM = ReturnType<typeof cm>;

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets every pending promise run, without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

/** Runs a reflector whose sink records what it is told; `random` is 0 so backoff delays are exact. */
function run(lw: FakeListerWatcher<CM>, options: ReflectorOptions<CM> = {}) {
  const calls: string[] = [];
  const reflector = new Reflector<CM>(
    lw,
    {
      replace: (items, rv) => calls.push(`replace@${rv} [${items.map((o) => o.metadata.name).join(",")}]`),
      apply: (type, o) => calls.push(`${type} ${o.metadata.name}@${o.metadata.resourceVersion}`),
    },
    { random: () => 0, ...options },
  );
  const controller = new AbortController();
  const done = reflector.run(controller.signal);
  return {
    reflector,
    calls,
    async stop() {
      controller.abort();
      await done;
      expect(vi.getTimerCount()).toBe(0);
    },
  };
}

const withoutTime = <T extends { at: number }>({ at: _, ...rest }: T) => rest;

describe("Backoff", () => {
  it("doubles from 800 ms to a 30 s cap, then applies jitter on top", () => {
    const b = new Backoff({}, () => 0);
    const delays = Array.from({ length: 8 }, () => b.next(0));
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    const jittered = new Backoff({ jitter: 1 }, () => 0.5);
    expect([jittered.next(0), jittered.next(0)]).toEqual([1200, 2400]);
  });

  it("starts over once resetAfterMs has passed since the last retry began", () => {
    const b = new Backoff({ initialMs: 100, resetAfterMs: 1000 }, () => 0);
    expect(b.next(0)).toBe(100); // retry begins at 100
    expect(b.next(1099)).toBe(200); // 999 ms after: no reset; retry begins at 1299
    expect(b.next(2299)).toBe(100); // 1000 ms after: reset
  });
});

describe("Reflector", () => {
  it("lists page by page from the watch cache (resourceVersion 0), then watches from the list's resourceVersion", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(
      page([cm("a", "1"), cm("b", "2")], "10", "c1"),
      page([cm("c", "3")], "10"),
    );
    const { reflector, calls, stop } = run(lw, { pageSize: 2 });
    await settle();
    expect(lw.listCalls.map(withoutTime)).toEqual([
      { limit: 2, resourceVersion: "0" },
      { limit: 2, continue: "c1" },
    ]);
    expect(calls).toEqual(["replace@10 [a,b,c]"]);
    expect(reflector.lastSyncResourceVersion()).toBe("10");
    expect(lw.watches).toHaveLength(1);
    const { signal: _, ...watchOptions } = lw.lastWatch.options;
    expect(watchOptions).toEqual({ resourceVersion: "10", allowWatchBookmarks: true, timeoutSeconds: 300 });
    await stop();
  });

  it("picks each watch's timeoutSeconds at random within the configured range", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([], "1"));
    const { stop } = run(lw, { random: () => 0.999, watchTimeoutSeconds: [10, 20] });
    await settle();
    expect(lw.lastWatch.options.timeoutSeconds).toBe(20);
    await stop();
  });

  it("lists again without pagination when a continue token expires", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(
      page([cm("a", "1")], "5", "c1"),
      gone(),
      page([cm("a", "1"), cm("b", "2")], "6"),
    );
    const { reflector, calls, stop } = run(lw, { pageSize: 1 });
    await settle();
    expect(lw.listCalls.map(withoutTime)).toEqual([
      { limit: 1, resourceVersion: "0" },
      { limit: 1, continue: "c1" },
      { resourceVersion: "0" },
    ]);
    expect(calls).toEqual(["replace@6 [a,b]"]); // the partial first attempt is never delivered
    expect(reflector.lastSyncResourceVersion()).toBe("6");
    expect(lw.lastWatch.options.resourceVersion).toBe("6");
    await stop();
  });

  it("lists again at once with a consistent read when the server no longer has the resourceVersion", async () => {
    const tooLarge = new ApiError(504, "Timeout", "Too large resource version: 9, current: 8", {
      code: 504,
      reason: "Timeout",
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] },
    });
    for (const refusal of [gone(), tooLarge]) {
      const lw = new FakeListerWatcher<CM>().replyList(refusal, page([cm("a", "1")], "8"));
      const { calls, stop } = run(lw);
      await settle();
      expect(lw.listCalls.map(withoutTime)).toEqual([{ limit: 500, resourceVersion: "0" }, { limit: 500 }]);
      expect(lw.listCalls.map((c) => c.at)).toEqual([0, 0]);
      expect(calls).toEqual(["replace@8 [a]"]);
      await stop();
    }
  });

  it("retries a failed list with growing backoff", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(connectionReset(), connectionReset(), page([], "3"));
    const { calls, stop } = run(lw);
    await vi.advanceTimersByTimeAsync(799);
    expect(lw.listCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(lw.listCalls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1600);
    expect(lw.listCalls.map((c) => c.at)).toEqual([0, 800, 2400]);
    expect(calls).toEqual(["replace@3 []"]);
    expect(lw.watches).toHaveLength(1);
    await stop();
  });

  it("applies watch events and advances the resourceVersion; bookmarks only advance it", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "5"));
    const { reflector, calls, stop } = run(lw);
    await settle();
    lw.lastWatch.push(ev("ADDED", cm("b", "6")), ev("MODIFIED", cm("a", "7")));
    await settle();
    expect(reflector.lastSyncResourceVersion()).toBe("7");
    lw.lastWatch.push(bookmark("42"));
    await settle();
    expect(reflector.lastSyncResourceVersion()).toBe("42");
    lw.lastWatch.push(ev("DELETED", cm("b", "43")));
    await settle();
    expect(calls).toEqual(["replace@5 [a]", "ADDED b@6", "MODIFIED a@7", "DELETED b@43"]);
    await stop();
  });

  it("re-watches at once from the last resourceVersion when the server ends a watch, without relisting", async () => {
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1")], "5"))
      .scriptWatch({ events: [bookmark("20")], ending: "end" });
    const { calls, stop } = run(lw, { inactivityTimeoutMs: 600_000 });
    await settle();
    expect(lw.watches).toHaveLength(2);
    expect(lw.watches[1]?.options.resourceVersion).toBe("20");
    expect(lw.watches[1]?.at).toBe(lw.watches[0]?.at);
    // an idle watch with no events, ended by the server after its timeout: also re-watched at once
    await vi.advanceTimersByTimeAsync(300_000);
    lw.lastWatch.end();
    await settle();
    expect(lw.watches).toHaveLength(3);
    expect(lw.watches[2]?.options.resourceVersion).toBe("20");
    expect(lw.watches[2]?.at).toBe(300_000);
    expect(lw.listCalls).toHaveLength(1);
    expect(calls).toEqual(["replace@5 [a]"]);
    await stop();
  });

  it("backs off when a watch ends at once without any event, instead of spinning", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([], "5")).scriptWatch({ ending: "end" });
    const { stop } = run(lw);
    await settle();
    expect(lw.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.watches).toHaveLength(2);
    expect(lw.lastWatch.options.resourceVersion).toBe("5");
    expect(lw.listCalls).toHaveLength(1);
    await stop();
  });

  it("relists after 410 Gone from the watch call, with a consistent read", async () => {
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1")], "5"), page([cm("b", "9")], "9"))
      .scriptWatch({ ending: gone() });
    const { calls, stop } = run(lw);
    await settle();
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.listCalls.map(withoutTime)).toEqual([{ limit: 500, resourceVersion: "0" }, { limit: 500 }]);
    expect(calls).toEqual(["replace@5 [a]", "replace@9 [b]"]);
    expect(lw.lastWatch.options.resourceVersion).toBe("9");
    await stop();
  });

  it("relists after a 410 ERROR event, but only re-watches after another ERROR event", async () => {
    const internalError: WatchEvent<CM> = {
      type: "ERROR",
      object: { kind: "Status", code: 500, reason: "InternalError", message: "etcd hiccup" },
    };
    const expired: WatchEvent<CM> = {
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version: 5 (8)" },
    };
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1")], "5"), page([cm("a", "6")], "9"))
      .scriptWatch({ events: [ev("MODIFIED", cm("a", "6")), internalError] }, { events: [expired] });
    const { calls, stop } = run(lw);
    await settle();
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.watches).toHaveLength(2);
    expect(lw.watches[1]?.options.resourceVersion).toBe("6");
    expect(lw.listCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1600);
    expect(lw.listCalls).toHaveLength(2);
    expect(calls).toEqual(["replace@5 [a]", "MODIFIED a@6", "replace@9 [a]"]);
    expect(lw.lastWatch.options.resourceVersion).toBe("9");
    await stop();
  });

  it("aborts a watch that stays silent for inactivityTimeoutMs and reconnects from the last resourceVersion", async () => {
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1")], "5"))
      .scriptWatch({ events: [ev("MODIFIED", cm("a", "6"))] }); // then silent forever
    lw.honorAbort = false; // a half-open connection: the stream would never notice the abort itself
    const { stop } = run(lw, { inactivityTimeoutMs: 150_000 });
    await settle();
    const first = lw.lastWatch;
    await vi.advanceTimersByTimeAsync(149_999);
    expect(first.aborted).toBe(false);
    expect(lw.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(first.aborted).toBe(true);
    expect(lw.watches).toHaveLength(2);
    expect(lw.lastWatch.options.resourceVersion).toBe("6");
    expect(lw.lastWatch.at).toBe(150_000);
    // every event, bookmarks included, restarts the inactivity clock
    const second = lw.lastWatch;
    await vi.advanceTimersByTimeAsync(100_000);
    second.push(bookmark("7"));
    await vi.advanceTimersByTimeAsync(149_999);
    expect(second.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.aborted).toBe(true);
    expect(lw.lastWatch.options.resourceVersion).toBe("7");
    expect(lw.listCalls).toHaveLength(1);
    await stop();
  });

  it("reconnects after connection errors with backoff 800 ms doubling to 30 s, reset after 2 min healthy", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([], "5"));
    lw.scriptWatch(...Array.from({ length: 9 }, () => ({ ending: connectionReset() })));
    const { stop } = run(lw);
    await settle();
    for (let i = 0; i < 9; i++) await vi.advanceTimersToNextTimerAsync();
    expect(lw.watches).toHaveLength(10);
    const gaps = (from: number, to: number) =>
      lw.watches.slice(from, to).map((w, i) => w.at - (lw.watches[from + i - 1]?.at ?? 0));
    expect(gaps(1, 10)).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
    expect(lw.watches.every((w) => w.options.resourceVersion === "5")).toBe(true);
    expect(lw.listCalls).toHaveLength(1);

    // watch 10 is healthy for 2 minutes, then fails: the backoff starts over at 800 ms
    const healthySince = lw.lastWatch.at;
    await vi.advanceTimersByTimeAsync(60_000);
    lw.lastWatch.push(bookmark("6"));
    await vi.advanceTimersByTimeAsync(60_000);
    lw.lastWatch.fail(connectionReset());
    await vi.advanceTimersToNextTimerAsync();
    expect(lw.watches).toHaveLength(11);
    expect(lw.lastWatch.at - (healthySince + 120_000)).toBe(800);

    // watch 11 is healthy for only one minute: the backoff keeps growing
    const since = lw.lastWatch.at;
    await vi.advanceTimersByTimeAsync(60_000);
    lw.lastWatch.fail(connectionReset());
    await vi.advanceTimersToNextTimerAsync();
    expect(lw.watches).toHaveLength(12);
    expect(lw.lastWatch.at - (since + 60_000)).toBe(1600);
    expect(lw.lastWatch.options.resourceVersion).toBe("6");
    await stop();
  });

  it("applies the transform to listed and watched objects; drops managedFields by default", async () => {
    const listed = cm("a", "1", { managedFields: true });
    const watched = cm("b", "2", { managedFields: true });
    const seen: CM[] = [];
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([listed], "1"))
      .scriptWatch({ events: [ev("ADDED", watched)] });
    const r = new Reflector<CM>(lw, {
      replace: (items) => seen.push(...items),
      apply: (_, o) => seen.push(o),
    });
    const controller = new AbortController();
    const done = r.run(controller.signal);
    await settle();
    expect(seen.map((o) => o.metadata.managedFields)).toEqual([undefined, undefined]);
    expect(seen.map((o) => "managedFields" in o.metadata)).toEqual([false, false]);
    controller.abort();
    await done;

    const lw2 = new FakeListerWatcher<CM>()
      .replyList(page([listed], "1"))
      .scriptWatch({ events: [ev("ADDED", watched)] });
    const { calls, stop } = run(lw2, {
      transform: (o) => ({ ...o, metadata: { ...o.metadata, name: `${o.metadata.name}!` } }),
    });
    await settle();
    expect(calls).toEqual(["replace@1 [a!]", "ADDED b!@2"]);
    await stop();
  });

  it("stops promptly in every state and leaves no timer behind", async () => {
    // while a list is in flight
    const listing = new FakeListerWatcher<CM>();
    const a = run(listing);
    await settle();
    expect(listing.pendingLists).toHaveLength(1);
    await a.stop();
    expect(listing.pendingLists[0]?.aborted).toBe(true);

    // while watching (the inactivity timer is pending)
    const watching = new FakeListerWatcher<CM>().replyList(page([], "1"));
    const b = run(watching);
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    await b.stop();
    expect(watching.lastWatch.aborted).toBe(true);

    // while sleeping before a retry
    const sleeping = new FakeListerWatcher<CM>().replyList(connectionReset());
    const c = run(sleeping);
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    await c.stop();
    expect(sleeping.listCalls).toHaveLength(1);

    // between the list and the watch (aborted by whoever received the list)
    const between = new FakeListerWatcher<CM>().replyList(page([], "1"));
    const controller = new AbortController();
    const reflector = new Reflector<CM>(between, { replace: () => controller.abort(), apply: () => {} });
    let finished = false;
    const done = reflector.run(controller.signal).then(() => {
      finished = true;
    });
    await settle();
    expect(finished).toBe(true);
    expect(between.watches).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
    await done;
  });
});

/** The bookmark that ends a streaming list's initial events. */
function initialEventsEnd(resourceVersion: string): WatchEvent<CM> {
  return {
    type: "BOOKMARK",
    object: { metadata: { resourceVersion, annotations: { "k8s.io/initial-events-end": "true" } } } as CM,
  };
}

const STREAMING = { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" };

describe("Reflector with a streaming list (WatchList)", () => {
  it("fills the sink from the initial events, then watches on the same call", async () => {
    const lw = new FakeListerWatcher<CM>().scriptWatch({
      events: [ev("ADDED", cm("a", "3")), ev("ADDED", cm("b", "4")), bookmark("7"), initialEventsEnd("10")],
    });
    const { reflector, calls, stop } = run(lw, { watchList: true });
    await settle();
    expect(lw.listCalls).toHaveLength(0);
    expect(calls).toEqual(["replace@10 [a,b]"]);
    const { signal: _, ...options } = lw.lastWatch.options;
    expect(options).toEqual({
      resourceVersion: "0", // like a first list: from the watch cache
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      ...STREAMING,
    });
    lw.lastWatch.push(ev("MODIFIED", cm("a", "11")));
    await settle();
    expect(calls).toEqual(["replace@10 [a,b]", "MODIFIED a@11"]);
    expect(reflector.lastSyncResourceVersion()).toBe("11");
    // the server ends the call: a plain watch from where it was, no list of any kind
    lw.lastWatch.end();
    await settle();
    expect(lw.watches).toHaveLength(2);
    const { signal: __, ...next } = lw.lastWatch.options;
    expect(next).toEqual({ resourceVersion: "11", allowWatchBookmarks: true, timeoutSeconds: 300 });
    await stop();
  });

  it("is used when asked, never by default (not even when the ListerWatcher supports it)", async () => {
    const byDefault = Object.assign(new FakeListerWatcher<CM>(), { supportsWatchList: true }).replyList(
      page([], "1"),
    );
    const c = run(byDefault);
    await settle();
    expect(byDefault.listCalls).toHaveLength(1);
    expect(byDefault.watches.every((w) => w.options.sendInitialEvents !== true)).toBe(true);
    await c.stop();
    const streaming = Object.assign(new FakeListerWatcher<CM>(), { supportsWatchList: true });
    const b = run(streaming, { watchList: true });
    await settle();
    expect(streaming.listCalls).toHaveLength(0);
    expect(streaming.lastWatch.options.sendInitialEvents).toBe(true);
    await b.stop();
  });

  it("lists instead when the server refuses it, and does not ask again", async () => {
    const forbidden = new ApiError(
      422,
      "Invalid",
      "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
    );
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1")], "5"), page([cm("a", "6")], "9"))
      .scriptWatch({ ending: forbidden }, { ending: gone() });
    const { calls, stop } = run(lw, { watchList: true });
    await settle();
    expect(lw.listCalls.map(withoutTime)).toEqual([{ limit: 500, resourceVersion: "0" }]);
    expect(lw.listCalls[0]?.at).toBe(0); // at once, no backoff
    expect(lw.watches[1]?.options.sendInitialEvents).toBeUndefined();
    await vi.advanceTimersByTimeAsync(800); // the 410: a consistent list, not a streaming one
    expect(lw.listCalls.map(withoutTime)).toEqual([{ limit: 500, resourceVersion: "0" }, { limit: 500 }]);
    expect(lw.watches.map((w) => w.options.sendInitialEvents)).toEqual([true, undefined, undefined]);
    expect(calls).toEqual(["replace@5 [a]", "replace@9 [a]"]);
    await stop();
  });

  it("lists at once when a streaming list breaks midway, and streams again on the next relist", async () => {
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1"), cm("b", "2")], "5"))
      .scriptWatch(
        { events: [ev("ADDED", cm("a", "1"))], ending: connectionReset() },
        { ending: gone() },
        { events: [ev("ADDED", cm("b", "2")), initialEventsEnd("12")] },
      );
    const { calls, stop } = run(lw, { watchList: true });
    await settle();
    expect(lw.listCalls.map(withoutTime)).toEqual([{ limit: 500, resourceVersion: "0" }]);
    expect(calls).toEqual(["replace@5 [a,b]"]); // the partial stream is never delivered
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.watches).toHaveLength(3);
    const { signal: _, ...options } = lw.lastWatch.options;
    expect(options).toEqual({
      resourceVersion: "",
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      ...STREAMING,
    });
    expect(calls).toEqual(["replace@5 [a,b]", "replace@12 [b]"]);
    expect(lw.listCalls).toHaveLength(1);
    await stop();
  });

  it("does not list again when the watch fails after a complete streaming list", async () => {
    const lw = new FakeListerWatcher<CM>().scriptWatch({
      events: [ev("ADDED", cm("a", "1")), initialEventsEnd("5")],
      ending: connectionReset(),
    });
    const { calls, stop } = run(lw, { watchList: true });
    await settle();
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.watches).toHaveLength(2);
    expect(lw.lastWatch.options.resourceVersion).toBe("5");
    expect(lw.lastWatch.options.sendInitialEvents).toBeUndefined();
    expect(lw.listCalls).toHaveLength(0);
    expect(calls).toEqual(["replace@5 [a]"]);
    await stop();
  });

  it("treats an ERROR event or a call that ends before the initial-events-end bookmark as a failed stream", async () => {
    const expired: WatchEvent<CM> = {
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version" },
    };
    for (const script of [
      { events: [expired] },
      { events: [ev("ADDED", cm("a", "1"))], ending: "end" as const },
    ]) {
      const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "5")).scriptWatch(script);
      const { calls, stop } = run(lw, { watchList: true });
      await settle();
      expect(lw.listCalls).toHaveLength(1);
      expect(calls).toEqual(["replace@5 [a]"]);
      await stop();
    }
  });
});
