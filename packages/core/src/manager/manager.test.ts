import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap, Secret } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { Client } from "../client/client.ts";
import { controller } from "../controller/controller.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { silentLogger } from "../util/logger.ts";
import { Manager } from "./manager.ts";

/** Every metric name listed in shared/DESIGN.md (controller-runtime / client-go names). */
const DESIGN_METRICS = [
  "controller_runtime_reconcile_total",
  "controller_runtime_reconcile_errors_total",
  "controller_runtime_terminal_reconcile_errors_total",
  "controller_runtime_reconcile_panics_total",
  "controller_runtime_reconcile_time_seconds",
  "controller_runtime_max_concurrent_reconciles",
  "controller_runtime_active_workers",
  "workqueue_depth",
  "workqueue_adds_total",
  "workqueue_queue_duration_seconds",
  "workqueue_work_duration_seconds",
  "workqueue_unfinished_work_seconds",
  "workqueue_longest_running_processor_seconds",
  "workqueue_retries_total",
  "leader_election_master_status",
  "rest_client_requests_total",
  "rest_client_request_duration_seconds",
  "process_cpu_seconds_total",
  "process_resident_memory_bytes",
  "nodejs_eventloop_lag_seconds",
];

let server: FakeApiServer;
const stops: AbortController[] = [];

beforeEach(async () => {
  server = new FakeApiServer();
  await server.start();
});

afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  await new Promise((r) => setTimeout(r, 10));
  await server.stop();
});

function newManager(opts: Partial<ConstructorParameters<typeof Manager>[0]> = {}) {
  const metrics = new CoreMetrics(new Registry());
  const client = new Client({ kubeConfig: server.kubeConfig(), metrics });
  const mgr = new Manager({
    name: "test",
    client,
    metrics,
    logger: silentLogger,
    metricsPort: 0,
    metricsServer: { secure: false }, // plain HTTP here; metrics-server.test.ts covers the secure default
    healthPort: 0,
    bindAddress: "127.0.0.1",
    ...opts,
  });
  const stop = new AbortController();
  stops.push(stop);
  return { mgr, stop, metrics };
}

describe("Manager", () => {
  it("serves /metrics with every standard metric name, and /healthz and /readyz", async () => {
    server.put("/api/v1/configmaps", { metadata: { name: "a", namespace: "ns" } });
    const { mgr, stop } = newManager({
      // Generous renewal timings: a loaded machine must not lose the Lease mid-test (loss has its own test).
      leaderElection: {
        namespace: "ns",
        leaseDurationMs: 20_000,
        renewDeadlineMs: 15_000,
        retryPeriodMs: 200,
      },
    });
    let reconciled = 0;
    mgr.add(controller({ name: "cm", for: ConfigMap, reconcile: async () => void reconciled++ }));
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(reconciled).toBe(1));
    const { metrics: mport, health: hport } = mgr.boundPorts();
    const text = await (await fetch(`http://127.0.0.1:${mport}/metrics`)).text();
    const missing = DESIGN_METRICS.filter((name) => !new RegExp(`^# TYPE ${name} `, "m").test(text));
    expect(missing).toEqual([]);
    expect(text).toMatch(/controller_runtime_reconcile_total\{controller="cm",result="requeue_after"\} 0/);
    expect(text).toMatch(/leader_election_master_status\{name="ns\/test-leader"\} 1/);
    expect((await fetch(`http://127.0.0.1:${hport}/healthz`)).status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${hport}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain("[+]informers ok");
    stop.abort();
    await running;
  });

  it("is not ready until a failing ready check passes", async () => {
    const { mgr, stop } = newManager();
    let ok = false;
    mgr.addReadyCheck("operand", () => ok);
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(mgr.boundPorts().health).toBeGreaterThan(0));
    const url = `http://127.0.0.1:${mgr.boundPorts().health}/readyz`;
    await vi.waitFor(async () => expect(await (await fetch(url)).text()).toContain("[-]operand failed"));
    expect((await fetch(url)).status).toBe(500);
    ok = true;
    expect((await fetch(url)).status).toBe(200);
    stop.abort();
    await running;
  });

  it("with two managers on one Lease exactly one leads, and a graceful stop hands over", async () => {
    const le = {
      namespace: "ns",
      name: "shared",
      leaseDurationMs: 20_000, // b must take over because a released the Lease, not because it expired
      renewDeadlineMs: 15_000,
      retryPeriodMs: 100,
    };
    const a = newManager({ leaderElection: { ...le, identity: "a" }, metricsPort: null, healthPort: null });
    const b = newManager({ leaderElection: { ...le, identity: "b" }, metricsPort: null, healthPort: null });
    const runA = a.mgr.start(a.stop.signal);
    await vi.waitFor(() => expect(a.mgr.isLeader()).toBe(true));
    const runB = b.mgr.start(b.stop.signal);
    await new Promise((r) => setTimeout(r, 400)); // several retry periods of b
    expect(b.mgr.isLeader()).toBe(false);
    a.stop.abort();
    await runA; // releases the lease on the way out
    const lease = server.objects.get("/apis/coordination.k8s.io/v1/leases")?.get("ns/shared") as unknown as {
      spec: { holderIdentity?: string };
    };
    expect(lease.spec.holderIdentity ?? "").toBe("");
    // b takes over at its next retry, long before the 20 s lease would have expired.
    await vi.waitFor(() => expect(b.mgr.isLeader()).toBe(true), { timeout: 1500 });
    b.stop.abort();
    await runB;
  });

  it("fails start when the caches cannot sync", async () => {
    const { mgr, stop } = newManager({ cacheSyncTimeoutMs: 200, metricsPort: null, healthPort: null });
    mgr.add(controller({ name: "cm", for: ConfigMap, reconcile: async () => {} }));
    await server.stop(); // nothing answers the list
    await expect(mgr.start(stop.signal)).rejects.toThrow(/did not sync/);
    server = new FakeApiServer();
    await server.start();
  });

  it("refuses to add a controller name twice or after start", async () => {
    const { mgr, stop } = newManager({ metricsPort: null, healthPort: null });
    mgr.add(controller({ name: "cm", for: ConfigMap, reconcile: async () => {} }));
    expect(() => mgr.add(controller({ name: "cm", for: ConfigMap, reconcile: async () => {} }))).toThrow(
      /already added/,
    );
    const running = mgr.start(stop.signal);
    expect(() => mgr.add(controller({ name: "x", for: ConfigMap, reconcile: async () => {} }))).toThrow(
      /already started/,
    );
    stop.abort();
    await running;
  });

  it("on leadership loss aborts in-flight reconciles at once, refuses their writes and rejects start()", async () => {
    server.put("/api/v1/configmaps", { metadata: { name: "a", namespace: "ns" } });
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      gracefulShutdownTimeoutMs: 600_000, // a grace period would outlast the test: loss must not wait for it
      leaderElection: {
        namespace: "ns",
        name: "lost",
        leaseDurationMs: 4000,
        renewDeadlineMs: 3000,
        retryPeriodMs: 100,
      },
    });
    let inFlight: AbortSignal | undefined;
    let writeAfterLoss: Promise<unknown> | undefined;
    mgr.add(
      controller({
        name: "cm",
        for: ConfigMap,
        reconcile: async (_req, ctx) => {
          inFlight = ctx.signal;
          // Ignores its signal for the wait, then writes through ctx.client without passing the signal.
          await vi.waitFor(() => expect(mgr.isLeader()).toBe(false), { timeout: 10_000, interval: 20 });
          writeAfterLoss = ctx.client.create(ConfigMap, { metadata: { name: "late", namespace: "ns" } });
          await writeAfterLoss.catch(() => {});
        },
      }),
    );
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(inFlight).toBeDefined(), { timeout: 5_000 });
    expect(inFlight?.aborted).toBe(false);
    // Another candidate takes the Lease (as after a network partition): renewals now fail.
    const leases = "/apis/coordination.k8s.io/v1/leases";
    const lease = server.objects.get(leases)?.get("ns/lost") as KubeObject & {
      spec: Record<string, unknown>;
    };
    const stolen = { ...lease, spec: { ...lease.spec, holderIdentity: "thief", leaseTransitions: 1 } };
    server.put(leases, stolen as KubeObject);

    await expect(running).rejects.toThrow(/leader election lost/);
    expect(inFlight?.aborted).toBe(true);
    // start() did not wait for the reconcile: its late write comes after, and is refused.
    await vi.waitFor(() => expect(writeAfterLoss).toBeDefined(), { timeout: 10_000 });
    await expect(writeAfterLoss).rejects.toThrow();
    expect(server.objects.get("/api/v1/configmaps")?.has("ns/late")).toBe(false);
  });

  it("on leadership loss rejects start() at once, while a reconcile that ignores its signal still runs", async () => {
    server.put("/api/v1/configmaps", { metadata: { name: "a", namespace: "ns" } });
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      gracefulShutdownTimeoutMs: 600_000,
      leaderElection: {
        namespace: "ns",
        name: "deaf",
        leaseDurationMs: 4000,
        renewDeadlineMs: 3000,
        retryPeriodMs: 100,
      },
    });
    let steps = 0;
    let finished = false;
    mgr.add(
      controller({
        name: "cm",
        for: ConfigMap,
        // 100 steps of 100 ms that never look at ctx.signal (an operand client that does not take it).
        reconcile: async () => {
          for (; steps < 100; steps++) await new Promise((r) => setTimeout(r, 100));
          finished = true;
        },
      }),
    );
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(steps).toBeGreaterThan(0), { timeout: 5_000 });
    const leases = "/apis/coordination.k8s.io/v1/leases";
    const lease = server.objects.get(leases)?.get("ns/deaf") as KubeObject & {
      spec: Record<string, unknown>;
    };
    server.put(leases, {
      ...lease,
      spec: { ...lease.spec, holderIdentity: "thief", leaseTransitions: 1 },
    } as KubeObject);

    await expect(running).rejects.toThrow(/leader election lost/);
    // start() did not wait for the reconcile: the process can exit and end it.
    expect(finished).toBe(false);
  });

  it("a leader-only runnable whose start() throws rejects start() with its error and releases the Lease", async () => {
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      leaderElection: {
        namespace: "ns",
        name: "throws",
        leaseDurationMs: 20_000,
        renewDeadlineMs: 15_000,
        retryPeriodMs: 100,
      },
    });
    let laterStarted = false;
    mgr.add({
      name: "broken",
      start: () => {
        throw new Error("broken: bad configuration");
      },
    });
    mgr.add({
      name: "later",
      start: async (signal: AbortSignal) => {
        laterStarted = true;
        await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
      },
    });
    await expect(mgr.start(stop.signal)).rejects.toThrow(/broken: bad configuration/);
    expect(laterStarted).toBe(true);
    const lease = server.objects.get("/apis/coordination.k8s.io/v1/leases")?.get("ns/throws") as unknown as {
      spec: { holderIdentity?: string };
    };
    expect(lease.spec.holderIdentity ?? "").toBe("");
  });

  it("the grace period bounds the whole shutdown: reconciles' signals abort before its end", async () => {
    server.put("/api/v1/configmaps", { metadata: { name: "deaf", namespace: "ns" } });
    const grace = 3_000;
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      gracefulShutdownTimeoutMs: grace,
    });
    let signal: AbortSignal | undefined;
    let abortedAfterStopMs: number | undefined;
    let stoppedAt = 0;
    mgr.add(
      controller({
        name: "cm",
        for: ConfigMap,
        reconcile: (_req, ctx) => {
          signal = ctx.signal;
          ctx.signal.addEventListener("abort", () => (abortedAfterStopMs = performance.now() - stoppedAt));
          return new Promise(() => {}); // never returns
        },
      }),
    );
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(signal).toBeDefined(), { timeout: 5_000 });
    stoppedAt = performance.now();
    stop.abort();
    await expect(running).rejects.toThrow(/within grace period of 3s/);
    const tookMs = performance.now() - stoppedAt;
    // The signal aborted inside the grace period (its last part is for aborted work to return), and start()
    // ended at its end: not a 5 s slack after it, as before.
    expect(abortedAfterStopMs).toBeLessThan(grace);
    expect(tookMs).toBeLessThan(grace + 2_000);
  });

  it("gives up after the grace period on a reconcile that ignores its signal, names it, and keeps the Lease", async () => {
    server.put("/api/v1/configmaps", { metadata: { name: "stuck", namespace: "ns" } });
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      gracefulShutdownTimeoutMs: 100,
      leaderElection: {
        namespace: "ns",
        name: "stuck",
        identity: "me",
        leaseDurationMs: 20_000,
        renewDeadlineMs: 15_000,
        retryPeriodMs: 100,
      },
    });
    let started = false;
    mgr.add(
      controller({
        name: "cm",
        for: ConfigMap,
        reconcile: () => {
          started = true;
          return new Promise(() => {}); // never returns, whatever its signal says
        },
      }),
    );
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(started).toBe(true), { timeout: 5_000 });
    stop.abort();
    await expect(running).rejects.toThrow(
      /failed waiting for all runnables to end within grace period of 0.1s: still running: controller "cm" \(reconcile ns\/stuck running \d+ s\)/,
    );
    // Not released: a successor must not start while our reconcile may still be writing.
    const lease = server.objects.get("/apis/coordination.k8s.io/v1/leases")?.get("ns/stuck") as unknown as {
      spec: { holderIdentity?: string };
    };
    expect(lease.spec.holderIdentity).toBe("me");
  });

  it("stops (and releases the Lease) when a runnable fails", async () => {
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      leaderElection: {
        namespace: "ns",
        name: "failing",
        leaseDurationMs: 20_000,
        renewDeadlineMs: 15_000,
        retryPeriodMs: 100,
      },
    });
    let otherStopped = false;
    mgr.add({
      name: "other",
      start: async (signal: AbortSignal) => {
        await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
        otherStopped = true;
      },
    });
    mgr.add({
      name: "webhook",
      needLeaderElection: false,
      start: async () => {
        await new Promise((r) => setTimeout(r, 300));
        throw new Error("webhook: port in use");
      },
    });
    await expect(mgr.start(stop.signal)).rejects.toThrow(/webhook: port in use/);
    expect(otherStopped).toBe(true);
    const lease = server.objects.get("/apis/coordination.k8s.io/v1/leases")?.get("ns/failing") as unknown as {
      spec: { holderIdentity?: string };
    };
    expect(lease.spec.holderIdentity ?? "").toBe("");
  });

  it("fails /healthz while a reconcile runs past the stuck threshold", async () => {
    server.put("/api/v1/configmaps", { metadata: { name: "slow", namespace: "ns" } });
    const { mgr, stop } = newManager({ stuckReconcileThresholdMs: 200, gracefulShutdownTimeoutMs: 5_000 });
    let release = () => {};
    mgr.add(
      controller({
        name: "cm",
        for: ConfigMap,
        reconcile: () => new Promise<void>((r) => (release = r)),
      }),
    );
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(mgr.boundPorts().health).toBeGreaterThan(0));
    const url = `http://127.0.0.1:${mgr.boundPorts().health}/healthz`;
    await vi.waitFor(
      async () => {
        const res = await fetch(url);
        expect(res.status).toBe(500);
        expect(await res.text()).toMatch(
          /\[-\]workers failed: controller "cm": reconcile of ns\/slow has been running for/,
        );
      },
      { timeout: 5_000, interval: 50 },
    );
    release();
    await vi.waitFor(async () => expect((await fetch(url)).status).toBe(200), { timeout: 5_000 });
    stop.abort();
    await running;
  });

  it("fails a cache read of a kind that cannot sync, naming the kind and the server's answer", async () => {
    server.faults.set("/api/v1/secrets", {
      code: 403,
      reason: "Forbidden",
      message: 'secrets is forbidden: User "op" cannot list resource "secrets"',
    });
    const { mgr, stop } = newManager({
      metricsPort: null,
      healthPort: null,
      cacheSyncTimeoutMs: 500,
      namespace: "ns",
    });
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(mgr.isLeader()).toBe(true));
    await expect(mgr.cache.get(Secret, "s", "ns")).rejects.toThrow(
      /cache for v1 Secret in namespace "ns" did not sync within 500 ms: last list\/watch error: .*forbidden/,
    );
    // A reconcile's signal ends the wait at once, whatever the timeout.
    const abort = new AbortController();
    const read = mgr.cache.withSignal(abort.signal).list(Secret, { namespace: "ns" });
    abort.abort();
    await expect(read).rejects.toThrow(/Secret in namespace "ns" is not synced \(read aborted\)/);
    stop.abort();
    await running;
  });

  it("refuses cache reads that would answer 'not found' for the wrong reason", async () => {
    const { mgr, stop } = newManager({ metricsPort: null, healthPort: null, namespace: "ns" });
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(mgr.isLeader()).toBe(true));
    await expect(mgr.cache.get(ConfigMap, "a")).rejects.toThrow(
      /ConfigMap is namespaced; pass the namespace/,
    );
    await expect(mgr.cache.get(ConfigMap, "a", "other")).rejects.toThrow(
      /in namespace "other": the cache only holds namespace "ns"/,
    );
    await expect(mgr.cache.list(ConfigMap, { namespace: "other" })).rejects.toThrow(
      /only holds namespace "ns"/,
    );
    expect(await mgr.cache.get(ConfigMap, "a", "ns")).toBeUndefined();
    stop.abort();
    await running;
  });
});
