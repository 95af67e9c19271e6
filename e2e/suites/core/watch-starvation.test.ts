// Watches never starve requests: one Client holds more watches open than its request pool can carry, and a
// manager's leader election on that same Client still wins the Lease and renews it again and again.
// Over HTTP/2 (what kube-apiserver negotiates) a connection carries up to 100 streams, so the old single
// pool of 32 connections filled at 3200 watches; over HTTP/1.1 at 32. Each case opens more than that.
import {
  Client,
  type ClientOptions,
  ConfigMap,
  Lease,
  Manager,
  type ObjectOf,
  silentLogger,
} from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Distinct renewTimes the Lease must show once every watch is open. */
const RENEWALS = 3;

let client: Client;
let ns: TestNamespace;
const stops: AbortController[] = [];

beforeAll(async () => {
  ({ client } = connect());
  ns = await createNamespace(client, "starvation");
  const seed: ObjectOf<typeof ConfigMap> = { metadata: { name: "seed", namespace: ns.name } };
  await client.create(ConfigMap, seed);
});
afterAll(async () => {
  for (const stop of stops) stop.abort();
  await ns?.cleanup();
  await client?.close();
});

/** Opens `watches` watches and runs a leader-elected Manager on one Client with `options`; checks it keeps renewing. */
async function electWhileWatching(lease: string, watches: number, options: ClientOptions): Promise<void> {
  const stop = new AbortController();
  stops.push(stop);
  const { kubeConfig, metrics } = connect();
  const shared = new Client({ kubeConfig, metrics, ...options });

  // Each watch starts without a resourceVersion, so its first event (ADDED seed) shows it is open.
  let open = 0;
  let ended = 0;
  const failures: unknown[] = [];
  for (let i = 0; i < watches; i++) {
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

  const mgr = new Manager({
    name: "starvation",
    client: shared,
    metrics,
    logger: silentLogger,
    metricsPort: null,
    healthPort: null,
    leaderElection: { namespace: ns.name, name: lease, identity: "shared" },
  });
  let leading = false;
  mgr.add({
    name: "leader-only",
    start: async (signal: AbortSignal) => {
      leading = true;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      leading = false;
    },
  });
  let outcome: string | undefined;
  const done = mgr.start(stop.signal).then(
    () => {
      outcome = "stopped";
    },
    (err: unknown) => {
      outcome = `failed: ${err instanceof Error ? err.message : String(err)}`;
    },
  );

  await eventually(() => expect(leading).toBe(true), {
    timeoutMs: 60_000,
    message: `the manager acquires the Lease while ${watches} watches are opened on its client`,
  });
  await eventually(() => expect(open).toBe(watches), {
    timeoutMs: 120_000,
    message: `${watches} watches are open`,
  });
  // Renewals made from here on were made while every watch held its connection or stream.
  const renewTimes = new Set<string>();
  const renewTime = async () => (await client.get(Lease, lease, ns.name)).spec?.renewTime ?? "";
  const before = await renewTime();
  await eventually(
    async () => {
      const t = await renewTime();
      if (t !== before) renewTimes.add(t);
      expect(outcome).toBeUndefined(); // neither lost nor stopped
      expect(renewTimes.size).toBeGreaterThanOrEqual(RENEWALS);
    },
    { timeoutMs: 60_000, intervalMs: 500, message: `the Lease is renewed ${RENEWALS} times` },
  );
  expect(leading).toBe(true);
  expect((await client.get(Lease, lease, ns.name)).spec?.holderIdentity).toBe("shared");
  expect(ended).toBe(0);
  expect(failures).toEqual([]);

  stop.abort();
  await done;
  expect(outcome).toBe("stopped");
  await shared.close();
}

describe("watches and requests on one client", () => {
  it("over HTTP/2: 3300 watches (more than 32 connections x 100 streams) leave the Lease renewed", async () => {
    // requestsHttp2: the Lease's requests share the watches' protocol, as they did before requests kept to HTTP/1.1.
    await electWhileWatching("over-http2", 3300, { requestsHttp2: true });
  });

  it("over HTTP/1.1: 40 watches (more than maxConnections 8) leave the Lease renewed", async () => {
    await electWhileWatching("over-http1", 40, { http2: false, maxConnections: 8 });
  });
});
