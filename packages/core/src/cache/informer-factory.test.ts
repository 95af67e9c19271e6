import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap, type Kind, kindId, Namespace, Pod, Secret } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { isMetadataOnly, metadataOnly } from "../client/metadata-only.ts";
import { FakeListerWatcher, page } from "../testing/fake-lister-watcher.ts";
import { InformerFactory } from "./informer-factory.ts";
import type { Scope } from "./list-watch.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const settle = () => vi.advanceTimersByTimeAsync(0);

/** A factory whose informers list one empty page each; records every ListerWatcher it makes. */
function factory() {
  const made: { kind: string; scope: Scope; lw: FakeListerWatcher }[] = [];
  const f = new InformerFactory({
    listerWatcher: <T extends KubeObject>(kind: Kind<T>, scope: Scope) => {
      const lw = new FakeListerWatcher().replyList(page([], "1"));
      made.push({ kind: kindId(kind), scope, lw });
      return lw as unknown as FakeListerWatcher<T>;
    },
  });
  return { f, made };
}

describe("InformerFactory", () => {
  it("applies a kind's cache selector to every informer of that kind whose scope sets none", () => {
    const made: Scope[] = [];
    const f = new InformerFactory({
      selectors: [{ kind: ConfigMap, labelSelector: "app.kubernetes.io/managed-by=me" }],
      listerWatcher: <T extends KubeObject>(_kind: Kind<T>, scope: Scope) => {
        made.push(scope);
        return new FakeListerWatcher().replyList(page([], "1")) as unknown as FakeListerWatcher<T>;
      },
    });
    const mine = f.informerFor(ConfigMap, { namespace: "a" });
    expect(
      f.informerFor(ConfigMap, { namespace: "a", labelSelector: "app.kubernetes.io/managed-by=me" }),
    ).toBe(mine);
    f.informerFor(ConfigMap, { namespace: "a", labelSelector: "other=x" });
    f.informerFor(Secret, { namespace: "a" });
    expect(made).toEqual([
      { namespace: "a", labelSelector: "app.kubernetes.io/managed-by=me" },
      { namespace: "a", labelSelector: "other=x" },
      { namespace: "a" },
    ]);
  });

  it("shares one informer per kind and scope; other scopes get their own", () => {
    const { f, made } = factory();
    const all = f.informerFor(ConfigMap);
    expect(f.informerFor(ConfigMap)).toBe(all);
    expect(f.informerFor(ConfigMap, { namespace: "" })).toBe(all);
    const inA = f.informerFor(ConfigMap, { namespace: "a" });
    expect(f.informerFor(ConfigMap, { namespace: "a" })).toBe(inA);
    expect(inA).not.toBe(all);
    expect(f.informerFor(ConfigMap, { namespace: "b" })).not.toBe(inA);
    const labelled = f.informerFor(ConfigMap, { namespace: "a", labelSelector: "app=x" });
    expect(labelled).not.toBe(inA);
    expect(f.informerFor(ConfigMap, { namespace: "a", fieldSelector: "metadata.name=x" })).not.toBe(labelled);
    expect(f.informerFor(Secret, { namespace: "a" })).not.toBe(inA);
    // a cluster-scoped kind ignores the namespace
    expect(f.informerFor(Namespace, { namespace: "a" })).toBe(f.informerFor(Namespace));
    expect(f.informers()).toHaveLength(7);
    expect(made).toHaveLength(7);
    expect(made[1]).toMatchObject({ kind: "v1/ConfigMap", scope: { namespace: "a" } });
    expect(made.at(-1)?.scope).toEqual({});
    expect(labelled.name).toBe("v1/ConfigMap ns=a labels=app=x");
  });

  it("gives metadataOnly(kind) its own informer, apart from the full kind's, and shares it", () => {
    const kinds: Kind[] = [];
    const f = new InformerFactory({
      listerWatcher: <T extends KubeObject>(kind: Kind<T>) => {
        kinds.push(kind);
        return new FakeListerWatcher().replyList(page([], "1")) as unknown as FakeListerWatcher<T>;
      },
    });
    const full = f.informerFor(Pod, { namespace: "a" });
    const partial = f.informerFor(metadataOnly(Pod), { namespace: "a" });
    expect(partial).not.toBe(full);
    expect(f.informerFor(metadataOnly(Pod), { namespace: "a" })).toBe(partial);
    expect(partial.name).toBe("v1/Pod metadata-only ns=a");
    expect(kinds.map(isMetadataOnly)).toEqual([false, true]);
  });

  it("keeps no kubectl last-applied-configuration in a metadataOnly(kind) informer, and keeps it in the full kind's", async () => {
    const applied = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "creds",
        namespace: "a",
        resourceVersion: "5",
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"password":"c2VjcmV0"}}',
          team: "x",
        },
      },
    };
    const f = new InformerFactory({
      listerWatcher: <T extends KubeObject>() =>
        new FakeListerWatcher().replyList(
          page([structuredClone(applied)], "5"),
        ) as unknown as FakeListerWatcher<T>,
    });
    const partial = f.informerFor(metadataOnly(Secret));
    const full = f.informerFor(Secret);
    const controller = new AbortController();
    f.start(controller.signal);
    expect(await f.waitForSync()).toBe(true);
    expect(partial.store.get("a/creds")?.metadata.annotations).toEqual({ team: "x" });
    expect(full.store.get("a/creds")?.metadata.annotations).toEqual(applied.metadata.annotations);
    controller.abort();
  });

  it("applies a kind's selector to its full objects only, and metadataOnly(kind)'s to its metadata only", () => {
    const scopes: [boolean, Scope][] = [];
    const f = new InformerFactory({
      listerWatcher: <T extends KubeObject>(kind: Kind<T>, scope: Scope) => {
        scopes.push([isMetadataOnly(kind), scope]);
        return new FakeListerWatcher().replyList(page([], "1")) as unknown as FakeListerWatcher<T>;
      },
      selectors: [
        { kind: Secret, labelSelector: "app.kubernetes.io/managed-by=me" },
        { kind: metadataOnly(ConfigMap), labelSelector: "watched=yes" },
      ],
    });
    f.informerFor(Secret);
    f.informerFor(metadataOnly(Secret));
    f.informerFor(ConfigMap);
    f.informerFor(metadataOnly(ConfigMap));
    expect(scopes).toEqual([
      [false, { labelSelector: "app.kubernetes.io/managed-by=me" }],
      [true, {}],
      [false, {}],
      [true, { labelSelector: "watched=yes" }],
    ]);
  });

  it("starts its informers, and later ones at once; syncs; stops them all", async () => {
    const { f, made } = factory();
    const configMaps = f.informerFor(ConfigMap);
    expect(f.hasSynced()).toBe(false);
    const controller = new AbortController();
    f.start(controller.signal);
    expect(() => f.start(controller.signal)).toThrow(/twice/);
    expect(await f.waitForSync()).toBe(true);
    expect(configMaps.hasSynced()).toBe(true);

    const secrets = f.informerFor(Secret);
    expect(secrets.hasSynced()).toBe(false);
    expect(f.hasSynced()).toBe(false);
    await settle();
    expect(made[1]?.lw.listCalls).toHaveLength(1);
    expect(f.hasSynced()).toBe(true);

    controller.abort();
    await f.stopped();
    expect(made.every(({ lw }) => lw.lastWatch.aborted)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("waitForSync gives false when its signal aborts first", async () => {
    const f = new InformerFactory({ listerWatcher: () => new FakeListerWatcher() }); // lists never answer
    f.informerFor(ConfigMap);
    const controller = new AbortController();
    f.start(controller.signal);
    const waiting = new AbortController();
    const synced = f.waitForSync(waiting.signal);
    waiting.abort();
    expect(await synced).toBe(false);
    controller.abort();
    await f.stopped();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("needs a client or a listerWatcher", () => {
    expect(() => new InformerFactory({})).toThrow(/client or a listerWatcher/);
  });
});
