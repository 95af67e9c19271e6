// Fence before you fork: a recovery that starts a second copy of a cluster's identity (etcd's survivor restarted
// with --force-new-cluster or a seed restored from a backup, Vault's survivor restarted on a peers.json that names
// only itself) first waits until every other server's pod is GONE from the API server. A pod being deleted is not
// gone: on an unreachable node the operand may still run behind a partition and answer clients, and the writes one
// of the two copies takes are lost when the partition heals. Only the node lifecycle (the node confirmed down) or a
// human force-deleting the pod removes it. Shared by the etcd and Vault operators' recoveries. Pure.

/** A pod of another server that still exists on the API server. */
export interface FencedPod {
  /** The pod's (the server's) name. */
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

/** What a fence message names. */
export interface FenceOptions {
  /** The operand, as the message names it ("etcd", "Vault"). */
  operand: string;
  /** What the pods are ("member", "server"). */
  server: string;
}

/** Why one pod still fences the step off, and what removes it. */
function why(p: FencedPod, operand: string): string {
  const on = p.node === undefined ? "" : ` on node ${p.node}`;
  const state =
    p.terminatingSince === undefined
      ? `pod ${p.name} still exists${on}`
      : `pod ${p.name} is Terminating since ${p.terminatingSince.toISOString()}${on}`;
  return `${state}: ${operand} may still be running behind a partition; it is gone once the node lifecycle or a human force-deletes it (kubectl delete pod ${p.name} --force --grace-period=0) after confirming the node is down`;
}

/**
 * Undefined when no other server's pod exists (the step may go ahead), else the Wait naming each pod still
 * present, in name order. `step` says what waits ("restarting demo-b with --force-new-cluster").
 */
export function fence(
  present: readonly FencedPod[],
  step: string,
  options: FenceOptions = { operand: "etcd", server: "member" },
): FenceWait | undefined {
  if (present.length === 0) return undefined;
  const pods = [...present].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    type: "Wait",
    reason: "WaitingForFence",
    pods: pods.map((p) => p.name),
    message: `fenced: not ${step} while another ${options.server}'s pod exists; ${pods.map((p) => why(p, options.operand)).join("; ")}`,
  };
}
