// A typed client for any kind: get, list, watch, create, update, patch, server-side apply, status, delete.
// Raw JSON over undici (HTTP/1.1 keep-alive for requests; watches on a connection pool of their own, over HTTP/2
// where the server offers it); authenticated from the kubeconfig (./kubeconfig.ts: KUBECONFIG, in-cluster,
// ~/.kube/config; exec and OIDC plugins through client-node, imported only then). Retries 429 and 5xx with
// backoff; records rest_client_* metrics.
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { type CoreMetrics, globalMetrics } from "../metrics/metrics.ts";
import { sleepOrThrow } from "../util/sleep.ts";
import type {
  ApplyOptions,
  ClientOptions,
  DeleteOptions,
  ListOptions,
  ListResult,
  PatchType,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from "./client-options.ts";
import { type KubeConfigLike, loadKubeConfig } from "./kubeconfig.ts";
import { ListDecoder, type ListEnvelope } from "./list-decoder.ts";
import {
  isMetadataOnly,
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  toPartialObjectMetadata,
} from "./metadata-only.ts";
import { backoff, bodyText, decoded, errorFrom, RETRIABLE_NET, toApiError, watchEvent } from "./response.ts";
import { openTransport, type Transport } from "./transport.ts";

export type {
  ApplyOptions,
  ClientOptions,
  DeleteOptions,
  ListOptions,
  ListResult,
  PatchType,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from "./client-options.ts";
export { loadKubeConfig } from "./kubeconfig.ts";

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};
const AUTH_TTL_MS = 30_000;

interface Send {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Accept header instead of application/json (metadata-only reads). */
  accept?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Reads a 2xx body instead of text + JSON.parse (a list decoded while it arrives). */
  decode?: (body: Readable) => Promise<unknown>;
}

/** Talks to one API server. Create one per process and share it. */
export class Client {
  readonly kubeConfig: KubeConfigLike;
  readonly server: URL;
  private readonly host: string;
  /** The server URL's path without its trailing slash ("" for most servers), prefixed to every call's path. */
  private readonly basePath: string;
  private readonly metrics: CoreMetrics;
  /** The pools, once made; one holder object shared with every withSignal() view, so views reuse them. */
  private readonly transport: { ready?: Promise<Transport> | undefined } = {};
  private readonly userAgent: string;
  private readonly maxAttempts: number;
  private readonly requestTimeoutMs: number;
  private readonly maxConnections: number;
  private readonly http2: boolean;
  private readonly requestsHttp2: boolean;
  private auth: { headers: Record<string, string>; expires: number } | undefined;
  /** Set on views made by withSignal(): every request of the view also aborts with it. */
  private boundSignal: AbortSignal | undefined;

  constructor(options: ClientOptions = {}) {
    this.kubeConfig = options.kubeConfig ?? loadKubeConfig();
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster: set KUBECONFIG or run in a cluster");
    this.server = new URL(cluster.server);
    this.host = this.server.host;
    this.basePath = this.server.pathname.replace(/\/$/, "");
    this.metrics = options.metrics ?? globalMetrics();
    this.userAgent = options.userAgent ?? "capstan/0.1";
    this.maxAttempts = options.maxAttempts ?? 5;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.maxConnections = options.maxConnections ?? 32;
    if (!Number.isInteger(this.maxConnections) || this.maxConnections < 1) {
      throw new Error(
        `ClientOptions.maxConnections must be a whole number >= 1, not ${options.maxConnections}`,
      );
    }
    this.http2 = options.http2 ?? true;
    this.requestsHttp2 = options.requestsHttp2 ?? false;
  }

  /**
   * A view of this client (same connections and credentials) whose every request and watch also aborts
   * when `signal` does. A reconcile's ctx.client is such a view of its signal, so a reconcile that forgets
   * to pass the signal still cannot write after leadership is lost or its deadline passed.
   */
  withSignal(signal: AbortSignal): Client {
    const view = Object.create(this) as Client;
    view.boundSignal = this.boundSignal ? AbortSignal.any([this.boundSignal, signal]) : signal;
    return view;
  }

  /** `signal` combined with the view's bound signal, if any. */
  private bound(signal: AbortSignal | undefined): AbortSignal | undefined {
    if (this.boundSignal === undefined) return signal;
    return signal === undefined ? this.boundSignal : AbortSignal.any([signal, this.boundSignal]);
  }

  /** Closes idle connections; in-flight requests (and watches) finish. Views share them with their client. */
  async close(): Promise<void> {
    const t = this.transport.ready;
    this.transport.ready = undefined;
    if (t) {
      const { requests, watches } = await t;
      await Promise.all([requests.close(), watches.close()]);
    }
  }
  /** The connection pools, opened on first use (see transport.ts) and shared with every withSignal() view. */
  private dispatchers(): Promise<Transport> {
    this.transport.ready ??= openTransport(this.kubeConfig, {
      http2: this.http2,
      requestsHttp2: this.requestsHttp2,
      maxConnections: this.maxConnections,
    });
    return this.transport.ready;
  }

  /** The URL path of a collection or object (and optional subresource). */
  path(kind: Kind, namespace?: string, name?: string, subresource?: string): string {
    let p = kind.group === "" ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
    if (kind.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${kind.plural}`;
    if (name !== undefined) {
      if (name === "") throw new Error(`${kind.kind}: an object name is required`);
      p += `/${encodeURIComponent(name)}`;
    }
    if (subresource !== undefined) p += `/${subresource}`;
    return p;
  }

  async get<T extends KubeObject>(
    kind: Kind<T>,
    name: string,
    namespace?: string,
    signal?: AbortSignal,
  ): Promise<T> {
    const obj = (await this.send({
      method: "GET",
      path: this.path(kind, this.ns(kind, namespace), name),
      accept: isMetadataOnly(kind) ? METADATA_ACCEPT : undefined,
      signal,
    })) as T;
    return isMetadataOnly(kind) ? (toPartialObjectMetadata(obj) as T) : obj;
  }

  /**
   * One page of a list. The body is decoded while it arrives (see ListDecoder): items are parsed in
   * batches during the transfer, and the body is never held whole.
   */
  async listPage<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ListResult<T>> {
    const partial = isMetadataOnly(kind);
    const transform = options.transform;
    const items: T[] = [];
    const onItems = (batch: T[]) => {
      for (let item of batch) {
        if (partial) item = toPartialObjectMetadata(item) as T;
        else {
          item.apiVersion ??= kind.apiVersion;
          item.kind ??= kind.kind;
        }
        items.push(transform ? (transform(item) as T) : item);
      }
    };
    const envelope = (await this.send({
      method: "GET",
      path: this.path(kind, options.namespace),
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit || undefined,
        continue: options.continue,
        resourceVersion: options.resourceVersion,
        resourceVersionMatch: options.resourceVersionMatch,
      },
      accept: partial ? METADATA_LIST_ACCEPT : undefined,
      signal: options.signal,
      decode: (body) =>
        new Promise((resolve, reject) => {
          // Events, not an async iterator: a 20 MB list arrives in ~1,000 chunks, and the iterator's
          // promise and microtasks per chunk showed in profiles of a 10,000-object sync.
          const decoder = new ListDecoder<T>(onItems, {
            dropManagedFields: options.dropManagedFields === true,
          });
          body.on("data", (chunk: Buffer) => {
            try {
              decoder.write(chunk);
            } catch (err) {
              body.destroy(err as Error);
            }
          });
          body.once("error", reject);
          body.once("end", () => {
            try {
              resolve(decoder.end());
            } catch (err) {
              reject(err);
            }
          });
        }),
    })) as ListEnvelope;
    const cont = envelope.metadata?.continue;
    return {
      items,
      resourceVersion: envelope.metadata?.resourceVersion ?? "",
      ...(cont ? { continue: cont } : {}),
    };
  }

  /** Every object, following continue tokens (page size `limit`, default 500). */
  async list<T extends KubeObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    const first = { ...options, limit: options.limit ?? 500 };
    // Later pages carry the continue token alone: the server rejects a resourceVersion(Match) with it.
    const { resourceVersion: _rv, resourceVersionMatch: _match, ...next } = first;
    let cont: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.listPage(kind, cont === undefined ? first : { ...next, continue: cont });
      for (const item of page.items) items.push(item);
      resourceVersion = page.resourceVersion;
      cont = page.continue;
    } while (cont);
    return { items, resourceVersion };
  }

  /**
   * Streams watch events until the server ends the call, `signal` aborts, or the connection fails
   * (then the iterator throws). Watch ERROR events (e.g. 410 Expired) are yielded, not thrown.
   */
  async *watch<T extends KubeObject>(
    kind: Kind<T>,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    const bound = this.boundSignal;
    if (bound !== undefined) {
      options = { ...options, signal: options.signal ? AbortSignal.any([options.signal, bound]) : bound };
    }
    const path = this.path(kind, options.namespace);
    const target = this.target(path, {
      watch: true,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: options.allowWatchBookmarks,
      sendInitialEvents: options.sendInitialEvents,
      resourceVersionMatch: options.resourceVersionMatch,
      timeoutSeconds: options.timeoutSeconds,
    });
    const started = performance.now();
    let res: Dispatcher.ResponseData;
    try {
      res = await (await this.dispatchers()).watches.request({
        ...target,
        method: "GET",
        headers: isMetadataOnly(kind)
          ? { ...(await this.headers()), accept: METADATA_ACCEPT }
          : await this.headers(),
        signal: options.signal ?? null,
        bodyTimeout: 0,
        headersTimeout: this.requestTimeoutMs,
      });
    } catch (err) {
      this.observe("GET", 0, started);
      if (options.signal?.aborted) return;
      throw toApiError(err);
    }
    this.observe("GET", res.statusCode, started);
    if (res.statusCode !== 200) throw await errorFrom(res, "GET", this.basePath + path);
    const partial = isMetadataOnly(kind);
    let buffer = "";
    res.body.setEncoding("utf8");
    try {
      for await (const chunk of res.body as AsyncIterable<string>) {
        buffer += chunk;
        let nl = buffer.indexOf("\n");
        while (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim() !== "") yield watchEvent<T>(line, partial);
          nl = buffer.indexOf("\n");
        }
      }
    } catch (err) {
      if (options.signal?.aborted) return;
      throw toApiError(err);
    } finally {
      res.body.destroy();
    }
    if (buffer.trim() !== "") yield watchEvent<T>(buffer, partial);
  }

  async create<T extends KubeObject>(kind: Kind<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return (await this.send({
      method: "POST",
      path: this.path(kind, this.ns(kind, obj.metadata.namespace)),
      query: writeQuery(options),
      body: withTypeMeta(kind, obj),
      signal: options.signal,
    })) as T;
  }

  /** Replaces the object (PUT); fails with a conflict when metadata.resourceVersion is stale. */
  async update<T extends KubeObject>(kind: Kind<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return (await this.send({
      method: "PUT",
      path: this.path(kind, this.ns(kind, obj.metadata.namespace), obj.metadata.name ?? ""),
      query: writeQuery(options),
      body: withTypeMeta(kind, obj),
      signal: options.signal,
    })) as T;
  }

  /** Replaces the status subresource (PUT .../status). */
  async updateStatus<T extends KubeObject>(kind: Kind<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return (await this.send({
      method: "PUT",
      path: this.path(kind, this.ns(kind, obj.metadata.namespace), obj.metadata.name ?? "", "status"),
      query: writeQuery(options),
      body: withTypeMeta(kind, obj),
      signal: options.signal,
    })) as T;
  }

  async patch<T extends KubeObject>(
    kind: Kind<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType = "merge",
    options: WriteOptions & { subresource?: string } = {},
  ): Promise<T> {
    return (await this.send({
      method: "PATCH",
      path: this.path(kind, this.ns(kind, namespace), name, options.subresource),
      query: writeQuery(options),
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      signal: options.signal,
    })) as T;
  }

  async patchStatus<T extends KubeObject>(
    kind: Kind<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType = "merge",
    options: WriteOptions = {},
  ): Promise<T> {
    return this.patch(kind, name, namespace, patch, type, { ...options, subresource: "status" });
  }

  /** Server-side apply: `obj` is the full desired state this field manager owns. */
  async apply<T extends KubeObject>(kind: Kind<T>, obj: T, options: ApplyOptions): Promise<T> {
    return this.sendApply(kind, obj, options, undefined);
  }

  /** Server-side apply of the status subresource. */
  async applyStatus<T extends KubeObject>(kind: Kind<T>, obj: T, options: ApplyOptions): Promise<T> {
    return this.sendApply(kind, obj, options, "status");
  }

  async delete(kind: Kind, name: string, namespace?: string, options: DeleteOptions = {}): Promise<void> {
    const { signal, dryRun, ...rest } = options;
    const body =
      Object.keys(rest).length === 0 && !dryRun
        ? undefined
        : { apiVersion: "v1", kind: "DeleteOptions", ...rest, ...(dryRun ? { dryRun: ["All"] } : {}) };
    await this.send({
      method: "DELETE",
      path: this.path(kind, this.ns(kind, namespace), name),
      body,
      signal,
    });
  }

  /**
   * A GET of any path (e.g. "/version", "/readyz"), parsed as JSON when the answer is JSON. The path is sent as
   * given (under the server URL's own path): percent-encode what needs it.
   */
  async raw(path: string, signal?: AbortSignal): Promise<unknown> {
    return this.send({ method: "GET", path, signal });
  }

  private sendApply<T extends KubeObject>(
    kind: Kind<T>,
    obj: T,
    options: ApplyOptions,
    subresource: string | undefined,
  ): Promise<T> {
    const name = obj.metadata.name;
    if (!name) throw new Error(`apply ${kind.kind}: metadata.name is required`);
    return this.send({
      method: "PATCH",
      path: this.path(kind, this.ns(kind, obj.metadata.namespace), name, subresource),
      query: { ...writeQuery(options), force: options.force ? true : undefined },
      body: withTypeMeta(kind, obj),
      contentType: "application/apply-patch+yaml",
      signal: options.signal,
    }) as Promise<T>;
  }

  private ns(kind: Kind, namespace: string | undefined): string | undefined {
    if (kind.namespaced && !namespace) throw new Error(`${kind.kind} is namespaced: a namespace is required`);
    return kind.namespaced ? namespace : undefined;
  }

  /**
   * Where a call goes: the server's origin, and the path (under the server URL's own path, if any) with its query,
   * form-encoded as URLSearchParams encodes it. Handed to the pool as origin and path, not as a URL, which undici
   * would parse a second time (`new URL` and that parse: ~3 µs a request, docs/performance.md).
   */
  private target(path: string, query: Send["query"] = {}): { origin: string; path: string } {
    const search = new URLSearchParams();
    for (const k in query) {
      const v = query[k];
      if (v !== undefined && v !== "") search.set(k, String(v));
    }
    const full = this.basePath + path;
    return { origin: this.server.origin, path: search.size === 0 ? full : `${full}?${search}` };
  }

  private async headers(): Promise<Record<string, string>> {
    const now = Date.now();
    if (this.auth === undefined || this.auth.expires <= now) {
      const opts: { headers: Record<string, string> } = { headers: {} };
      await this.kubeConfig.applyToHTTPSOptions(opts as never);
      this.auth = { headers: opts.headers, expires: now + AUTH_TTL_MS };
    }
    return { ...this.auth.headers, "user-agent": this.userAgent, accept: "application/json" };
  }

  private observe(method: string, code: number, started: number): void {
    this.metrics.restClientRequests.inc({
      code: code === 0 ? "<error>" : String(code),
      method,
      host: this.host,
    });
    this.metrics.restClientRequestDuration.observe(
      { verb: method, host: this.host },
      (performance.now() - started) / 1000,
    );
  }

  private async send(req: Send): Promise<unknown> {
    if (this.boundSignal !== undefined) req = { ...req, signal: this.bound(req.signal) };
    const target = this.target(req.path, req.query);
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      let res: Dispatcher.ResponseData;
      try {
        const headers = await this.headers();
        if (payload !== undefined) headers["content-type"] = req.contentType ?? "application/json";
        // As Go's transport (so client-go) asks: kube-apiserver compresses responses over 128 KiB (lists),
        // which Node.js then receives as a few hundred frames instead of thousands and inflates off the
        // main thread.
        headers["accept-encoding"] = "gzip";
        if (req.accept !== undefined) headers.accept = req.accept;
        res = await (await this.dispatchers()).requests.request({
          ...target,
          method: req.method,
          headers,
          body: payload ?? null,
          signal: req.signal ?? null,
          headersTimeout: this.requestTimeoutMs,
          bodyTimeout: this.requestTimeoutMs,
        });
      } catch (err) {
        this.observe(req.method, 0, started);
        if (req.signal?.aborted) throw req.signal.reason;
        const code = (err as { code?: string }).code ?? "";
        const retriable = code === "ECONNREFUSED" || (req.method === "GET" && RETRIABLE_NET.has(code));
        if (retriable && attempt < this.maxAttempts) {
          await sleepOrThrow(backoff(attempt, undefined), req.signal);
          continue;
        }
        throw toApiError(err);
      }
      this.observe(req.method, res.statusCode, started);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        if (req.decode !== undefined) {
          try {
            return await req.decode(decoded(res));
          } catch (err) {
            res.body.destroy();
            if (req.signal?.aborted) throw req.signal.reason;
            throw err instanceof SyntaxError ? err : toApiError(err);
          }
        }
        const text = await bodyText(res);
        if (text === "") return undefined;
        return (res.headers["content-type"] ?? "").toString().includes("json") ? JSON.parse(text) : text;
      }
      const err = await errorFrom(res, req.method, this.basePath + req.path);
      if (res.statusCode === 401 && attempt === 1) {
        this.auth = undefined; // a rotated token: fetch credentials again once
        continue;
      }
      const retriable =
        res.statusCode === 429 ||
        (res.statusCode >= 500 && (req.method === "GET" || err.retryAfterSeconds !== undefined));
      if (retriable && attempt < this.maxAttempts && !req.signal?.aborted) {
        await sleepOrThrow(backoff(attempt, err.retryAfterSeconds), req.signal);
        continue;
      }
      throw err;
    }
  }
}
/** The query of a write: its field manager and dry run. */
function writeQuery(options: WriteOptions): NonNullable<Send["query"]> {
  return { fieldManager: options.fieldManager, dryRun: options.dryRun ? "All" : undefined };
}

/** The object with the kind's apiVersion and kind set (a copy when they were missing). */
function withTypeMeta<T extends KubeObject>(kind: Kind, obj: T): T {
  if (obj.apiVersion === kind.apiVersion && obj.kind === kind.kind) return obj;
  return { ...obj, apiVersion: kind.apiVersion, kind: kind.kind };
}
