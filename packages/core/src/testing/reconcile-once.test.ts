// Tests of the reconcileOnce harness: what it primes, what it reports, and that its assertions fail loudly.
import { AssertionError } from "node:assert";
import { describe, expect, it } from "vitest";
import { ConfigMap, Secret } from "../api/kinds.ts";
import { isConflict } from "../client/errors.ts";
import type { Reconciler } from "../controller/controller.ts";
import { FakeApiServer } from "./fake-api-server.ts";
import { reconcileOnce } from "./reconcile-once.ts";
import { widget as newWidget, Widget } from "./widget-fixture.ts";

const w = newWidget("w", 3);

/** Creates `<name>-config` with the widget's size unless it already says so, then mirrors the size in status. */
const reconcileWidget: Reconciler = async (req, ctx) => {
  const widget = await ctx.cache.get(Widget, req.name, req.namespace);
  if (!widget) return;
  const name = `${req.name}-config`;
  const live = await ctx.cache.get(ConfigMap, name, req.namespace);
  if (live?.data?.size !== String(widget.spec.size)) {
    await ctx.client.apply(
      ConfigMap,
      { metadata: { name, namespace: req.namespace }, data: { size: String(widget.spec.size) } },
      { fieldManager: "widget" },
    );
    ctx.recorder.event(
      widget,
      "Normal",
      "Configured",
      "Apply",
      `ConfigMap ${name} holds size ${widget.spec.size}`,
    );
  }
  if (widget.status?.size !== widget.spec.size) {
    await ctx.client.patchStatus(Widget, req.name, req.namespace, { status: { size: widget.spec.size } });
  }
  return { requeueAfter: 60_000 };
};

describe("reconcileOnce", () => {
  it("reports the result, the writes in order, the events, and the objects afterwards", async () => {
    const run = await reconcileOnce(reconcileWidget, { kinds: [Widget], objects: [w], request: w });
    run.expectNoError();
    expect(run.result).toEqual({ requeueAfter: 60_000 });
    expect(run.writes).toMatchObject([
      {
        verb: "apply",
        kind: "ConfigMap",
        apiVersion: "v1",
        namespace: "ns",
        name: "w-config",
        subresource: "",
        status: 201,
      },
      {
        verb: "patch",
        kind: "Widget",
        namespace: "ns",
        name: "w",
        subresource: "status",
        body: { status: { size: 3 } },
      },
    ]);
    expect(run.writesOf(ConfigMap)).toHaveLength(1);
    expect(run.writesOf("Widget", "status")).toHaveLength(1);
    expect(run.writesOf(Widget, "")).toEqual([]);
    expect(run.events).toEqual([
      {
        type: "Normal",
        reason: "Configured",
        action: "Apply",
        note: "ConfigMap w-config holds size 3",
        regarding: { apiVersion: "test.capstan.dev/v1", kind: "Widget", namespace: "ns", name: "w" },
      },
    ]);
    // Events are reported apart: neither among the writes nor among the objects.
    expect(run.objects.map((o) => `${o.kind} ${o.metadata.name}`).sort()).toEqual([
      "ConfigMap w-config",
      "Widget w",
    ]);
    expect(run.get(ConfigMap, "w-config", "ns")?.data).toEqual({ size: "3" });
    expect(run.get(Widget, "w", "ns")?.status).toEqual({ size: 3 });
  });

  it("makes no writes when reconciling what the previous run left", async () => {
    const first = await reconcileOnce(reconcileWidget, { kinds: [Widget], objects: [w], request: w });
    const second = await reconcileOnce(reconcileWidget, {
      kinds: [Widget],
      objects: first.objects,
      request: w,
    });
    second.expectNoWrites();
    expect(second.events).toEqual([]);
  });

  it("expectNoWrites fails listing every write", async () => {
    const run = await reconcileOnce(reconcileWidget, { kinds: [Widget], objects: [w], request: w });
    let thrown: unknown;
    try {
      run.expectNoWrites();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AssertionError);
    expect((thrown as Error).message).toBe(
      "expected no writes, but the reconcile of ns/w made 2:\n" +
        "  apply ConfigMap ns/w-config -> 201\n" +
        "  patch Widget ns/w (status) -> 200",
    );
  });

  it("reports a thrown error instead of rethrowing it; expectNoError fails with it as the cause", async () => {
    const boom = new Error("boom");
    const run = await reconcileOnce(
      async () => {
        throw boom;
      },
      { request: { namespace: "ns", name: "x" } },
    );
    expect(run.error).toBe(boom);
    expect(run.result).toBeUndefined();
    let thrown: unknown;
    try {
      run.expectNoError();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AssertionError);
    expect((thrown as Error).message).toContain("ns/x to succeed, but it threw: boom");
    expect((thrown as Error).cause).toBe(boom);
  });

  it("applies setup scripts to the reconcile only: a scripted 409 shows in the error and the write's status", async () => {
    const run = await reconcileOnce(reconcileWidget, {
      kinds: [Widget],
      objects: [w],
      request: w,
      setup: (server) => {
        server.fail({ verb: "apply", kind: ConfigMap }, 409);
      },
    });
    expect(isConflict(run.error)).toBe(true);
    expect(run.writes.map((x) => [x.verb, x.kind, x.status])).toEqual([["apply", "ConfigMap", 409]]);
    expect(run.get(ConfigMap, "w-config", "ns")).toBeUndefined();
  });

  it("primes the cache with the given objects; kinds read for the first time are synced on the spot", async () => {
    const seen: string[] = [];
    const run = await reconcileOnce(
      async (req, ctx) => {
        for (const cm of await ctx.cache.list(ConfigMap, { namespace: req.namespace }))
          seen.push(cm.metadata.name ?? "");
        seen.push(`secrets: ${(await ctx.cache.list(Secret)).length}`);
        return undefined;
      },
      {
        objects: [
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "ns" } },
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" } },
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "elsewhere", namespace: "other" } },
        ],
        request: { namespace: "ns", name: "x" },
      },
    );
    run.expectNoError();
    expect(seen.sort()).toEqual(["a", "b", "secrets: 0"]);
    // The cache's own list and watch calls are not the reconciler's requests.
    expect(run.requests).toEqual([]);
  });

  it("scopes the cache to one namespace when asked, as a namespace-scoped manager does", async () => {
    let names: string[] = [];
    await reconcileOnce(
      async (_req, ctx) => {
        names = (await ctx.cache.list(ConfigMap)).map((cm) => cm.metadata.name ?? "");
        return undefined;
      },
      {
        objects: [
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "mine", namespace: "ns" } },
          { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "theirs", namespace: "other" } },
        ],
        request: { namespace: "ns", name: "x" },
        namespace: "ns",
      },
    );
    expect(names).toEqual(["mine"]);
  });

  it("records the reconciler's own reads, and uses a server passed in without stopping it", async () => {
    const server = await new FakeApiServer({ kinds: [Widget] }).start();
    try {
      const run = await reconcileOnce(
        async (req, ctx) => {
          await ctx.client.get(Widget, req.name, req.namespace);
          return undefined;
        },
        { server, objects: [w], request: w },
      );
      expect(run.requests.map((r) => `${r.verb} ${r.kind} ${r.name}`)).toEqual(["get Widget w"]);
      expect(server.get(Widget, "w", "ns")).toBeDefined(); // still serving
    } finally {
      await server.stop();
    }
  });

  it("a kind whose list is refused fails the cache read, naming the kind and the server's answer", async () => {
    const run = await reconcileOnce(
      async (req, ctx) => {
        await ctx.cache.list(Secret, { namespace: req.namespace });
        return undefined;
      },
      {
        request: { namespace: "ns", name: "x" },
        timeoutMs: 300,
        setup: (server) => {
          // refused as RBAC refuses it: list and watch (the informer tries a streaming list first)
          for (const verb of ["list", "watch"] as const) {
            server.fail({ verb, kind: Secret }, 403, {
              message: `secrets is forbidden: User "op" cannot ${verb} resource "secrets"`,
            });
          }
        },
      },
    );
    expect((run.error as Error).message).toMatch(
      /v1 Secret .*last list\/watch error: .*secrets is forbidden/,
    );
  });

  it("aborts ctx.signal after timeoutMs", async () => {
    const run = await reconcileOnce(
      (_req, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
        }),
      { request: { namespace: "ns", name: "x" }, timeoutMs: 20 },
    );
    expect((run.error as Error).name).toBe("TimeoutError");
  });

  it("applies errorPolicy as a controller's worker does: conditions, Event, the requeue as the result", async () => {
    class Unreachable extends Error {}
    const failing: Reconciler = async () => {
      throw new Unreachable("the operand did not answer");
    };
    const errorPolicy = (err: Error) =>
      err instanceof Unreachable
        ? {
            requeueAfter: 5_000,
            conditions: [
              { type: "Degraded", status: "True" as const, reason: "Unreachable", message: err.message },
            ],
            event: { reason: "Unreachable" },
          }
        : undefined;
    const run = await reconcileOnce(failing, { kinds: [Widget], objects: [w], request: w, errorPolicy });
    run.expectNoError();
    expect(run.result).toEqual({ requeueAfter: 5_000 });
    expect(run.handledError).toBeInstanceOf(Unreachable);
    expect(run.writes.map((x) => `${x.verb} ${x.kind} ${x.subresource}`)).toEqual(["patch Widget status"]);
    expect(run.get(Widget, "w", "ns")?.status).toMatchObject({
      conditions: [{ type: "Degraded", status: "True", reason: "Unreachable", observedGeneration: 1 }],
    });
    expect(run.events).toMatchObject([
      { type: "Warning", reason: "Unreachable", note: "the operand did not answer" },
    ]);

    // An error the policy does not map is reported as it was thrown; a request given as a key needs `for`.
    const other = await reconcileOnce(
      async () => {
        throw new Error("something else");
      },
      { kinds: [Widget], objects: [w], request: { namespace: "ns", name: "w" }, for: Widget, errorPolicy },
    );
    expect(other.error).toEqual(new Error("something else"));
    expect(other.handledError).toBeUndefined();
    expect(other.result).toBeUndefined();
    expect(other.writes).toEqual([]);
  });
});
