// Event filters for controllers: which add/update/delete events of a watched kind enqueue a reconcile.
import { type LabelSelectorInput, labelSelector } from "../api/labels.ts";
import type { KubeObject } from "../api/object.ts";

/** Decides per event whether it triggers a reconcile. A missing method means "pass". */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T): boolean;
}

/** Updates pass only when metadata.generation changed (spec edits; status-only writes are filtered out). */
export function generationChanged<T extends KubeObject>(): Predicate<T> {
  return { update: (o, n) => o.metadata.generation !== n.metadata.generation };
}

/** Updates pass only when the labels changed. */
export function labelsChanged<T extends KubeObject>(): Predicate<T> {
  return { update: (o, n) => !shallowEqual(o.metadata.labels, n.metadata.labels) };
}

/** Updates pass only when the annotations changed. */
export function annotationsChanged<T extends KubeObject>(): Predicate<T> {
  return { update: (o, n) => !shallowEqual(o.metadata.annotations, n.metadata.annotations) };
}

/**
 * Every event passes only for objects whose labels match (for updates: the new object): an equality map,
 * a selector string (`"tier in (a,b),!legacy"`) or a metav1.LabelSelector. Core's own (not exported from
 * @capstan/core, whose runtime names are budgeted: an operator writes `{ create: (o) => sel.matches(o.metadata.labels),
 * ... }` with {@link labelSelector}, or filters in its cache selectors).
 */
export function hasLabels<T extends KubeObject>(selector: LabelSelectorInput): Predicate<T> {
  const matcher = labelSelector(selector);
  const match = (obj: T) => matcher.matches(obj.metadata.labels);
  return { create: match, update: (_o, n) => match(n), delete: match };
}

/** Passes when any predicate passes. */
export function or<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return {
    create: (obj) => predicates.some((p) => p.create?.(obj) ?? true),
    update: (o, n) => predicates.some((p) => p.update?.(o, n) ?? true),
    delete: (obj) => predicates.some((p) => p.delete?.(obj) ?? true),
  };
}

/** Passes when every predicate passes (a controller's predicate list is already combined this way). */
export function and<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return {
    create: (obj) => predicates.every((p) => p.create?.(obj) ?? true),
    update: (o, n) => predicates.every((p) => p.update?.(o, n) ?? true),
    delete: (obj) => predicates.every((p) => p.delete?.(obj) ?? true),
  };
}

function shallowEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}
