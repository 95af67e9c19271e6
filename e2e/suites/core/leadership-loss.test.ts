// Split brain, against the real API server: a manager whose Lease is taken while a reconcile is still
// writing must stop that reconcile at once (no grace period) and exit with "leader election lost" without waiting
// for the reconcile to return.
import { type Client, ConfigMap, controller, Lease, Manager, silentLogger } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let client: Client;
let ns: TestNamespace;

beforeAll(async () => {
  ({ client } = connect());
  ns = await createNamespace(client, "loss");
});
afterAll(async () => {
  await ns?.cleanup();
  await client?.close();
});

async function writesMade(): Promise<number> {
  const list = await client.list(ConfigMap, { namespace: ns.name, labelSelector: "written-by=reconcile" });
  return list.items.length;
}

describe("leadership loss", () => {
  it("aborts the in-flight reconcile at once: no write lands after the Lease is lost", async () => {
    await client.create(ConfigMap, { metadata: { name: "trigger", namespace: ns.name } });
    const mgr = new Manager({
      name: "loss",
      client: connect().client,
      logger: silentLogger,
      metricsPort: null,
      healthPort: null,
      namespace: ns.name,
      gracefulShutdownTimeoutMs: 120_000, // longer than this test may take: the loss must not wait for it
      leaderElection: {
        namespace: ns.name,
        name: "loss-leader",
        identity: "victim",
        leaseDurationMs: 4_000,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 500,
      },
    });
    let reconcileEnded: unknown;
    mgr.add(
      controller({
        name: "writer",
        for: ConfigMap,
        reconcile: async (req, ctx) => {
          if (req.name !== "trigger") return;
          // A reconcile that keeps writing and never looks at its signal: only ctx.client's binding stops it.
          try {
            for (let n = 0; ; n++) {
              await ctx.client.create(ConfigMap, {
                metadata: {
                  name: `write-${n}`,
                  namespace: req.namespace,
                  labels: { "written-by": "reconcile" },
                },
              });
              await new Promise((r) => setTimeout(r, 100));
            }
          } catch (err) {
            reconcileEnded = err;
          }
        },
      }),
    );
    const running = mgr.start(new AbortController().signal);
    await eventually(async () => expect(await writesMade()).toBeGreaterThan(2), { timeoutMs: 60_000 });

    // Another candidate takes the Lease (as after a partition that outlived our lease).
    const lease = await client.get(Lease, "loss-leader", ns.name);
    await client.update(Lease, {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: "thief",
        leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1,
      },
    });

    await expect(running).rejects.toThrow(/leader election lost/);
    // start() rejects at once, waiting for no reconcile (issue 26, item 1): the reconcile ends on its next call
    // through ctx.client (at most one 100 ms pause away), refused because the Lease is lost.
    await eventually(() => expect(String(reconcileEnded)).toMatch(/abort|leader election lost/i), {
      timeoutMs: 5_000,
      intervalMs: 50,
    });
    const afterLoss = await writesMade();
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await writesMade()).toBe(afterLoss);
    expect((await client.get(Lease, "loss-leader", ns.name)).spec?.holderIdentity).toBe("thief");
  });
});
