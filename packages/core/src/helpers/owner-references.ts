// Owner references: mark the objects an operator creates as owned by its custom resource (garbage collection,
// and the `owns` watches that map a child's event back to its owner).
import type { Kind } from "../api/kinds.ts";
import { type KubeObject, keyOf, type OwnerReference } from "../api/object.ts";

/** Thrown by {@link setControllerReference} when the object already has a different controller. */
export class AlreadyOwnedError extends Error {
  override readonly name = "AlreadyOwnedError";
  /** The controller reference the object already carries. */
  readonly existing: OwnerReference;
  /** The reference that could not be set. */
  readonly requested: OwnerReference;

  constructor(obj: KubeObject, existing: OwnerReference, requested: OwnerReference) {
    super(
      `${obj.kind ?? "object"} ${keyOf(obj)} is already controlled by ${existing.kind} ${existing.name} ` +
        `(uid ${existing.uid}); it cannot also be controlled by ${requested.kind} ${requested.name} (uid ${requested.uid})`,
    );
    this.existing = existing;
    this.requested = requested;
  }
}

/** An owner reference pointing at `owner`; with `controller`, it is a controller reference that blocks owner deletion. */
export function ownerReferenceFor(owner: KubeObject, ownerKind: Kind, controller = false): OwnerReference {
  const { name, uid } = owner.metadata;
  if (!name) throw new Error(`owner ${ownerKind.kind}: metadata.name is required for an owner reference`);
  if (!uid) {
    throw new Error(
      `owner ${ownerKind.kind} ${keyOf(owner)} has no metadata.uid: use the object read from the API server, not a locally built one`,
    );
  }
  const ref: OwnerReference = { apiVersion: ownerKind.apiVersion, kind: ownerKind.kind, name, uid };
  return controller ? { ...ref, controller: true, blockOwnerDeletion: true } : ref;
}

/**
 * Makes `owner` the controller of `obj` (mutates `obj.metadata.ownerReferences`), like controller-runtime's
 * SetControllerReference: an existing reference to the same owner is updated, otherwise one is appended.
 * Throws {@link AlreadyOwnedError} when another object is already the controller, and an Error when the owner
 * has no uid or the reference is one the garbage collector does not allow (a namespaced owner in another
 * namespace, or a namespaced owner of a cluster-scoped object).
 */
export function setControllerReference(
  owner: KubeObject,
  ownerKind: Kind,
  obj: KubeObject,
  options: { blockOwnerDeletion?: boolean } = {},
): void {
  const ref: OwnerReference = {
    ...ownerReferenceFor(owner, ownerKind, true),
    blockOwnerDeletion: options.blockOwnerDeletion ?? true,
  };
  validateOwner(owner, ownerKind, obj);
  const existing = getControllerOf(obj);
  if (existing !== undefined && !sameOwner(existing, ref)) throw new AlreadyOwnedError(obj, existing, ref);
  upsert(obj, ref);
}

/**
 * Adds `owner` as a non-controller owner of `obj` (mutates `obj.metadata.ownerReferences`); an existing
 * reference to the same owner (same uid, or same group, kind and name) is updated, keeping its controller
 * and blockOwnerDeletion flags. Validated like {@link setControllerReference}.
 */
export function setOwnerReference(owner: KubeObject, ownerKind: Kind, obj: KubeObject): void {
  const ref = ownerReferenceFor(owner, ownerKind, false);
  validateOwner(owner, ownerKind, obj);
  const existing = obj.metadata.ownerReferences?.find((r) => sameOwner(r, ref));
  const flags = {
    ...(existing?.controller === undefined ? {} : { controller: existing.controller }),
    ...(existing?.blockOwnerDeletion === undefined
      ? {}
      : { blockOwnerDeletion: existing.blockOwnerDeletion }),
  };
  upsert(obj, { ...ref, ...flags });
}

/** The owner reference marked `controller: true`, if any. */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** True when `owner` (matched by uid) is the controller of `obj`. */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata.uid;
  return uid !== undefined && uid !== "" && getControllerOf(obj)?.uid === uid;
}

function validateOwner(owner: KubeObject, ownerKind: Kind, obj: KubeObject): void {
  if (!ownerKind.namespaced) return; // a cluster-scoped owner may own anything
  const ownerNs = owner.metadata.namespace ?? "";
  const objNs = obj.metadata.namespace ?? "";
  if (objNs === "") {
    throw new Error(
      `${obj.kind ?? "object"} ${keyOf(obj)} is cluster-scoped and cannot be owned by the namespaced ${ownerKind.kind} ${keyOf(owner)}`,
    );
  }
  if (ownerNs !== objNs) {
    throw new Error(
      `cross-namespace owner references are not allowed: ${ownerKind.kind} ${keyOf(owner)} cannot own ${obj.kind ?? "object"} ${keyOf(obj)}`,
    );
  }
}

/** The API group of an apiVersion ("" for the core group "v1"). */
function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf("/");
  return i < 0 ? "" : apiVersion.slice(0, i);
}

/** Same uid, or the same group, kind and name (a re-created owner keeps its reference, with the new uid). */
function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return (
    a.uid === b.uid ||
    (groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name)
  );
}

function upsert(obj: KubeObject, ref: OwnerReference): void {
  const refs = obj.metadata.ownerReferences ?? [];
  const i = refs.findIndex((r) => sameOwner(r, ref));
  obj.metadata.ownerReferences = i < 0 ? [...refs, ref] : refs.map((r, j) => (j === i ? ref : r));
}
