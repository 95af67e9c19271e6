// Writes the API server refuses for good: a 400, 403 (RBAC, a ResourceQuota, an admission policy), 413 or 422 (an
// object over a size limit, a field it rejects) will be refused again until something outside the reconcile changes,
// so the reconciler reports it (Degraded, naming the object and the server's own message, and an Event) and goes on,
// instead of throwing into the work queue's backoff. Conflicts, throttling, server errors and lost connections are
// not refusals: they are thrown and retried.
import { isApiError, type KubeObject } from "@capstan/core";
import type { Problem } from "./status.ts";

/** The Degraded reason of a refused write. */
export const WRITE_REFUSED = "WriteRefused";

const REFUSAL_CODES = new Set([400, 403, 413, 422]);

/** True when `err` is the API server refusing the request for good (see the module comment). */
export function isRefusal(err: unknown): boolean {
  return isApiError(err) && REFUSAL_CODES.has(err.code);
}

/** The server's own words (its Status message), without the client's method and path. */
export function serverMessage(err: unknown): string {
  if (isApiError(err)) return err.status?.message ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

/** The problem a refused write of `obj` is reported as. */
export function refusalProblem(obj: KubeObject, err: unknown, reason = WRITE_REFUSED): Problem {
  const where = `${obj.kind ?? ""} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name ?? ""}`;
  return {
    reason,
    message: `the API server refused ${where}: ${serverMessage(err)}; the operator tries again at its next reconcile, so fix what the message names (a ResourceQuota, the operator's RBAC, an admission policy, an object's size) and it is written then`,
  };
}
