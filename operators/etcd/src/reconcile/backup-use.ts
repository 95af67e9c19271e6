// The EtcdBackups a restore uses or may still use in a namespace, read from the cache (see plan/backup-use.ts).
import type { Cache } from "@capstan/core";
import { EtcdClusterKind } from "../api/etcd-cluster.ts";
import { EtcdRestoreKind } from "../api/etcd-restore.ts";
import { type BackupsInUse, backupsInUse } from "../plan/backup-use.ts";

/** Reads the namespace's EtcdRestores and EtcdClusters and says which backups they use. */
export async function observeBackupsInUse(cache: Cache, namespace: string): Promise<BackupsInUse> {
  const [restores, clusters] = await Promise.all([
    cache.list(EtcdRestoreKind, { namespace }),
    cache.list(EtcdClusterKind, { namespace }),
  ]);
  return backupsInUse(restores, clusters);
}
