// A scripted in-memory Kubernetes API server over real HTTP (127.0.0.1, a free port), for unit tests of
// reconcilers, the client, controllers and the manager: seed objects, script faults (409, 404, 410, 500...)
// and latency, and read back a record of every request. It speaks the REST protocol the Client uses: get,
// list (label and field selectors, limit/continue), watch (replayed from a resourceVersion, 410 once compacted,
// sendInitialEvents, bookmarks), create, update, merge/strategic/JSON patch, server-side apply, the status
// subresource, delete (finalizers honoured), deletecollection and dryRun.
//
// Not a substitute for the real kube-apiserver used by the integration tests: no schema validation or
// admission (but Secrets and ConfigMaps over 1 MiB are refused with the API server's 422), no garbage collection, server-side apply is a merge of the applied fields (a field dropped from
// an apply is not removed, field-manager conflicts are not detected), a strategic merge patch is a merge patch.
//
// The pieces: fake-api-types.ts (the public vocabulary), fake-api-protocol.ts (paths, verbs, Statuses,
// selectors), fake-api-kinds.ts (the kinds served and learnt), fake-api-store.ts (objects, resourceVersions, watch
// history), fake-api-scripts.ts (faults and latency); this module is the HTTP server and the verbs' semantics that
// tie them together.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { Client, type ClientOptions } from "../client/client.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { BUILT_IN_KINDS, KindRegistry } from "./fake-api-kinds.ts";
import {
  Answer,
  checkResourceVersion,
  checkSize,
  collectionPath,
  defaultMessage,
  isObjectBody,
  objectBody,
  parsePath,
  patchKind,
  REASONS,
  statusBody,
  type Target,
  verbOf,
} from "./fake-api-protocol.ts";
import { ScriptBook } from "./fake-api-scripts.ts";
import { ObjectStore, writeEvent } from "./fake-api-store.ts";
import {
  type FakeApiServerOptions,
  type FaultOptions,
  type RecordedRequest,
  type Reply,
  type RequestMatch,
  type Script,
  WRITE_VERBS,
} from "./fake-api-types.ts";
import { applyJsonPatch, applyMergePatch, PatchError } from "./json-patch.ts";

export { collectionPath, MAX_SECRET_SIZE, statusBody } from "./fake-api-protocol.ts";
export {
  type FakeApiServerOptions,
  type FaultOptions,
  type PatchKind,
  type RecordedRequest,
  type Reply,
  type RequestMatch,
  type Script,
  type Verb,
  WRITE_VERBS,
} from "./fake-api-types.ts";

/**
 * An in-memory API server over real HTTP. Start it, point a {@link Client} at it (`server.client()` or
 * `server.kubeConfig()`), seed objects, script faults, and assert on `server.log`:
 *
 * ```ts
 * const server = await new FakeApiServer({ kinds: [Greeting], objects: [greeting] }).start();
 * server.fail({ verb: "update", kind: ConfigMap }, 409, { times: 1 }); // the next update conflicts
 * server.delay({ verb: "list" }, 200);                                 // every list waits 200 ms
 * // ... run the code under test ...
 * expect(server.writes().map((r) => r.verb)).toEqual(["apply"]);
 * await server.stop();
 * ```
 */
export class FakeApiServer {
  /** Stored objects: collection path (e.g. "/api/v1/configmaps") -> "namespace/name" -> object. */
  readonly objects: Map<string, Map<string, KubeObject>>;
  /** Every request, in order, as a line "METHOD path" ("?watch" appended for watches). */
  readonly requests: string[] = [];
  /** Every request, in order, with its verb, kind, name, body and answer. */
  readonly log: RecordedRequest[] = [];
  /**
   * Collection path (e.g. "/api/v1/secrets") -> the failure every request to it gets. A shorthand kept for
   * core's tests; {@link fail} does the same and more.
   */
  readonly faults = new Map<string, { code: number; reason: string; message: string }>();
  /** The port, once started. */
  port = 0;
  private server: Server | undefined;
  private readonly store: ObjectStore;
  private readonly scripts = new ScriptBook();
  private readonly kinds = new KindRegistry();
  private closing = new AbortController();

  constructor(options: FakeApiServerOptions = {}) {
    this.store = new ObjectStore(options.historyLimit ?? 10_000);
    this.objects = this.store.objects;
    this.kinds.register(...BUILT_IN_KINDS, ...(options.kinds ?? []));
    this.seed(...(options.objects ?? []));
  }

  /** Listens on a free port of 127.0.0.1; resolves to the server itself. */
  async start(): Promise<this> {
    if (this.server !== undefined) throw new Error("FakeApiServer: start() called twice");
    this.closing = new AbortController();
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify(statusBody(500, "InternalError", `fake API server: ${err.message}`)));
      });
    });
    this.server = server;
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Ends every watch, closes every connection and stops listening. */
  async stop(): Promise<void> {
    this.closing.abort();
    this.closeWatches();
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  }

  /** "http://127.0.0.1:<port>". */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.store.resourceVersion);
  }

  /** A kubeconfig whose current context points at this server. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "fake", server: this.url, skipTLSVerify: true }],
      users: [{ name: "fake", token: "fake-token" }],
      contexts: [{ name: "fake", cluster: "fake", user: "fake" }],
      currentContext: "fake",
    });
    return kc;
  }

  /** A Client for this server with its own metrics registry; close it when done. */
  client(options: Omit<ClientOptions, "kubeConfig"> = {}): Client {
    return new Client({
      metrics: new CoreMetrics(new Registry()),
      ...options,
      kubeConfig: this.kubeConfig(),
    });
  }

  /** Serves these kinds too (custom resources): objects of a kind must be registered to be seeded. */
  register(...kinds: Kind[]): this {
    this.kinds.register(...kinds);
    return this;
  }

  /**
   * Stores objects as they exist before the test (their apiVersion and kind say where; the kind must be
   * built in or registered). The server sets resourceVersion, and uid, creationTimestamp and generation (1)
   * when missing. Watchers are told. Returns the stored copies.
   */
  seed<T extends readonly KubeObject[]>(...objects: T): { -readonly [K in keyof T]: T[K] } {
    return objects.map((obj) => {
      const kind = this.kinds.kindOf(obj);
      if (kind.namespaced && !obj.metadata.namespace) {
        throw new Error(
          `FakeApiServer.seed: ${kind.kind} "${obj.metadata.name ?? ""}" is namespaced: set metadata.namespace`,
        );
      }
      if (!kind.namespaced && obj.metadata.namespace) {
        throw new Error(
          `FakeApiServer.seed: ${kind.kind} "${obj.metadata.name ?? ""}" is cluster-scoped: remove metadata.namespace`,
        );
      }
      const existing = this.store.find(
        collectionPath(kind),
        obj.metadata.namespace ?? "",
        obj.metadata.name ?? "",
      );
      return this.store.commit(collectionPath(kind), structuredClone(obj), existing);
    }) as { -readonly [K in keyof T]: T[K] };
  }

  /**
   * Stores `obj` directly, as another client would (no request is recorded), and notifies watchers.
   * `target` is a Kind or a collection path such as "/api/v1/configmaps".
   */
  put(target: Kind | string, obj: KubeObject): KubeObject {
    const collection = typeof target === "string" ? target : collectionPath(target);
    const existing = this.store.find(collection, obj.metadata.namespace ?? "", obj.metadata.name ?? "");
    return this.store.commit(collection, structuredClone(obj), existing);
  }

  /** Deletes an object directly (finalizers ignored), notifying watchers; false when there was none. */
  remove(target: Kind | string, namespace: string, name: string): boolean {
    const collection = typeof target === "string" ? target : collectionPath(target);
    const obj = this.store.find(collection, namespace, name);
    if (obj === undefined) return false;
    this.store.erase(collection, obj);
    return true;
  }

  /** A copy of the stored object, or undefined. */
  get<T extends KubeObject>(kind: Kind<T>, name: string, namespace = ""): T | undefined {
    const obj = this.store.find(collectionPath(kind), kind.namespaced ? namespace : "", name);
    return obj === undefined ? undefined : (structuredClone(obj) as T);
  }

  /** Copies of the stored objects of a kind (in one namespace, when given), ordered by namespace and name. */
  list<T extends KubeObject>(kind: Kind<T>, namespace?: string): T[] {
    return this.store.select(collectionPath(kind), namespace ?? "", {}).map((o) => structuredClone(o) as T);
  }

  /** Copies of every stored object, of every kind. */
  all(): KubeObject[] {
    return [...this.objects.values()].flatMap((store) => [...store.values()].map((o) => structuredClone(o)));
  }

  /** The requests that changed (or tried to change) state, in order. */
  writes(): RecordedRequest[] {
    return this.log.filter((r) => WRITE_VERBS.has(r.verb));
  }

  /** Forgets the requests recorded so far. */
  clearLog(): void {
    this.log.length = 0;
    this.requests.length = 0;
  }

  /**
   * Answers matching requests with a failure Status of HTTP `status` instead of serving them; nothing is
   * stored. A 410 on a watch is sent the way the API server sends it: an ERROR event in the stream.
   */
  fail(match: RequestMatch, status: number, options: FaultOptions = {}): Script {
    return this.on(
      match,
      (req) => {
        const reason = options.reason ?? REASONS[status] ?? "Unknown";
        const message = options.message ?? defaultMessage(status, req);
        return {
          status,
          body: statusBody(status, reason, message),
          ...(options.retryAfterSeconds === undefined
            ? {}
            : { headers: { "retry-after": String(options.retryAfterSeconds) } }),
        };
      },
      options.times === undefined ? {} : { times: options.times },
    );
  }

  /** Waits `ms` before serving matching requests (latency); the request is then served normally. */
  delay(match: RequestMatch, ms: number, options: { times?: number } = {}): Script {
    return this.scripts.add(match, ms, undefined, options.times);
  }

  /**
   * Lets `reply` answer matching requests: a {@link Reply} is sent as it is, undefined serves the request
   * normally. Scripts apply in the order they were added; the first reply given wins.
   */
  on(
    match: RequestMatch,
    reply: (req: RecordedRequest) => Reply | undefined,
    options: { times?: number } = {},
  ): Script {
    return this.scripts.add(match, 0, reply, options.times);
  }

  /** Ends every open watch, as the API server does when a watch times out; clients watch again. */
  closeWatches(): void {
    this.store.closeWatches();
  }

  /**
   * Forgets the watch history, as etcd compaction does: a watch from an older resourceVersion gets 410 Expired
   * (and an informer relists). Combine with {@link closeWatches} to make running informers relist.
   */
  compact(): void {
    this.store.compact();
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allowed bookmarks. */
  bookmark(): void {
    this.store.bookmark();
  }

  /** The kind of an object (from its apiVersion and kind), if the server knows it. */
  kindFor(obj: KubeObject): Kind | undefined {
    return this.kinds.kindFor(obj);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const raw = await new Promise<string>((resolve, reject) => {
      let s = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => {
        s += c;
      });
      req.on("end", () => resolve(s));
      req.on("error", reject);
    });
    const query = Object.fromEntries(url.searchParams);
    const target = parsePath(url.pathname);
    const contentType = String(req.headers["content-type"] ?? "");
    const method = req.method ?? "GET";
    let body: unknown;
    try {
      body = raw === "" ? undefined : JSON.parse(raw);
    } catch {
      body = raw;
    }
    const patchType = method === "PATCH" ? patchKind(contentType) : undefined;
    const verb = verbOf(method, target.name, query.watch, patchType);
    this.kinds.learn(target, verb, body);
    const record: RecordedRequest = {
      verb,
      method,
      path: url.pathname,
      query,
      apiVersion: target.apiVersion,
      resource: target.resource,
      kind: this.kinds.kindName(target.collection) ?? target.resource,
      namespace: target.namespace,
      name: target.name,
      subresource: target.subresource,
      patchType,
      body,
      userAgent: String(req.headers["user-agent"] ?? ""),
      status: 0,
    };
    this.log.push(record);
    this.requests.push(
      `${method} ${url.pathname}${query.watch === "true" || query.watch === "1" ? "?watch" : ""}`,
    );
    const send = (code: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.status = code;
      if (res.destroyed || res.writableEnded) return;
      res.writeHead(code, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(payload));
    };

    const fault = this.faults.get(target.collection);
    if (fault) return send(fault.code, statusBody(fault.code, fault.reason, fault.message));
    const reply = await this.scripts.reply(record, this.closing.signal);
    if (reply !== undefined) {
      if (verb === "watch" && reply.status === 410) {
        record.status = 200;
        res.writeHead(200, { "content-type": "application/json" });
        writeEvent(res, {
          type: "ERROR",
          object: reply.body ?? statusBody(410, "Expired", "too old resource version"),
        });
        res.end();
        return;
      }
      const fallback =
        reply.status >= 400
          ? statusBody(reply.status, REASONS[reply.status] ?? "Unknown", defaultMessage(reply.status, record))
          : {};
      return send(reply.status, reply.body ?? fallback, reply.headers ?? {});
    }
    if (this.closing.signal.aborted) return;

    try {
      if (verb === "watch") {
        this.store.watch(target, query, req, res);
        record.status = 200;
        return;
      }
      const [code, payload] = this.serve(record, target, query, body);
      send(code, payload);
    } catch (err) {
      if (!(err instanceof Answer)) throw err;
      send(err.code, statusBody(err.code, err.reason, err.message, err.details));
    }
  }

  /** Serves a non-watch request against the store; throws {@link Answer} for failures. */
  private serve(
    r: RecordedRequest,
    t: Target,
    query: Record<string, string>,
    body: unknown,
  ): [number, unknown] {
    const dryRun = query.dryRun === "All";
    const existing = t.name === "" ? undefined : this.store.find(t.collection, t.namespace, t.name);
    const notFound = () => new Answer(404, `${t.resource} "${t.name}" not found`);
    switch (r.verb) {
      case "get":
        if (!existing) throw notFound();
        return [200, existing];
      case "list":
        return [200, this.store.listAnswer(t, query, this.kinds.kindName(t.collection) ?? "")];
      case "create": {
        if (t.subresource !== "") return [201, body]; // e.g. pods/eviction, serviceaccounts/token
        const obj = objectBody(body);
        const ns = obj.metadata.namespace ?? t.namespace;
        if (t.namespace !== "" && ns !== t.namespace) {
          throw new Answer(
            400,
            "the namespace of the provided object does not match the namespace sent on the request",
          );
        }
        if (ns !== "") obj.metadata.namespace = ns;
        if (!obj.metadata.name && obj.metadata.generateName) {
          obj.metadata.name = `${obj.metadata.generateName}${randomBytes(3).toString("hex").slice(0, 5)}`;
        }
        if (!obj.metadata.name)
          throw new Answer(422, "metadata.name: Required value: name or generateName is required");
        if (this.store.find(t.collection, ns, obj.metadata.name)) {
          throw new Answer(409, `${t.resource} "${obj.metadata.name}" already exists`, "AlreadyExists");
        }
        const { status: _ignored, ...rest } = obj as KubeObject & { status?: unknown };
        for (const f of ["uid", "resourceVersion", "generation", "deletionTimestamp"] as const)
          delete rest.metadata[f];
        checkSize(this.kinds.kindName(t.collection), rest);
        return [201, this.store.commit(t.collection, rest, undefined, dryRun)];
      }
      case "update": {
        if (!existing) throw notFound();
        const obj = objectBody(body);
        checkResourceVersion(t, obj.metadata.resourceVersion, existing);
        return [200, this.write(t, existing, obj, dryRun)];
      }
      case "patch":
      case "apply": {
        if (!existing && r.verb !== "apply") throw notFound();
        let patched: KubeObject;
        try {
          patched = (
            r.patchType === "json" ? applyJsonPatch(existing, body) : applyMergePatch(existing ?? {}, body)
          ) as KubeObject;
        } catch (err) {
          if (!(err instanceof PatchError)) throw err;
          throw new Answer(
            422,
            `the server rejected our request due to an error in our request: ${err.message}`,
          );
        }
        if (isObjectBody(body) && r.patchType !== "json") {
          checkResourceVersion(t, (body as KubeObject).metadata?.resourceVersion, existing);
        }
        if (existing === undefined) {
          if (t.subresource !== "") throw notFound();
          delete (patched as KubeObject & { status?: unknown }).status;
          patched.metadata ??= {};
          patched.metadata.name ??= t.name;
          if (t.namespace !== "") patched.metadata.namespace = t.namespace;
          checkSize(this.kinds.kindName(t.collection), patched);
          return [201, this.store.commit(t.collection, patched, undefined, dryRun)];
        }
        return [200, this.write(t, existing, patched, dryRun)];
      }
      case "delete": {
        if (!existing) throw notFound();
        const pre = (body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)
          ?.preconditions;
        if (pre?.uid !== undefined && pre.uid !== existing.metadata.uid) {
          throw new Answer(
            409,
            `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid}`,
          );
        }
        if (pre?.resourceVersion !== undefined && pre.resourceVersion !== existing.metadata.resourceVersion) {
          throw new Answer(
            409,
            `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`,
          );
        }
        return [200, dryRun ? existing : this.store.delete(t.collection, existing)];
      }
      case "deletecollection": {
        const items = this.store
          .select(t.collection, t.namespace, query)
          .map((o) => (dryRun ? o : this.store.delete(t.collection, o)));
        return [
          200,
          { kind: "List", apiVersion: "v1", metadata: { resourceVersion: this.resourceVersion }, items },
        ];
      }
      default:
        throw new Answer(405, `${r.method} is not supported on ${r.path}`);
    }
  }

  /**
   * An update of the main resource or of the status subresource: the main resource keeps the stored status,
   * the status subresource changes nothing but status (as for kinds with a status subresource).
   */
  private write(t: Target, existing: KubeObject, incoming: KubeObject, dryRun: boolean): KubeObject {
    type WithStatus = KubeObject & { status?: unknown };
    let next: WithStatus;
    if (t.subresource === "status") {
      next = { ...structuredClone(existing), status: structuredClone((incoming as WithStatus).status) };
      if ((incoming as WithStatus).status === undefined) delete next.status;
    } else {
      next = { ...incoming, metadata: { ...incoming.metadata } };
      const status = (existing as WithStatus).status;
      if (status === undefined) delete next.status;
      else next.status = structuredClone(status);
      const had = new Set(existing.metadata.finalizers ?? []);
      const added = (next.metadata.finalizers ?? []).filter((f) => !had.has(f));
      if (existing.metadata.deletionTimestamp !== undefined && added.length > 0) {
        throw new Answer(
          422,
          `${t.resource} "${t.name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        );
      }
    }
    next.metadata.name = existing.metadata.name ?? t.name;
    if (existing.metadata.namespace !== undefined) next.metadata.namespace = existing.metadata.namespace;
    checkSize(this.kinds.kindName(t.collection), next);
    return this.store.commit(t.collection, next, existing, dryRun);
  }
}
