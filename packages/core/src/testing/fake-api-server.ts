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
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import {
  ConfigMap,
  CronJob,
  CustomResourceDefinition,
  type CustomResourceDefinitionObject,
  Deployment,
  defineKind,
  EndpointSlice,
  Job,
  type Kind,
  KubeEvent,
  Lease,
  Namespace,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from "../api/kinds.ts";
import { labelSelector } from "../api/labels.ts";
import type { KubeObject } from "../api/object.ts";
import { Client, type ClientOptions } from "../client/client.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import { applyJsonPatch, applyMergePatch, deepEqual, PatchError } from "./json-patch.ts";

/** What a request does, in the API server's (RBAC) vocabulary; server-side apply is "apply". */
export type Verb =
  | "get"
  | "list"
  | "watch"
  | "create"
  | "update"
  | "patch"
  | "apply"
  | "delete"
  | "deletecollection";

/** The verbs that change state. */
export const WRITE_VERBS: ReadonlySet<Verb> = new Set<Verb>([
  "create",
  "update",
  "patch",
  "apply",
  "delete",
  "deletecollection",
]);

/** How a PATCH body is read, from its content type. */
export type PatchKind = "merge" | "json" | "strategic" | "apply";

/** One request as the fake API server received it. */
export interface RecordedRequest {
  readonly verb: Verb;
  readonly method: string;
  /** The URL path, e.g. "/api/v1/namespaces/default/configmaps/x". */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** "v1" or "group/version". */
  readonly apiVersion: string;
  /** The resource (plural), e.g. "configmaps". */
  readonly resource: string;
  /** The kind, e.g. "ConfigMap", when the server knows the resource's kind; else the resource. */
  readonly kind: string;
  /** "" for cluster-scoped resources and all-namespace requests. */
  readonly namespace: string;
  /** "" for requests on a collection. */
  readonly name: string;
  /** e.g. "status"; "" for the main resource. */
  readonly subresource: string;
  readonly patchType: PatchKind | undefined;
  /** The parsed JSON body (the object, patch or DeleteOptions), undefined when there is none. */
  readonly body: unknown;
  /** The User-Agent header (the Client's `userAgent` option). */
  readonly userAgent: string;
  /** The HTTP status answered; 0 while the request is pending. */
  status: number;
}

/** Which requests a script applies to; every field given must match. */
export interface RequestMatch {
  verb?: Verb | readonly Verb[];
  /** A Kind, or a kind name ("ConfigMap") or resource ("configmaps"). */
  kind?: Kind | string;
  namespace?: string;
  name?: string;
  /** "" for the main resource only, "status" for the status subresource. */
  subresource?: string;
  /** Any further condition. */
  where?: (req: RecordedRequest) => boolean;
}

/** An answer a script gives instead of the server's own. */
export interface Reply {
  status: number;
  /** JSON body; a failure Status (with the status's usual reason) when omitted. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FaultOptions {
  /** The Status reason; defaults to the usual one for the code (409 -> "Conflict", 500 -> "InternalError"...). */
  reason?: string;
  message?: string;
  /** Sets Retry-After (the client waits that long before retrying a 429 or 5xx). */
  retryAfterSeconds?: number;
  /** How many matching requests it applies to; default: every one. */
  times?: number;
}

/** A scripted reaction; `hits` counts the requests it has applied to. */
export interface Script {
  readonly hits: number;
  /** Stops applying it. */
  remove(): void;
}

export interface FakeApiServerOptions {
  /** Custom kinds to serve besides the built-in ones (needed to seed objects of those kinds). */
  kinds?: readonly Kind[];
  /** Objects stored before the server starts (see {@link FakeApiServer.seed}). */
  objects?: readonly KubeObject[];
  /** Watch events kept for replay from an older resourceVersion; default 10,000. */
  historyLimit?: number;
}

interface ScriptEntry {
  match: RequestMatch;
  remaining: number;
  hits: number;
  delayMs: number;
  reply: ((req: RecordedRequest) => Reply | undefined) | undefined;
}

interface Watcher {
  collection: string;
  namespace: string;
  selector: Selector;
  bookmarks: boolean;
  res: ServerResponse;
}

interface HistoryEvent {
  rv: number;
  collection: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
  previous: KubeObject | undefined;
}

interface Target {
  collection: string;
  apiVersion: string;
  resource: string;
  namespace: string;
  name: string;
  subresource: string;
}

const BUILT_IN_KINDS: readonly Kind[] = [
  ConfigMap,
  CronJob,
  CustomResourceDefinition,
  Deployment,
  EndpointSlice,
  Job,
  KubeEvent,
  Lease,
  Namespace,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  defineKind({ group: "", version: "v1", kind: "Event", plural: "events", namespaced: true }),
];

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Expired",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** A Kubernetes failure Status (with `details` when given, as the API server sends for a 422). */
export function statusBody(
  code: number,
  reason: string,
  message: string,
  details?: Record<string, unknown>,
): Record<string, unknown> {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code,
  };
}

/** The most data a Secret or ConfigMap may hold (the API server's MaxSecretSize, 1 MiB). */
export const MAX_SECRET_SIZE = 1024 * 1024;

/** The URL path of a kind's collection, e.g. "/api/v1/configmaps" (all namespaces). */
export function collectionPath(kind: Kind): string {
  return `${kind.group === "" ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`}/${kind.plural}`;
}

/** Thrown inside the handler to answer with a failure Status. */
class Answer extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: Record<string, unknown> | undefined;
  constructor(
    code: number,
    message: string,
    reason = REASONS[code] ?? "Unknown",
    details?: Record<string, unknown>,
  ) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

/**
 * The API server's size validation of a Secret (the decoded values of data) and a ConfigMap (keys and values of
 * data and binaryData): over 1 MiB is a 422 "Too long", with its message and cause.
 */
function checkSize(kind: string | undefined, obj: KubeObject): void {
  let size = 0;
  let field = "";
  if (kind === "Secret") {
    field = "data";
    for (const v of Object.values((obj as { data?: Record<string, string> }).data ?? {}))
      size += Buffer.from(v, "base64").length;
  } else if (kind === "ConfigMap") {
    // The API server validates a ConfigMap's total on the empty field path, printed "[]".
    field = "[]";
    const c = obj as { data?: Record<string, string>; binaryData?: Record<string, string> };
    for (const [k, v] of Object.entries(c.data ?? {})) size += k.length + Buffer.byteLength(v);
    for (const [k, v] of Object.entries(c.binaryData ?? {}))
      size += k.length + Buffer.from(v, "base64").length;
  } else return;
  if (size <= MAX_SECRET_SIZE) return;
  const detail = `Too long: must have at most ${MAX_SECRET_SIZE} bytes`;
  throw new Answer(422, `${kind} "${obj.metadata.name ?? ""}" is invalid: ${field}: ${detail}`, "Invalid", {
    name: obj.metadata.name,
    kind,
    causes: [{ reason: "FieldValueTooLong", message: detail, field }],
  });
}

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
  readonly objects = new Map<string, Map<string, KubeObject>>();
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
  private rv = 1;
  private server: Server | undefined;
  private readonly watchers = new Set<Watcher>();
  private readonly scripts: ScriptEntry[] = [];
  private readonly kindsByCollection = new Map<string, Kind>();
  private readonly kindsByType = new Map<string, Kind>();
  private history: HistoryEvent[] = [];
  private compactedRv = 0;
  private readonly historyLimit: number;
  private closing = new AbortController();

  constructor(options: FakeApiServerOptions = {}) {
    this.historyLimit = options.historyLimit ?? 10_000;
    this.register(...BUILT_IN_KINDS, ...(options.kinds ?? []));
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
    return String(this.rv);
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
    for (const kind of kinds) {
      this.kindsByCollection.set(collectionPath(kind), kind);
      this.kindsByType.set(`${kind.apiVersion}/${kind.kind}`, kind);
    }
    return this;
  }

  /**
   * Stores objects as they exist before the test (their apiVersion and kind say where; the kind must be
   * built in or registered). The server sets resourceVersion, and uid, creationTimestamp and generation (1)
   * when missing. Watchers are told. Returns the stored copies.
   */
  seed<T extends readonly KubeObject[]>(...objects: T): { -readonly [K in keyof T]: T[K] } {
    return objects.map((obj) => {
      const kind = this.kindOf(obj);
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
      const existing = this.find(collectionPath(kind), obj.metadata.namespace ?? "", obj.metadata.name ?? "");
      return this.commit(collectionPath(kind), structuredClone(obj), existing);
    }) as { -readonly [K in keyof T]: T[K] };
  }

  /**
   * Stores `obj` directly, as another client would (no request is recorded), and notifies watchers.
   * `target` is a Kind or a collection path such as "/api/v1/configmaps".
   */
  put(target: Kind | string, obj: KubeObject): KubeObject {
    const collection = typeof target === "string" ? target : collectionPath(target);
    const existing = this.find(collection, obj.metadata.namespace ?? "", obj.metadata.name ?? "");
    return this.commit(collection, structuredClone(obj), existing);
  }

  /** Deletes an object directly (finalizers ignored), notifying watchers; false when there was none. */
  remove(target: Kind | string, namespace: string, name: string): boolean {
    const collection = typeof target === "string" ? target : collectionPath(target);
    const obj = this.find(collection, namespace, name);
    if (obj === undefined) return false;
    this.erase(collection, obj);
    return true;
  }

  /** A copy of the stored object, or undefined. */
  get<T extends KubeObject>(kind: Kind<T>, name: string, namespace = ""): T | undefined {
    const obj = this.find(collectionPath(kind), kind.namespaced ? namespace : "", name);
    return obj === undefined ? undefined : (structuredClone(obj) as T);
  }

  /** Copies of the stored objects of a kind (in one namespace, when given), ordered by namespace and name. */
  list<T extends KubeObject>(kind: Kind<T>, namespace?: string): T[] {
    return this.select(collectionPath(kind), namespace ?? "", {}).map((o) => structuredClone(o) as T);
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
    return this.addScript(match, ms, undefined, options.times);
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
    return this.addScript(match, 0, reply, options.times);
  }

  /** Ends every open watch, as the API server does when a watch times out; clients watch again. */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /**
   * Forgets the watch history, as etcd compaction does: a watch from an older resourceVersion gets 410 Expired
   * (and an informer relists). Combine with {@link closeWatches} to make running informers relist.
   */
  compact(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allowed bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (w.bookmarks) write(w.res, { type: "BOOKMARK", object: bookmarkObject(this.rv) });
    }
  }

  private addScript(
    match: RequestMatch,
    delayMs: number,
    reply: ScriptEntry["reply"],
    times: number | undefined,
  ): Script {
    const entry: ScriptEntry = {
      match,
      remaining: times ?? Number.POSITIVE_INFINITY,
      hits: 0,
      delayMs,
      reply,
    };
    this.scripts.push(entry);
    const scripts = this.scripts;
    return {
      get hits() {
        return entry.hits;
      },
      remove() {
        const i = scripts.indexOf(entry);
        if (i >= 0) scripts.splice(i, 1);
      },
    };
  }

  private matches(m: RequestMatch, req: RecordedRequest): boolean {
    if (m.verb !== undefined && !(typeof m.verb === "string" ? [m.verb] : m.verb).includes(req.verb))
      return false;
    if (m.kind !== undefined) {
      if (typeof m.kind === "string") {
        if (m.kind !== req.kind && m.kind !== req.resource) return false;
      } else if (m.kind.apiVersion !== req.apiVersion || m.kind.plural !== req.resource) return false;
    }
    if (m.namespace !== undefined && m.namespace !== req.namespace) return false;
    if (m.name !== undefined && m.name !== req.name) return false;
    if (m.subresource !== undefined && m.subresource !== req.subresource) return false;
    return m.where === undefined || m.where(req);
  }

  /** The kind of an object (from its apiVersion and kind), if the server knows it. */
  kindFor(obj: KubeObject): Kind | undefined {
    return this.kindsByType.get(`${obj.apiVersion}/${obj.kind}`);
  }

  /** The registered kind of an object; throws naming what to register when unknown. */
  private kindOf(obj: KubeObject): Kind {
    const kind = this.kindFor(obj);
    if (kind === undefined) {
      throw new Error(
        `FakeApiServer: unknown kind ${obj.apiVersion ?? "(no apiVersion)"} ${obj.kind ?? "(no kind)"} of object ${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}: ` +
          "set apiVersion and kind, and pass custom kinds in `kinds` (or call register(kind))",
      );
    }
    return kind;
  }

  private store(collection: string): Map<string, KubeObject> {
    let m = this.objects.get(collection);
    if (!m) {
      m = new Map();
      this.objects.set(collection, m);
    }
    return m;
  }

  private find(collection: string, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(collection)?.get(`${namespace}/${name}`);
  }

  /** Objects of a collection in `namespace` ("" = all) matching the selectors, sorted by key. */
  private select(collection: string, namespace: string, query: Record<string, string>): KubeObject[] {
    const selector = compileSelector(query);
    return [...(this.objects.get(collection)?.entries() ?? [])]
      .filter(([, o]) => namespace === "" || o.metadata.namespace === namespace)
      .filter(([, o]) => selector(o))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => o);
  }

  /**
   * Stores `next` (replacing `existing`): a new resourceVersion, server-set fields kept, generation bumped when
   * anything but metadata and status changed. An object being deleted whose last finalizer is gone is deleted.
   */
  private commit(
    collection: string,
    next: KubeObject,
    existing: KubeObject | undefined,
    dryRun = false,
  ): KubeObject {
    const rv = dryRun ? this.rv : ++this.rv;
    const metadata = next.metadata;
    if (existing === undefined) {
      metadata.uid ??= `uid-${randomBytes(6).toString("hex")}`;
      metadata.creationTimestamp ??= new Date().toISOString().replace(/\.\d+Z$/, "Z");
      metadata.generation ??= 1;
    } else {
      const was = existing.metadata;
      if (was.uid !== undefined) metadata.uid = was.uid;
      if (was.creationTimestamp !== undefined) metadata.creationTimestamp = was.creationTimestamp;
      if (was.deletionTimestamp !== undefined) metadata.deletionTimestamp = was.deletionTimestamp;
      metadata.generation = (was.generation ?? 1) + (sameContent(existing, next) ? 0 : 1);
    }
    metadata.resourceVersion = String(rv);
    if (metadata.finalizers?.length === 0) delete metadata.finalizers;
    if (dryRun) return next;
    if (metadata.deletionTimestamp !== undefined && !metadata.finalizers?.length) {
      this.erase(collection, next);
      return next;
    }
    this.store(collection).set(`${metadata.namespace ?? ""}/${metadata.name}`, next);
    this.notify(collection, existing ? "MODIFIED" : "ADDED", next, existing);
    return next;
  }

  private erase(collection: string, obj: KubeObject): void {
    this.store(collection).delete(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`);
    const gone = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.notify(collection, "DELETED", gone, obj);
  }

  private notify(
    collection: string,
    type: HistoryEvent["type"],
    object: KubeObject,
    previous?: KubeObject,
  ): void {
    const event: HistoryEvent = { rv: this.rv, collection, type, object: structuredClone(object), previous };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped.at(-1)?.rv ?? this.compactedRv;
    }
    for (const w of this.watchers) this.send(w, event);
  }

  /** Sends an event to a watcher as that watcher sees it (entering or leaving its selector). */
  private send(w: Watcher, e: HistoryEvent): void {
    if (w.collection !== e.collection) return;
    if (w.namespace !== "" && w.namespace !== e.object.metadata.namespace) return;
    const now = w.selector(e.object);
    const before = e.previous !== undefined && w.selector(e.previous);
    let type: string = e.type;
    if (e.type === "DELETED") {
      if (!before && !now) return;
    } else if (e.type === "MODIFIED") {
      if (now && !before) type = "ADDED";
      else if (!now && before) type = "DELETED";
      else if (!now) return;
    } else if (!now) return;
    write(w.res, { type, object: e.object });
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
    this.learnKind(target, verb, body);
    const record: RecordedRequest = {
      verb,
      method,
      path: url.pathname,
      query,
      apiVersion: target.apiVersion,
      resource: target.resource,
      kind: this.kindsByCollection.get(target.collection)?.kind ?? target.resource,
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
    for (const script of [...this.scripts]) {
      if (script.remaining <= 0 || !this.matches(script.match, record)) continue;
      script.remaining--;
      script.hits++;
      if (script.delayMs > 0) await sleep(script.delayMs, this.closing.signal);
      const reply = script.reply?.(record);
      if (reply === undefined) continue;
      if (verb === "watch" && reply.status === 410) {
        record.status = 200;
        res.writeHead(200, { "content-type": "application/json" });
        write(res, {
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
        this.watch(target, query, req, res);
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

  /** Records the kind of objects written to a collection the server did not know, and CRDs' kinds. */
  private learnKind(target: Target, verb: Verb, body: unknown): void {
    if (!["create", "update", "apply"].includes(verb) || !isObjectBody(body)) return;
    if (
      !this.kindsByCollection.has(target.collection) &&
      body.apiVersion === target.apiVersion &&
      body.kind
    ) {
      this.register(
        defineKind({
          group: target.apiVersion.includes("/") ? (target.apiVersion.split("/")[0] ?? "") : "",
          version: target.apiVersion.split("/").at(-1) ?? "",
          kind: body.kind,
          plural: target.resource,
          namespaced: target.namespace !== "",
        }),
      );
    }
    if (target.collection === collectionPath(CustomResourceDefinition)) {
      const crd = body as unknown as CustomResourceDefinitionObject;
      for (const v of crd.spec?.versions ?? []) {
        if (!crd.spec.names?.plural || !crd.spec.names.kind) continue;
        this.register(
          defineKind({
            group: crd.spec.group,
            version: v.name,
            kind: crd.spec.names.kind,
            plural: crd.spec.names.plural,
            namespaced: crd.spec.scope !== "Cluster",
          }),
        );
      }
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
    const existing = t.name === "" ? undefined : this.find(t.collection, t.namespace, t.name);
    const notFound = () => new Answer(404, `${t.resource} "${t.name}" not found`);
    switch (r.verb) {
      case "get":
        if (!existing) throw notFound();
        return [200, existing];
      case "list":
        return [200, this.listAnswer(t, query)];
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
        if (this.find(t.collection, ns, obj.metadata.name)) {
          throw new Answer(409, `${t.resource} "${obj.metadata.name}" already exists`, "AlreadyExists");
        }
        const { status: _ignored, ...rest } = obj as KubeObject & { status?: unknown };
        for (const f of ["uid", "resourceVersion", "generation", "deletionTimestamp"] as const)
          delete rest.metadata[f];
        checkSize(this.kindsByCollection.get(t.collection)?.kind, rest);
        return [201, this.commit(t.collection, rest, undefined, dryRun)];
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
          checkSize(this.kindsByCollection.get(t.collection)?.kind, patched);
          return [201, this.commit(t.collection, patched, undefined, dryRun)];
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
        return [200, dryRun ? existing : this.delete(t.collection, existing)];
      }
      case "deletecollection": {
        const items = this.select(t.collection, t.namespace, query).map((o) =>
          dryRun ? o : this.delete(t.collection, o),
        );
        return [
          200,
          { kind: "List", apiVersion: "v1", metadata: { resourceVersion: String(this.rv) }, items },
        ];
      }
      default:
        throw new Answer(405, `${r.method} is not supported on ${r.path}`);
    }
  }

  /** Deletes, or with finalizers marks as being deleted; returns what the API server answers. */
  private delete(collection: string, obj: KubeObject): KubeObject | Record<string, unknown> {
    if (!obj.metadata.finalizers?.length) {
      this.erase(collection, obj);
      return {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: obj.metadata.name },
      };
    }
    if (obj.metadata.deletionTimestamp !== undefined) return obj;
    const marked = structuredClone(obj);
    marked.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    marked.metadata.deletionGracePeriodSeconds = 0;
    this.rv++;
    marked.metadata.resourceVersion = String(this.rv);
    marked.metadata.generation = (obj.metadata.generation ?? 1) + 1;
    this.store(collection).set(`${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, marked);
    this.notify(collection, "MODIFIED", marked, obj);
    return marked;
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
    checkSize(this.kindsByCollection.get(t.collection)?.kind, next);
    return this.commit(t.collection, next, existing, dryRun);
  }

  private listAnswer(t: Target, query: Record<string, string>): Record<string, unknown> {
    let items = this.select(t.collection, t.namespace, query);
    const start = query.continue ? Buffer.from(query.continue, "base64url").toString() : undefined;
    if (start !== undefined)
      items = items.filter((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}` > start);
    const limit = Number(query.limit ?? 0);
    let cont: string | undefined;
    if (limit > 0 && items.length > limit) {
      items = items.slice(0, limit);
      const last = items.at(-1);
      if (last)
        cont = Buffer.from(`${last.metadata.namespace ?? ""}/${last.metadata.name}`).toString("base64url");
    }
    const kind = this.kindsByCollection.get(t.collection);
    return {
      kind: `${kind?.kind ?? ""}List`,
      apiVersion: t.apiVersion,
      metadata: { resourceVersion: String(this.rv), ...(cont ? { continue: cont } : {}) },
      items,
    };
  }

  private watch(t: Target, query: Record<string, string>, req: IncomingMessage, res: ServerResponse): void {
    const w: Watcher = {
      collection: t.collection,
      namespace: t.namespace,
      selector: compileSelector(query),
      bookmarks: query.allowWatchBookmarks === "true",
      res,
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    const from = query.resourceVersion ?? "";
    const initial = from === "" || from === "0" || query.sendInitialEvents === "true";
    if (initial) {
      for (const o of this.select(t.collection, t.namespace, query)) write(res, { type: "ADDED", object: o });
      if (query.sendInitialEvents === "true") {
        write(res, {
          type: "BOOKMARK",
          object: bookmarkObject(this.rv, { "k8s.io/initial-events-end": "true" }),
        });
      }
    } else {
      const rv = Number(from);
      if (!Number.isInteger(rv)) {
        write(res, {
          type: "ERROR",
          object: statusBody(400, "BadRequest", `invalid resource version "${from}"`),
        });
        res.end();
        return;
      }
      if (rv < this.compactedRv) {
        write(res, {
          type: "ERROR",
          object: statusBody(410, "Expired", `too old resource version: ${rv} (${this.compactedRv})`),
        });
        res.end();
        return;
      }
      for (const e of this.history) if (e.rv > rv) this.send(w, e);
    }
    this.watchers.add(w);
    const timeout = Number(query.timeoutSeconds ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    timer?.unref();
    const done = () => {
      clearTimeout(timer);
      this.watchers.delete(w);
    };
    req.on("close", done);
    res.on("finish", done);
  }
}

function write(res: ServerResponse, event: unknown): void {
  if (!res.destroyed && !res.writableEnded) res.write(`${JSON.stringify(event)}\n`);
}

function bookmarkObject(rv: number, annotations?: Record<string, string>): KubeObject {
  return { metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) } };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Parses /api/v1[/namespaces/ns]/plural[/name[/sub]] and the /apis/group/version form. */
function parsePath(path: string): Target {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const prefix = parts[0] === "api" ? parts.slice(0, 2) : parts.slice(0, 3);
  let rest = parts.slice(prefix.length);
  let namespace = "";
  // /api/v1/namespaces/x/status is the status of Namespace x, not a collection "status" in namespace x.
  const namespaceSubresource = rest.length === 3 && (rest[2] === "status" || rest[2] === "finalize");
  if (rest[0] === "namespaces" && rest.length >= 3 && !namespaceSubresource) {
    namespace = rest[1] ?? "";
    rest = rest.slice(2);
  }
  const [resource = "", name = "", subresource = ""] = rest;
  return {
    collection: `/${prefix.join("/")}/${resource}`,
    apiVersion: prefix.slice(1).join("/"),
    resource,
    namespace,
    name,
    subresource,
  };
}

function patchKind(contentType: string): PatchKind {
  if (contentType.includes("apply-patch")) return "apply";
  if (contentType.includes("json-patch")) return "json";
  if (contentType.includes("strategic-merge-patch")) return "strategic";
  return "merge";
}

function verbOf(
  method: string,
  name: string,
  watch: string | undefined,
  patchType: PatchKind | undefined,
): Verb {
  switch (method) {
    case "GET":
      if (name !== "") return "get";
      return watch === "true" || watch === "1" ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return patchType === "apply" ? "apply" : "patch";
    case "DELETE":
      return name === "" ? "deletecollection" : "delete";
    default:
      return "get";
  }
}

function isObjectBody(body: unknown): body is KubeObject {
  return typeof body === "object" && body !== null && !Array.isArray(body);
}

function objectBody(body: unknown): KubeObject {
  if (!isObjectBody(body) || typeof body.metadata !== "object" || body.metadata === null) {
    throw new Answer(400, "the request body must be an object with metadata");
  }
  return structuredClone(body);
}

function checkResourceVersion(t: Target, rv: string | undefined, existing: KubeObject | undefined): void {
  if (rv && existing && rv !== existing.metadata.resourceVersion) {
    throw new Answer(
      409,
      `Operation cannot be fulfilled on ${t.resource} "${t.name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  }
}

/** True when only metadata or status differ (generation then stays). */
function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = ({ metadata: _m, status: _s, ...rest }: KubeObject & { status?: unknown }) => rest;
  return deepEqual(strip(a), strip(b));
}

function defaultMessage(code: number, r: RecordedRequest): string {
  const what = `${r.resource}${r.name ? ` "${r.name}"` : ""}`;
  switch (code) {
    case 404:
      return `${what} not found`;
    case 409:
      return `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`;
    case 410:
      return "too old resource version";
    case 429:
      return "the server has received too many requests and has asked us to try again later";
    case 500:
      return `Internal error occurred: scripted fault on ${r.verb} ${what}`;
    default:
      return `scripted ${code} on ${r.verb} ${what}`;
  }
}

type Selector = (obj: KubeObject) => boolean;

/** The list/watch query's labelSelector and fieldSelector as one predicate. */
function compileSelector(query: Record<string, string>): Selector {
  let labels: (l: Record<string, string> | undefined) => boolean = () => true;
  if (query.labelSelector) {
    try {
      const matcher = labelSelector(query.labelSelector);
      labels = (l) => matcher.matches(l);
    } catch (err) {
      throw new Answer(400, `invalid label selector "${query.labelSelector}": ${(err as Error).message}`);
    }
  }
  const fields = parseFieldSelector(query.fieldSelector ?? "");
  return (obj) => labels(obj.metadata.labels) && fields(obj);
}

/** Field selectors: `path=value`, `path==value`, `path!=value` on dotted paths (metadata.name, spec.nodeName...). */
function parseFieldSelector(text: string): Selector {
  const tests = text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p): Selector => {
      const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(p);
      if (!m) throw new Answer(400, `invalid field selector "${p}"`);
      const [, path = "", op, value = ""] = m;
      const get = (o: KubeObject) => {
        let v: unknown = o;
        for (const k of path.split(".")) v = (v as Record<string, unknown> | undefined)?.[k];
        return v === undefined || v === null ? "" : String(v);
      };
      return op === "!=" ? (o) => get(o) !== value : (o) => get(o) === value;
    });
  return (obj) => tests.every((t) => t(obj));
}
