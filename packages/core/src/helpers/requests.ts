// Requests an operator acts on one at a time per cluster (a restore, a recovery): the oldest first.
import type { KubeObject } from "../api/object.ts";

/**
 * The request a cluster acts on now: the oldest of `requests` (by creationTimestamp, then name, so the choice is
 * stable when two were made in the same second) that `open` keeps; undefined when none is open. The others wait
 * their turn.
 */
export function oldestOpenRequest<T extends KubeObject>(
  requests: T[],
  open: (r: T) => boolean,
): T | undefined {
  return requests
    .filter(open)
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
        (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
    )[0];
}
