// Status writes without steady-state traffic: the JSON merge patch of a custom resource's status subresource,
// computed only when the status a reconcile derived differs from the live one.
import { isSubset } from "../client/apply.ts";

/**
 * The JSON merge patch (`{ status }`) turning `live` into `next`, or undefined when they are equal: a steady-state
 * reconcile writes nothing. A top-level field `next` lacks is set to null, so it is removed; nested objects and
 * arrays are sent whole. Send it with `client.patchStatus(kind, name, namespace, patch, "merge")`.
 */
export function statusMergePatch<S extends object>(
  live: S | undefined,
  next: S,
): { status: Record<string, unknown> } | undefined {
  const old = (live ?? {}) as Record<string, unknown>;
  const now = next as Record<string, unknown>;
  if (isSubset(now, old) && isSubset(old, now)) return undefined;
  const patch: Record<string, unknown> = { ...now };
  for (const key of Object.keys(old)) if (!(key in now)) patch[key] = null;
  return { status: patch };
}
