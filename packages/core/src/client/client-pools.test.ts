// Tests that long-running watches never starve requests: watches and requests use separate connection pools.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap } from "../api/kinds.ts";
import { selfSignedCertificate } from "../helpers/certificates.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { Client, type ClientOptions } from "./client.ts";

/**
 * A plain HTTP/1.1 server (one request per connection at a time) that holds every watch open, answers
 * GETs of configmaps at once, and holds GETs of /held until `release()`.
 */
class HoldingServer {
  readonly watches: ServerResponse[] = [];
  readonly held: ServerResponse[] = [];
  port = 0;
  private readonly server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
      this.watches.push(res);
    } else if (url.pathname === "/held") {
      this.held.push(res);
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "ConfigMap", metadata: { name: "c", namespace: "ns" } }));
    }
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Answers every held GET. */
  release(): void {
    for (const res of this.held.splice(0)) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    }
  }

  connections(): Promise<number> {
    return new Promise((resolve, reject) =>
      this.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    );
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}

let api: HoldingServer;
const clients: Client[] = [];
const aborts: AbortController[] = [];

/** A client of `server` (default: the HoldingServer), closed after the test. */
function newClient(options: ClientOptions = {}, server = `http://127.0.0.1:${api.port}`): Client {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "test", server, skipTLSVerify: true }],
    users: [{ name: "test", token: "t" }],
    contexts: [{ name: "test", cluster: "test", user: "test" }],
    currentContext: "test",
  });
  const client = new Client({ kubeConfig: kc, metrics: new CoreMetrics(new Registry()), ...options });
  clients.push(client);
  return client;
}

/** Failures of the watches started by openWatches. */
const watchErrors: unknown[] = [];

/** Starts `n` watches that stay open until the test ends; resolves once the server holds all of them. */
async function openWatches(client: Client, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const ac = new AbortController();
    aborts.push(ac);
    (async () => {
      for await (const _ of client.watch(ConfigMap, { namespace: "ns", signal: ac.signal })) {
        // no events: the server only holds the response open
      }
    })().catch((err: unknown) => watchErrors.push(err));
  }
  await vi.waitFor(() => expect(api.watches).toHaveLength(n), { timeout: 10_000 });
}

beforeEach(async () => {
  api = new HoldingServer();
  await api.start();
});

afterEach(async () => {
  expect(watchErrors.splice(0)).toEqual([]);
  for (const ac of aborts.splice(0)) ac.abort();
  api.release();
  for (const c of clients.splice(0)) await c.close();
  await api.stop();
});

describe("watches and requests", () => {
  it("a GET completes while more watches than the default pool size (32) hold their connections", async () => {
    const client = newClient();
    await openWatches(client, 40);
    const cm = await client.get(ConfigMap, "c", "ns");
    expect(cm.metadata.name).toBe("c");
    expect(await api.connections()).toBe(41); // HTTP/1.1: one connection per watch, one for the GET
  });

  it("a GET completes while more watches than a configured maxConnections hold theirs", async () => {
    const client = newClient({ maxConnections: 2 });
    await openWatches(client, 5);
    const cm = await client.get(ConfigMap, "c", "ns");
    expect(cm.metadata.name).toBe("c");
  });

  it("requests use at most maxConnections connections, the rest wait their turn", async () => {
    const client = newClient({ maxConnections: 2 });
    const answers = Promise.all([1, 2, 3, 4].map(() => client.raw("/held")));
    await vi.waitFor(() => expect(api.held).toHaveLength(2));
    expect(await api.connections()).toBe(2);
    api.release(); // the next two go out on the same connections
    await vi.waitFor(() => expect(api.held).toHaveLength(2));
    api.release();
    expect(await answers).toHaveLength(4);
    expect(await api.connections()).toBe(2);
  });

  it("a withSignal view made before the first request shares its client's pools, and close() closes them", async () => {
    const client = newClient({ maxConnections: 1 });
    const view = client.withSignal(new AbortController().signal);
    await view.get(ConfigMap, "c", "ns");
    await client.get(ConfigMap, "c", "ns");
    expect(await api.connections()).toBe(1); // one pool of one connection served both
    await client.close();
    await vi.waitFor(async () => expect(await api.connections()).toBe(0));
  });

  it("rejects a maxConnections below 1, naming the option", () => {
    expect(() => newClient({ maxConnections: 0 })).toThrow(/maxConnections/);
  });
});

describe("HTTP/2 flow control", () => {
  let h2: Http2SecureServer | undefined;
  afterEach(async () => {
    const server = h2;
    h2 = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("lets the server send 4 MiB of a response and 16 MiB of a connection before acknowledging (client-go's stream window)", async () => {
    // undici's defaults (256 KiB, 512 KiB) made a 15 MB list of 10,000 ConfigMaps wait for acknowledgements.
    const pair = await selfSignedCertificate({ hosts: ["127.0.0.1"], validityMs: 3_600_000 });
    const sessions: ServerHttp2Session[] = [];
    const server = createSecureServer({ cert: pair.cert, key: pair.key }, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "ConfigMap", metadata: { name: "c", namespace: "ns" } }));
    });
    h2 = server;
    server.on("session", (session) => sessions.push(session));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = newClient(
      { requestsHttp2: true },
      `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    expect((await client.get(ConfigMap, "c", "ns")).metadata.name).toBe("c");
    expect(sessions).toHaveLength(1); // one HTTP/2 session, not HTTP/1.1
    const session = sessions[0] as ServerHttp2Session;
    expect(session.remoteSettings.initialWindowSize).toBe(4 << 20);
    // The client's connection window as the server sees it: 16 MiB less what it has sent and not yet had
    // acknowledged (the small answer above).
    await vi.waitFor(() => expect(session.state.remoteWindowSize).toBeGreaterThan((16 << 20) - 65_536));
  });
});

describe("protocols", () => {
  let server: Http2SecureServer | undefined;
  afterEach(async () => {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  /** A TLS server that speaks both protocols and records the one each call came over, by path and query. */
  async function bothProtocols(): Promise<{ url: string; seen: string[] }> {
    const pair = await selfSignedCertificate({ hosts: ["127.0.0.1"], validityMs: 3_600_000 });
    const seen: string[] = [];
    const s = createSecureServer({ cert: pair.cert, key: pair.key, allowHTTP1: true }, (req, res) => {
      const watch = new URL(req.url ?? "/", "https://x").searchParams.get("watch") === "true";
      seen.push(`${watch ? "watch" : req.method} HTTP/${req.httpVersion}`);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(watch ? "" : JSON.stringify({ kind: "ConfigMap", metadata: { name: "c", namespace: "ns" } }));
    });
    server = s;
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    return { url: `https://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
  }

  async function getAndWatch(client: Client): Promise<void> {
    await client.get(ConfigMap, "c", "ns");
    for await (const _ of client.watch(ConfigMap, { namespace: "ns" })) {
      // the server ends the watch at once
    }
  }

  it("sends requests over HTTP/1.1 and watches over HTTP/2 by default", async () => {
    const { url, seen } = await bothProtocols();
    await getAndWatch(newClient({}, url));
    expect(seen).toEqual(["GET HTTP/1.1", "watch HTTP/2.0"]);
  });

  it("sends requests over HTTP/2 too with requestsHttp2, and everything over HTTP/1.1 with http2: false", async () => {
    const { url, seen } = await bothProtocols();
    await getAndWatch(newClient({ requestsHttp2: true }, url));
    await getAndWatch(newClient({ http2: false, requestsHttp2: true }, url));
    expect(seen).toEqual(["GET HTTP/2.0", "watch HTTP/2.0", "GET HTTP/1.1", "watch HTTP/1.1"]);
  });
});
