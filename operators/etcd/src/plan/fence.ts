// Fence before you fork (issue 27, item 3): core's fence (packages/core/src/helpers/fence.ts), worded for etcd
// members. A recovery that starts a second copy of the cluster's data (a survivor restarted with
// --force-new-cluster, a seed restored from a backup) first waits until every other member's pod is GONE. Pure.
import { fence as coreFence, type FencedPod, type FenceWait } from "@capstan/core";

export type { FencedPod, FenceWait } from "@capstan/core";

/**
 * Undefined when no other member's pod exists (the step may go ahead), else the Wait naming each pod still
 * present, in name order. `step` says what waits ("restarting demo-b with --force-new-cluster").
 */
export function fence(present: readonly FencedPod[], step: string): FenceWait | undefined {
  return coreFence(present, step, { operand: "etcd", server: "member" });
}
