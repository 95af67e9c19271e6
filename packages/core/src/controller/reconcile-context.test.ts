// The reconcile context's server-side apply: the controller's field manager given once (controller({ fieldManager })),
// ownership forced, no request when live already matches, bound to the reconcile's signal; reconcileOnce hands a
// reconciler the same context.
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap, type ConfigMapObject } from "../api/kinds.ts";
import { Client } from "../client/client.ts";
import { Manager } from "../manager/manager.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { ItemExponentialFailureRateLimiter } from "../queue/rate-limiter.ts";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { reconcileOnce } from "../testing/reconcile-once.ts";
import { widget as newWidget, WIDGETS, Widget } from "../testing/widget-fixture.ts";
import { silentLogger } from "../util/logger.ts";
import { type ControllerOptions, controller, type Reconciler } from "./controller.ts";

const widget = newWidget("w", 3);

/** `<name>-config` holding the widget's size, applied through ctx.apply (no request when live matches). */
const applyConfig: Reconciler = async (req, ctx) => {
  const w = await ctx.cache.get(Widget, req.name, req.namespace);
  if (w === undefined) return;
  const desired: ConfigMapObject = {
    metadata: { name: `${req.name}-config`, namespace: req.namespace },
    data: { size: String(w.spec.size) },
  };
  await ctx.apply(ConfigMap, desired, await ctx.cache.get(ConfigMap, `${req.name}-config`, req.namespace));
};

let server: FakeApiServer;
let stop: AbortController;
let running: Promise<void> | undefined;

beforeEach(async () => {
  server = new FakeApiServer();
  await server.start();
  stop = new AbortController();
  running = undefined;
});

afterEach(async () => {
  stop.abort();
  await running?.catch(() => {});
  await server.stop();
});

/** Starts a manager with one Widget controller (fast retries) against the fake server. */
function run(options: Partial<ControllerOptions<Widget>> & { reconcile: Reconciler }) {
  const metrics = new CoreMetrics(new Registry());
  const mgr = new Manager({
    name: "test",
    client: new Client({ kubeConfig: server.kubeConfig(), metrics }),
    metrics,
    logger: silentLogger,
    metricsPort: null,
    healthPort: null,
  });
  const c = controller<Widget>({
    name: "widget",
    for: Widget,
    owns: [ConfigMap],
    rateLimiter: new ItemExponentialFailureRateLimiter(1, 20),
    ...options,
  });
  mgr.add(c);
  running = mgr.start(stop.signal);
  return c;
}

const applies = () => server.log.filter((r) => r.verb === "apply");

describe("ReconcileContext.apply", () => {
  it("applies as the controller's field manager, forcing ownership, and sends nothing once live matches", async () => {
    server.register(Widget);
    server.put(WIDGETS, widget);
    const seen: (string | undefined)[] = [];
    const c = run({
      fieldManager: "widget-operator",
      reconcile: async (req, ctx) => {
        seen.push(ctx.fieldManager);
        await applyConfig(req, ctx);
      },
    });
    expect(c.fieldManager).toBe("widget-operator");
    await vi.waitFor(() => expect(applies()).toHaveLength(1));
    expect(applies()[0]?.query).toMatchObject({ fieldManager: "widget-operator", force: "true" });
    expect(seen[0]).toBe("widget-operator");
    // A spec change reconciles again and applies the new size.
    const resized: Widget = { ...widget, spec: { size: 4 } };
    server.put(WIDGETS, resized);
    await vi.waitFor(() => expect(applies()).toHaveLength(2));
    expect((applies()[1]?.body as ConfigMapObject | undefined)?.data).toEqual({ size: "4" });
    // Live matches desired now: a third reconcile sends no apply.
    const reconciles = seen.length;
    const touched: Widget = { ...resized, metadata: { ...widget.metadata, labels: { touched: "yes" } } };
    server.put(WIDGETS, touched);
    await vi.waitFor(() => expect(seen.length).toBeGreaterThan(reconciles));
    expect(applies()).toHaveLength(2);
  });

  it("aborts with the reconcile's signal", async () => {
    server.register(Widget);
    server.put(WIDGETS, widget);
    server.delay({ verb: "apply" }, 30_000);
    const outcomes: string[] = [];
    run({
      fieldManager: "widget-operator",
      reconcileTimeoutMs: 200,
      reconcile: async (req, ctx) => {
        try {
          await applyConfig(req, ctx);
          outcomes.push("applied");
        } catch (err) {
          outcomes.push(ctx.signal.aborted ? "aborted" : `failed: ${String(err)}`);
        }
      },
    });
    await vi.waitFor(() => expect(outcomes[0]).toBe("aborted"), { timeout: 10_000 });
  });

  it("without a field manager, fails naming the controller and the option, and sends nothing", async () => {
    server.register(Widget);
    server.put(WIDGETS, widget);
    const errors: string[] = [];
    const c = run({
      reconcile: async (req, ctx) => {
        await applyConfig(req, ctx).catch((err: unknown) => errors.push(String(err)));
      },
    });
    expect(c.fieldManager).toBeUndefined();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toMatch(/controller widget.*fieldManager/);
    expect(applies()).toEqual([]);
  });

  it("refuses a field manager the API server would refuse", () => {
    for (const fieldManager of ["", "x".repeat(129)]) {
      expect(() =>
        controller<Widget>({ name: "widget", for: Widget, fieldManager, reconcile: applyConfig }),
      ).toThrow(/fieldManager/);
    }
  });
});

describe("reconcileOnce's ReconcileContext.apply", () => {
  it("applies as the given field manager, forcing ownership; the steady state writes nothing", async () => {
    const first = await reconcileOnce(applyConfig, {
      kinds: [Widget],
      objects: [widget],
      request: widget,
      fieldManager: "widget-operator",
    });
    first.expectNoError();
    expect(first.writes.map((w) => `${w.verb} ${w.kind}`)).toEqual(["apply ConfigMap"]);
    const applied = first.requests.find((r) => r.verb === "apply");
    expect(applied?.query).toMatchObject({ fieldManager: "widget-operator", force: "true" });
    const again = await reconcileOnce(applyConfig, {
      kinds: [Widget],
      objects: first.objects,
      request: widget,
      fieldManager: "widget-operator",
    });
    again.expectNoWrites();
  });

  it("applies as reconcile-once when no field manager is given", async () => {
    const run = await reconcileOnce(
      async (req, ctx) => {
        expect(ctx.fieldManager).toBe("reconcile-once");
        await applyConfig(req, ctx);
      },
      { kinds: [Widget], objects: [widget], request: widget },
    );
    run.expectNoError();
    expect(run.requests.find((r) => r.verb === "apply")?.query.fieldManager).toBe("reconcile-once");
  });

  it("aborts with the reconcile's signal", async () => {
    const run = await reconcileOnce(applyConfig, {
      kinds: [Widget],
      objects: [widget],
      request: widget,
      timeoutMs: 300,
      setup: (s) => {
        s.delay({ verb: "apply" }, 30_000);
      },
    });
    expect((run.error as Error | undefined)?.name).toBe("TimeoutError");
  });
});
