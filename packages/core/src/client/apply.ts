// Server-side apply that skips the request when the live object already matches: steady state makes no writes.
import { createHash } from "node:crypto";
import type { Kind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Client } from "./client.ts";

/** Annotation carrying {@link desiredHash} of what was last applied. */
export const APPLIED_HASH_ANNOTATION = "capstan.dev/applied-hash";

/**
 * A short (16 hex digits) sha256 of `desired` in canonical JSON (keys sorted at every level, undefined fields
 * dropped), ignoring {@link APPLIED_HASH_ANNOTATION} itself. Stable under key order.
 */
export function desiredHash(desired: KubeObject): string {
  const { annotations: all, ...rest } = desired.metadata;
  const { [APPLIED_HASH_ANNOTATION]: _, ...annotations } = all ?? {};
  const metadata = Object.keys(annotations).length === 0 ? rest : { ...rest, annotations };
  return stableHash({ ...desired, metadata });
}

/**
 * A short (16 hex digits) sha256 of any JSON value in canonical form (keys sorted at every level, undefined
 * fields dropped): equal for equal values whatever their key order. For change-detection annotations.
 */
export function stableHash(value: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(value)))
    .digest("hex")
    .slice(0, 16);
}

/**
 * True when every field set in `desired` has the same value in `live`: objects are compared as recursive
 * subsets (fields only `live` has, such as server defaults and status, are ignored), arrays must have the same
 * length and be element-wise subsets, scalars must be identical (`===`, so 1 and "1" differ). An undefined
 * field in `desired` is "not set"; a null one matches a missing or null live field.
 *
 * Write desired state in the form the server stores (e.g. quantities as "1Gi", not "1073741824"), or the
 * comparison never matches and every reconcile re-applies (harmless, but a request each time).
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (desired === undefined) return true;
  if (desired === null) return live === null || live === undefined;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) && live.length === desired.length && desired.every((d, i) => isSubset(d, live[i]))
    );
  }
  if (typeof desired === "object") {
    if (live === null || typeof live !== "object" || Array.isArray(live)) return false;
    const l = live as Record<string, unknown>;
    return Object.entries(desired).every(([k, v]) => isSubset(v, l[k]));
  }
  return desired === live;
}

/**
 * True when `desired` must be applied: `live` is missing, or its `capstan.dev/applied-hash` annotation differs
 * from the hash of desired (desired changed since the last apply, including a field that was removed), or `live`
 * drifted from desired (someone else changed a field we set).
 */
export function needsApply(desired: KubeObject, live: KubeObject | undefined): boolean {
  if (live === undefined) return true;
  const hash = desiredHash(desired);
  // Fast path; the subset check below also covers it, as the stamped copy carries the hash.
  if (live.metadata.annotations?.[APPLIED_HASH_ANNOTATION] !== hash) return true;
  return !isSubset(withHash(desired, hash), live);
}

/** What {@link applyIfChanged} did: `object` is the applied result, or `live` when nothing was sent. */
export interface ApplyResult<T> {
  applied: boolean;
  object: T;
}

/**
 * Server-side apply of `desired` (stamped with the `capstan.dev/applied-hash` annotation) only when
 * {@link needsApply}; otherwise returns `live` without any request.
 *
 * Why: a reconcile that changes nothing must make zero writes, or every resync and every status update of a
 * child wakes the controller to write again, loading the API server and etcd for nothing. Comparing desired
 * with live is not enough on its own, in two ways, hence both checks:
 * - a field removed from desired is still on the live object (SSA removes it only when we apply), so a subset
 *   check alone would never apply the removal; the hash of desired, recorded on the object, changes and does;
 * - a field we own that someone else changed (drift) leaves the hash untouched; the subset check sees it.
 * Server defaults (fields only live has) do not count as drift.
 */
export async function applyIfChanged<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  desired: T,
  live: T | undefined,
  options: { fieldManager: string; force?: boolean },
): Promise<ApplyResult<T>> {
  if (live !== undefined && !needsApply(desired, live)) return { applied: false, object: live };
  const object = await client.apply(kind, withHash(desired, desiredHash(desired)), {
    fieldManager: options.fieldManager,
    ...(options.force === undefined ? {} : { force: options.force }),
  });
  return { applied: true, object };
}

/** A copy of `desired` carrying the hash annotation (desired itself is not modified). */
function withHash<T extends KubeObject>(desired: T, hash: string): T {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      annotations: { ...desired.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash },
    },
  };
}

/** `value` with object keys sorted recursively, so JSON.stringify is canonical. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = canonical(v);
  }
  return out;
}
