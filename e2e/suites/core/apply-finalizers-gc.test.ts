// Server-side apply, the zero-write steady state, finalizers and owner-reference garbage collection,
// against the real API server and the real kube-controller-manager.
import {
  applyIfChanged,
  type Client,
  ConfigMap,
  type CoreMetrics,
  controller,
  handleFinalizer,
  hasFinalizer,
  isNotFound,
  Manager,
  type ObjectOf,
  Secret,
  setControllerReference,
  silentLogger,
} from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type CM = ObjectOf<typeof ConfigMap>;
type SecretT = ObjectOf<typeof Secret>;

let client: Client;
let metrics: CoreMetrics;
let ns: TestNamespace;

beforeAll(async () => {
  ({ client, metrics } = connect());
  ns = await createNamespace(client, "apply");
});
afterAll(async () => {
  await ns?.cleanup();
  await client?.close();
});

/** Write requests (everything but GET) this client has made so far, from rest_client_requests_total. */
async function writes(): Promise<number> {
  const m = await metrics.restClientRequests.get();
  return m.values.filter((v) => v.labels.method !== "GET").reduce((sum, v) => sum + v.value, 0);
}

async function exists(kind: typeof ConfigMap | typeof Secret, name: string): Promise<boolean> {
  try {
    await client.get(kind, name, ns.name);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

describe("server-side apply", () => {
  it("applying the same desired state twice leaves the resourceVersion unchanged", async () => {
    const desired: CM = {
      metadata: { name: "ssa", namespace: ns.name, labels: { a: "1" } },
      data: { k: "v" },
    };
    const first = await client.apply(ConfigMap, desired, { fieldManager: "capstan-tests" });
    const second = await client.apply(ConfigMap, desired, { fieldManager: "capstan-tests" });
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const changed = await client.apply(
      ConfigMap,
      { ...desired, data: { k: "w" } },
      { fieldManager: "capstan-tests" },
    );
    expect(changed.metadata.resourceVersion).not.toBe(first.metadata.resourceVersion);
  });

  it("a no-op reconcile makes zero write requests", async () => {
    const owner = await client.create(Secret, { metadata: { name: "owner", namespace: ns.name } } as SecretT);
    const mgr = new Manager({
      name: "noop",
      client,
      metrics,
      logger: silentLogger,
      metricsPort: null,
      healthPort: null,
      namespace: ns.name,
    });
    let reconciles = 0;
    mgr.add(
      controller({
        name: "derive",
        for: Secret,
        owns: [ConfigMap],
        reconcile: async (req, ctx) => {
          reconciles++;
          const s = await ctx.cache.get(Secret, req.name, req.namespace);
          if (!s) return;
          const desired: CM = {
            metadata: { name: `${req.name}-derived`, namespace: req.namespace },
            data: { from: req.name },
          };
          setControllerReference(s, Secret, desired);
          const live = await ctx.cache.get(ConfigMap, `${req.name}-derived`, req.namespace);
          await applyIfChanged(ctx.client, ConfigMap, desired, live, { fieldManager: "capstan-tests" });
        },
      }),
    );
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      await eventually(async () => expect(await exists(ConfigMap, "owner-derived")).toBe(true));
      // The ConfigMap's own add event reconciles the owner again: a steady-state reconcile.
      await eventually(() => expect(reconciles).toBeGreaterThanOrEqual(2));
      await new Promise((r) => setTimeout(r, 300));
      const seen = reconciles;
      const before = await writes();
      // Touch the owner (the test's own single write): one more reconcile, which must write nothing.
      await client.patch(Secret, "owner", ns.name, { metadata: { labels: { touched: "yes" } } });
      await eventually(() => expect(reconciles).toBeGreaterThan(seen));
      await new Promise((r) => setTimeout(r, 500));
      expect(await writes()).toBe(before + 1);
      expect(owner.metadata.uid).toBeTruthy();
    } finally {
      stop.abort();
      await running;
    }
  });
});

describe("finalizers and garbage collection", () => {
  it("a finalizer blocks deletion until cleanup has run", async () => {
    const FIN = "tests.capstan.dev/cleanup";
    let obj = await client.create(ConfigMap, {
      metadata: { name: "fin", namespace: ns.name },
      data: {},
    } as CM);
    ({ obj } = (await handleFinalizer(client, ConfigMap, obj, FIN, async () => {})) as { obj: CM });
    expect(hasFinalizer(await client.get(ConfigMap, "fin", ns.name), FIN)).toBe(true);

    await client.delete(ConfigMap, "fin", ns.name);
    const deleting = await client.get(ConfigMap, "fin", ns.name); // still there: blocked by the finalizer
    expect(deleting.metadata.deletionTimestamp).toBeTruthy();

    let cleaned = false;
    const result = await handleFinalizer(client, ConfigMap, deleting, FIN, async () => {
      cleaned = true;
    });
    expect(cleaned).toBe(true);
    expect(result.deleted).toBe(true);
    await eventually(async () => expect(await exists(ConfigMap, "fin")).toBe(false));
  });

  it("owned objects are garbage-collected by the real controller-manager", async () => {
    const owner = await client.create(Secret, {
      metadata: { name: "gc-owner", namespace: ns.name },
    } as SecretT);
    const child: CM = { metadata: { name: "gc-child", namespace: ns.name }, data: { a: "b" } };
    setControllerReference(owner, Secret, child);
    await client.create(ConfigMap, child);
    await client.delete(Secret, "gc-owner", ns.name, { propagationPolicy: "Background" });
    await eventually(async () => expect(await exists(ConfigMap, "gc-child")).toBe(false), {
      timeoutMs: 60_000,
      message: "the garbage collector deletes the owned ConfigMap",
    });
  });
});
