// Tests of the fake API server through the real Client: storage semantics, scripted faults and latency, the
// request record, and watches (replay, 410 after compaction, selectors) as informers use them.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap, defineKind, type Kind, Namespace, Secret } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { InformerFactory } from "../cache/informer-factory.ts";
import type { Client, WatchEvent } from "../client/client.ts";
import { isAlreadyExists, isApiError, isConflict, isInvalid, isNotFound } from "../client/errors.ts";
import { addFinalizer, removeFinalizer } from "../helpers/finalizers.ts";
import { FakeApiServer } from "./fake-api-server.ts";
import { Widget, widget } from "./widget-fixture.ts";

function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "ns", ...(labels ? { labels } : {}) },
    data,
  };
}

let server: FakeApiServer;
let client: Client;

beforeEach(async () => {
  server = await new FakeApiServer({ kinds: [Widget] }).start();
  client = server.client({ maxAttempts: 1 });
});

afterEach(async () => {
  await client.close();
  await server.stop();
});

/** Collects watch events until `n` have arrived, then aborts the watch. */
async function collect<T extends KubeObject>(
  kind: Kind<T>,
  options: Parameters<Client["watch"]>[1],
  n: number,
  during: () => void = () => {},
): Promise<WatchEvent<T>[]> {
  const abort = new AbortController();
  const events: WatchEvent<T>[] = [];
  const iterator = client.watch(kind, { ...options, signal: abort.signal });
  const first = iterator.next(); // the request is sent
  await vi.waitFor(() => expect(server.log.some((r) => r.verb === "watch" && r.status === 200)).toBe(true));
  during();
  let next = await first;
  while (!next.done) {
    events.push(next.value);
    if (events.length >= n) break;
    next = await iterator.next();
  }
  abort.abort();
  await iterator.return(undefined);
  return events;
}

describe("FakeApiServer storage", () => {
  it("serves seeded objects and refuses to seed what it cannot place", async () => {
    server.seed(widget("a"), widget("b"), configMap("c"));
    expect((await client.get(Widget, "a", "ns")).spec.size).toBe(1);
    expect((await client.list(Widget, { namespace: "ns" })).items.map((w) => w.metadata.name)).toEqual([
      "a",
      "b",
    ]);
    expect(server.get(ConfigMap, "c", "ns")?.metadata.generation).toBe(1);
    const Gadget = defineKind({
      group: "x.dev",
      version: "v1",
      kind: "Gadget",
      plural: "gadgets",
      namespaced: true,
    });
    expect(() =>
      server.seed({ apiVersion: "x.dev/v1", kind: "Gadget", metadata: { name: "g", namespace: "ns" } }),
    ).toThrow(/unknown kind x\.dev\/v1 Gadget.*pass custom kinds in `kinds`/);
    server.register(Gadget);
    expect(() => server.seed({ apiVersion: "x.dev/v1", kind: "Gadget", metadata: { name: "g" } })).toThrow(
      /namespaced: set metadata.namespace/,
    );
  });

  it("creates with server-set fields, refuses duplicates, and ignores status on create", async () => {
    const created = await client.create(Widget, { ...widget("a"), status: { ready: true } });
    expect(created.metadata).toMatchObject({ name: "a", namespace: "ns", generation: 1 });
    expect(created.metadata.uid).toBeTruthy();
    expect(created.metadata.resourceVersion).toBe(server.resourceVersion);
    expect(created.status).toBeUndefined();
    const err = await client.create(Widget, widget("a")).catch((e: unknown) => e);
    expect(isAlreadyExists(err)).toBe(true);
  });

  it("updates conditionally on resourceVersion; the main resource keeps status, /status changes only status", async () => {
    const [stored] = server.seed({ ...widget("a"), status: { ready: false } });
    const updated = await client.update(Widget, { ...stored, spec: { size: 2 }, status: { ready: true } });
    expect(updated.spec.size).toBe(2);
    expect(updated.status).toEqual({ ready: false });
    expect(updated.metadata.generation).toBe(2);
    const stale = await client.update(Widget, { ...stored, spec: { size: 3 } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    const status = await client.updateStatus(Widget, {
      ...updated,
      spec: { size: 9 },
      status: { ready: true },
    });
    expect(status.spec.size).toBe(2);
    expect(status.status).toEqual({ ready: true });
    expect(status.metadata.generation).toBe(2); // status and metadata changes leave generation alone
    const labelled = await client.patch(Widget, "a", "ns", { metadata: { labels: { x: "y" } } });
    expect(labelled.metadata.generation).toBe(2);
  });

  it("applies JSON patches with test operations: a stale finalizer list is a conflict", async () => {
    const [stored] = server.seed(widget("a"));
    const withFinalizer = await addFinalizer(client, Widget, stored, "test.capstan.dev/one");
    expect(withFinalizer.metadata.finalizers).toEqual(["test.capstan.dev/one"]);
    // `stored` still shows no finalizers: the patch's test op fails, which the helper reports as a conflict.
    const err = await addFinalizer(client, Widget, stored, "test.capstan.dev/two").catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect(server.log.at(-1)).toMatchObject({ verb: "patch", patchType: "json", status: 422 });
  });

  it("applies a JSON patch's replace of a missing object member as the API server does: it sets it", async () => {
    server.seed({ ...widget("a"), metadata: { name: "a", namespace: "ns", labels: { app: "w" } } });
    const patched = await client.patch(
      Widget,
      "a",
      "ns",
      [{ op: "replace", path: "/metadata/labels/vault-active", value: "true" }],
      "json",
    );
    expect(patched.metadata.labels).toEqual({ app: "w", "vault-active": "true" });
    // A missing parent is still refused.
    const err = await client
      .patch(Widget, "a", "ns", [{ op: "replace", path: "/metadata/annotations/x", value: "y" }], "json")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
  });

  it("deletes an object with finalizers only once the last finalizer is removed", async () => {
    server.seed({
      ...widget("a"),
      metadata: { name: "a", namespace: "ns", finalizers: ["test.capstan.dev/f"] },
    });
    await client.delete(Widget, "a", "ns");
    const marked = server.get(Widget, "a", "ns");
    expect(marked?.metadata.deletionTimestamp).toBeTruthy();
    const added = await client
      .patch(Widget, "a", "ns", { metadata: { finalizers: ["test.capstan.dev/f", "x.dev/late"] } })
      .catch((e: unknown) => e);
    expect(isInvalid(added)).toBe(true);
    if (!marked) throw new Error("gone too early");
    expect(await removeFinalizer(client, Widget, marked, "test.capstan.dev/f")).toBeDefined();
    expect(server.get(Widget, "a", "ns")).toBeUndefined();
    expect(isNotFound(await client.get(Widget, "a", "ns").catch((e: unknown) => e))).toBe(true);
  });

  it("creates on apply, merges the applied fields into an existing object, and stores nothing on dryRun", async () => {
    await client.apply(ConfigMap, configMap("c", { a: "1" }), { fieldManager: "m" });
    await client.apply(ConfigMap, configMap("c", { b: "2" }), { fieldManager: "m" });
    expect(server.get(ConfigMap, "c", "ns")?.data).toEqual({ a: "1", b: "2" });
    await client.create(ConfigMap, configMap("dry"), { dryRun: true });
    expect(server.get(ConfigMap, "dry", "ns")).toBeUndefined();
  });

  it("refuses a Secret or ConfigMap over 1 MiB with the API server's 422, by apply, create and update", async () => {
    const half = "x".repeat(600 * 1024);
    const secret = (data: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "big", namespace: "ns" },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
    });
    // A Secret's limit counts the decoded values: 1 MiB exactly is accepted, one byte more is not.
    await client.apply(Secret, secret({ a: "x".repeat(1024 * 1024) }), { fieldManager: "m" });
    const err = await client
      .apply(Secret, secret({ a: half, b: half }), { fieldManager: "m" })
      .catch((e: unknown) => e);
    expect(isInvalid(err)).toBe(true);
    expect(isApiError(err) && err.status?.message).toBe(
      'Secret "big" is invalid: data: Too long: must have at most 1048576 bytes',
    );
    expect(isApiError(err) && err.status?.details?.causes?.[0]).toMatchObject({
      reason: "FieldValueTooLong",
      field: "data",
    });
    expect(Buffer.from(server.get(Secret, "big", "ns")?.data?.a ?? "", "base64").length).toBe(1024 * 1024);
    // A ConfigMap's counts keys and values, data and binaryData.
    const created = await client
      .create(ConfigMap, configMap("big", { a: half, b: half }))
      .catch((e: unknown) => e);
    expect(isInvalid(created)).toBe(true);
    expect(isApiError(created) && created.status?.message).toBe(
      'ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes',
    );
    const [small] = server.seed(configMap("small", { a: half }));
    const updated = await client
      .update(ConfigMap, { ...small, data: { a: half, b: half } })
      .catch((e: unknown) => e);
    expect(isInvalid(updated)).toBe(true);
    expect(server.get(ConfigMap, "small", "ns")?.data).toEqual({ a: half });
  });

  it("lists by label and field selectors, a page at a time", async () => {
    server.seed(
      configMap("a", {}, { app: "web", tier: "front" }),
      configMap("b", {}, { app: "web" }),
      configMap("c", {}, { app: "db" }),
      configMap("d"),
      configMap("e", {}, { app: "web" }),
    );
    const names = async (labelSelector: string) =>
      (await client.list(ConfigMap, { namespace: "ns", labelSelector })).items.map((o) => o.metadata.name);
    expect(await names("app=web")).toEqual(["a", "b", "e"]);
    expect(await names("app in (db,web),!tier")).toEqual(["b", "c", "e"]);
    expect(await names("app!=web")).toEqual(["c", "d"]);
    const byName = await client.list(ConfigMap, { fieldSelector: "metadata.name=d" });
    expect(byName.items.map((o) => o.metadata.name)).toEqual(["d"]);
    server.clearLog();
    const paged = await client.list(ConfigMap, { namespace: "ns", limit: 2 });
    expect(paged.items.map((o) => o.metadata.name)).toEqual(["a", "b", "c", "d", "e"]);
    expect(server.log.map((r) => r.verb)).toEqual(["list", "list", "list"]);
  });

  it("serves Namespaces and their status subresource as a cluster-scoped kind", async () => {
    server.seed({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } });
    expect((await client.get(Namespace, "team")).metadata.name).toBe("team");
    await client.patchStatus(Namespace, "team", undefined, { status: { phase: "Active" } });
    expect(server.get(Namespace, "team")?.status?.phase).toBe("Active");
  });
});

describe("FakeApiServer scripts", () => {
  it("answers a scripted 409 a given number of times, then serves normally", async () => {
    const [stored] = server.seed(configMap("c"));
    const conflict = server.fail({ verb: "update", kind: ConfigMap, name: "c" }, 409, { times: 1 });
    const first = await client.update(ConfigMap, { ...stored, data: { a: "1" } }).catch((e: unknown) => e);
    expect(isConflict(first)).toBe(true);
    expect(server.get(ConfigMap, "c", "ns")?.data).toEqual({}); // nothing stored
    await client.update(ConfigMap, { ...stored, data: { a: "1" } });
    expect(conflict.hits).toBe(1);
    expect(server.get(ConfigMap, "c", "ns")?.data).toEqual({ a: "1" });
  });

  it("matches by verb, kind name, namespace and name, and can be removed", async () => {
    server.seed(configMap("c"), widget("w"));
    const notFound = server.fail({ verb: ["get"], kind: "Widget" }, 404);
    expect(isNotFound(await client.get(Widget, "w", "ns").catch((e: unknown) => e))).toBe(true);
    await client.get(ConfigMap, "c", "ns"); // another kind: served
    notFound.remove();
    expect((await client.get(Widget, "w", "ns")).metadata.name).toBe("w");
    expect(notFound.hits).toBe(1);
  });

  it("a scripted 500 on reads is retried by the client until the script runs out", async () => {
    server.seed(configMap("c"));
    const retrying = server.client({ maxAttempts: 5 });
    try {
      server.fail({ verb: "get" }, 500, { times: 2 });
      expect((await retrying.get(ConfigMap, "c", "ns")).metadata.name).toBe("c");
      expect(server.log.map((r) => r.status)).toEqual([500, 500, 200]);
      server.fail({ verb: "get" }, 503, { message: "etcd is down" });
      const down = await client.get(ConfigMap, "c", "ns").catch((e: unknown) => e);
      expect(isApiError(down) && down.code === 503 && down.message.includes("etcd is down")).toBe(true);
    } finally {
      await retrying.close();
    }
  });

  it("delays matching requests: a delayed write is still pending when later requests are answered", async () => {
    server.seed(configMap("c"));
    const slow = server.delay({ verb: "patch" }, 60_000);
    const abort = new AbortController();
    let settled = false;
    const patching = client
      .patch(ConfigMap, "c", "ns", { data: { a: "1" } }, "merge", { signal: abort.signal })
      .finally(() => {
        settled = true;
      });
    await vi.waitFor(() => expect(slow.hits).toBe(1));
    await client.get(ConfigMap, "c", "ns");
    expect(settled).toBe(false);
    abort.abort();
    await expect(patching).rejects.toThrow();
    expect(server.get(ConfigMap, "c", "ns")?.data).toEqual({});
  });

  it("lets a script answer with any reply, or pass", async () => {
    server.seed(configMap("c"));
    server.on({ kind: ConfigMap }, (req) =>
      req.name === "magic" ? { status: 200, body: configMap("magic", { x: "y" }) } : undefined,
    );
    expect((await client.get(ConfigMap, "magic", "ns")).data).toEqual({ x: "y" });
    expect((await client.get(ConfigMap, "c", "ns")).metadata.name).toBe("c");
  });
});

describe("FakeApiServer record", () => {
  it("records each request's verb, kind, namespace, name, subresource, body and answer", async () => {
    server.seed(widget("a"));
    await client.get(Widget, "a", "ns");
    await client.apply(ConfigMap, configMap("c", { k: "v" }), { fieldManager: "me" });
    await client.patchStatus(Widget, "a", "ns", { status: { ready: true } });
    await client.delete(ConfigMap, "c", "ns");
    expect(server.log.map((r) => [r.verb, r.kind, r.namespace, r.name, r.subresource, r.status])).toEqual([
      ["get", "Widget", "ns", "a", "", 200],
      ["apply", "ConfigMap", "ns", "c", "", 201],
      ["patch", "Widget", "ns", "a", "status", 200],
      ["delete", "ConfigMap", "ns", "c", "", 200],
    ]);
    expect(server.log[1]?.body).toMatchObject({ data: { k: "v" } });
    expect(server.log[1]?.query.fieldManager).toBe("me");
    expect(server.writes().map((r) => r.verb)).toEqual(["apply", "patch", "delete"]);
    expect(server.requests[0]).toBe("GET /apis/test.capstan.dev/v1/namespaces/ns/widgets/a");
  });

  it("learns the kind of a collection it did not know from the objects written to it", async () => {
    const Gizmo = defineKind({
      group: "x.dev",
      version: "v2",
      kind: "Gizmo",
      plural: "gizmos",
      namespaced: true,
    });
    await client.create(Gizmo, { metadata: { name: "g", namespace: "ns" } });
    await client.get(Gizmo, "g", "ns");
    expect(server.log.map((r) => r.kind)).toEqual(["Gizmo", "Gizmo"]);
    expect(server.get(Gizmo, "g", "ns")?.metadata.name).toBe("g");
  });
});

describe("FakeApiServer watches", () => {
  it("replays what happened after the requested resourceVersion, then streams", async () => {
    server.seed(widget("a"));
    const from = (await client.list(Widget, { namespace: "ns" })).resourceVersion;
    server.put(Widget, widget("a", 2));
    server.put(Widget, widget("b"));
    const events = await collect(Widget, { namespace: "ns", resourceVersion: from }, 3, () =>
      server.remove(Widget, "ns", "b"),
    );
    expect(events.map((e) => [e.type, (e.object as Widget).metadata.name])).toEqual([
      ["MODIFIED", "a"],
      ["ADDED", "b"],
      ["DELETED", "b"],
    ]);
  });

  it("answers 410 Expired (an ERROR event) for a resourceVersion older than the last compaction", async () => {
    server.seed(widget("a"));
    const from = (await client.list(Widget, {})).resourceVersion;
    server.put(Widget, widget("a", 2));
    server.compact();
    const [event] = await collect(Widget, { resourceVersion: from }, 1);
    expect(event).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } });
  });

  it("a scripted 410 on watch is an ERROR event too", async () => {
    server.fail({ verb: "watch" }, 410, { times: 1 });
    const [event] = await collect(Widget, { resourceVersion: server.resourceVersion }, 1);
    expect(event).toMatchObject({ type: "ERROR", object: { code: 410 } });
  });

  it("sends the current objects first when asked (sendInitialEvents), ending with a marked bookmark", async () => {
    server.seed(widget("a"), widget("b"));
    const abort = new AbortController();
    const res = await fetch(
      `${server.url}/apis/test.capstan.dev/v1/widgets?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
      { signal: abort.signal },
    );
    const lines: { type: string; object: KubeObject }[] = [];
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body ?? []) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
      if (lines.length >= 3) break;
    }
    abort.abort();
    expect(lines.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ["ADDED", "a"],
      ["ADDED", "b"],
      ["BOOKMARK", undefined],
    ]);
    expect(lines[2]?.object.metadata).toEqual({
      resourceVersion: server.resourceVersion,
      annotations: { "k8s.io/initial-events-end": "true" },
    });
  });

  it("shows a label-selected watch objects entering and leaving the selector", async () => {
    server.seed(configMap("c", {}, { app: "web" }));
    const events = await collect(
      ConfigMap,
      { labelSelector: "app=web", resourceVersion: server.resourceVersion },
      3,
      () => {
        server.put(ConfigMap, configMap("c", {}, { app: "db" })); // leaves: DELETED
        server.put(ConfigMap, configMap("d", {}, { app: "db" })); // never matches: nothing
        server.put(ConfigMap, configMap("c", {}, { app: "web" })); // enters: ADDED
        server.put(ConfigMap, configMap("c", { k: "v" }, { app: "web" })); // stays: MODIFIED
      },
    );
    expect(events.map((e) => [e.type, (e.object as KubeObject).metadata.name])).toEqual([
      ["DELETED", "c"],
      ["ADDED", "c"],
      ["MODIFIED", "c"],
    ]);
  });

  it("an informer relists after its watch ends and its resourceVersion was compacted away", async () => {
    server.seed(widget("a"));
    const stop = new AbortController();
    const informerClient = server.client();
    const factory = new InformerFactory({ client: informerClient });
    const informer = factory.informerFor(Widget);
    factory.start(stop.signal);
    try {
      await factory.waitForSync(stop.signal);
      expect(informer.store.list().map((w) => w.metadata.name)).toEqual(["a"]);
      await vi.waitFor(() => expect(server.log.some((r) => r.verb === "watch")).toBe(true));
      server.closeWatches(); // the watch ends; meanwhile an object changes and history is compacted
      server.put(Widget, widget("b"));
      server.compact();
      await vi.waitFor(() => expect(informer.store.list().map((w) => w.metadata.name)).toEqual(["a", "b"]), {
        timeout: 15_000,
      });
      // the first list and the relist: lists, or streaming lists (watches with sendInitialEvents) by default
      const lists = server.log.filter(
        (r) => r.verb === "list" || (r.verb === "watch" && r.query.sendInitialEvents === "true"),
      );
      expect(lists.length).toBe(2);
    } finally {
      stop.abort();
      await factory.stopped();
      await informerClient.close();
    }
  });
});
