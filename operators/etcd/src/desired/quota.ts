// etcd's backend quota (--quota-backend-bytes) derived from the size of a member's data volume.
import { storageSizeBytes } from "@capstan/core";

/** etcd's documented ceiling for the quota ("8 GiB is a suggested maximum size for normal environments"). */
export const MAX_QUOTA_BYTES = 8 * 1024 ** 3;
/** Room kept for the WAL (5 files of 64 MiB by default) and the small snapshot files. */
export const WAL_RESERVE_BYTES = 512 * 1024 ** 2;

/** Bytes of a Kubernetes quantity such as "8Gi", "500M" or "1073741824"; throws naming the value when malformed. */
export function quantityBytes(quantity: string): number {
  const bytes = storageSizeBytes(quantity);
  if (bytes === undefined) throw new Error(`storage.size "${quantity}" is not a quantity such as 8Gi`);
  return bytes;
}

/**
 * The quota for a data volume of `size`: (size - 512 MiB) / 2, at most 8 GiB. The volume holds, besides the
 * database itself (up to the quota): a second copy of it while a member defragments (etcd writes the new file
 * before it removes the old) or receives a snapshot from the leader, and the WAL with its snapshot files (512
 * MiB kept for them). So 1Gi gives 256 MiB, 8Gi (the default) 3.75 GiB, 17Gi or more the 8 GiB ceiling. A
 * volume under 1Gi (refused by the schema; only objects from before the rule) gets a quarter of its size.
 */
export function quotaBackendBytes(size: string): number {
  const bytes = quantityBytes(size);
  const quota = Math.max(Math.floor(bytes / 4), Math.floor((bytes - WAL_RESERVE_BYTES) / 2));
  return Math.min(MAX_QUOTA_BYTES, quota);
}
