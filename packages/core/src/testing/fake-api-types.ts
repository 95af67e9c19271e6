// The vocabulary of the fake API server's public surface: the verbs it records, a recorded request, and the
// shapes of scripts (which requests they match, what they answer). Re-exported by fake-api-server.ts.
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";

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
