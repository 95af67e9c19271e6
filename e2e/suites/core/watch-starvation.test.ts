// Watches never starve requests: one Client holds more watches open than its request pool has connections,
// and a LeaderElector on that same Client still wins the Lease and renews it again and again.
import {
  Client,
  ConfigMap,
  LeaderElector,
  Lease,
  LeaseLock,
  type ObjectOf,
  silentLogger,
} from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** More than the old fixed pool of 32 connections, and than maxConnections below. */
const WATCHES = 40;
const MAX_CONNECTIONS = 8;
const RENEWALS = 4;

let client: Client;
let ns: TestNamespace;
const stop = new AbortController();

beforeAll(async () => {
  ({ client } = connect());
  ns = await createNamespace(client, "starvation");
  const seed: ObjectOf<typeof ConfigMap> = { metadata: { name: "seed", namespace: ns.name } };
  await client.create(ConfigMap, seed);
});
afterAll(async () => {
  stop.abort();
  await ns?.cleanup();
  await client?.close();
});

describe("watches and requests on one client", () => {
  it(`${WATCHES} open watches do not keep a LeaderElector from acquiring and renewing its Lease`, async () => {
    const { kubeConfig, metrics } = connect();
    const shared = new Client({ kubeConfig, metrics, maxConnections: MAX_CONNECTIONS });
    // Each watch starts without a resourceVersion, so its first event (ADDED seed) shows it is open.
    let open = 0;
    let ended = 0;
    const failures: unknown[] = [];
    for (let i = 0; i < WATCHES; i++) {
      (async () => {
        let first = true;
        for await (const _ of shared.watch(ConfigMap, {
          namespace: ns.name,
          fieldSelector: "metadata.name=seed",
          timeoutSeconds: 600,
          signal: stop.signal,
        })) {
          if (first) open++;
          first = false;
        }
        if (!stop.signal.aborted) ended++;
      })().catch((err: unknown) => failures.push(err));
    }

    // The electing client's renewals are watched from a second client with a pool of its own.
    const renewTimes = new Set<string>();
    let lost = false;
    const elector = new LeaderElector({
      lock: new LeaseLock({ client: shared, namespace: ns.name, name: "starvation", identity: "shared" }),
      metrics,
      logger: silentLogger,
    });
    const outcome = elector.run(stop.signal).then((o) => {
      if (o === "lost") lost = true;
      return o;
    });

    await eventually(() => expect(elector.isLeader()).toBe(true), {
      timeoutMs: 60_000,
      message: `the elector acquires the Lease while ${WATCHES} watches are open`,
    });
    await eventually(
      async () => {
        const lease = await client.get(Lease, "starvation", ns.name);
        if (lease.spec?.renewTime) renewTimes.add(String(lease.spec.renewTime));
        expect(lost).toBe(false);
        expect(renewTimes.size).toBeGreaterThanOrEqual(RENEWALS);
      },
      { timeoutMs: 90_000, intervalMs: 500, message: `the Lease is renewed ${RENEWALS} times` },
    );
    expect(open).toBe(WATCHES);
    expect(ended).toBe(0);
    expect(failures).toEqual([]);
    expect(elector.isLeader()).toBe(true);
    expect((await client.get(Lease, "starvation", ns.name)).spec?.holderIdentity).toBe("shared");

    stop.abort();
    expect(await outcome).toBe("stopped");
    await shared.close();
  });
});
