// Which VaultSnapshots a restore may still read: a schedule's retention must not delete them, and a snapshot's
// deletion must not delete its stored file meanwhile. Pure: from the namespace's VaultClusters.
import type { BackupsInUse } from "@capstan/backup";
import type { VaultCluster } from "../api/vault-cluster.ts";

/**
 * A snapshot is in use while a VaultCluster names it in spec.restore.snapshot and has not restored it yet (no
 * status.restore.completionTime): its restore Job reads the stored file then (a cluster being deleted reads nothing).
 */
export function snapshotsInUse(clusters: readonly VaultCluster[]): BackupsInUse {
  const used = new Map<string, string>();
  for (const c of clusters) {
    const name = c.spec.restore?.snapshot?.name;
    if (name === undefined || c.metadata.deletionTimestamp !== undefined) continue;
    if (c.status?.restore?.completionTime !== undefined) continue;
    if (!used.has(name)) used.set(name, `VaultCluster ${c.metadata.name}'s spec.restore (not restored yet)`);
  }
  return used;
}
