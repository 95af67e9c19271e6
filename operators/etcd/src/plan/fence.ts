// Fence before you fork (issue 27, item 3): a recovery that starts a second copy of the cluster's data (a survivor
// restarted with --force-new-cluster, a seed restored from a backup) first waits until every other member's pod is
// GONE from the API server. A pod being deleted is not gone: on an unreachable node its etcd may still run behind a
// partition and answer clients, and the writes one of the two copies takes are lost when the partition heals. Only
// the node lifecycle (the node confirmed down) or a human force-deleting the pod removes it. Pure.

/** A pod of another member that still exists on the API server. */
export interface FencedPod {
  /** The pod's (the member's) name. */
  name: string;
  /** Its deletionTimestamp, when it is being deleted. */
  terminatingSince?: Date;
  /** The node it was scheduled to, when known. */
  node?: string;
}

/** The wait of a fence: reason WaitingForFence, the message names every pod still present and why. */
export interface FenceWait {
  type: "Wait";
  reason: "WaitingForFence";
  message: string;
  /** The pods still present, by name. */
  pods: string[];
}

/** Why one pod still fences the step off, and what removes it. */
function why(p: FencedPod): string {
  const on = p.node === undefined ? "" : ` on node ${p.node}`;
  const state =
    p.terminatingSince === undefined
      ? `pod ${p.name} still exists${on}`
      : `pod ${p.name} is Terminating since ${p.terminatingSince.toISOString()}${on}`;
  return `${state}: etcd may still be running behind a partition; it is gone once the node lifecycle or a human force-deletes it (kubectl delete pod ${p.name} --force --grace-period=0) after confirming the node is down`;
}

/**
 * Undefined when no other member's pod exists (the step may go ahead), else the Wait naming each pod still
 * present, in name order. `step` says what waits ("restarting demo-b with --force-new-cluster").
 */
export function fence(present: readonly FencedPod[], step: string): FenceWait | undefined {
  if (present.length === 0) return undefined;
  const pods = [...present].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    type: "Wait",
    reason: "WaitingForFence",
    pods: pods.map((p) => p.name),
    message: `fenced: not ${step} while another member's pod exists; ${pods.map(why).join("; ")}`,
  };
}
