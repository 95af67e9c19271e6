// Object shapes as they travel on the wire, and the small helpers every component uses to name objects.
import type { V1ObjectMeta, V1OwnerReference } from "@kubernetes/client-node";

/**
 * The JSON form of a client-node model: timestamps are RFC 3339 strings, not `Date`s, because Capstan
 * reads raw JSON and never runs client-node's (slow, allocating) ObjectSerializer.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { -readonly [P in keyof T]: Wire<T[P]> }
      : T;

export type ObjectMeta = Wire<V1ObjectMeta>;
export type OwnerReference = Wire<V1OwnerReference>;

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** An object with a `status` of type S. */
export interface WithStatus<S> {
  status?: S;
}

/** A reconcile request / cache key: namespace ("" for cluster-scoped) and name. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** "namespace/name", or "name" for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function keyOf(obj: KubeObject | ObjectKey): string {
  const ns = "metadata" in obj ? (obj.metadata.namespace ?? "") : obj.namespace;
  const name = "metadata" in obj ? (obj.metadata.name ?? "") : obj.name;
  return ns === "" ? name : `${ns}/${name}`;
}

/** Inverse of {@link keyOf}. */
export function parseKey(key: string): ObjectKey {
  const i = key.indexOf("/");
  return i < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
