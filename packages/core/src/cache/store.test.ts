import { describe, expect, it } from "vitest";
import { cm } from "../testing/fake-lister-watcher.ts";
import {
  dropManagedFields,
  indexByNamespace,
  indexByOwnerUid,
  NAMESPACE_INDEX,
  OWNER_UID_INDEX,
  Store,
} from "./store.ts";

type CM = ReturnType<typeof cm>;

const names = (objs: CM[]) => objs.map((o) => o.metadata.name).sort();

function store() {
  return new Store<CM>({ [NAMESPACE_INDEX]: indexByNamespace, [OWNER_UID_INDEX]: indexByOwnerUid });
}

describe("index functions and transform", () => {
  it('index by namespace ("" when cluster-scoped) and by owner uids', () => {
    expect(indexByNamespace(cm("a", "1", { namespace: "x" }))).toEqual(["x"]);
    expect(indexByNamespace({ metadata: { name: "node1" } })).toEqual([""]);
    expect(indexByOwnerUid(cm("a", "1", { owners: ["u1", "u2"] }))).toEqual(["u1", "u2"]);
    expect(indexByOwnerUid(cm("a", "1"))).toEqual([]);
  });

  it("dropManagedFields removes managedFields and keeps the rest", () => {
    const obj = dropManagedFields(cm("a", "1", { managedFields: true, data: { k: "v" } }));
    expect("managedFields" in obj.metadata).toBe(false);
    expect(obj.metadata.name).toBe("a");
    expect(obj.data).toEqual({ k: "v" });
  });
});

describe("Store", () => {
  it("gets, lists and counts objects by namespace/name key", () => {
    const s = store();
    expect(s.upsert(cm("a", "1"))).toBeUndefined();
    s.upsert({ metadata: { name: "node1", resourceVersion: "1" } });
    expect(s.size).toBe(2);
    expect(s.get("default/a")?.metadata.resourceVersion).toBe("1");
    expect(s.get("node1")?.metadata.name).toBe("node1");
    expect(s.listKeys().sort()).toEqual(["default/a", "node1"]);
    expect(s.upsert(cm("a", "2"))?.metadata.resourceVersion).toBe("1");
    expect(s.list()).toHaveLength(2);
    expect(s.remove("default/a")?.metadata.resourceVersion).toBe("2");
    expect(s.remove("default/a")).toBeUndefined();
    expect(s.size).toBe(1);
  });

  it("moves objects between index values on update and drops them on remove", () => {
    const s = store();
    s.upsert(cm("a", "1", { namespace: "x", owners: ["u1"] }));
    s.upsert(cm("b", "1", { namespace: "x", owners: ["u1", "u2"] }));
    expect(names(s.byIndex(NAMESPACE_INDEX, "x"))).toEqual(["a", "b"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u1"))).toEqual(["a", "b"]);

    s.upsert(cm("a", "2", { namespace: "x", owners: ["u2"] }));
    expect(names(s.byIndex(OWNER_UID_INDEX, "u1"))).toEqual(["b"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u2"))).toEqual(["a", "b"]);

    s.remove("x/b");
    expect(names(s.byIndex(NAMESPACE_INDEX, "x"))).toEqual(["a"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u1"))).toEqual([]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u2"))).toEqual(["a"]);
    expect(() => s.byIndex("nope", "x")).toThrow(/no index named "nope"/);
  });

  it("replace swaps content and indexes together", () => {
    const s = store();
    s.upsert(cm("a", "1", { namespace: "x", owners: ["u1"] }));
    s.upsert(cm("b", "1", { namespace: "y" }));
    s.replace([cm("b", "2", { namespace: "y", owners: ["u1"] }), cm("c", "1", { namespace: "x" })]);
    expect(s.listKeys().sort()).toEqual(["x/c", "y/b"]);
    expect(s.get("y/b")?.metadata.resourceVersion).toBe("2");
    expect(names(s.byIndex(NAMESPACE_INDEX, "x"))).toEqual(["c"]);
    expect(names(s.byIndex(OWNER_UID_INDEX, "u1"))).toEqual(["b"]);
  });

  it("addIndexer indexes existing objects; the same function twice is fine, another one is not", () => {
    const s = store();
    s.upsert(cm("a", "1", { data: { tier: "web" } }));
    const byTier = (o: CM) => (o.data?.tier ? [o.data.tier] : []);
    s.addIndexer("tier", byTier);
    expect(names(s.byIndex("tier", "web"))).toEqual(["a"]);
    s.addIndexer("tier", byTier);
    expect(() => s.addIndexer("tier", () => [])).toThrow(/already exists/);
    s.upsert(cm("b", "1", { data: { tier: "web" } }));
    expect(names(s.byIndex("tier", "web"))).toEqual(["a", "b"]);
  });
});
