// spec.storage.size against the data claims that exist: a claim smaller than spec (spec grew; the CRD refuses a
// shrink) is reported, never silently left. The operator does not expand claims itself: expansion depends on the
// StorageClass (allowVolumeExpansion) and on the CSI driver, and a refused expansion must be seen by a human.
// Pure.
import { storageSizeBytes } from "@capstan/core";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import type { Step } from "./types.ts";

/**
 * Degraded when a data claim of a pod below spec.replicas (the claims kept) requests another size than
 * spec.storage.size: smaller -> `StorageNotExpanded` (with the command that expands it), larger (an object older
 * than the CEL rule that refuses a shrink) -> `StorageShrinkRefused`. Undefined when they match or a size cannot
 * be read.
 */
export function storageStep(
  cluster: string,
  spec: Pick<VaultClusterSpec, "replicas" | "storage">,
  claimSizes: Record<string, string> | undefined,
  namespace: string | undefined,
): Step | undefined {
  const specSize = spec.storage.size;
  const want = specSize === undefined ? undefined : storageSizeBytes(specSize);
  if (want === undefined || claimSizes === undefined) return undefined;
  const prefix = `data-${cluster}-`;
  const kept = (claim: string) => {
    const rest = claim.startsWith(prefix) ? claim.slice(prefix.length) : "";
    return /^(0|[1-9][0-9]*)$/.test(rest) && Number(rest) < spec.replicas;
  };
  const smaller: string[] = [];
  const larger: string[] = [];
  for (const [claim, size] of Object.entries(claimSizes).sort(([a], [b]) => a.localeCompare(b))) {
    const have = storageSizeBytes(size);
    if (have === undefined || !kept(claim)) continue;
    if (have < want) smaller.push(`${claim} (${size})`);
    else if (have > want) larger.push(`${claim} (${size})`);
  }
  const ns = namespace === undefined ? "" : ` -n ${namespace}`;
  if (smaller.length > 0) {
    return {
      type: "Degraded",
      reason: "StorageNotExpanded",
      message: `spec.storage.size is ${specSize} but ${smaller.join(", ")} ${smaller.length === 1 ? "is" : "are"} smaller: the operator does not expand existing claims (new claims get ${specSize}). If their StorageClass allows volume expansion, expand each: kubectl patch pvc <claim>${ns} -p '{"spec":{"resources":{"requests":{"storage":"${specSize}"}}}}'; otherwise set spec.storage.size back to their size`,
    };
  }
  if (larger.length > 0) {
    return {
      type: "Degraded",
      reason: "StorageShrinkRefused",
      message: `spec.storage.size is ${specSize} but ${larger.join(", ")} ${larger.length === 1 ? "is" : "are"} larger: a claim cannot shrink; set spec.storage.size back to at least their size (new claims would get the smaller size)`,
    };
  }
  return undefined;
}
