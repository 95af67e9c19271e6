// The Kubernetes REST protocol as the fake API server reads and answers it: failure Statuses and their reasons,
// URL paths (collection, namespace, name, subresource), verbs from methods, resourceVersion preconditions, the
// 1 MiB size limit of Secrets and ConfigMaps, and label and field selectors. Pure functions, no state.

import type { Kind } from "../api/kinds.ts";
import { labelSelector } from "../api/labels.ts";
import type { KubeObject } from "../api/object.ts";
import type { PatchKind, RecordedRequest, Verb } from "./fake-api-types.ts";

/** Where a request points: a collection path, and the namespace, name and subresource in it. */
export interface Target {
  collection: string;
  apiVersion: string;
  resource: string;
  namespace: string;
  name: string;
  subresource: string;
}

/** The Status reason the API server gives with each HTTP code. */
export const REASONS: Record<number, string> = {
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
export class Answer extends Error {
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
export function checkSize(kind: string | undefined, obj: KubeObject): void {
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

/** Parses /api/v1[/namespaces/ns]/plural[/name[/sub]] and the /apis/group/version form. */
export function parsePath(path: string): Target {
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

/** How a PATCH body is read, from the request's content type. */
export function patchKind(contentType: string): PatchKind {
  if (contentType.includes("apply-patch")) return "apply";
  if (contentType.includes("json-patch")) return "json";
  if (contentType.includes("strategic-merge-patch")) return "strategic";
  return "merge";
}

/** The RBAC verb of a request, from its method, name, `watch` query and patch type. */
export function verbOf(
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

/** True for a JSON object (not an array, not null). */
export function isObjectBody(body: unknown): body is KubeObject {
  return typeof body === "object" && body !== null && !Array.isArray(body);
}

/** A copy of a request body that must be an object with metadata; a 400 otherwise. */
export function objectBody(body: unknown): KubeObject {
  if (!isObjectBody(body) || typeof body.metadata !== "object" || body.metadata === null) {
    throw new Answer(400, "the request body must be an object with metadata");
  }
  return structuredClone(body);
}

/** A 409 when the request names a resourceVersion other than the stored one (optimistic concurrency). */
export function checkResourceVersion(
  t: Target,
  rv: string | undefined,
  existing: KubeObject | undefined,
): void {
  if (rv && existing && rv !== existing.metadata.resourceVersion) {
    throw new Answer(
      409,
      `Operation cannot be fulfilled on ${t.resource} "${t.name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  }
}

/** The message the API server would give a scripted failure of `code` on this request. */
export function defaultMessage(code: number, r: RecordedRequest): string {
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

/** A predicate on objects (a list or watch query's selectors). */
export type Selector = (obj: KubeObject) => boolean;

/** The list/watch query's labelSelector and fieldSelector as one predicate. */
export function compileSelector(query: Record<string, string>): Selector {
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
