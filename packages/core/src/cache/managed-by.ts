// Cache selectors for an operator's own objects: the manager's cache holds only the objects labelled
// app.kubernetes.io/managed-by=<operator>, not every Pod, Service or Secret in the cluster.
import type { Kind } from "../api/kinds.ts";
import type { CacheSelector } from "./informer-factory.ts";

/** The label every object an operator creates carries, naming the operator. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";

/**
 * One cache selector per kind, each limited to the objects whose app.kubernetes.io/managed-by label is
 * `managedBy`; pass them as the manager's cache selectors. Objects of those kinds without the label are then
 * invisible to every controller of the manager.
 */
export function managedBySelectors(managedBy: string, kinds: readonly Kind[]): CacheSelector[] {
  if (managedBy === "")
    throw new Error("managedBySelectors: managedBy must name the operator, e.g. capstan-etcd-operator");
  const labelSelector = `${MANAGED_BY_LABEL}=${managedBy}`;
  return kinds.map((kind) => ({ kind, labelSelector }));
}
