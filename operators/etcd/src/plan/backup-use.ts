// Which EtcdBackups a restore is using, or may still use: retention must not delete them, and a backup's deletion
// must not delete their snapshot (issue 27, item 7). Pure: from the namespace's EtcdRestores and EtcdClusters.
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import type { EtcdRestore } from "../api/etcd-restore.ts";

/** Who uses each backup, by the backup's name (the first user found names it). */
export type BackupsInUse = ReadonlyMap<string, string>;

/**
 * A backup is in use while an EtcdRestore from it has not ended (Pending, Running, or not yet picked up: an
 * automatic one included), and while an EtcdCluster names it in spec.bootstrap.restore and has not restored it yet
 * (no status.restore.completionTime): a cluster whose seed is still to be made reads the snapshot then.
 */
export function backupsInUse(
  restores: readonly EtcdRestore[],
  clusters: readonly EtcdCluster[],
): BackupsInUse {
  const used = new Map<string, string>();
  for (const r of restores) {
    const backup = r.spec.source?.backup?.name;
    const phase = r.status?.phase;
    if (backup === undefined || phase === "Succeeded" || phase === "Failed") continue;
    if (!used.has(backup)) used.set(backup, `EtcdRestore ${r.metadata.name} (${phase ?? "not started"})`);
  }
  for (const c of clusters) {
    const backup = c.spec.bootstrap?.restore?.backup?.name;
    if (backup === undefined || c.status?.restore?.completionTime !== undefined) continue;
    if (!used.has(backup)) {
      used.set(backup, `EtcdCluster ${c.metadata.name}'s spec.bootstrap.restore (not restored yet)`);
    }
  }
  return used;
}
