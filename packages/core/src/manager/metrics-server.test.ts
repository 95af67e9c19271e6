// The /metrics server: HTTPS behind the API server's authentication and authorization by default, plain
// HTTP when asked; its certificate from a directory (rotated while serving) or self-signed; and the
// manager serving it so by default while its probes stay plain HTTP.
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { Registry } from "prom-client";
import { Agent, request } from "undici";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Client } from "../client/client.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { silentLogger } from "../util/logger.ts";
import { FakeReviewServer } from "./fake-review-server.test-util.ts";
import { Manager } from "./manager.ts";
import { createMetricsServer, type MetricsServerOptions } from "./metrics-server.ts";
import type { ProbeServer } from "./probes.ts";
import { type CertificatePair, selfSignedCertificate } from "./serving-cert.ts";

const insecure = new Agent({ connect: { rejectUnauthorized: false } });
let api: FakeReviewServer;
let client: Client;
let registry: Registry;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  api = new FakeReviewServer();
  await api.start();
  api.tokens.set("prom-token", { username: "system:serviceaccount:monitoring:prometheus" });
  api.tokens.set("web-token", { username: "system:serviceaccount:apps:web" });
  api.allowed.add("system:serviceaccount:monitoring:prometheus get /metrics");
  client = api.client();
  registry = new Registry();
  new CoreMetrics(registry);
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await client.close();
  await api.stop();
});

async function serve(options?: MetricsServerOptions, certPollIntervalMs?: number): Promise<number> {
  const server = await createMetricsServer(options, {
    registry,
    client,
    logger: silentLogger,
    ...(certPollIntervalMs === undefined ? {} : { certPollIntervalMs }),
  });
  cleanups.push(() => server.close());
  return server.listen(0, "127.0.0.1");
}

async function get(url: string, token?: string): Promise<{ status: number; body: string }> {
  const res = await request(url, {
    dispatcher: insecure,
    ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
  });
  return { status: res.statusCode, body: await res.body.text() };
}

/** The certificate a TLS handshake with the port presents (its fingerprint). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? "");
      socket.end();
    });
    socket.on("error", reject);
  });
}

const fingerprint = (pair: CertificatePair) => new X509Certificate(pair.cert).fingerprint256;

describe("the secure metrics server (default)", () => {
  it("refuses a request without a token (401) or from a user without RBAC (403), and serves an authorized one", async () => {
    const port = await serve();
    const url = `https://127.0.0.1:${port}/metrics`;
    const anonymous = await get(url);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).not.toMatch(/controller_runtime/);
    expect((await get(url, "forged")).status).toBe(401);
    const denied = await get(url, "web-token");
    expect(denied.status).toBe(403);
    expect(denied.body).toMatch(/Authorization denied for user system:serviceaccount:apps:web/);
    expect(denied.body).not.toMatch(/controller_runtime/);
    const served = await get(url, "prom-token");
    expect(served.status).toBe(200);
    expect(served.body).toMatch(/^# TYPE controller_runtime_reconcile_total counter$/m);
  });

  it("is not served over plain HTTP", async () => {
    const port = await serve();
    await expect(get(`http://127.0.0.1:${port}/metrics`, "prom-token")).rejects.toThrow();
  });

  it("answers 404 for other paths only after authorization", async () => {
    const port = await serve();
    expect((await get(`https://127.0.0.1:${port}/healthz`)).status).toBe(401);
    expect((await get(`https://127.0.0.1:${port}/healthz`, "prom-token")).status).toBe(403);
  });

  it("serves the certificate of certDir, and a rotated one without a restart", async () => {
    const a = await selfSignedCertificate({ hosts: ["a.example"] });
    const b = await selfSignedCertificate({ hosts: ["b.example"] });
    const dir = mkdtempSync(join(tmpdir(), "capstan-metrics-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "cert.pem"), a.cert);
    writeFileSync(join(dir, "key.pem"), a.key);
    const port = await serve({ certDir: dir, certName: "cert.pem", keyName: "key.pem" }, 20);
    expect(await servedFingerprint(port)).toBe(fingerprint(a));
    expect((await get(`https://127.0.0.1:${port}/metrics`, "prom-token")).status).toBe(200);
    writeFileSync(join(dir, "cert.pem"), b.cert);
    writeFileSync(join(dir, "key.pem"), b.key);
    const want = fingerprint(b);
    await vi.waitFor(async () => expect(await servedFingerprint(port)).toBe(want), { timeout: 5_000 });
  });

  it("fails to start when certDir holds no certificate, saying what to mount", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-metrics-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await expect(serve({ certDir: dir })).rejects.toThrow(/cannot read the certificate .*tls\.crt/);
  });

  it("refuses to share its port with the probes", async () => {
    const server = createMetricsServer(undefined, {
      registry,
      client,
      logger: silentLogger,
      port: 8080,
      healthChecks: new Map(),
    });
    await expect(server).rejects.toThrow(/metricsPort and healthPort are both 8080: .*metricsServer.secure/);
  });
});

describe("the plain metrics server (secure: false)", () => {
  it("serves anyone over HTTP, asking the API server nothing", async () => {
    const port = await serve({ secure: false });
    const res = await get(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/controller_runtime_reconcile_total/);
    expect(api.reviews).toEqual([]);
  });

  it("may share its port with the probes", async () => {
    const server: ProbeServer = await createMetricsServer(
      { secure: false },
      { registry, client, logger: silentLogger, healthChecks: new Map([["ping", () => true]]) },
    );
    cleanups.push(() => server.close());
    const port = await server.listen(0, "127.0.0.1");
    expect((await get(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await get(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
  });
});

describe("the manager's metrics", () => {
  let fake: FakeApiServer;
  beforeEach(async () => {
    fake = new FakeApiServer();
    await fake.start();
  });
  afterEach(() => fake.stop());

  it("are served over HTTPS with authentication by default, while the probes stay plain HTTP", async () => {
    const metrics = new CoreMetrics(new Registry());
    const mgr = new Manager({
      name: "test",
      client: new Client({ kubeConfig: fake.kubeConfig(), metrics }),
      metrics,
      logger: silentLogger,
      metricsPort: 0,
      healthPort: 0,
      bindAddress: "127.0.0.1",
    });
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await vi.waitFor(() => expect(mgr.boundPorts().health).toBeDefined());
    const { metrics: mport, health: hport } = mgr.boundPorts();
    expect((await get(`https://127.0.0.1:${mport}/metrics`)).status).toBe(401);
    await expect(get(`http://127.0.0.1:${mport}/metrics`)).rejects.toThrow();
    expect((await get(`http://127.0.0.1:${hport}/healthz`)).status).toBe(200);
    stop.abort();
    await running;
  });
});
