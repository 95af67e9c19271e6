// When a scale-in may take a voter out of the raft configuration. Pure.
import type { ObservedPeer, Step } from "./plan.ts";

/** Votes needed for a quorum among `voters` (as plan.ts's quorum, kept here to avoid an import cycle). */
function majority(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/**
 * A Wait when removing the raft peer `victim` (scale-in) must not happen now, else undefined.
 *
 * Rule: remove a voter only when every OTHER voter is healthy (ready, unsealed, a voter).
 *
 * Why. With V voters of which H are healthy the cluster survives T = H - q(V) more failures, q(n) = floor(n/2)+1.
 * - Every other voter healthy: after the removal H' = V-1 and T' = (V-1) - q(V-1), the whole tolerance of the
 *   smaller size: 5 -> 4 -> 3 voters tolerate 2 -> 1 -> 1, and 3 -> 2 -> 1 tolerate 1 -> 0 -> 0. T' is 0 only on
 *   the way to (or at) a size of 1, which has no tolerance by the user's own choice (replicas: 1).
 * - Another voter down (what the previous gate, H' >= q(V-1), allowed): 5 voters with one down tolerate 1 more
 *   failure; removing a healthy fifth leaves 4 with one down, H' = 3 = q(4): T' = 0, the last margin taken by our
 *   own step. Waiting costs nothing: the down voter comes back, or it is removed first as an orphan or as lost
 *   data, which never lowers T (H stays, q does not grow).
 * The victim itself need not be healthy: removing a dead voter leaves H unchanged and q(V-1) <= q(V).
 */
export function scaleInGate(
  victim: string,
  servers: ObservedPeer[],
  isHealthy: (nodeID: string) => boolean,
): Step | undefined {
  const others = servers.filter((s) => s.voter && s.nodeID !== victim);
  const down = others.filter((s) => !isHealthy(s.nodeID)).map((s) => s.nodeID);
  if (down.length === 0) return undefined;
  const healthyAfter = others.length - down.length;
  return {
    type: "Wait",
    reason: "QuorumAtRisk",
    message: `not removing ${victim} while ${down.join(", ")} ${down.length === 1 ? "is" : "are"} not healthy: ${healthyAfter} healthy of ${others.length} voters would remain (a quorum is ${majority(others.length)}), so the cluster would tolerate ${Math.max(healthyAfter - majority(others.length), 0)} more failures; scale-in goes on once every remaining voter is healthy`,
  };
}
