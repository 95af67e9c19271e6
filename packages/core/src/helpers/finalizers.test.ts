import { describe, expect, it } from "vitest";
import { ConfigMap } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { ApiError, isConflict } from "../client/errors.ts";
import {
  addFinalizer,
  handleFinalizer,
  hasFinalizer,
  isBeingDeleted,
  removeFinalizer,
  validateFinalizerName,
} from "./finalizers.ts";

const F = "etcd.capstan.dev/cleanup";

interface PatchCall {
  kind: string;
  name: string;
  namespace: string | undefined;
  patch: unknown;
  type: string;
}

/** A Client double that records patch calls and answers with a scripted result. */
function fakeClient(answer: (call: PatchCall) => unknown = (c) => ({ patched: c })) {
  const calls: PatchCall[] = [];
  const client = {
    async patch(
      kind: { kind: string },
      name: string,
      namespace: string | undefined,
      patch: unknown,
      type: string,
    ) {
      const call = { kind: kind.kind, name, namespace, patch, type };
      calls.push(call);
      const result = answer(call);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { client: client as unknown as Client, calls };
}

function cm(metadata: Partial<KubeObject["metadata"]> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns", ...metadata } };
}

describe("finalizer checks", () => {
  it("hasFinalizer and isBeingDeleted read metadata", () => {
    expect(hasFinalizer(cm(), F)).toBe(false);
    expect(hasFinalizer(cm({ finalizers: ["x.io/y", F] }), F)).toBe(true);
    expect(isBeingDeleted(cm())).toBe(false);
    expect(isBeingDeleted(cm({ deletionTimestamp: "2026-11-29T22:00:00Z" }))).toBe(true);
  });

  it.each([
    "cleanup",
    "capstan/cleanup",
    "Etcd.Capstan.dev/cleanup",
    "etcd.capstan.dev/",
    "etcd.capstan.dev/-x",
    "/x",
  ])("rejects %j: not a domain-qualified name", (name) => {
    expect(() => validateFinalizerName(name)).toThrow(/domain-qualified/);
  });

  it("accepts domain-qualified names", () => {
    expect(() => validateFinalizerName(F)).not.toThrow();
    expect(() => validateFinalizerName("foregroundDeletion")).toThrow();
    expect(() => validateFinalizerName("a.b/C_d.e-1")).not.toThrow();
  });
});

describe("addFinalizer / removeFinalizer", () => {
  it("makes no request when the finalizer is already there", async () => {
    const { client, calls } = fakeClient();
    const obj = cm({ finalizers: [F] });
    expect(await addFinalizer(client, ConfigMap, obj, F)).toBe(obj);
    expect(calls).toEqual([]);
  });

  it("adds to an empty list with a null test, so a concurrent first finalizer is not overwritten", async () => {
    const { client, calls } = fakeClient();
    await addFinalizer(client, ConfigMap, cm(), F);
    expect(calls).toEqual([
      {
        kind: "ConfigMap",
        name: "a",
        namespace: "ns",
        type: "json",
        patch: [
          { op: "test", path: "/metadata/finalizers", value: null },
          { op: "add", path: "/metadata/finalizers", value: [F] },
        ],
      },
    ]);
  });

  it("appends to an existing list after testing it", async () => {
    const { client, calls } = fakeClient();
    await addFinalizer(client, ConfigMap, cm({ finalizers: ["x.io/y"] }), F);
    expect(calls[0]?.patch).toEqual([
      { op: "test", path: "/metadata/finalizers", value: ["x.io/y"] },
      { op: "add", path: "/metadata/finalizers/-", value: F },
    ]);
  });

  it("removes every occurrence, highest index first, after testing the list", async () => {
    const { client, calls } = fakeClient();
    await removeFinalizer(client, ConfigMap, cm({ finalizers: [F, "x.io/y", F] }), F);
    expect(calls[0]?.patch).toEqual([
      { op: "test", path: "/metadata/finalizers", value: [F, "x.io/y", F] },
      { op: "remove", path: "/metadata/finalizers/2" },
      { op: "remove", path: "/metadata/finalizers/0" },
    ]);
  });

  it("makes no request when removing an absent finalizer", async () => {
    const { client, calls } = fakeClient();
    const obj = cm({ finalizers: ["x.io/y"] });
    expect(await removeFinalizer(client, ConfigMap, obj, F)).toBe(obj);
    expect(calls).toEqual([]);
  });

  it("returns undefined when the object is already gone", async () => {
    const { client } = fakeClient(() => new ApiError(404, "NotFound", 'configmaps "a" not found'));
    expect(await removeFinalizer(client, ConfigMap, cm({ finalizers: [F] }), F)).toBeUndefined();
  });

  it("turns a failed test op (422) into a Conflict naming the object", async () => {
    const { client } = fakeClient(
      () =>
        new ApiError(422, "", "PATCH /api/v1/...: testing value /metadata/finalizers failed: test failed"),
    );
    const err = await addFinalizer(client, ConfigMap, cm(), F).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect((err as Error).message).toMatch(/ConfigMap ns\/a: metadata.finalizers changed/);
  });

  it("passes other errors through", async () => {
    const { client } = fakeClient(() => new ApiError(403, "Forbidden", "nope"));
    await expect(addFinalizer(client, ConfigMap, cm(), F)).rejects.toMatchObject({ code: 403 });
  });

  it("validates the name before any request", async () => {
    const { client, calls } = fakeClient();
    await expect(addFinalizer(client, ConfigMap, cm(), "cleanup")).rejects.toThrow(/domain-qualified/);
    expect(calls).toEqual([]);
  });
});

describe("handleFinalizer", () => {
  const deleting = { deletionTimestamp: "2026-11-29T22:00:00Z" };

  it("adds the finalizer to a live object, without cleanup", async () => {
    const { client, calls } = fakeClient((c) => ({ ...cm({ finalizers: [F] }), patchedBy: c.type }));
    const cleanups: KubeObject[] = [];
    const result = await handleFinalizer(client, ConfigMap, cm(), F, async (o) => {
      cleanups.push(o);
    });
    expect(result.deleted).toBe(false);
    expect(result.obj).toMatchObject({ metadata: { finalizers: [F] }, patchedBy: "json" });
    expect(calls).toHaveLength(1);
    expect(cleanups).toEqual([]);
  });

  it("makes no request when there is nothing to do", async () => {
    const { client, calls } = fakeClient();
    let cleaned = 0;
    const cleanup = async () => {
      cleaned++;
    };
    const live = cm({ finalizers: [F] });
    expect(await handleFinalizer(client, ConfigMap, live, F, cleanup)).toEqual({ deleted: false, obj: live });
    const foreign = cm({ ...deleting, finalizers: ["x.io/y"] });
    expect(await handleFinalizer(client, ConfigMap, foreign, F, cleanup)).toEqual({
      deleted: true,
      obj: foreign,
    });
    expect(calls).toEqual([]);
    expect(cleaned).toBe(0);
  });

  it("runs cleanup, then removes the finalizer, when the object is being deleted", async () => {
    const order: string[] = [];
    const { client, calls } = fakeClient(() => {
      order.push("patch");
      return cm(deleting);
    });
    const obj = cm({ ...deleting, finalizers: [F] });
    const result = await handleFinalizer(client, ConfigMap, obj, F, async (o) => {
      expect(o).toBe(obj);
      order.push("cleanup");
    });
    expect(order).toEqual(["cleanup", "patch"]);
    expect(result).toEqual({ deleted: true, obj: cm(deleting) });
    expect(calls[0]?.patch).toContainEqual({ op: "remove", path: "/metadata/finalizers/0" });
  });

  it("keeps the finalizer and propagates the error when cleanup fails", async () => {
    const { client, calls } = fakeClient();
    const obj = cm({ ...deleting, finalizers: [F] });
    await expect(
      handleFinalizer(client, ConfigMap, obj, F, async () => {
        throw new Error("backup upload failed");
      }),
    ).rejects.toThrow("backup upload failed");
    expect(calls).toEqual([]);
    expect(obj.metadata.finalizers).toEqual([F]);
  });

  it("reports an object that vanished during removal as gone", async () => {
    const { client } = fakeClient(() => new ApiError(404, "NotFound", "gone"));
    const result = await handleFinalizer(
      client,
      ConfigMap,
      cm({ ...deleting, finalizers: [F] }),
      F,
      async () => {},
    );
    expect(result).toEqual({ deleted: true, obj: undefined });
  });
});
