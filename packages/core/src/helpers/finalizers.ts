// Finalizers: add, remove and run cleanup before deletion, the controller-runtime way, without lost updates.

import type { Kind } from "../api/kinds.ts";
import { type KubeObject, keyOf } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { ApiError, isInvalid, isNotFound } from "../client/errors.ts";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** True when `obj.metadata.finalizers` contains `finalizer`. */
export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** True once deletion was requested (`metadata.deletionTimestamp` is set); finalizers still hold the object. */
export function isBeingDeleted(obj: KubeObject): boolean {
  return Boolean(obj.metadata.deletionTimestamp);
}

/**
 * Throws unless `finalizer` is a domain-qualified name such as "etcd.capstan.dev/cleanup": a DNS subdomain
 * with at least one dot, a "/", and a name of at most 63 characters.
 */
export function validateFinalizerName(finalizer: string): void {
  const slash = finalizer.indexOf("/");
  const prefix = finalizer.slice(0, Math.max(slash, 0));
  const name = finalizer.slice(slash + 1);
  if (
    slash < 0 ||
    prefix.length > 253 ||
    !DNS_SUBDOMAIN.test(prefix) ||
    name.length > 63 ||
    !NAME.test(name)
  ) {
    throw new Error(
      `finalizer "${finalizer}" is invalid: use a domain-qualified name such as "etcd.capstan.dev/cleanup" ` +
        "(a lower-case DNS subdomain, '/', then a name of at most 63 letters, digits, '-', '_' or '.')",
    );
  }
}

/**
 * Adds `finalizer` and returns the updated object; makes no request when it is already there. The JSON patch
 * first tests that `metadata.finalizers` still holds what `obj` shows, so a concurrent change by another
 * writer is never overwritten: it fails with a Conflict (`isConflict`) and the reconcile is retried.
 */
export async function addFinalizer<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  obj: T,
  finalizer: string,
): Promise<T> {
  validateFinalizerName(finalizer);
  if (hasFinalizer(obj, finalizer)) return obj;
  const current = obj.metadata.finalizers ?? [];
  const patch =
    current.length === 0
      ? [
          // The server omits an empty list, so "no finalizers" reads as null.
          { op: "test", path: "/metadata/finalizers", value: null },
          { op: "add", path: "/metadata/finalizers", value: [finalizer] },
        ]
      : [
          { op: "test", path: "/metadata/finalizers", value: current },
          { op: "add", path: "/metadata/finalizers/-", value: finalizer },
        ];
  return patchFinalizers(client, kind, obj, patch);
}

/**
 * Removes `finalizer` and returns the updated object; makes no request when it is absent. Returns undefined
 * when the object is already gone (removing the last finalizer of a deleted object lets the server delete it,
 * and a concurrent removal may have done so first). Guarded by a test op like {@link addFinalizer}.
 */
export async function removeFinalizer<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  obj: T,
  finalizer: string,
): Promise<T | undefined> {
  validateFinalizerName(finalizer);
  if (!hasFinalizer(obj, finalizer)) return obj;
  const current = obj.metadata.finalizers ?? [];
  const patch: unknown[] = [{ op: "test", path: "/metadata/finalizers", value: current }];
  // Remove every occurrence, highest index first so earlier indexes stay valid.
  for (let i = current.length - 1; i >= 0; i--) {
    if (current[i] === finalizer) patch.push({ op: "remove", path: `/metadata/finalizers/${i}` });
  }
  try {
    return await patchFinalizers(client, kind, obj, patch);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** What {@link handleFinalizer} did: `deleted` is true when the object is being deleted. */
export interface FinalizerResult<T> {
  deleted: boolean;
  /** The object after the call; undefined when it is gone. */
  obj: T | undefined;
}

/**
 * controller-runtime's finalizer pattern in one idempotent call, meant for the top of a reconcile:
 * - being deleted and holding `finalizer`: awaits `cleanup(obj)`, then removes the finalizer. If cleanup
 *   throws, the finalizer stays and the error propagates, so the reconcile is retried.
 * - being deleted without `finalizer`: does nothing.
 * - otherwise: makes sure `finalizer` is present (no request when it already is).
 * When `deleted` is true the reconcile should return without creating anything.
 */
export async function handleFinalizer<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  obj: T,
  finalizer: string,
  cleanup: (obj: T) => Promise<void>,
): Promise<FinalizerResult<T>> {
  validateFinalizerName(finalizer);
  if (!isBeingDeleted(obj)) return { deleted: false, obj: await addFinalizer(client, kind, obj, finalizer) };
  if (!hasFinalizer(obj, finalizer)) return { deleted: true, obj };
  await cleanup(obj);
  return { deleted: true, obj: await removeFinalizer(client, kind, obj, finalizer) };
}

async function patchFinalizers<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  obj: T,
  patch: unknown[],
): Promise<T> {
  const name = obj.metadata.name ?? "";
  try {
    return await client.patch(kind, name, obj.metadata.namespace, patch, "json");
  } catch (err) {
    // A failed JSON patch "test" is a 422 from the API server; it means our copy is stale, i.e. a conflict.
    if (isInvalid(err) && /test operation|testing value/i.test((err as Error).message)) {
      throw new ApiError(
        409,
        "Conflict",
        `${kind.kind} ${keyOf(obj)}: metadata.finalizers changed since the object was read; retry with a fresh copy (${(err as Error).message})`,
        (err as ApiError).status,
      );
    }
    throw err;
  }
}
