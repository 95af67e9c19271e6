// Test data for the peer benchmarks on a real API server: a bench-* namespace filled with ~1 KB ConfigMaps,
// a writer that updates them as fast as the server takes it, and cleanup.

import { ConfigMap, Namespace } from "../../packages/core/src/api/kinds.ts";
import { Client } from "../../packages/core/src/client/client.ts";
import { isNotFound } from "../../packages/core/src/client/errors.ts";

/** Requests in flight at once while creating and updating. */
const CONCURRENCY = 16;
/** ~1 KB of data per ConfigMap, the size the benchmark is specified for. */
const PAYLOAD = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(28).slice(0, 1000);

/** A client for KUBECONFIG's cluster; throws a clear error when none is set or it does not answer. */
export async function connect(): Promise<Client> {
  const { env } = process;
  const path = env.KUBECONFIG;
  if (!path) throw new Error("KUBECONFIG is not set: the peer benchmarks need a running API server");
  let client: Client;
  try {
    client = new Client({ maxAttempts: 2, requestTimeoutMs: 10_000, userAgent: "capstan-bench" });
  } catch (err) {
    throw new Error(`cannot load KUBECONFIG=${path}: ${(err as Error).message}`);
  }
  try {
    const version = (await client.raw("/version")) as { gitVersion?: string };
    console.log(`cluster: ${client.server.origin}, kube-apiserver ${version.gitVersion ?? "?"}`);
  } catch (err) {
    throw new Error(`no API server reachable at ${client.server.origin} (KUBECONFIG=${path}): ${err}`);
  }
  return client;
}

/** Runs `task(0..count-1)` with at most CONCURRENCY calls in flight. */
async function parallel(count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < count; i = next++) await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, lane));
}

/** The name of the i-th ConfigMap. */
const nameOf = (i: number) => `cm-${String(i).padStart(6, "0")}`;

/** Creates namespace `name` holding `count` ConfigMaps; returns how many ConfigMaps it holds in all. */
export async function fillNamespace(client: Client, name: string, count: number): Promise<number> {
  await client.create(Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  const started = performance.now();
  await parallel(count, (i) =>
    client.create(
      ConfigMap,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: nameOf(i),
          namespace: name,
          labels: { "app.kubernetes.io/part-of": "capstan-bench" },
        },
        data: { "config.txt": PAYLOAD, counter: "0" },
      },
      { fieldManager: "capstan-bench" },
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `created ${count} ConfigMaps in ${name} in ${seconds.toFixed(1)} s (${Math.round(count / seconds)}/s)`,
  );
  // The controller manager adds kube-root-ca.crt to every namespace: count what an informer will see.
  const { items } = await client.list(ConfigMap, { namespace: name });
  return items.length;
}

/**
 * Applies `updates` merge patches round-robin over the first `count` ConfigMaps; returns updates/s. Every
 * value is new (a per-call tag): a patch that changes nothing is no update and sends no event.
 */
export async function writeUpdates(
  client: Client,
  namespace: string,
  count: number,
  updates: number,
): Promise<number> {
  const tag = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const started = performance.now();
  await parallel(updates, (i) =>
    client.patch(ConfigMap, nameOf(i % count), namespace, { data: { counter: `${tag}-${i}` } }, "merge", {
      fieldManager: "capstan-bench",
    }),
  );
  return updates / ((performance.now() - started) / 1000);
}

/** Deletes namespace `name` and waits until it is gone (the controller manager empties it). */
export async function deleteNamespace(client: Client, name: string, timeoutMs = 300_000): Promise<void> {
  try {
    await client.delete(Namespace, name);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await client.get(Namespace, name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  console.warn(`namespace ${name} still terminating after ${timeoutMs / 1000} s; delete it by hand`);
}

/** Deletes every bench-peers-* namespace a previous, interrupted run left behind. */
export async function deleteLeftovers(client: Client): Promise<void> {
  const { items } = await client.list(Namespace);
  for (const ns of items) {
    const name = ns.metadata.name ?? "";
    if (name.startsWith("bench-peers-") && ns.status?.phase !== "Terminating") {
      console.log(`deleting ${name}, left by an earlier run`);
      await deleteNamespace(client, name);
    }
  }
}
