// The controller's error policy: a domain error the operator maps once at setup is requeued after its delay with its
// conditions and Event, instead of the rate-limited backoff; anything else keeps the default handling.
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { KubeObject } from "../api/object.ts";
import { Client } from "../client/client.ts";
import { Manager } from "../manager/manager.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import type { RateLimiter } from "../queue/rate-limiter.ts";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { widget as newWidget, Widget } from "../testing/widget-fixture.ts";
import { silentLogger } from "../util/logger.ts";
import { type ControllerOptions, controller, type Reconciler } from "./controller.ts";
import type { ErrorPolicy } from "./error-policy.ts";
import { generationChanged } from "./predicates.ts";

/** The operator's own error type: the operand did not answer. */
class OperandUnavailable extends Error {}

/** Maps OperandUnavailable to a requeue after 20 ms, Degraded and a Warning; anything else: default handling. */
const policy: ErrorPolicy<Widget> = (err) =>
  err instanceof OperandUnavailable
    ? {
        requeueAfter: 20,
        conditions: [
          { type: "Degraded", status: "True", reason: "OperandUnavailable", message: err.message },
        ],
        event: { reason: "OperandUnavailable", action: "Observe" },
      }
    : undefined;

/** A rate limiter that records every backoff it is asked for (a fixed 5 ms, so retries stay quick). */
class RecordingLimiter implements RateLimiter<string> {
  readonly asked: string[] = [];
  when(item: string): number {
    this.asked.push(item);
    return 5;
  }
  forget(): void {}
  numRequeues(item: string): number {
    return this.asked.filter((i) => i === item).length;
  }
}

let server: FakeApiServer;
let metrics: CoreMetrics;
let stop: AbortController;
let running: Promise<void> | undefined;
let limiter: RecordingLimiter;

beforeEach(async () => {
  server = new FakeApiServer({ kinds: [Widget] });
  await server.start();
  metrics = new CoreMetrics(new Registry());
  stop = new AbortController();
  running = undefined;
  limiter = new RecordingLimiter();
});

afterEach(async () => {
  stop.abort();
  await running?.catch(() => {});
  await server.stop();
});

/** A Widget ns/<name> at generation 3. */
function widget(name: string): Widget {
  const w = newWidget(name);
  return { ...w, metadata: { ...w.metadata, generation: 3 } };
}

function run(reconcile: Reconciler, extra: Partial<ControllerOptions<Widget>> = {}): void {
  const client = new Client({ kubeConfig: server.kubeConfig(), metrics });
  const mgr = new Manager({
    name: "test",
    client,
    metrics,
    logger: silentLogger,
    metricsPort: null,
    healthPort: null,
  });
  // Status writes (the policy's conditions) do not trigger a reconcile: only requeues do, as in an operator.
  const predicates = [generationChanged()];
  mgr.add(
    controller<Widget>({
      name: "widget",
      for: Widget,
      rateLimiter: limiter,
      predicates,
      reconcile,
      ...extra,
    }),
  );
  running = mgr.start(stop.signal);
}

async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getSingleMetric(name)?.get()) as {
    values: { labels: Record<string, unknown>; value: number }[];
  };
  const row = metric.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return row?.value ?? Number.NaN;
}

function events(): KubeObject[] {
  return server.all().filter((o) => o.kind === "Event");
}

function statusWrites(): number {
  return server.writes().filter((r) => r.resource === "widgets" && r.subresource === "status").length;
}

describe("Controller errorPolicy", () => {
  it("requeues a mapped error after its delay with its conditions and Event, never through the backoff", async () => {
    server.put(Widget, widget("a"));
    let calls = 0;
    run(
      async () => {
        calls++;
        if (calls <= 2) throw new OperandUnavailable("etcd at 10.0.0.1:2379 did not answer");
      },
      { errorPolicy: policy },
    );
    await vi.waitFor(() => expect(calls).toBe(3));
    await vi.waitFor(async () =>
      expect(await counter("controller_runtime_reconcile_total", { result: "success" })).toBe(1),
    );
    // Requeued by the policy: no backoff asked for, no error counted.
    expect(limiter.asked).toEqual([]);
    expect(await counter("controller_runtime_reconcile_total", { result: "requeue_after" })).toBe(2);
    expect(await counter("controller_runtime_reconcile_total", { result: "error" })).toBe(0);
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(0);
    // The condition, with the object's generation, written once (the second time it was already so).
    const live = server.all().find((o) => o.kind === "Widget") as Widget;
    expect(live.status?.conditions).toEqual([
      expect.objectContaining({
        type: "Degraded",
        status: "True",
        reason: "OperandUnavailable",
        message: "etcd at 10.0.0.1:2379 did not answer",
        observedGeneration: 3,
      }),
    ]);
    expect(statusWrites()).toBe(1);
    // One Warning (the repeat folds into its series), the error's message as its note.
    await vi.waitFor(() => expect(events()).toHaveLength(1));
    expect(events()[0]).toMatchObject({
      type: "Warning",
      reason: "OperandUnavailable",
      action: "Observe",
      note: "etcd at 10.0.0.1:2379 did not answer",
      regarding: { kind: "Widget", name: "a", namespace: "ns" },
    });
  });

  it("without a policy the same error is retried with backoff and counted as an error", async () => {
    server.put(Widget, widget("a"));
    let calls = 0;
    run(async () => {
      calls++;
      if (calls <= 2) throw new OperandUnavailable("etcd did not answer");
    });
    await vi.waitFor(() => expect(calls).toBe(3));
    expect(limiter.asked).toEqual(["ns/a", "ns/a"]);
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(2);
    expect(statusWrites()).toBe(0);
  });

  it("an error the policy does not map keeps the default handling: backoff, counted, nothing written", async () => {
    server.put(Widget, widget("a"));
    let calls = 0;
    run(
      async () => {
        calls++;
        if (calls === 1) throw new Error("the API server did not answer");
      },
      { errorPolicy: policy },
    );
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(limiter.asked).toEqual(["ns/a"]);
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(1);
    expect(statusWrites()).toBe(0);
    expect(events()).toEqual([]);
  });

  it("a policy without requeueAfter records its conditions and Event, then the error is retried with backoff", async () => {
    server.put(Widget, widget("a"));
    let calls = 0;
    run(
      async () => {
        calls++;
        if (calls === 1) throw new OperandUnavailable("no leader");
      },
      {
        errorPolicy: (err) => ({
          conditions: [{ type: "Degraded", status: "True", reason: "NoLeader", message: err.message }],
          event: { type: "Normal", reason: "NoLeader" },
        }),
      },
    );
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(limiter.asked).toEqual(["ns/a"]);
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(1);
    expect(statusWrites()).toBe(1);
    await vi.waitFor(() => expect(events()).toMatchObject([{ type: "Normal", reason: "NoLeader" }]));
  });

  it("never asks the policy about a panic (a programming error)", async () => {
    server.put(Widget, widget("a"));
    const asked: unknown[] = [];
    let calls = 0;
    run(
      async () => {
        calls++;
        if (calls === 1) throw new TypeError("cannot read properties of undefined");
      },
      {
        errorPolicy: (err) => {
          asked.push(err);
          return { requeueAfter: 20 };
        },
      },
    );
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(asked).toEqual([]);
    expect(await counter("controller_runtime_reconcile_panics_total", { controller: "widget" })).toBe(1);
    expect(limiter.asked).toEqual(["ns/a"]);
  });

  it("a policy that throws leaves the reconcile's error to the default handling", async () => {
    server.put(Widget, widget("a"));
    let calls = 0;
    run(
      async () => {
        calls++;
        if (calls === 1) throw new OperandUnavailable("no leader");
      },
      {
        errorPolicy: () => {
          throw new Error("bug in the policy");
        },
      },
    );
    await vi.waitFor(() => expect(calls).toBe(2));
    expect(limiter.asked).toEqual(["ns/a"]);
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(1);
  });

  it("a condition write the API server refuses leaves the error to the default handling", async () => {
    server.put(Widget, widget("a"));
    server.fail({ verb: "patch", kind: Widget }, 422, { times: 1 });
    let calls = 0;
    run(
      async () => {
        calls++;
        if (calls <= 2) throw new OperandUnavailable("no leader");
      },
      { errorPolicy: policy },
    );
    await vi.waitFor(() => expect(calls).toBe(3));
    // The first: refused, so backed off; the second: written and requeued by the policy.
    expect(limiter.asked).toEqual(["ns/a"]);
    expect(await counter("controller_runtime_reconcile_total", { result: "requeue_after" })).toBe(1);
    expect(await counter("controller_runtime_reconcile_errors_total", { controller: "widget" })).toBe(1);
  });
});
