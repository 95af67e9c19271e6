import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keyOf } from "../api/object.ts";
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
import { type EventHandler, Informer, type InformerOptions } from "./informer.ts";
import { NAMESPACE_INDEX, OWNER_UID_INDEX, type ReadStore } from "./store.ts";

type CM = ReturnType<typeof cm>;

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets every pending promise run, without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

/** A handler that writes each event as a line: "add ns/name@rv initial", "update ns/name@1->2", ... */
function recorder(lines: string[]): EventHandler<CM> {
  const at = (o: CM) => `${keyOf(o)}@${o.metadata.resourceVersion}`;
  return {
    onAdd: (o, initial) => lines.push(`add ${at(o)}${initial ? " initial" : ""}`),
    onUpdate: (a, b) => lines.push(`update ${at(a)}->${b.metadata.resourceVersion}`),
    onDelete: (o) => lines.push(`delete ${at(o)}`),
  };
}

/** Starts an informer with a recording handler; `random` is 0 so backoff delays are exact. */
function run(lw: FakeListerWatcher<CM>, options: InformerOptions<CM> = {}) {
  const informer = new Informer<CM>(lw, { random: () => 0, ...options });
  const events: string[] = [];
  informer.addEventHandler(recorder(events));
  const controller = new AbortController();
  const done = informer.start(controller.signal);
  return {
    informer,
    events,
    async stop() {
      controller.abort();
      await done;
      expect(vi.getTimerCount()).toBe(0);
    },
  };
}

/** The store's content as sorted "key@rv" strings. */
const contents = (store: ReadStore<CM>) =>
  store
    .list()
    .map((o) => `${keyOf(o)}@${o.metadata.resourceVersion}`)
    .sort();
const names = (objs: CM[]) => objs.map((o) => o.metadata.name).sort();

describe("Informer", () => {
  it("stores the paginated initial list, emits initial adds, then reports synced", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(
      page([cm("a", "1"), cm("b", "2")], "10", "c1"),
      page([cm("c", "3")], "10"),
    );
    const { informer, events, stop } = run(lw, { pageSize: 2 });
    const syncedDuringAdds: boolean[] = [];
    informer.addEventHandler({ onAdd: () => syncedDuringAdds.push(informer.hasSynced()) });
    const synced = informer.waitForSync();
    expect(informer.hasSynced()).toBe(false);
    await settle();
    expect(await synced).toBe(true);
    expect(informer.hasSynced()).toBe(true);
    expect(syncedDuringAdds).toEqual([false, false, false]);
    expect(lw.listCalls).toHaveLength(2);
    expect(events).toEqual(["add default/a@1 initial", "add default/b@2 initial", "add default/c@3 initial"]);
    expect(contents(informer.store)).toEqual(["default/a@1", "default/b@2", "default/c@3"]);
    expect(informer.store.size).toBe(3);
    expect(informer.store.get("default/b")?.metadata.name).toBe("b");
    expect(informer.lastSyncResourceVersion()).toBe("10");
    expect(lw.lastWatch.options.resourceVersion).toBe("10");
    await stop();
  });

  it("applies watch adds, updates and deletes to the store and the handlers", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "1"));
    const { informer, events, stop } = run(lw);
    await settle();
    lw.lastWatch.push(
      ev("ADDED", cm("b", "2")),
      ev("MODIFIED", cm("a", "3", { data: { k: "v" } })),
      ev("DELETED", cm("b", "4")),
    );
    await settle();
    expect(events).toEqual([
      "add default/a@1 initial",
      "add default/b@2",
      "update default/a@1->3",
      "delete default/b@4",
    ]);
    expect(informer.store.get("default/a")?.data).toEqual({ k: "v" });
    expect(informer.store.get("default/b")).toBeUndefined();
    expect(informer.lastSyncResourceVersion()).toBe("4");
    await stop();
  });

  it("fires nothing for an update whose resourceVersion did not change", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "1"));
    const { events, stop } = run(lw);
    await settle();
    lw.lastWatch.push(ev("MODIFIED", cm("a", "1")), ev("ADDED", cm("a", "1")));
    await settle();
    expect(events).toEqual(["add default/a@1 initial"]);
    lw.lastWatch.push(ev("MODIFIED", cm("a", "2")));
    await settle();
    expect(events).toEqual(["add default/a@1 initial", "update default/a@1->2"]);
    await stop();
  });

  it("relists after 410 and emits exactly the difference, with the store swapped before any event", async () => {
    const lw = new FakeListerWatcher<CM>()
      .replyList(
        page([cm("a", "1"), cm("b", "1"), cm("c", "1")], "5"),
        page([cm("a", "1"), cm("b", "7"), cm("d", "8")], "9"),
      )
      .scriptWatch({ ending: gone() });
    const { informer, events, stop } = run(lw);
    const storeAtEvents: string[][] = [];
    await settle();
    informer.addEventHandler({
      onAdd: (_, initial) => !initial && storeAtEvents.push(contents(informer.store)),
      onUpdate: () => storeAtEvents.push(contents(informer.store)),
      onDelete: () => storeAtEvents.push(contents(informer.store)),
    });
    expect(events).toEqual(["add default/a@1 initial", "add default/b@1 initial", "add default/c@1 initial"]);
    events.length = 0;
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.listCalls).toHaveLength(2);
    expect(events).toEqual(["add default/d@8", "update default/b@1->7", "delete default/c@1"]);
    const fresh = ["default/a@1", "default/b@7", "default/d@8"];
    expect(contents(informer.store)).toEqual(fresh);
    expect(storeAtEvents).toEqual([fresh, fresh, fresh]);
    expect(informer.lastSyncResourceVersion()).toBe("9");
    expect(lw.lastWatch.options.resourceVersion).toBe("9");
    await stop();
  });

  it("relists after a 410 ERROR event without events for unchanged objects", async () => {
    const lw = new FakeListerWatcher<CM>()
      .replyList(page([cm("a", "1"), cm("b", "1")], "5"), page([cm("a", "1"), cm("b", "1")], "9"))
      .scriptWatch({
        events: [
          { type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old" } },
        ],
      });
    const { informer, events, stop } = run(lw);
    await settle();
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.listCalls).toHaveLength(2);
    expect(events).toEqual(["add default/a@1 initial", "add default/b@1 initial"]);
    expect(informer.lastSyncResourceVersion()).toBe("9");
    await stop();
  });

  it("keeps the namespace, ownerUid and custom indexes in step through add, update, delete and relist", async () => {
    const byData = (o: CM) => Object.values(o.data ?? {});
    const lw = new FakeListerWatcher<CM>()
      .replyList(
        page(
          [
            cm("a", "1", { namespace: "x", owners: ["u1"], data: { k: "v1" } }),
            cm("b", "1", { namespace: "y", owners: ["u1", "u2"] }),
          ],
          "1",
        ),
        page(
          [
            cm("c", "3", { namespace: "x", owners: ["u1"] }),
            cm("d", "9", { namespace: "y", owners: ["u2"], data: { k: "v1" } }),
          ],
          "9",
        ),
      )
      .scriptWatch({
        events: [
          ev("MODIFIED", cm("a", "2", { namespace: "x", owners: ["u2"], data: { k: "v2" } })),
          ev("DELETED", cm("b", "3", { namespace: "y", owners: ["u1", "u2"] })),
          ev("ADDED", cm("c", "3", { namespace: "x", owners: ["u1"] })),
        ],
      })
      .scriptWatch({ ending: gone() });
    const { informer, stop } = run(lw, { indexers: { byData } });
    await settle();
    const s = informer.store;
    expect(names(s.byIndex(NAMESPACE_INDEX, "x"))).toEqual(["a", "c"]);
    expect(names(s.byIndex(NAMESPACE_INDEX, "y"))).toEqual([]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u1"))).toEqual(["c"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u2"))).toEqual(["a"]);
    expect(names(s.byIndex("byData", "v1"))).toEqual([]);
    expect(names(s.byIndex("byData", "v2"))).toEqual(["a"]);

    // an index added after sync covers the objects already stored
    informer.addIndexer("byName", (o) => [o.metadata.name ?? ""]);
    expect(names(s.byIndex("byName", "c"))).toEqual(["c"]);

    // the first watch stays open; end it so the next one answers 410 and forces a relist
    lw.lastWatch.push(bookmark("3")).end();
    await settle();
    await vi.advanceTimersByTimeAsync(800);
    expect(lw.listCalls).toHaveLength(2);
    expect(names(s.byIndex(NAMESPACE_INDEX, "x"))).toEqual(["c"]);
    expect(names(s.byIndex(NAMESPACE_INDEX, "y"))).toEqual(["d"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u1"))).toEqual(["c"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u2"))).toEqual(["d"]);
    expect(names(s.byIndex("byData", "v1"))).toEqual(["d"]);
    expect(names(s.byIndex("byData", "v2"))).toEqual([]);
    expect(names(s.byIndex("byName", "a"))).toEqual([]);
    expect(names(s.byIndex("byName", "d"))).toEqual(["d"]);
    await stop();
  });

  it("stores objects without managedFields by default; a custom transform adds to the stripping", async () => {
    const list = page([cm("a", "1", { managedFields: true })], "1");
    const added = ev("ADDED", cm("b", "2", { managedFields: true }));
    const lw = new FakeListerWatcher<CM>().replyList(list).scriptWatch({ events: [added] });
    const { informer, stop } = run(lw);
    await settle();
    expect(informer.store.size).toBe(2);
    expect(informer.store.list().filter((o) => "managedFields" in o.metadata)).toEqual([]);
    await stop();

    const lw2 = new FakeListerWatcher<CM>().replyList(list).scriptWatch({ events: [added] });
    const custom = run(lw2, {
      transform: (o) => ({ ...o, metadata: { ...o.metadata, labels: { seen: "yes" } } }),
    });
    await settle();
    const stored = custom.informer.store.list();
    expect(stored.map((o) => o.metadata.labels)).toEqual([{ seen: "yes" }, { seen: "yes" }]);
    expect(stored.filter((o) => "managedFields" in o.metadata)).toEqual([]);
    await custom.stop();

    const lw3 = new FakeListerWatcher<CM>().replyList(list).scriptWatch({ events: [added] });
    const kept = run(lw3, { keepManagedFields: true });
    await settle();
    expect(kept.informer.store.list().every((o) => o.metadata.managedFields?.length === 1)).toBe(true);
    await kept.stop();
  });

  it("lets the list leave managedFields out unless they are kept, and transforms each object once", async () => {
    const asked: { dropManagedFields?: boolean | undefined; transform?: unknown }[] = [];
    const transformed: string[] = [];
    /** A ListerWatcher that transforms as it decodes, as the client's does. */
    const decoding = () => {
      const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "1"));
      const list = lw.list.bind(lw);
      lw.list = async (options) => {
        asked.push({ dropManagedFields: options.dropManagedFields, transform: options.transform });
        const result = await list(options);
        return { ...result, items: result.items.map((o) => options.transform!(o)), transformed: true };
      };
      return lw;
    };
    const transform = (o: CM) => {
      transformed.push(o.metadata.name ?? "");
      return o;
    };
    const a = run(decoding(), { transform });
    await settle();
    expect(a.informer.store.size).toBe(1);
    await a.stop();
    const b = run(decoding(), { keepManagedFields: true });
    await settle();
    await b.stop();
    expect(asked.map((o) => o.dropManagedFields)).toEqual([true, false]);
    expect(asked.every((o) => typeof o.transform === "function")).toBe(true);
    expect(transformed).toEqual(["a"]); // by the ListerWatcher, not again by the reflector
  });

  it("contains an async handler that rejects: logged, no unhandled rejection, later events still run", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => lines.push(line) });
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "1"));
    const informer = new Informer<CM>(lw, { logger, random: () => 0 });
    const asyncHandler: EventHandler<CM> = {
      onAdd: async () => {
        throw new Error("async handler bug");
      },
    };
    informer.addEventHandler(asyncHandler);
    const events: string[] = [];
    informer.addEventHandler(recorder(events));
    const controller = new AbortController();
    const done = informer.start(controller.signal);
    await settle();
    lw.lastWatch.push(ev("ADDED", cm("b", "2")));
    await settle();
    expect(events).toEqual(["add default/a@1 initial", "add default/b@2"]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("informer event handler rejected");
    expect(lines[0]).toContain("async handler bug");
    controller.abort();
    await done;
  });

  it("re-delivers every object as an update (old === new) each resync period, with up to 10% jitter", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1"), cm("b", "1")], "1"));
    const informer = new Informer<CM>(lw, { random: () => 0.5, resyncPeriodMs: 10_000 });
    const events: string[] = [];
    informer.addEventHandler(recorder(events));
    const same: boolean[] = [];
    informer.addEventHandler({ onUpdate: (o, n) => same.push(o === n) });
    const controller = new AbortController();
    const done = informer.start(controller.signal);
    await settle();
    events.length = 0;
    await vi.advanceTimersByTimeAsync(10_499);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(events.sort()).toEqual(["update default/a@1->1", "update default/b@1->1"]);
    await vi.advanceTimersByTimeAsync(10_500);
    expect(events).toHaveLength(4);
    expect(same).toEqual([true, true, true, true]);
    controller.abort();
    await done;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps the last list error until a list succeeds", async () => {
    const forbidden = new ApiError(403, "Forbidden", 'configmaps is forbidden: User "op" cannot list');
    const lw = new FakeListerWatcher<CM>().replyList(forbidden, page([cm("a", "1")], "1"));
    const { informer, stop } = run(lw);
    await settle();
    expect(informer.hasSynced()).toBe(false);
    expect(informer.lastError()?.message).toMatch(/forbidden/);
    await vi.advanceTimersByTimeAsync(800); // the first backoff
    expect(informer.hasSynced()).toBe(true);
    expect(informer.lastError()).toBeUndefined();
    await stop();
  });

  it("replays the store as initial adds to a handler added after sync, then delivers live events", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1"), cm("b", "1")], "1"));
    const { informer, stop } = run(lw);
    await settle();
    const late: string[] = [];
    const unsubscribe = informer.addEventHandler(recorder(late));
    expect(late.sort()).toEqual(["add default/a@1 initial", "add default/b@1 initial"]);
    lw.lastWatch.push(ev("ADDED", cm("c", "2")));
    await settle();
    expect(late.at(-1)).toBe("add default/c@2");
    unsubscribe();
    lw.lastWatch.push(ev("DELETED", cm("c", "3")));
    await settle();
    expect(late).toHaveLength(3);
    expect(informer.store.size).toBe(2);
    await stop();
  });

  it("logs a throwing handler and keeps going: other handlers and later events still run", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => lines.push(line) });
    const lw = new FakeListerWatcher<CM>().replyList(page([cm("a", "1")], "1"));
    const informer = new Informer<CM>(lw, { logger, random: () => 0 });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error("handler bug");
      },
      onUpdate: () => {
        throw new Error("handler bug");
      },
    });
    const events: string[] = [];
    informer.addEventHandler(recorder(events));
    const controller = new AbortController();
    const done = informer.start(controller.signal);
    await settle();
    lw.lastWatch.push(ev("MODIFIED", cm("a", "2")), ev("ADDED", cm("b", "3")));
    await settle();
    expect(events).toEqual(["add default/a@1 initial", "update default/a@1->2", "add default/b@3"]);
    expect(informer.hasSynced()).toBe(true);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain("handler bug");
    controller.abort();
    await done;
  });

  it("stops cleanly: start() resolves, nothing is left pending, waiters get false, a second start fails", async () => {
    const lw = new FakeListerWatcher<CM>().replyList(connectionReset());
    const informer = new Informer<CM>(lw, { random: () => 0 });
    const controller = new AbortController();
    const done = informer.start(controller.signal);
    await expect(informer.start(controller.signal)).rejects.toThrow(/twice/);
    const waiting = new AbortController();
    const synced = informer.waitForSync(waiting.signal);
    await settle();
    expect(vi.getTimerCount()).toBe(1); // the backoff before the next list
    waiting.abort();
    expect(await synced).toBe(false);
    controller.abort();
    await done;
    expect(vi.getTimerCount()).toBe(0);
    expect(informer.hasSynced()).toBe(false);
  });
});
