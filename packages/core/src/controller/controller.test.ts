import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap, Secret } from "../api/kinds.ts";
import { Client } from "../client/client.ts";
import { TerminalError } from "../client/errors.ts";
import { Manager } from "../manager/manager.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { ItemExponentialFailureRateLimiter } from "../queue/rate-limiter.ts";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { WIDGETS, Widget, widget } from "../testing/widget-fixture.ts";
import { silentLogger } from "../util/logger.ts";
import {
  controller,
  owns,
  type ReconcileRequest,
  type Reconciler,
  requestFromLabel,
  watch,
} from "./controller.ts";
import { generationChanged, hasLabels } from "./predicates.ts";

const CONFIGMAPS = "/api/v1/configmaps";

let server: FakeApiServer;
let metrics: CoreMetrics;
let stop: AbortController;
let running: Promise<void> | undefined;

beforeEach(async () => {
  server = new FakeApiServer();
  await server.start();
  metrics = new CoreMetrics(new Registry());
  stop = new AbortController();
  running = undefined;
});

afterEach(async () => {
  stop.abort();
  await running?.catch(() => {});
  await server.stop();
});

/** Starts a manager with one controller (fast retries) against the fake server. */
function run(reconcile: Reconciler, extra: Partial<Parameters<typeof controller<Widget>>[0]> = {}) {
  const client = new Client({ kubeConfig: server.kubeConfig(), metrics });
  const mgr = new Manager({
    name: "test",
    client,
    metrics,
    logger: silentLogger,
    metricsPort: null,
    healthPort: null,
  });
  mgr.add(
    controller<Widget>({
      name: "widget",
      for: Widget,
      rateLimiter: new ItemExponentialFailureRateLimiter(1, 20),
      reconcile,
      ...extra,
    }),
  );
  running = mgr.start(stop.signal);
  return mgr;
}

async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getSingleMetric(name)?.get()) as {
    values: { labels: Record<string, unknown>; value: number }[];
  };
  const row = metric.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return row?.value ?? Number.NaN;
}

describe("Controller", () => {
  it("reconciles every existing object once and counts success", async () => {
    server.put(WIDGETS, widget("a"));
    server.put(WIDGETS, widget("b"));
    const seen: ReconcileRequest[] = [];
    run(async (req) => {
      seen.push(req);
    });
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen).toEqual(
      expect.arrayContaining([
        { namespace: "ns", name: "a" },
        { namespace: "ns", name: "b" },
      ]),
    );
    await vi.waitFor(async () =>
      expect(await counter("controller_runtime_reconcile_total", { result: "success" })).toBe(2),
    );
    expect(await counter("controller_runtime_reconcile_total", { result: "error" })).toBe(0);
  });

  it("retries a thrown error with backoff until it succeeds", async () => {
    server.put(WIDGETS, widget("a"));
    let calls = 0;
    run(async () => {
      calls++;
      if (calls < 4) throw new Error("transient");
    });
    await vi.waitFor(() => expect(calls).toBe(4));
    await vi.waitFor(async () =>
      expect(await counter("controller_runtime_reconcile_total", { result: "success" })).toBe(1),
    );
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(3);
    expect(await counter("workqueue_retries_total", { name: "widget" })).toBe(3);
  });

  it("does not retry a terminal error", async () => {
    server.put(WIDGETS, widget("a"));
    let calls = 0;
    run(async () => {
      calls++;
      throw new TerminalError("spec.size is invalid");
    });
    await vi.waitFor(async () =>
      expect(await counter("controller_runtime_terminal_reconcile_errors_total", {})).toBe(1),
    );
    await new Promise((r) => setTimeout(r, 100)); // retries would have happened by now (1 ms base delay)
    expect(calls).toBe(1);
  });

  it("recovers a panic (programming error), counts it, and retries", async () => {
    server.put(WIDGETS, widget("a"));
    let calls = 0;
    run(async () => {
      calls++;
      if (calls === 1) (undefined as unknown as { x: number }).x;
    });
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(await counter("controller_runtime_reconcile_panics_total", {})).toBe(1);
  });

  it("requeueAfter reconciles again after the delay", async () => {
    server.put(WIDGETS, widget("a"));
    let calls = 0;
    run(async () => {
      calls++;
      return calls < 3 ? { requeueAfter: 10 } : undefined;
    });
    await vi.waitFor(() => expect(calls).toBe(3));
    expect(await counter("controller_runtime_reconcile_total", { result: "requeue_after" })).toBe(2);
  });

  it("never runs two reconciles of one key at once, and re-runs after a change during a reconcile", async () => {
    server.put(WIDGETS, widget("a"));
    let active = 0;
    let maxActive = 0;
    let calls = 0;
    let release!: () => void;
    const firstHeld = new Promise<void>((r) => {
      release = r;
    });
    run(
      async () => {
        calls++;
        active++;
        maxActive = Math.max(maxActive, active);
        if (calls === 1) await firstHeld;
        active--;
      },
      { maxConcurrentReconciles: 4 },
    );
    await vi.waitFor(() => expect(calls).toBe(1));
    await vi.waitFor(() =>
      expect(server.requests.some((r) => r.startsWith(`GET ${WIDGETS}?watch`))).toBe(true),
    );
    for (let i = 2; i < 6; i++) server.put(WIDGETS, widget("a", i)); // four changes while "a" is processed
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(1); // held by one worker; the other three never take it
    release();
    await vi.waitFor(() => expect(calls).toBe(2));
    await new Promise((r) => setTimeout(r, 50));
    expect(maxActive).toBe(1);
    expect(calls).toBe(2); // the four changes collapse into exactly one more reconcile
  });

  it("maps owned objects to their controller owner and filters with predicates", async () => {
    const w = server.put(WIDGETS, widget("a"));
    const seen: string[] = [];
    run(
      async (req) => {
        seen.push(req.name);
      },
      { owns: [ConfigMap], predicates: [generationChanged()] },
    );
    await vi.waitFor(() => expect(seen).toEqual(["a"]));
    // The fake server does not replay from a resourceVersion: wait for the watch before writing.
    await vi.waitFor(() => expect(server.requests).toContain("GET /api/v1/configmaps?watch"));
    server.put(CONFIGMAPS, {
      metadata: {
        name: "a-config",
        namespace: "ns",
        ownerReferences: [
          {
            apiVersion: "test.capstan.dev/v1",
            kind: "Widget",
            name: "a",
            uid: w.metadata.uid ?? "",
            controller: true,
          },
        ],
      },
    });
    await vi.waitFor(() => expect(seen).toEqual(["a", "a"]));
    // A status-only change keeps the generation: filtered out.
    server.put(WIDGETS, { ...widget("a"), status: { seen: 1 } } as Widget);
    // A non-controller owner reference does not enqueue.
    server.put(CONFIGMAPS, {
      metadata: {
        name: "other",
        namespace: "ns",
        ownerReferences: [{ apiVersion: "test.capstan.dev/v1", kind: "Widget", name: "b", uid: "x" }],
      },
    });
    // A spec change bumps the generation: passes.
    server.put(WIDGETS, widget("a", 7));
    await vi.waitFor(() => expect(seen).toEqual(["a", "a", "a"]));
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual(["a", "a", "a"]);
  });

  it("filters owned kinds' events with their own predicates", async () => {
    const w = server.put(WIDGETS, widget("a"));
    const seen: string[] = [];
    const owner = {
      apiVersion: "test.capstan.dev/v1",
      kind: "Widget",
      name: "a",
      uid: w.metadata.uid ?? "",
      controller: true,
    };
    run(
      async (req) => {
        seen.push(req.name);
      },
      { owns: [owns(ConfigMap, [hasLabels({ watched: "yes" })])] },
    );
    await vi.waitFor(() => expect(seen).toEqual(["a"]), { timeout: 5_000 });
    // The fake server does not replay from a resourceVersion: wait for the watch before writing.
    await vi.waitFor(() => expect(server.requests).toContain("GET /api/v1/configmaps?watch"));
    server.put(CONFIGMAPS, { metadata: { name: "ignored", namespace: "ns", ownerReferences: [owner] } });
    server.put(CONFIGMAPS, {
      metadata: { name: "watched", namespace: "ns", labels: { watched: "yes" }, ownerReferences: [owner] },
    });
    await vi.waitFor(() => expect(seen).toEqual(["a", "a"]), { timeout: 5_000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual(["a", "a"]);
  });

  it("lists from the cache with set-based label selectors", async () => {
    server.put(WIDGETS, widget("a"));
    for (const [name, tier] of [
      ["x", "front"],
      ["y", "back"],
      ["z", "db"],
    ] as const) {
      server.put(CONFIGMAPS, { metadata: { name, namespace: "ns", labels: { tier } } });
    }
    let found: string[] | undefined;
    run(
      async (req, ctx) => {
        const cms = await ctx.cache.list(ConfigMap, {
          namespace: req.namespace,
          labels: "tier in (front,back)",
        });
        found = cms.map((c) => c.metadata.name ?? "").sort();
      },
      { owns: [ConfigMap] },
    );
    await vi.waitFor(() => expect(found).toEqual(["x", "y"]), { timeout: 5_000 });
  });

  it("maps watched kinds through the map function", async () => {
    const seen: string[] = [];
    run(
      async (req) => {
        seen.push(req.name);
      },
      {
        watches: [watch(Secret, (s) => [{ namespace: "ns", name: `${s.metadata.name}-widget` }])],
      },
    );
    server.put("/api/v1/secrets", { metadata: { name: "creds", namespace: "ns" } });
    await vi.waitFor(() => expect(seen).toEqual(["creds-widget"]));
  });

  it("maps an object with no owner reference to the one its label names (requestFromLabel)", async () => {
    const seen: string[] = [];
    run(
      async (req) => {
        seen.push(`${req.namespace}/${req.name}`);
      },
      { watches: [watch(Secret, requestFromLabel("example.dev/widget"))] },
    );
    server.put("/api/v1/secrets", { metadata: { name: "unlabelled", namespace: "ns" } });
    server.put("/api/v1/secrets", {
      metadata: { name: "kept", namespace: "ns", labels: { "example.dev/widget": "a" } },
    });
    await vi.waitFor(() => expect(seen).toEqual(["ns/a"]));
  });

  it("aborts a reconcile at its timeout, counts it and retries", async () => {
    server.put(WIDGETS, widget("a"));
    let calls = 0;
    run(
      async (_req, ctx) => {
        calls++;
        if (calls > 1) return;
        await new Promise((_r, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
        );
      },
      { reconcileTimeoutMs: 30 },
    );
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(await counter("controller_runtime_reconcile_timeouts_total", {})).toBe(1);
    expect(await counter("controller_runtime_reconcile_total", { result: "error" })).toBe(1);
  });

  it("lets an in-flight reconcile finish on shutdown before start() resolves", async () => {
    server.put(WIDGETS, widget("a"));
    let finished = false;
    let begun = false;
    run(async () => {
      begun = true;
      await new Promise((r) => setTimeout(r, 100));
      finished = true;
    });
    await vi.waitFor(() => expect(begun).toBe(true));
    stop.abort();
    await running;
    expect(finished).toBe(true);
  });

  it("rejects bad options with a clear message", () => {
    expect(() => controller({ name: "Bad Name", for: Widget, reconcile: async () => {} })).toThrow(
      /lower-case/,
    );
    expect(() =>
      controller({ name: "w", for: Widget, maxConcurrentReconciles: 0, reconcile: async () => {} }),
    ).toThrow(/maxConcurrentReconciles/);
  });

  it("tells the kinds it watches without starting: for, owns in both forms, watches", () => {
    const c = controller({
      name: "w",
      for: Widget,
      owns: [ConfigMap, owns(Secret, [generationChanged()])],
      watches: [watch(ConfigMap, () => [])],
      reconcile: async () => {},
    });
    const kinds = c.watchedKinds();
    expect([kinds.for, ...kinds.owns, ...kinds.watches].map((k) => k.kind)).toEqual([
      "Widget",
      "ConfigMap",
      "Secret",
      "ConfigMap",
    ]);
  });
});
