// Which EtcdClusters an EtcdBackup concerns: those whose spec.bootstrap.restore names it (a new cluster waiting for
// its backup to succeed). An index on the shared EtcdCluster informer, so an EtcdBackup event looks its clusters up
// instead of walking every cluster.
import type { Informer, KubeObject, ReconcileRequest } from "@capstan/core";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";

/** The index of EtcdClusters by "<namespace>/<backup>" of the EtcdBackup their spec.bootstrap.restore names. */
export const RESTORE_BACKUP_INDEX = "etcd.capstan.dev/restore-backup";

/** The index values of a cluster: the backup it restores from, as "<namespace>/<name>" (none for other clusters). */
export function restoreBackupKeys(cluster: KubeObject): string[] {
  const name = (cluster as Partial<EtcdCluster>).spec?.bootstrap?.restore?.backup?.name;
  return name === undefined ? [] : [`${cluster.metadata.namespace ?? ""}/${name}`];
}

/** Maps an EtcdBackup to the clusters restoring from it, once attached to the EtcdCluster informer. */
export class RestoringClusters {
  private informer: Pick<Informer<KubeObject>, "store"> | undefined;

  /** Indexes `informer`'s clusters (the controller's own EtcdCluster informer, when it is bound). */
  attach(informer: Pick<Informer<KubeObject>, "store" | "addIndexer">): void {
    informer.addIndexer(RESTORE_BACKUP_INDEX, restoreBackupKeys);
    this.informer = informer;
  }

  /** The clusters whose spec.bootstrap.restore names `backup`. */
  readonly of = (backup: KubeObject): ReconcileRequest[] => {
    if (this.informer === undefined) {
      throw new Error(
        "RestoringClusters: not attached to the EtcdCluster informer (the controller was not bound)",
      );
    }
    const key = `${backup.metadata.namespace ?? ""}/${backup.metadata.name ?? ""}`;
    return this.informer.store.byIndex(RESTORE_BACKUP_INDEX, key).map((c) => ({
      namespace: c.metadata.namespace ?? "",
      name: c.metadata.name ?? "",
    }));
  };
}
