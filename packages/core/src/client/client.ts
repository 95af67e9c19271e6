// A typed client for any kind: get, list, watch, create, update, patch, server-side apply, status, delete.
// Raw JSON over undici (HTTP/2 where the server offers it, else HTTP/1.1 keep-alive), with watches on a
// connection pool of their own; authenticated from the kubeconfig (./kubeconfig.ts: KUBECONFIG, in-cluster,
// ~/.kube/config; exec and OIDC plugins through client-node, imported only then). Retries 429 and 5xx with
// backoff; records rest_client_* metrics.
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import { createGunzip, gunzip } from "node:zlib";
import { Agent, type Dispatcher, request } from "undici";
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import { type CoreMetrics, globalMetrics } from "../metrics/metrics.ts";
import { sleepOrThrow } from "../util/sleep.ts";
import { ApiError, type ApiStatus } from "./errors.ts";
import { type KubeConfigLike, loadKubeConfig } from "./kubeconfig.ts";
import { ListDecoder, type ListEnvelope } from "./list-decoder.ts";
import {
  isMetadataOnly,
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  toPartialObjectMetadata,
} from "./metadata-only.ts";

export { loadKubeConfig } from "./kubeconfig.ts";

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; 0 or unset means the server's default (everything). */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  signal?: AbortSignal;
  /**
   * Applied to every item as soon as its batch is parsed, while the rest of the list is still arriving
   * (e.g. an informer's managedFields stripping), so untransformed items never pile up.
   */
  transform?: (item: KubeObject) => KubeObject;
  /** Leave `metadata.managedFields` out of the items: never parsed (an informer drops them anyway). */
  dropManagedFields?: boolean;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
  /** Set when more pages follow. */
  continue?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /**
   * A streaming list (WatchList): ADDED events for every object first, then a BOOKMARK annotated
   * "k8s.io/initial-events-end". Needs `resourceVersionMatch: "NotOlderThan"`.
   */
  sendInitialEvents?: boolean;
  resourceVersionMatch?: "NotOlderThan";
  /** Server-side timeout of the watch call. */
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export type WatchEvent<T> =
  | { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }
  | { type: "ERROR"; object: ApiStatus };

export interface WriteOptions {
  /** Field manager recorded in managedFields. */
  fieldManager?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface ApplyOptions extends WriteOptions {
  fieldManager: string;
  /** Take ownership of fields other managers own (conflicts are errors otherwise). */
  force?: boolean;
}

export type PatchType = "merge" | "json" | "strategic";

export interface DeleteOptions {
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** Defaults to `loadKubeConfig()`; a client-node `KubeConfig` works too. */
  kubeConfig?: KubeConfigLike;
  metrics?: CoreMetrics;
  userAgent?: string;
  /** Attempts for a retriable failure (429, 5xx, connection refused); default 5. */
  maxAttempts?: number;
  /** Per-request timeout for everything but watches; default 60 s. */
  requestTimeoutMs?: number;
  /**
   * Most connections to the API server for requests other than watches; default 32. Requests beyond it
   * wait for a free connection (over HTTP/2 each connection carries up to 100 requests at once). Watches
   * are not counted: they have a pool of their own without a cap, so they never make a request wait.
   */
  maxConnections?: number;
  /**
   * Offer HTTP/2 when connecting over TLS (the server chooses; kube-apiserver picks it); default true.
   * false keeps to HTTP/1.1, as client-go's DISABLE_HTTP2 does.
   */
  http2?: boolean;
}

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};
const AUTH_TTL_MS = 30_000;
const RETRIABLE_NET = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ETIMEDOUT"]);

/**
 * HTTP/2 flow-control windows: how much of a response the server may send before the client acknowledges it.
 * undici's defaults (256 KiB per stream, 512 KiB per connection) make the server stop and wait for an
 * acknowledgement every few hundred KiB, a round trip each time: an uncompressed 15 MB list of 10,000
 * ConfigMaps took 230-310 ms on a local API server against 150-190 ms over HTTP/1.1, 190-250 ms with these
 * windows (docs/performance.md); the farther the server, the longer each wait. Go's HTTP/2 transport, and so
 * client-go, announces 4 MiB per stream. At most this much of a body the client does not read yet waits in
 * memory per stream (a watch whose consumer is busy).
 */
const H2_STREAM_WINDOW = 4 << 20;
/** The connection's window, shared by its streams (Go's is 1 GiB): four streams at full speed. */
const H2_CONNECTION_WINDOW = 16 << 20;

/** The connection pools of a client: requests (capped) and watches (uncapped). */
interface Transport {
  requests: Dispatcher;
  watches: Dispatcher;
}

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
  private readonly metrics: CoreMetrics;
  /** The pools, once made; one holder object shared with every withSignal() view, so views reuse them. */
  private readonly transport: { ready?: Promise<Transport> | undefined } = {};
  private readonly userAgent: string;
  private readonly maxAttempts: number;
  private readonly requestTimeoutMs: number;
  private readonly maxConnections: number;
  private readonly http2: boolean;
  private auth: { headers: Record<string, string>; expires: number } | undefined;
  /** Set on views made by withSignal(): every request of the view also aborts with it. */
  private boundSignal: AbortSignal | undefined;

  constructor(options: ClientOptions = {}) {
    this.kubeConfig = options.kubeConfig ?? loadKubeConfig();
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster: set KUBECONFIG or run in a cluster");
    this.server = new URL(cluster.server);
    this.host = this.server.host;
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

  /**
   * Two keep-alive pools with the kubeconfig's TLS material (read once): one for requests, at most
   * `maxConnections`, and one for watches, uncapped.
   *
   * Why two: a watch holds its connection (HTTP/1.1) or a stream (HTTP/2) for minutes. Sharing one capped
   * pool, watches filled it (32 of them over HTTP/1.1, 3200 over HTTP/2: 32 connections x 100 streams) and
   * Lease renewals then waited for a watch to end, until leadership was lost. HTTP/2 alone (client-go's
   * answer: everything multiplexed on one connection) does not settle it: it is used only when the server
   * and every proxy on the way pick it through ALPN (never over plain HTTP), and a connection's streams are
   * capped too (undici's 100, less if the server advertises less; kube-apiserver advertises 1000). A
   * separate pool for watches does not depend on the protocol: a request never queues behind a watch.
   * Both pools still use HTTP/2 when the server picks it, so many watches share few connections (the watch
   * pool opens another when one is full). A watch whose consumer is slow does not stall the others on its
   * connection: Node.js returns the connection-level flow-control window as data arrives; only the slow
   * stream's own window fills.
   */
  private dispatchers(): Promise<Transport> {
    this.transport.ready ??= (async () => {
      const tls: {
        ca?: Buffer;
        cert?: Buffer;
        key?: Buffer;
        rejectUnauthorized?: boolean;
        servername?: string;
      } = {};
      await this.kubeConfig.applyToHTTPSOptions(tls as never);
      const connect: Record<string, unknown> = {};
      for (const k of ["ca", "cert", "key", "rejectUnauthorized", "servername"] as const) {
        if (tls[k] !== undefined) connect[k] = tls[k];
      }
      const common = {
        connect,
        keepAliveTimeout: 30_000,
        allowH2: this.http2,
        // undici 8.13 reads the stream window from this option only (its typings point to
        // h2Options.settings.initialWindowSize, which it does not apply); a test checks what the server gets.
        initialWindowSize: H2_STREAM_WINDOW,
        h2Options: { connectionWindowSize: H2_CONNECTION_WINDOW },
      };
      return {
        requests: new Agent({ ...common, connections: this.maxConnections }),
        watches: new Agent(common),
      };
    })();
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
    const url = this.url(this.path(kind, options.namespace), {
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
      res = await request(url, {
        dispatcher: (await this.dispatchers()).watches,
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
    if (res.statusCode !== 200) throw await errorFrom(res, "GET", url.pathname);
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

  /** A GET of any path (e.g. "/version", "/readyz"), parsed as JSON when the answer is JSON. */
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

  private url(path: string, query: Send["query"] = {}): URL {
    const url = new URL(this.server.pathname.replace(/\/$/, "") + path, this.server);
    for (const [k, v] of Object.entries(query))
      if (v !== undefined && v !== "") url.searchParams.set(k, String(v));
    return url;
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
    const url = this.url(req.path, req.query);
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
        res = await request(url, {
          dispatcher: (await this.dispatchers()).requests,
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
      const err = await errorFrom(res, req.method, url.pathname);
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

const gunzipAsync = promisify(gunzip);

function isGzip(res: Dispatcher.ResponseData): boolean {
  return (
    String(res.headers["content-encoding"] ?? "")
      .trim()
      .toLowerCase() === "gzip"
  );
}

/** A response body as sent, or inflated when the server compressed it. */
function decoded(res: Dispatcher.ResponseData): Readable {
  if (!isGzip(res)) return res.body;
  const inflate = createGunzip({ chunkSize: 128 * 1024 });
  res.body.once("error", (err) => inflate.destroy(err));
  inflate.once("close", () => res.body.destroy());
  return res.body.pipe(inflate);
}

/** A response body as text, inflated when the server compressed it (an empty body stays empty). */
async function bodyText(res: Dispatcher.ResponseData): Promise<string> {
  if (!isGzip(res)) return res.body.text();
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return raw.length === 0 ? "" : (await gunzipAsync(raw)).toString("utf8");
}

/** One line of a watch stream; with `partial`, objects reduced to metadata (see toPartialObjectMetadata). */
function watchEvent<T>(line: string, partial: boolean): WatchEvent<T> {
  const event = JSON.parse(line) as WatchEvent<T>;
  if (partial && event.type !== "ERROR")
    event.object = toPartialObjectMetadata(event.object as KubeObject) as T;
  return event;
}

function writeQuery(options: WriteOptions): NonNullable<Send["query"]> {
  return { fieldManager: options.fieldManager, dryRun: options.dryRun ? "All" : undefined };
}

function withTypeMeta<T extends KubeObject>(kind: Kind, obj: T): T {
  if (obj.apiVersion === kind.apiVersion && obj.kind === kind.kind) return obj;
  return { ...obj, apiVersion: kind.apiVersion, kind: kind.kind };
}

/** Exponential backoff 200 ms x 2^n (cap 10 s) with jitter, or the server's Retry-After (cap 10 s). */
function backoff(attempt: number, retryAfterSeconds: number | undefined): number {
  if (retryAfterSeconds !== undefined) return Math.min(retryAfterSeconds, 10) * 1000;
  const base = Math.min(200 * 2 ** (attempt - 1), 10_000);
  return base / 2 + Math.random() * (base / 2);
}

async function errorFrom(res: Dispatcher.ResponseData, method: string, path: string): Promise<ApiError> {
  const text = await bodyText(res).catch(() => "");
  let status: ApiStatus | undefined;
  try {
    status = JSON.parse(text) as ApiStatus;
  } catch {
    status = undefined;
  }
  const retryAfter = Number(res.headers["retry-after"]);
  const message = status?.message ?? (text || `HTTP ${res.statusCode}`);
  return new ApiError(
    res.statusCode,
    status?.reason ?? "",
    `${method} ${path}: ${message}`,
    status,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

function toApiError(err: unknown): Error {
  if (err instanceof ApiError) return err;
  if ((err as { name?: string }).name === "AbortError") return err as Error;
  const e = err as { code?: string; message?: string };
  return new ApiError(
    0,
    e.code ?? "Transport",
    `transport error: ${e.message ?? String(err)}`,
    undefined,
    undefined,
  );
}
