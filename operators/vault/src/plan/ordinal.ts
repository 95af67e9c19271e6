// Pod ordinals: `<cluster>-<ordinal>` names (also the raft node IDs) and `data-<pod>` claims.

/** The ordinal of a pod named `<cluster>-<ordinal>`, or undefined. */
export function ordinalOf(cluster: string, pod: string): number | undefined {
  const prefix = `${cluster}-`;
  if (!pod.startsWith(prefix)) return undefined;
  const rest = pod.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

/** Orders pod or claim names by ordinal (names without one last). */
export function byOrdinal(cluster: string): (a: string, b: string) => number {
  const o = (n: string) => ordinalOf(cluster, n.replace(/^data-/, "")) ?? Number.MAX_SAFE_INTEGER;
  return (a, b) => o(a) - o(b);
}
