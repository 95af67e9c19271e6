// Tests for the Client over real HTTP, against a scripted node:http server on 127.0.0.1 answering per test.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigMap, CustomResourceDefinition, defineKind, Namespace, Pod } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { Client, type ClientOptions, type WatchEvent } from "./client.ts";
import { ApiError, isApiError, isConflict, isInvalid, isNotFound } from "./errors.ts";
import { metadataOnly } from "./metadata-only.ts";
import { retryOnConflict } from "./retry.ts";

/** One request as the server saw it. `url` is the raw request target, before any percent-decoding. */
interface Seen {
  method: string;
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Answers the n-th request (0-based); `seen` holds every request so far, this one last. */
type Handler = (req: Seen, res: ServerResponse, n: number) => void;

/** Writes a JSON answer. */
function json(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Writes a Kubernetes Status failure. */
function status(
  res: ServerResponse,
  code: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  json(res, code, { kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message }, headers);
}

class ScriptedServer {
  readonly seen: Seen[] = [];
  handler: Handler = (_req, res) => json(res, 200, {});
  port = 0;
  private readonly server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const seen: Seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      };
      this.seen.push(seen);
      this.handler(seen, res, this.seen.length - 1);
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Open TCP connections, as the server counts them. */
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

function kubeConfig(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "test", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "test", token: "t" }],
    contexts: [{ name: "test", cluster: "test", user: "test" }],
    currentContext: "test",
  });
  return kc;
}

type CM = KubeObject & { data?: Record<string, string> };
type EtcdCluster = KubeObject & { spec?: { size?: number }; status?: { members?: number } };
const EtcdClusterKind = defineKind<EtcdCluster>({
  group: "etcd.capstan.dev",
  version: "v1alpha1",
  kind: "EtcdCluster",
  plural: "etcdclusters",
  namespaced: true,
});

const cm = (name: string, data: Record<string, string> = {}): CM => ({
  metadata: { name, namespace: "ns" },
  data,
});

let api: ScriptedServer;
let metrics: CoreMetrics;
let host: string;
const clients: Client[] = [];

/** A client of the scripted server; closed after the test. */
function newClient(options: ClientOptions = {}): Client {
  const client = new Client({ kubeConfig: kubeConfig(api.port), metrics, maxAttempts: 3, ...options });
  clients.push(client);
  return client;
}

/** rest_client_requests_total as "code method" -> count, for this test's host only. */
async function requestsTotal(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await metrics.restClientRequests.get()).values) {
    if (v.labels.host === host) out[`${v.labels.code} ${v.labels.method}`] = v.value;
  }
  return out;
}

/** How many durations rest_client_request_duration_seconds holds for `verb`. */
async function durationCount(verb: string): Promise<number> {
  const values = (await metrics.restClientRequestDuration.get()).values;
  const count = values.find(
    (v) => v.metricName?.endsWith("_count") && v.labels.verb === verb && v.labels.host === host,
  );
  return count?.value ?? 0;
}

/** The rejection of `p` (fails the test if `p` resolves). */
async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error("expected a rejection");
}

beforeEach(async () => {
  api = new ScriptedServer();
  await api.start();
  host = `127.0.0.1:${api.port}`;
  metrics = new CoreMetrics(new Registry());
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await api.stop();
});

describe("URL paths", () => {
  it("builds core and group, namespaced and cluster-scoped paths, with subresources", () => {
    const client = newClient();
    expect(client.path(Pod, "ns", "p")).toBe("/api/v1/namespaces/ns/pods/p");
    expect(client.path(Pod)).toBe("/api/v1/pods");
    expect(client.path(EtcdClusterKind, "ns", "e", "status")).toBe(
      "/apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e/status",
    );
    expect(client.path(Namespace, "ignored", "kube-system")).toBe("/api/v1/namespaces/kube-system");
    expect(client.path(CustomResourceDefinition, "ignored", "x.y.io")).toBe(
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y.io",
    );
    expect(() => client.path(Pod, "ns", "")).toThrow(/Pod: an object name is required/);
  });

  it("sends each call to its path, names and namespaces percent-encoded", async () => {
    api.handler = (_req, res) => json(res, 200, { metadata: { name: "x" } });
    const client = newClient();
    await client.get(Pod, "a b/c", "my ns");
    await client.get(Namespace, "default", "ignored");
    await client.get(EtcdClusterKind, "e1", "ns");
    await client.get(CustomResourceDefinition, "etcdclusters.etcd.capstan.dev");
    await client.patchStatus(EtcdClusterKind, "e1", "ns", { status: { members: 3 } });
    await client.listPage(Pod);
    await client.listPage(Namespace, { namespace: "ignored" });
    expect(api.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      "GET /api/v1/namespaces/my%20ns/pods/a%20b%2Fc",
      "GET /api/v1/namespaces/default",
      "GET /apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e1",
      "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/etcdclusters.etcd.capstan.dev",
      "PATCH /apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e1/status",
      "GET /api/v1/pods",
      "GET /api/v1/namespaces",
    ]);
  });

  it("keeps a path prefix of the server URL", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `http://127.0.0.1:${api.port}/proxy/k8s/`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const client = newClient({ kubeConfig: kc });
    await client.get(Namespace, "default");
    expect(api.seen[0]?.url).toBe("/proxy/k8s/api/v1/namespaces/default");
  });

  it("rejects a namespaced call without a namespace, before sending anything", async () => {
    const client = newClient();
    await expect(client.get(Pod, "p")).rejects.toThrow("Pod is namespaced: a namespace is required");
    await expect(client.create(ConfigMap, { metadata: { name: "c" } })).rejects.toThrow(
      "ConfigMap is namespaced: a namespace is required",
    );
    await expect(client.delete(Pod, "p")).rejects.toThrow(/namespace is required/);
    expect(api.seen).toHaveLength(0);
  });
});

describe("get", () => {
  it("returns the object, sending the bearer token, accept and user agent", async () => {
    api.handler = (_req, res) =>
      json(res, 200, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { k: "v" } });
    const got = await newClient({ userAgent: "test-agent/1" }).get(ConfigMap, "c", "ns");
    expect(got).toEqual({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { k: "v" } });
    const headers = api.seen[0]?.headers;
    expect(headers?.authorization).toBe("Bearer t");
    expect(headers?.accept).toBe("application/json");
    expect(headers?.["user-agent"]).toBe("test-agent/1");
  });

  it("turns a 404 Status into an ApiError with code, reason and the server's message", async () => {
    api.handler = (_req, res) => status(res, 404, "NotFound", 'configmaps "c" not found');
    const err = await rejection(newClient().get(ConfigMap, "c", "ns"));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe(404);
    expect(err.reason).toBe("NotFound");
    expect(isNotFound(err)).toBe(true);
    expect(err.message).toContain('configmaps "c" not found');
    expect(err.message).toContain("/api/v1/namespaces/ns/configmaps/c");
    expect(err.status?.code).toBe(404);
    expect(api.seen).toHaveLength(1);
  });

  it("keeps a non-JSON error body as the message", async () => {
    api.handler = (_req, res) => {
      res.writeHead(403, { "content-type": "text/plain" });
      res.end("forbidden by proxy");
    };
    const err = await rejection(newClient().get(ConfigMap, "c", "ns"));
    expect(err.code).toBe(403);
    expect(err.message).toContain("forbidden by proxy");
  });
});

describe("raw", () => {
  it("GETs any path, parsing JSON answers and returning others as text", async () => {
    api.handler = (req, res) => {
      if (req.path === "/version") return json(res, 200, { major: "1", minor: "35" });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    };
    const client = newClient();
    await expect(client.raw("/version")).resolves.toEqual({ major: "1", minor: "35" });
    await expect(client.raw("/readyz")).resolves.toBe("ok");
    expect(api.seen.map((r) => `${r.method} ${r.url}`)).toEqual(["GET /version", "GET /readyz"]);
  });
});

describe("list", () => {
  const items = ["a", "b", "c", "d", "e"].map((name) => ({ metadata: { name, namespace: "ns" } }));

  /** Serves `items` in pages of `limit`, with continue tokens "from-<index>", like the API server. */
  function pagedServer(): void {
    api.handler = (req, res, n) => {
      const cont = req.query.get("continue");
      if (cont !== null && req.query.has("resourceVersion")) {
        return status(
          res,
          400,
          "BadRequest",
          "specifying resource version is not allowed when using continue",
        );
      }
      const from = cont === null ? 0 : Number(cont.slice("from-".length));
      const limit = Number(req.query.get("limit") ?? items.length);
      const next = from + limit;
      json(res, 200, {
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: {
          resourceVersion: `rv-${n}`,
          ...(next < items.length ? { continue: `from-${next}` } : {}),
        },
        items: items.slice(from, next),
      });
    };
  }

  it("follows continue tokens and returns every item with apiVersion and kind, and the last resourceVersion", async () => {
    pagedServer();
    const list = await newClient().list(ConfigMap, { namespace: "ns", labelSelector: "app=x", limit: 2 });
    expect(list.items.map((o) => o.metadata.name)).toEqual(["a", "b", "c", "d", "e"]);
    for (const o of list.items) {
      expect(o.apiVersion).toBe("v1");
      expect(o.kind).toBe("ConfigMap");
    }
    expect(list.resourceVersion).toBe("rv-2");
    expect(list.continue).toBeUndefined();
    expect(api.seen.map((r) => `${r.path}?${r.query}`)).toEqual([
      "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Dx&limit=2",
      "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Dx&limit=2&continue=from-2",
      "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Dx&limit=2&continue=from-4",
    ]);
  });

  it("asks for pages of 500 by default", async () => {
    pagedServer();
    const list = await newClient().list(ConfigMap);
    expect(list.items).toHaveLength(5);
    expect(api.seen.map((r) => r.query.get("limit"))).toEqual(["500"]);
  });

  it("sends resourceVersion with the first page only (the server rejects it with a continue token)", async () => {
    pagedServer();
    const list = await newClient().list(ConfigMap, {
      limit: 2,
      resourceVersion: "0",
      resourceVersionMatch: "NotOlderThan",
    });
    expect(list.items).toHaveLength(5);
    expect(api.seen[0]?.query.get("resourceVersion")).toBe("0");
    expect(api.seen[0]?.query.get("resourceVersionMatch")).toBe("NotOlderThan");
    for (const r of api.seen.slice(1)) {
      expect(r.query.has("resourceVersion")).toBe(false);
      expect(r.query.has("resourceVersionMatch")).toBe(false);
    }
  });

  it("asks for gzip, and decodes a compressed list sent in pieces", async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({
      metadata: { name: `cm-${i}`, namespace: "ns" },
      data: { text: `gr\u00fc\u00dfe ${"x".repeat(i)}` },
    }));
    const body = gzipSync(
      JSON.stringify({
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: { resourceVersion: "77" },
        items: many,
      }),
    );
    api.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      for (let i = 0; i < body.length; i += 1000) res.write(body.subarray(i, i + 1000));
      res.end();
    };
    const page = await newClient().listPage(ConfigMap, { namespace: "ns" });
    expect(api.seen[0]?.headers["accept-encoding"]).toBe("gzip");
    expect(page.resourceVersion).toBe("77");
    expect(page.items).toEqual(many.map((o) => ({ ...o, apiVersion: "v1", kind: "ConfigMap" })));
  });

  it("inflates a compressed answer to get and a compressed error; an empty body stays empty", async () => {
    const missing = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      code: 404,
      reason: "NotFound",
      message: "gone",
    };
    api.handler = (req, res) => {
      const notFound = req.path.endsWith("/missing");
      res.writeHead(notFound ? 404 : 200, { "content-type": "application/json", "content-encoding": "gzip" });
      if (req.path === "/empty")
        res.end(); // a proxy that marks an empty body as compressed
      else res.end(gzipSync(JSON.stringify(notFound ? missing : cm("a", { k: "v" }))));
    };
    const client = newClient();
    expect(await client.get(ConfigMap, "a", "ns")).toEqual(cm("a", { k: "v" }));
    expect(await client.raw("/empty")).toBeUndefined();
    const err = await rejection(client.get(ConfigMap, "missing", "ns"));
    expect(err.reason).toBe("NotFound");
    expect(err.message).toContain("gone");
  });

  it("applies the transform to each item as its batch is parsed", async () => {
    pagedServer();
    const seen: string[] = [];
    const page = await newClient().listPage(ConfigMap, {
      transform: (o) => {
        seen.push(o.metadata.name ?? "");
        return { ...o, metadata: { ...o.metadata, labels: { t: "1" } } };
      },
    });
    expect(seen).toEqual(["a", "b", "c", "d", "e"]);
    expect(page.items.map((o) => o.metadata.labels)).toEqual(Array(5).fill({ t: "1" }));
  });

  it("leaves managedFields out of the items when asked", async () => {
    const withFields = items.map((o) => ({
      ...o,
      metadata: { ...o.metadata, managedFields: [{ manager: "m" }] },
    }));
    api.handler = (_req, res) => json(res, 200, { kind: "ConfigMapList", metadata: {}, items: withFields });
    const client = newClient();
    const dropped = await client.listPage(ConfigMap, { dropManagedFields: true });
    expect(dropped.items.map((o) => o.metadata)).toEqual(items.map((o) => o.metadata));
    const kept = await client.listPage(ConfigMap);
    expect(kept.items.map((o) => o.metadata)).toEqual(withFields.map((o) => o.metadata));
  });

  it("rejects a list whose body ends early or whose connection drops mid-body", async () => {
    const text = JSON.stringify({ kind: "ConfigMapList", metadata: { resourceVersion: "1" }, items });
    api.handler = (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      if (req.query.get("limit") === "1")
        res.end(text.slice(0, text.length - 20)); // ends early
      else {
        res.write(text.slice(0, 60));
        setTimeout(() => res.socket?.destroy(), 20);
      }
    };
    const client = newClient();
    await expect(client.listPage(ConfigMap, { limit: 1 })).rejects.toThrow(/ended early/);
    const dropped = await rejection(client.listPage(ConfigMap, { limit: 2 }));
    expect(isApiError(dropped)).toBe(true);
    expect(dropped.code).toBe(0);
  });

  it("listPage returns one page and its continue token", async () => {
    pagedServer();
    const page = await newClient().listPage(ConfigMap, { limit: 3, fieldSelector: "metadata.name!=z" });
    expect(page.items.map((o) => o.metadata.name)).toEqual(["a", "b", "c"]);
    expect(page.continue).toBe("from-3");
    expect(page.resourceVersion).toBe("rv-0");
    expect(api.seen[0]?.query.get("fieldSelector")).toBe("metadata.name!=z");
  });
});

describe("writes", () => {
  /** Echoes the request body back as the object, like a server that stored it. */
  const echo: Handler = (req, res) => json(res, 200, req.body === "" ? {} : JSON.parse(req.body));

  it("create POSTs the object with type meta filled in, to the collection", async () => {
    api.handler = (req, res) =>
      json(res, 201, { ...JSON.parse(req.body), metadata: { name: "c", uid: "u1" } });
    const created = await newClient().create(ConfigMap, cm("c", { k: "v" }), { fieldManager: "op" });
    expect(created.metadata.uid).toBe("u1");
    const req = api.seen[0];
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/api/v1/namespaces/ns/configmaps");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.query.get("fieldManager")).toBe("op");
    expect(req?.query.has("dryRun")).toBe(false);
    expect(JSON.parse(req?.body ?? "")).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "ns" },
      data: { k: "v" },
    });
  });

  it("update PUTs to the object and updateStatus to its status subresource", async () => {
    api.handler = echo;
    const client = newClient();
    const obj: EtcdCluster = {
      metadata: { name: "e", namespace: "ns", resourceVersion: "7" },
      spec: { size: 3 },
    };
    await client.update(EtcdClusterKind, obj);
    await client.updateStatus(EtcdClusterKind, { ...obj, status: { members: 3 } }, { dryRun: true });
    const [update, updateStatus] = api.seen;
    expect(`${update?.method} ${update?.path}`).toBe(
      "PUT /apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e",
    );
    expect(JSON.parse(update?.body ?? "")).toMatchObject({
      apiVersion: "etcd.capstan.dev/v1alpha1",
      kind: "EtcdCluster",
      metadata: { resourceVersion: "7" },
    });
    expect(update?.query.has("dryRun")).toBe(false);
    expect(`${updateStatus?.method} ${updateStatus?.path}`).toBe(
      "PUT /apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e/status",
    );
    expect(updateStatus?.query.get("dryRun")).toBe("All");
    expect(JSON.parse(updateStatus?.body ?? "").status).toEqual({ members: 3 });
  });

  it("patch sends the patch as is, with the content type of its type", async () => {
    api.handler = echo;
    const client = newClient();
    await client.patch(ConfigMap, "c", "ns", { data: { k: null } });
    await client.patch(ConfigMap, "c", "ns", [{ op: "remove", path: "/data/k" }], "json", { dryRun: true });
    await client.patch(ConfigMap, "c", "ns", { data: { k: "v" } }, "strategic", { fieldManager: "op" });
    await client.patchStatus(EtcdClusterKind, "e", "ns", { status: { members: 1 } }, "merge");
    expect(
      api.seen.map((r) => [r.method, r.path, r.headers["content-type"], r.query.toString(), r.body]),
    ).toEqual([
      [
        "PATCH",
        "/api/v1/namespaces/ns/configmaps/c",
        "application/merge-patch+json",
        "",
        '{"data":{"k":null}}',
      ],
      [
        "PATCH",
        "/api/v1/namespaces/ns/configmaps/c",
        "application/json-patch+json",
        "dryRun=All",
        '[{"op":"remove","path":"/data/k"}]',
      ],
      [
        "PATCH",
        "/api/v1/namespaces/ns/configmaps/c",
        "application/strategic-merge-patch+json",
        "fieldManager=op",
        '{"data":{"k":"v"}}',
      ],
      [
        "PATCH",
        "/apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e/status",
        "application/merge-patch+json",
        "",
        '{"status":{"members":1}}',
      ],
    ]);
  });

  it("apply and applyStatus send an apply patch with fieldManager, and force only when asked", async () => {
    api.handler = echo;
    const client = newClient();
    const desired: EtcdCluster = { metadata: { name: "e", namespace: "ns" }, spec: { size: 3 } };
    const applied = await client.apply(EtcdClusterKind, desired, {
      fieldManager: "etcd-operator",
      force: true,
    });
    expect(applied.spec?.size).toBe(3);
    await client.applyStatus(
      EtcdClusterKind,
      { ...desired, status: { members: 3 } },
      { fieldManager: "etcd-operator" },
    );
    await client.apply(ConfigMap, cm("c"), { fieldManager: "m", dryRun: true });
    const [apply, applyStatus, dryRun] = api.seen;
    expect(apply?.method).toBe("PATCH");
    expect(apply?.path).toBe("/apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e");
    expect(apply?.headers["content-type"]).toBe("application/apply-patch+yaml");
    expect(apply?.query.toString()).toBe("fieldManager=etcd-operator&force=true");
    expect(JSON.parse(apply?.body ?? "")).toEqual({
      apiVersion: "etcd.capstan.dev/v1alpha1",
      kind: "EtcdCluster",
      metadata: { name: "e", namespace: "ns" },
      spec: { size: 3 },
    });
    expect(applyStatus?.path).toBe("/apis/etcd.capstan.dev/v1alpha1/namespaces/ns/etcdclusters/e/status");
    expect(applyStatus?.headers["content-type"]).toBe("application/apply-patch+yaml");
    expect(applyStatus?.query.toString()).toBe("fieldManager=etcd-operator");
    expect(JSON.parse(applyStatus?.body ?? "").status).toEqual({ members: 3 });
    expect(dryRun?.query.toString()).toBe("fieldManager=m&dryRun=All");
  });

  it("apply without metadata.name throws a clear error", async () => {
    const client = newClient();
    await expect(
      client.apply(ConfigMap, { metadata: { namespace: "ns" } }, { fieldManager: "m" }),
    ).rejects.toThrow("apply ConfigMap: metadata.name is required");
    expect(api.seen).toHaveLength(0);
  });

  it("delete sends DeleteOptions as the body, and no body without options", async () => {
    api.handler = (_req, res) => json(res, 200, { kind: "Status", status: "Success" });
    const client = newClient();
    await expect(client.delete(ConfigMap, "c", "ns")).resolves.toBeUndefined();
    await client.delete(ConfigMap, "c", "ns", {
      propagationPolicy: "Foreground",
      gracePeriodSeconds: 0,
      preconditions: { uid: "u1" },
      dryRun: true,
    });
    await client.delete(Namespace, "gone", undefined, { propagationPolicy: "Background" });
    const [plain, full, cluster] = api.seen;
    expect(`${plain?.method} ${plain?.path}`).toBe("DELETE /api/v1/namespaces/ns/configmaps/c");
    expect(plain?.body).toBe("");
    expect(full?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(full?.body ?? "")).toEqual({
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Foreground",
      gracePeriodSeconds: 0,
      preconditions: { uid: "u1" },
      dryRun: ["All"],
    });
    expect(`${cluster?.method} ${cluster?.path}`).toBe("DELETE /api/v1/namespaces/gone");
    expect(JSON.parse(cluster?.body ?? "").propagationPolicy).toBe("Background");
  });

  it("a stale update is a Conflict that retryOnConflict resolves by re-reading", async () => {
    let stored: CM = { metadata: { name: "c", namespace: "ns", resourceVersion: "1" }, data: { n: "0" } };
    let bumpedByOther = false;
    api.handler = (req, res) => {
      if (req.method === "GET") return json(res, 200, stored);
      const obj = JSON.parse(req.body) as CM;
      if (!bumpedByOther) {
        // another writer got in between our read and our write
        bumpedByOther = true;
        stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: "2" }, data: { n: "5" } };
      }
      if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        return status(res, 409, "Conflict", "the object has been modified; please apply your changes");
      }
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: "3" } };
      json(res, 200, stored);
    };
    const client = newClient();
    const seenConflict: unknown[] = [];
    const result = await retryOnConflict(async () => {
      const current = await client.get(ConfigMap, "c", "ns");
      const n = Number((current as CM).data?.n);
      try {
        return await client.update(ConfigMap, { ...current, data: { n: String(n + 1) } });
      } catch (err) {
        seenConflict.push(err);
        throw err;
      }
    });
    expect((result as CM).data).toEqual({ n: "6" });
    expect(seenConflict).toHaveLength(1);
    expect(isConflict(seenConflict[0])).toBe(true);
    expect(api.seen.map((r) => r.method)).toEqual(["GET", "PUT", "GET", "PUT"]);
  });
});

describe("retries", () => {
  it("retries a 429 after its Retry-After, for any method, resending the same body", async () => {
    api.handler = (_req, res, n) =>
      n === 0
        ? status(res, 429, "TooManyRequests", "slow down", { "retry-after": "1" })
        : json(res, 201, { metadata: { name: "c" } });
    const created = await newClient().create(ConfigMap, cm("c", { k: "v" }));
    expect(created.metadata.name).toBe("c");
    expect(api.seen.map((r) => r.method)).toEqual(["POST", "POST"]);
    expect(api.seen[1]?.body).toBe(api.seen[0]?.body);
    expect(await requestsTotal()).toEqual({ "429 POST": 1, "201 POST": 1 });
  });

  it("retries a GET answered 503 and returns the later success", async () => {
    api.handler = (_req, res, n) =>
      n === 0
        ? status(res, 503, "ServiceUnavailable", "etcd leader changed")
        : json(res, 200, { metadata: { name: "c" } });
    const got = await newClient().get(ConfigMap, "c", "ns");
    expect(got.metadata.name).toBe("c");
    expect(api.seen).toHaveLength(2);
    expect(await requestsTotal()).toEqual({ "503 GET": 1, "200 GET": 1 });
    expect(await durationCount("GET")).toBe(2);
  });

  it("does not retry a POST answered 500 without Retry-After (it may have been applied)", async () => {
    api.handler = (_req, res) => status(res, 500, "InternalError", "boom");
    const err = await rejection(newClient().create(ConfigMap, cm("c")));
    expect(err.code).toBe(500);
    expect(err.message).toContain("boom");
    expect(api.seen).toHaveLength(1);
  });

  it("retries a POST answered 503 with Retry-After", async () => {
    api.handler = (_req, res, n) =>
      n === 0
        ? status(res, 503, "ServiceUnavailable", "try later", { "retry-after": "1" })
        : json(res, 201, { metadata: { name: "c" } });
    await newClient().create(ConfigMap, cm("c"));
    expect(api.seen.map((r) => r.method)).toEqual(["POST", "POST"]);
  });

  it("never retries a 4xx such as 422, and the error carries the causes", async () => {
    api.handler = (_req, res) =>
      json(res, 422, {
        kind: "Status",
        status: "Failure",
        code: 422,
        reason: "Invalid",
        message: 'ConfigMap "c" is invalid: data[bad key]: Invalid value',
        details: {
          name: "c",
          kind: "ConfigMap",
          causes: [{ reason: "FieldValueInvalid", message: "Invalid value", field: "data[bad key]" }],
        },
      });
    const err = await rejection(newClient().update(ConfigMap, cm("c", { "bad key": "v" })));
    expect(isInvalid(err)).toBe(true);
    expect(err.reason).toBe("Invalid");
    expect(err.status?.details?.causes).toEqual([
      { reason: "FieldValueInvalid", message: "Invalid value", field: "data[bad key]" },
    ]);
    expect(api.seen).toHaveLength(1);
  });

  it("gives up after maxAttempts and throws the last error", async () => {
    api.handler = (_req, res, n) => status(res, 503, "ServiceUnavailable", `unavailable #${n}`);
    const err = await rejection(newClient({ maxAttempts: 3 }).get(ConfigMap, "c", "ns"));
    expect(err.code).toBe(503);
    expect(err.message).toContain("unavailable #2");
    expect(api.seen).toHaveLength(3);
    expect(await requestsTotal()).toEqual({ "503 GET": 3 });
    expect(await durationCount("GET")).toBe(3);
  });

  it("on a 401 fetches credentials again, once", async () => {
    let token = "old";
    const client = newClient();
    const original = client.kubeConfig.applyToHTTPSOptions.bind(client.kubeConfig);
    vi.spyOn(client.kubeConfig, "applyToHTTPSOptions").mockImplementation(async (opts) => {
      await original(opts);
      (opts.headers as Record<string, string>).Authorization = `Bearer ${token}`;
    });
    api.handler = (req, res) => {
      if (req.headers.authorization === "Bearer new") return json(res, 200, { metadata: { name: "c" } });
      token = "new"; // rotated after this request was sent
      status(res, 401, "Unauthorized", "Unauthorized");
    };
    await client.get(ConfigMap, "c", "ns");
    expect(api.seen.map((r) => r.headers.authorization)).toEqual(["Bearer old", "Bearer new"]);

    // a token that stays bad is not retried forever
    api.handler = (_req, res) => status(res, 401, "Unauthorized", "Unauthorized");
    const err = await rejection(newClient().get(ConfigMap, "c", "ns"));
    expect(err.code).toBe(401);
    expect(api.seen).toHaveLength(4);
  });

  it("counts a dropped connection as <error> and retries the GET", async () => {
    api.handler = (_req, res, n) =>
      n === 0 ? res.socket?.destroy() : json(res, 200, { metadata: { name: "c" } });
    const got = await newClient().get(ConfigMap, "c", "ns");
    expect(got.metadata.name).toBe("c");
    expect(await requestsTotal()).toEqual({ "<error> GET": 1, "200 GET": 1 });
    expect(await durationCount("GET")).toBe(2);
  });

  it("does not retry a write whose connection dropped", async () => {
    api.handler = (_req, res) => res.socket?.destroy();
    const err = await rejection(newClient().create(ConfigMap, cm("c")));
    expect(isApiError(err)).toBe(true);
    expect(err.code).toBe(0);
    expect(api.seen).toHaveLength(1);
    expect(await requestsTotal()).toEqual({ "<error> POST": 1 });
  });

  it("retries a refused connection, counting each attempt, then throws a transport ApiError", async () => {
    await api.stop(); // nothing listens on the port any more
    const err = await rejection(newClient({ maxAttempts: 2 }).get(ConfigMap, "c", "ns"));
    expect(err.code).toBe(0);
    expect(err.reason).toBe("ECONNREFUSED");
    expect(await requestsTotal()).toEqual({ "<error> GET": 2 });
    expect(await durationCount("GET")).toBe(2);
    await api.start(); // for afterEach
  });

  it("stops waiting to retry when the signal aborts, rejecting with its reason", async () => {
    api.handler = (_req, res) => status(res, 429, "TooManyRequests", "slow down", { "retry-after": "10" });
    const ac = new AbortController();
    const done = newClient().get(ConfigMap, "c", "ns", ac.signal);
    await vi.waitFor(() => expect(api.seen).toHaveLength(1));
    const reason = new Error("shutting down");
    ac.abort(reason);
    await expect(done).rejects.toBe(reason);
    expect(api.seen).toHaveLength(1);
  });

  it("rejects an aborted in-flight request with the signal's reason, not as a transport failure", async () => {
    api.handler = () => {}; // never answers
    const ac = new AbortController();
    const done = newClient().get(ConfigMap, "c", "ns", ac.signal);
    await vi.waitFor(() => expect(api.seen).toHaveLength(1));
    const reason = new Error("shutting down");
    ac.abort(reason);
    await expect(done).rejects.toBe(reason);
    expect(api.seen).toHaveLength(1);
  });
});

describe("watch", () => {
  type Ev = WatchEvent<CM>;
  const line = (e: unknown) => `${JSON.stringify(e)}\n`;

  /** Collects events until the iteration ends. */
  async function collect(it: AsyncIterable<Ev>): Promise<Ev[]> {
    const out: Ev[] = [];
    for await (const e of it) out.push(e);
    return out;
  }

  /** Starts a watch answer: 200 with the headers flushed, body to follow. */
  function open(res: ServerResponse): void {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
  }

  it("sends the watch query", async () => {
    api.handler = (_req, res) => json(res, 200, {});
    const client = newClient();
    await collect(
      client.watch(ConfigMap, {
        namespace: "ns",
        resourceVersion: "42",
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
        labelSelector: "app=x",
        sendInitialEvents: true,
        resourceVersionMatch: "NotOlderThan",
      }),
    );
    const req = api.seen[0];
    expect(req?.path).toBe("/api/v1/namespaces/ns/configmaps");
    expect(Object.fromEntries(req?.query ?? [])).toEqual({
      watch: "true",
      resourceVersion: "42",
      allowWatchBookmarks: "true",
      timeoutSeconds: "300",
      labelSelector: "app=x",
      sendInitialEvents: "true",
      resourceVersionMatch: "NotOlderThan",
    });
    expect(await requestsTotal()).toEqual({ "200 GET": 1 });
  });

  it("parses events split across chunks, even inside a multi-byte character", async () => {
    const first = { type: "ADDED", object: cm("a") };
    const second = { type: "MODIFIED", object: cm("b", { text: "grüße, 世界" }) };
    const third = { type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } };
    let rest: () => void = () => {};
    api.handler = (_req, res) => {
      open(res);
      const bytes = Buffer.from(line(first) + line(second));
      const cut = bytes.indexOf(Buffer.from("世")) + 1; // in the middle of a 3-byte character
      res.write(bytes.subarray(0, cut));
      rest = () => {
        res.write(bytes.subarray(cut));
        res.end(JSON.stringify(third)); // the last line has no newline
      };
    };
    const events: Ev[] = [];
    for await (const e of newClient().watch(ConfigMap)) {
      events.push(e);
      // the first event arrived with half of the second: only now does the server send the other half
      if (events.length === 1) rest();
    }
    expect(events).toEqual([first, second, third]);
  });

  it("yields an ERROR event (410 Expired) instead of throwing", async () => {
    const expired = {
      type: "ERROR",
      object: {
        kind: "Status",
        status: "Failure",
        code: 410,
        reason: "Expired",
        message: "too old resource version",
      },
    };
    api.handler = (_req, res) => {
      open(res);
      res.end(line({ type: "ADDED", object: cm("a") }) + line(expired));
    };
    const events = await collect(newClient().watch(ConfigMap, { resourceVersion: "1" }));
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"]);
    expect(events[1]).toEqual(expired);
  });

  it("throws an ApiError when the server does not answer 200", async () => {
    api.handler = (_req, res) => status(res, 403, "Forbidden", "configmaps is forbidden: cannot watch");
    const err = await rejection(collect(newClient().watch(ConfigMap)));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe(403);
    expect(err.reason).toBe("Forbidden");
    expect(err.message).toContain("cannot watch");
    expect(await requestsTotal()).toEqual({ "403 GET": 1 });
  });

  it("ends without error when the signal aborts mid-stream, closing the connection", async () => {
    let closed = false;
    api.handler = (_req, res) => {
      open(res);
      res.write(line({ type: "ADDED", object: cm("a") }));
      res.on("close", () => {
        closed = true;
      });
    };
    const ac = new AbortController();
    const events: Ev[] = [];
    for await (const e of newClient().watch(ConfigMap, { signal: ac.signal })) {
      events.push(e);
      ac.abort();
    }
    expect(events).toHaveLength(1);
    await vi.waitFor(() => expect(closed).toBe(true));
  });

  it("ends without error when the signal aborts before the server answers", async () => {
    api.handler = () => {}; // holds the headers back
    const ac = new AbortController();
    const events = collect(newClient().watch(ConfigMap, { signal: ac.signal }));
    await vi.waitFor(() => expect(api.seen).toHaveLength(1));
    ac.abort();
    await expect(events).resolves.toEqual([]);
  });

  it("closes the connection when the consumer stops early", async () => {
    let closed = false;
    api.handler = (_req, res) => {
      open(res);
      res.write(line({ type: "ADDED", object: cm("a") }) + line({ type: "ADDED", object: cm("b") }));
      res.on("close", () => {
        closed = true;
      });
    };
    for await (const e of newClient().watch(ConfigMap)) {
      expect(e.type).toBe("ADDED");
      break;
    }
    await vi.waitFor(() => expect(closed).toBe(true));
  });

  it("throws when the connection drops mid-stream", async () => {
    let drop: () => void = () => {};
    api.handler = (_req, res) => {
      open(res);
      res.write(line({ type: "ADDED", object: cm("a") }));
      drop = () => res.socket?.destroy();
    };
    const events: Ev[] = [];
    const err = await rejection(
      (async () => {
        for await (const e of newClient().watch(ConfigMap)) {
          events.push(e);
          drop();
        }
      })(),
    );
    expect(events).toHaveLength(1);
    expect(isApiError(err)).toBe(true);
    expect(err.code).toBe(0);
  });
});

describe("metadataOnly kinds", () => {
  const meta = (name: string) => ({ name, namespace: "ns", resourceVersion: "1", labels: { a: "b" } });
  const partial = (name: string) => ({
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: meta(name),
  });

  it("asks for PartialObjectMetadata on get, list and watch, and returns it", async () => {
    api.handler = (req, res) => {
      if (req.query.get("watch")) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(`${JSON.stringify({ type: "ADDED", object: partial("w") })}\n`);
      }
      if (req.path.endsWith("/pods")) {
        return json(res, 200, {
          kind: "PartialObjectMetadataList",
          metadata: { resourceVersion: "5" },
          items: [partial("l")],
        });
      }
      json(res, 200, partial("g"));
    };
    const client = newClient();
    const pods = metadataOnly(Pod);
    expect(metadataOnly(Pod)).toBe(pods);
    expect(metadataOnly(pods)).toBe(pods);
    expect(await client.get(pods, "g", "ns")).toEqual(partial("g"));
    expect((await client.listPage(pods, { namespace: "ns" })).items).toEqual([partial("l")]);
    const events = [];
    for await (const e of client.watch(pods, { namespace: "ns" })) events.push(e);
    expect(events).toEqual([{ type: "ADDED", object: partial("w") }]);
    expect(api.seen.map((r) => r.headers.accept)).toEqual([
      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
    ]);
    // the full kind is unchanged
    await client.get(Pod, "g", "ns");
    expect(api.seen.at(-1)?.headers.accept).toBe("application/json");
  });

  it("keeps only metadata when the server answers with full objects", async () => {
    const full = (name: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: meta(name),
      spec: { containers: [] },
    });
    api.handler = (req, res) => {
      if (req.query.get("watch")) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(`${JSON.stringify({ type: "MODIFIED", object: full("w") })}\n`);
      }
      json(res, 200, { kind: "PodList", metadata: { resourceVersion: "5" }, items: [full("l")] });
    };
    const client = newClient();
    expect((await client.listPage(metadataOnly(Pod), { namespace: "ns" })).items).toEqual([partial("l")]);
    const events = [];
    for await (const e of client.watch(metadataOnly(Pod), { namespace: "ns" })) events.push(e);
    expect(events).toEqual([{ type: "MODIFIED", object: partial("w") }]);
  });
});

describe("close", () => {
  it("closes the kept-alive connections, so nothing keeps the process alive", async () => {
    api.handler = (_req, res) => json(res, 200, { metadata: { name: "c" } });
    const client = new Client({ kubeConfig: kubeConfig(api.port), metrics });
    await client.get(ConfigMap, "c", "ns");
    await client.get(ConfigMap, "c", "ns");
    expect(await api.connections()).toBeGreaterThan(0); // kept alive for the next request
    await client.close();
    await vi.waitFor(async () => expect(await api.connections()).toBe(0));
  });

  it("is safe to call twice, and before any request", async () => {
    const client = new Client({ kubeConfig: kubeConfig(api.port), metrics });
    await client.close();
    await client.close();
    expect(await api.connections()).toBe(0);
  });
});
