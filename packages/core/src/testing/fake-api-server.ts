// A scripted in-memory API server over real HTTP, for unit tests of the client, controller and manager.
// It speaks just enough of the Kubernetes REST protocol: list, watch (streaming), get, create, put,
// merge/apply patch and delete, with a global resourceVersion counter. Not a substitute for the real
// kube-apiserver used by the integration tests.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeObject } from "../api/object.ts";

interface Watcher {
  collection: string;
  namespace: string | undefined;
  res: ServerResponse;
}

/** Parses /api/v1[/namespaces/ns]/plural[/name[/sub]] and the /apis/group/version form. */
function parsePath(path: string) {
  const parts = path.split("/").filter(Boolean);
  const prefix = parts[0] === "api" ? parts.slice(0, 2) : parts.slice(0, 3);
  let rest = parts.slice(prefix.length);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, sub] = rest;
  return { collection: `/${prefix.join("/")}/${plural}`, namespace, name, sub };
}

export class FakeApiServer {
  /** collection -> key -> object */
  readonly objects = new Map<string, Map<string, KubeObject>>();
  /** Every request, for assertions: "METHOD path". */
  readonly requests: string[] = [];
  /** Collection path (e.g. "/api/v1/secrets") -> the error every request to it gets. */
  readonly faults = new Map<string, { code: number; reason: string; message: string }>();
  private rv = 1;
  private server: Server | undefined;
  private readonly watchers = new Set<Watcher>();
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        res.writeHead(500);
        res.end(JSON.stringify({ kind: "Status", code: 500, message: err.message }));
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    await new Promise<void>((r) => {
      this.server?.close(() => r());
      this.server?.closeAllConnections();
    });
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "fake", server: `http://127.0.0.1:${this.port}`, skipTLSVerify: true }],
      users: [{ name: "fake", token: "t" }],
      contexts: [{ name: "fake", cluster: "fake", user: "fake" }],
      currentContext: "fake",
    });
    return kc;
  }

  /** Writes count (POST/PUT/PATCH/DELETE) so far. */
  writes(): number {
    return this.requests.filter((r) => !r.startsWith("GET")).length;
  }

  /** Stores an object directly (as another client would), notifying watchers. */
  put(collection: string, obj: KubeObject): KubeObject {
    const store = this.collection(collection);
    const key = `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
    const existing = store.get(key);
    const stored: KubeObject = {
      ...obj,
      metadata: {
        ...obj.metadata,
        uid: existing?.metadata.uid ?? obj.metadata.uid ?? `uid-${this.rv}`,
        resourceVersion: String(++this.rv),
        generation: (existing?.metadata.generation ?? 0) + (existing && sameSpec(existing, obj) ? 0 : 1),
      },
    };
    store.set(key, stored);
    this.notify(collection, existing ? "MODIFIED" : "ADDED", stored);
    return stored;
  }

  remove(collection: string, namespace: string, name: string): boolean {
    const store = this.collection(collection);
    const obj = store.get(`${namespace}/${name}`);
    if (!obj) return false;
    store.delete(`${namespace}/${name}`);
    this.notify(collection, "DELETED", {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(++this.rv) },
    });
    return true;
  }

  private collection(c: string): Map<string, KubeObject> {
    let m = this.objects.get(c);
    if (!m) {
      m = new Map();
      this.objects.set(c, m);
    }
    return m;
  }

  private notify(collection: string, type: string, object: KubeObject): void {
    for (const w of this.watchers) {
      if (w.collection !== collection) continue;
      if (w.namespace && w.namespace !== object.metadata.namespace) continue;
      w.res.write(`${JSON.stringify({ type, object })}\n`);
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    this.requests.push(`${req.method} ${url.pathname}${url.searchParams.get("watch") ? "?watch" : ""}`);
    const { collection, namespace, name, sub } = parsePath(url.pathname);
    const store = this.collection(collection);
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const fault = this.faults.get(collection);
    if (fault) return send(fault.code, { kind: "Status", status: "Failure", ...fault });
    const notFound = () =>
      send(404, { kind: "Status", code: 404, reason: "NotFound", message: `${name} not found` });
    const body = await new Promise<string>((r) => {
      let s = "";
      req.on("data", (c) => {
        s += c;
      });
      req.on("end", () => r(s));
    });
    const key = `${namespace ?? ""}/${name}`;

    if (req.method === "GET" && name === undefined) {
      if (url.searchParams.get("watch")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
        const w: Watcher = { collection, namespace, res };
        this.watchers.add(w);
        req.on("close", () => this.watchers.delete(w));
        return;
      }
      const items = [...store.values()].filter((o) => !namespace || o.metadata.namespace === namespace);
      return send(200, { kind: "List", metadata: { resourceVersion: String(this.rv) }, items });
    }
    if (req.method === "GET") {
      const obj = store.get(key);
      return obj ? send(200, obj) : notFound();
    }
    if (req.method === "POST") {
      const obj = JSON.parse(body) as KubeObject;
      if (store.has(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`)) {
        return send(409, { kind: "Status", code: 409, reason: "AlreadyExists", message: "exists" });
      }
      return send(201, this.put(collection, obj));
    }
    if (req.method === "PUT") {
      const obj = JSON.parse(body) as KubeObject;
      const existing = store.get(key);
      if (!existing) return notFound();
      if (
        obj.metadata.resourceVersion &&
        obj.metadata.resourceVersion !== existing.metadata.resourceVersion
      ) {
        return send(409, {
          kind: "Status",
          code: 409,
          reason: "Conflict",
          message: "the object has been modified",
        });
      }
      return send(200, this.put(collection, obj));
    }
    if (req.method === "PATCH") {
      const patch = JSON.parse(body) as Record<string, unknown>;
      const existing = store.get(key);
      if (!existing && !(req.headers["content-type"] ?? "").includes("apply")) return notFound();
      const merged = merge(existing ?? {}, patch) as KubeObject;
      if (sub === "status") merged.metadata = { ...(existing?.metadata ?? merged.metadata) };
      return send(200, this.put(collection, merged));
    }
    if (req.method === "DELETE") {
      return this.remove(collection, namespace ?? "", name ?? "")
        ? send(200, { kind: "Status", status: "Success" })
        : notFound();
    }
    send(405, { kind: "Status", code: 405, message: "method not allowed" });
  }
}

function sameSpec(a: KubeObject, b: KubeObject): boolean {
  return (
    JSON.stringify((a as { spec?: unknown }).spec) === JSON.stringify((b as { spec?: unknown }).spec) &&
    JSON.stringify((a as { data?: unknown }).data) === JSON.stringify((b as { data?: unknown }).data)
  );
}

/** JSON merge patch (RFC 7386). */
function merge(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}
