import { describe, expect, it } from "vitest";
import { ConfigMap } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import {
  APPLIED_HASH_ANNOTATION,
  applyIfChanged,
  desiredHash,
  isSubset,
  needsApply,
  stableHash,
} from "./apply.ts";
import type { Client } from "./client.ts";

type CM = KubeObject & { data?: Record<string, string> };

const desired = (): CM => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cfg", namespace: "ns", labels: { app: "etcd", tier: "db" } },
  data: { a: "1", b: "2" },
});

/** What the API server returns after applying `d`: `d` plus server-set fields. */
function serverCopy(d: CM): CM {
  return {
    ...structuredClone(d),
    metadata: {
      ...structuredClone(d.metadata),
      uid: "uid-1",
      resourceVersion: "42",
      creationTimestamp: "2026-11-29T22:00:00Z",
      annotations: {
        ...d.metadata.annotations,
        [APPLIED_HASH_ANNOTATION]: desiredHash(d),
        "other.io/x": "y",
      },
    },
  };
}

describe("desiredHash", () => {
  it("is 16 hex digits and stable under key order at every level", () => {
    const a = desired();
    const b: CM = {
      data: { b: "2", a: "1" },
      metadata: { labels: { tier: "db", app: "etcd" }, namespace: "ns", name: "cfg" },
      kind: "ConfigMap",
      apiVersion: "v1",
    };
    expect(desiredHash(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(desiredHash(b)).toBe(desiredHash(a));
  });

  it("ignores the hash annotation itself, but not other annotations", () => {
    const plain = desired();
    const stamped = desired();
    stamped.metadata.annotations = { [APPLIED_HASH_ANNOTATION]: "0123456789abcdef" };
    expect(desiredHash(stamped)).toBe(desiredHash(plain));
    const annotated = desired();
    annotated.metadata.annotations = { "note.io/x": "y", [APPLIED_HASH_ANNOTATION]: "0123456789abcdef" };
    expect(desiredHash(annotated)).not.toBe(desiredHash(plain));
  });

  it("changes with any value", () => {
    const changed = desired();
    changed.data = { a: "1", b: "3" };
    expect(desiredHash(changed)).not.toBe(desiredHash(desired()));
  });
});

describe("isSubset", () => {
  it.each([
    [{ a: 1 }, { a: 1, b: 2 }, true],
    [{ a: { b: "x" } }, { a: { b: "x", c: "default" } }, true],
    [{ a: undefined }, {}, true],
    [{ a: null }, {}, true],
    [{ a: 1 }, {}, false],
    [{ a: 1 }, { a: "1" }, false],
    [{ a: "1" }, { a: 1 }, false],
    [{ a: 1 }, { a: 2 }, false],
    [{ a: { b: 1 } }, { a: [1] }, false],
    [{ a: [1, 2] }, { a: [1, 2] }, true],
    [{ a: [1, 2] }, { a: [2, 1] }, false],
    [{ a: [1] }, { a: [1, 2] }, false],
    [
      { a: [{ name: "c", image: "x" }] },
      { a: [{ name: "c", image: "x", imagePullPolicy: "IfNotPresent" }] },
      true,
    ],
    [{ a: [{ name: "c", image: "x" }] }, { a: [{ name: "c", image: "y" }] }, false],
    [{ a: true }, { a: true }, true],
    [{ a: false }, {}, false],
    [{}, null, false],
  ])("isSubset(%j, %j) is %s", (d, l, expected) => {
    expect(isSubset(d, l)).toBe(expected);
  });
});

describe("needsApply", () => {
  it("is true when there is no live object", () => {
    expect(needsApply(desired(), undefined)).toBe(true);
  });

  it("is false for a server-defaulted superset carrying the hash", () => {
    expect(needsApply(desired(), serverCopy(desired()))).toBe(false);
  });

  it("is true when the live hash is missing or stale", () => {
    const live = serverCopy(desired());
    delete live.metadata.annotations?.[APPLIED_HASH_ANNOTATION];
    expect(needsApply(desired(), live)).toBe(true);
  });

  it("is true when a field was removed from desired (the subset check alone would miss it)", () => {
    const live = serverCopy(desired());
    const smaller = desired();
    smaller.data = { a: "1" };
    expect(isSubset(smaller, live)).toBe(true);
    expect(needsApply(smaller, live)).toBe(true);
  });

  it("is true on drift by someone else (the hash alone would miss it)", () => {
    const live = serverCopy(desired());
    live.data = { a: "1", b: "tampered" };
    expect(needsApply(desired(), live)).toBe(true);
    const relabelled = serverCopy(desired());
    delete relabelled.metadata.labels?.tier;
    expect(needsApply(desired(), relabelled)).toBe(true);
  });
});

describe("applyIfChanged", () => {
  function fakeClient() {
    const applied: { obj: KubeObject; options: unknown }[] = [];
    const client = {
      async apply(_kind: unknown, obj: CM, options: unknown) {
        applied.push({ obj, options });
        return serverCopy(obj);
      },
    };
    return { client: client as unknown as Client, applied };
  }

  it("applies a stamped copy when needed, leaving desired untouched", async () => {
    const { client, applied } = fakeClient();
    const d = desired();
    const result = await applyIfChanged(client, ConfigMap, d, undefined, {
      fieldManager: "etcd-operator",
      force: true,
    });
    expect(result.applied).toBe(true);
    expect(applied).toHaveLength(1);
    expect(applied[0]?.options).toEqual({ fieldManager: "etcd-operator", force: true });
    expect(applied[0]?.obj.metadata.annotations).toEqual({ [APPLIED_HASH_ANNOTATION]: desiredHash(d) });
    expect(d.metadata.annotations).toBeUndefined();
    expect(result.object.metadata.uid).toBe("uid-1");
  });

  it("makes no request in steady state and returns live", async () => {
    const { client, applied } = fakeClient();
    const first = await applyIfChanged(client, ConfigMap, desired(), undefined, { fieldManager: "m" });
    const second = await applyIfChanged(client, ConfigMap, desired(), first.object, { fieldManager: "m" });
    expect(second).toEqual({ applied: false, object: first.object });
    expect(second.object).toBe(first.object);
    expect(applied).toHaveLength(1);
    expect(applied[0]?.options).toEqual({ fieldManager: "m" });
  });
});

describe("stableHash", () => {
  it("is the same for equal values in any key order, and differs when a value changes", () => {
    expect(stableHash({ a: 1, b: { c: [1, 2], d: "x" } })).toBe(
      stableHash({ b: { d: "x", c: [1, 2] }, a: 1 }),
    );
    expect(stableHash({ a: 1, b: undefined })).toBe(stableHash({ a: 1 }));
    expect(stableHash({ a: 1 })).not.toBe(stableHash({ a: 2 }));
    expect(stableHash({ a: [1, 2] })).not.toBe(stableHash({ a: [2, 1] }));
    expect(stableHash("x")).toMatch(/^[0-9a-f]{16}$/);
  });
});
