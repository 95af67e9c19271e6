// Secure metrics against the real kube-apiserver: the manager serves /metrics over HTTPS only to callers
// the API server authenticates (TokenReview) and authorizes (SubjectAccessReview for get on /metrics).
// A ServiceAccount bound to a metrics-reader ClusterRole is served; one without the binding gets 403;
// no token or a forged one gets 401. Plain HTTP is served only when asked.
import { type Client, Manager, silentLogger } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetricsReaderRole, scrape, scraperToken } from "./fixtures/metrics-scraper.ts";

let client: Client;
let ns: TestNamespace;
const stop = new AbortController();
let running: Promise<void> | undefined;
let url = "";
let boundToken = "";
let unboundToken = "";

beforeAll(async () => {
  ({ client } = connect());
  ns = await createNamespace(client, "secure-metrics");
  const role = await createMetricsReaderRole(client, ns.name);
  boundToken = await scraperToken(client, ns.name, "scraper", role);
  unboundToken = await scraperToken(client, ns.name, "stranger");
  // The manager's own identity (the suite's kubeconfig user) creates the reviews.
  const mgr = new Manager({
    name: "secure-metrics",
    client,
    logger: silentLogger,
    metricsPort: 0,
    healthPort: null,
    bindAddress: "127.0.0.1",
  });
  running = mgr.start(stop.signal);
  const port = await eventually(
    async () => {
      const p = mgr.boundPorts().metrics;
      if (p === undefined) throw new Error("metrics port not bound yet");
      return p;
    },
    { timeoutMs: 30_000, message: "the manager serves metrics" },
  );
  url = `https://127.0.0.1:${port}/metrics`;
});

afterAll(async () => {
  stop.abort();
  await running;
  await ns?.cleanup();
});

describe("secure metrics (default)", () => {
  it("refuses a request without a token: 401", async () => {
    const res = await scrape(url);
    expect(res.status).toBe(401);
    expect(res.body).not.toMatch(/rest_client_requests_total/);
  });

  it("refuses a token the API server does not know: 401", async () => {
    expect((await scrape(url, "not-a-real-token")).status).toBe(401);
  });

  it("refuses a ServiceAccount without RBAC for /metrics: 403", async () => {
    const res = await scrape(url, unboundToken);
    expect(res.status).toBe(403);
    expect(res.body).toMatch(new RegExp(`denied for user system:serviceaccount:${ns.name}:stranger`));
    expect(res.body).not.toMatch(/rest_client_requests_total/);
  });

  it("serves a ServiceAccount bound to the metrics-reader ClusterRole: 200 with the metrics", async () => {
    // A fresh binding can reach the authorizer's cache a moment late; a denial is cached 30 s at most.
    const res = await eventually(
      async () => {
        const r = await scrape(url, boundToken);
        if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.body}`);
        return r;
      },
      { timeoutMs: 60_000, intervalMs: 2_000, message: "the bound ServiceAccount is served" },
    );
    expect(res.body).toMatch(/^# TYPE rest_client_requests_total counter$/m);
    expect(res.body).toMatch(/^# TYPE controller_runtime_reconcile_total counter$/m);
  });

  it("is not served over plain HTTP", async () => {
    await expect(scrape(url.replace("https:", "http:"), boundToken)).rejects.toThrow();
  });
});

describe("plain metrics (metricsServer.secure false)", () => {
  it("serves anyone over HTTP", async () => {
    const plainStop = new AbortController();
    const mgr = new Manager({
      name: "plain-metrics",
      client,
      logger: silentLogger,
      metricsPort: 0,
      metricsServer: { secure: false },
      healthPort: null,
      bindAddress: "127.0.0.1",
    });
    const done = mgr.start(plainStop.signal);
    try {
      const port = await eventually(
        async () => {
          const p = mgr.boundPorts().metrics;
          if (p === undefined) throw new Error("metrics port not bound yet");
          return p;
        },
        { timeoutMs: 30_000, message: "the plain manager serves metrics" },
      );
      const res = await scrape(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.body).toMatch(/rest_client_requests_total/);
    } finally {
      plainStop.abort();
      await done;
    }
  });
});
