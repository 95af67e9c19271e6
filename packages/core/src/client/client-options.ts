// The options and results of the Client's calls: list, watch, writes, server-side apply, delete, and the
// Client's own construction. Re-exported by client.ts.
import type { KubeObject } from "../api/object.ts";
import type { CoreMetrics } from "../metrics/metrics.ts";
import type { ApiStatus } from "./errors.ts";
import type { KubeConfigLike } from "./kubeconfig.ts";

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
   * Offer HTTP/2 for watches when connecting over TLS (the server chooses; kube-apiserver picks it), so that many
   * watches share few connections; default true. false keeps everything to HTTP/1.1, as client-go's DISABLE_HTTP2
   * does.
   */
  http2?: boolean;
  /**
   * Offer HTTP/2 for requests other than watches too (with `http2`); default false: they go over HTTP/1.1
   * keep-alive connections (at most `maxConnections`, one request each at a time). Node.js spends less CPU
   * per request over undici's HTTP/1.1 than over its HTTP/2 streams (0.65-0.98x in the controller benchmark's
   * request mix on a loaded machine, docs/performance.md), and lists arrive faster without HTTP/2's flow
   * control.
   */
  requestsHttp2?: boolean;
}
