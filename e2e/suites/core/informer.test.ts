// Informers against the real kube-apiserver: sync, events, a real 410 Gone, an API server restart,
// and bookmarks.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  type Client,
  ConfigMap,
  type Informer,
  InformerFactory,
  type InformerFactoryOptions,
  type ObjectOf,
  type WatchEvent,
} from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type CM = ObjectOf<typeof ConfigMap>;
const run = promisify(execFile);
const clusterScript = process.env.CAPSTAN_CLUSTER_SCRIPT;

let client: Client;
let ns: TestNamespace;

beforeAll(async () => {
  ({ client } = connect());
  ns = await createNamespace(client, "informer");
  await createMany(1500, "bulk"); // shared by every test; each changes its own bulk-N objects
});
afterAll(async () => {
  await ns?.cleanup();
  await client?.close();
});

function cm(name: string, value = "v1"): CM {
  return { metadata: { name, namespace: ns.name, labels: { suite: "informer" } }, data: { value } };
}

async function createMany(count: number, prefix: string, concurrency = 16): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        await client.create(ConfigMap, cm(`${prefix}-${i}`));
      }
    }),
  );
}

/** The store's view as name -> resourceVersion. */
function snapshot(objs: CM[]): Map<string, string> {
  return new Map(objs.map((o) => [o.metadata.name ?? "", o.metadata.resourceVersion ?? ""]));
}

async function freshList(): Promise<Map<string, string>> {
  return snapshot((await client.list(ConfigMap, { namespace: ns.name })).items);
}

/** Records what the informer tells its handlers. */
function record(informer: Informer<CM>) {
  const events: { type: "add" | "update" | "delete"; name: string }[] = [];
  informer.addEventHandler({
    onAdd: (o) => events.push({ type: "add", name: o.metadata.name ?? "" }),
    onUpdate: (_o, n) => events.push({ type: "update", name: n.metadata.name ?? "" }),
    onDelete: (o) => events.push({ type: "delete", name: o.metadata.name ?? "" }),
  });
  return events;
}

/**
 * A view of `inner` whose watch calls can be held at a gate and whose watch events are observed; the informer lists
 * and watches through it as through any Client (core's own lister-watcher).
 */
function gatedClient(inner: Client) {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let current: AbortController | undefined;
  const watchRvs: string[] = [];
  const seen: WatchEvent<CM>["type"][] = [];
  let lists = 0;
  const listPage: Client["listPage"] = (kind, o) => {
    if (!o?.continue) lists++;
    return inner.listPage(kind, o);
  };
  const watch = async function* (kind: Parameters<Client["watch"]>[0], o: Parameters<Client["watch"]>[1]) {
    watchRvs.push(o?.resourceVersion ?? "");
    if (gate) await gate;
    current = new AbortController();
    const signal = AbortSignal.any([...(o?.signal ? [o.signal] : []), current.signal]);
    for await (const ev of inner.watch(kind, { ...o, signal })) {
      seen.push(ev.type);
      yield ev;
    }
  };
  const client = new Proxy(inner, {
    get(target, prop) {
      if (prop === "listPage") return listPage;
      if (prop === "watch") return watch;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    client,
    watchRvs,
    seen,
    lists: () => lists,
    /** Cuts the current watch and holds the next one until release(). */
    hold() {
      gate = new Promise((r) => {
        open = r;
      });
      current?.abort();
    },
    release() {
      gate = undefined;
      open?.();
    },
  };
}

/** The namespace's ConfigMaps in a shared informer, listed and watched through `source`. */
function startInformer(source: Client, informerOptions: InformerFactoryOptions["informerOptions"] = {}) {
  const factory = new InformerFactory({ client: source, informerOptions });
  const informer = factory.informerFor(ConfigMap, { namespace: ns.name });
  const stop = new AbortController();
  factory.start(stop.signal);
  return {
    informer,
    stop: () => {
      stop.abort();
      return factory.stopped();
    },
  };
}

describe("Informer on a real API server", () => {
  it("syncs many objects, drops managedFields, and delivers add/update/delete", async () => {
    const { informer, stop } = startInformer(client, { pageSize: 200 });
    const events = record(informer);
    expect(await informer.waitForSync(AbortSignal.timeout(60_000))).toBe(true);
    expect(informer.store.size).toBeGreaterThanOrEqual(1500);
    expect(informer.store.list().every((o) => o.metadata.managedFields === undefined)).toBe(true);
    expect(await freshList()).toEqual(snapshot(informer.store.list()));

    await client.create(ConfigMap, cm("late"));
    await client.patch(ConfigMap, "bulk-0", ns.name, { data: { value: "v2" } });
    await client.delete(ConfigMap, "bulk-1", ns.name);
    await eventually(() => {
      expect(events.filter((e) => e.type !== "add" || e.name === "late")).toEqual(
        expect.arrayContaining([
          { type: "add", name: "late" },
          { type: "update", name: "bulk-0" },
          { type: "delete", name: "bulk-1" },
        ]),
      );
    });
    expect(informer.store.get(`${ns.name}/bulk-0`)?.data?.value).toBe("v2");
    expect(informer.store.get(`${ns.name}/bulk-1`)).toBeUndefined();
    await stop();
  });

  // Fault injection needs the local cluster's script (restart-apiserver, etcdctl); on kind these two skip.
  it.skipIf(!clusterScript)(
    "recovers from a real 410 Gone (etcd compacted, API server restarted) with exactly the diff",
    async () => {
      if (!clusterScript) return;
      const gated = gatedClient(client);
      const { informer, stop } = startInformer(gated.client);
      expect(await informer.waitForSync(AbortSignal.timeout(60_000))).toBe(true);
      const events = record(informer);
      await eventually(() => gated.watchRvs.length >= 1); // watching

      gated.hold(); // the informer now waits to resume its watch
      await eventually(() => gated.watchRvs.length >= 2);
      const listsBefore = gated.lists();
      await client.create(ConfigMap, cm("gone-added"));
      await client.patch(ConfigMap, "bulk-2", ns.name, { data: { value: "changed" } });
      await client.delete(ConfigMap, "bulk-3", ns.name);
      // Make staleRv too old for both etcd and the API server's watch cache.
      const status = JSON.parse(
        (await run(clusterScript, ["etcdctl", "endpoint", "status", "-w", "json"])).stdout,
      );
      const revision = String(status[0].Status.header.revision);
      await run(clusterScript, ["etcdctl", "compact", revision]);
      await run(clusterScript, ["restart-apiserver"]);
      const adds = events.length;
      gated.release();

      await eventually(async () => expect(snapshot(informer.store.list())).toEqual(await freshList()), {
        timeoutMs: 60_000,
        message: "store equals a fresh list after the 410",
      });
      expect(events.slice(adds)).toEqual(
        expect.arrayContaining([
          { type: "add", name: "gone-added" },
          { type: "update", name: "bulk-2" },
          { type: "delete", name: "bulk-3" },
        ]),
      );
      // Exactly the difference: nothing for the ~1500 unchanged objects.
      expect(events.length - adds).toBe(3);
      expect(gated.lists()).toBe(listsBefore + 1); // one relist, caused by the 410
      await stop();
    },
  );

  it.skipIf(!clusterScript)("rides out an API server restart under a running informer", async () => {
    if (!clusterScript) return;
    const { informer, stop } = startInformer(client);
    expect(await informer.waitForSync(AbortSignal.timeout(60_000))).toBe(true);
    await run(clusterScript, ["restart-apiserver"]);
    await client.create(ConfigMap, cm("after-restart"));
    await client.delete(ConfigMap, "bulk-4", ns.name);
    await eventually(async () => expect(snapshot(informer.store.list())).toEqual(await freshList()), {
      timeoutMs: 60_000,
      message: "store equals a fresh list after the restart",
    });
    await stop();
  });

  it("receives bookmarks and advances its resourceVersion with them", async () => {
    const gated = gatedClient(client);
    const { informer, stop } = startInformer(gated.client);
    expect(await informer.waitForSync(AbortSignal.timeout(60_000))).toBe(true);
    const before = informer.lastSyncResourceVersion();
    // Writes elsewhere move the global resourceVersion; bookmarks carry it to this quiet namespace.
    const other = await createNamespace(client, "informer-other");
    try {
      await client.create(ConfigMap, { metadata: { name: "elsewhere", namespace: other.name } } as CM);
      await eventually(() => expect(gated.seen).toContain("BOOKMARK"), {
        timeoutMs: 90_000,
        intervalMs: 1000,
      });
      expect(BigInt(informer.lastSyncResourceVersion())).toBeGreaterThan(BigInt(before));
    } finally {
      await other.cleanup();
      await stop();
    }
  });
});
