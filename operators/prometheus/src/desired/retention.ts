// The size-based retention a server runs with (`--storage.tsdb.retention.size`): spec.retentionSize when set, else
// derived from the data claim's size, so the disk never fills. Pure.
//
// The rule: 80% of the claim, in whole MiB. Prometheus counts its blocks, WAL and head chunks against the limit and
// deletes the oldest blocks beyond it, but compaction writes a new block before it deletes the ones it merged (up to
// about a tenth of the data: the largest block spans 10% of the retention time), and the filesystem keeps some of the
// volume for itself (metadata, and 5% of ext4 reserved for root, which Prometheus, running as nobody, cannot use). 80%
// leaves room for both; 85% would not on ext4.
//
// With ephemeral storage (an emptyDir on the node's disk) there is no size to derive from: none is set, and the
// kubelet evicts the pod if the node's disk runs short; set retentionSize (and an ephemeral-storage limit) yourself.
import { storageSizeBytes } from "@capstan/core";
import type { PrometheusSpec } from "../api/prometheus.ts";

/** The share of the claim a derived retention size allows. */
export const DERIVED_RETENTION_SHARE = 0.8;

/**
 * The retention size derived from a claim of `claimSize` (a size as the CRD accepts it, STORAGE_SIZE_PATTERN: "10Gi",
 * "500M", "1.5Ti"; core's storageSizeBytes reads it): 80% of it, rounded down to whole MiB, written as Prometheus
 * reads it ("MB" is 2^20 bytes for --storage.tsdb.retention.size), e.g. "8192MB" for 10Gi. Undefined when the size
 * cannot be read or leaves less than 1 MiB.
 */
export function derivedRetentionSize(claimSize: string): string | undefined {
  const bytes = storageSizeBytes(claimSize);
  if (bytes === undefined) return undefined;
  const mib = Math.floor((bytes * DERIVED_RETENTION_SHARE) / 2 ** 20);
  return mib >= 1 ? `${mib}MB` : undefined;
}

/**
 * What `--storage.tsdb.retention.size` gets: spec.retentionSize when set; else derived from `claimSize`, the size the
 * claims are made with (the StatefulSet's claim template, which may lag spec.storage.size: see
 * StorageSizeChangeNotApplied); none with ephemeral storage.
 */
export function effectiveRetentionSize(
  spec: Pick<PrometheusSpec, "retentionSize" | "storage">,
  claimSize: string | undefined,
): string | undefined {
  if (spec.retentionSize !== undefined) return spec.retentionSize;
  if (spec.storage.ephemeral === true || claimSize === undefined) return undefined;
  return derivedRetentionSize(claimSize);
}
