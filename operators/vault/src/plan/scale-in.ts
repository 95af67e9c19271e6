// Scale-in (rule 11 of the planner): which pod, peer or claim goes next, and when a voter may be taken out of the
// raft configuration. Pure.
import { quorum } from "@capstan/core";
import { byOrdinal, ordinalOf } from "./ordinal.ts";
import type { ObservedPeer, ObservedPod, Step } from "./types.ts";

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
    message: `not removing ${victim} while ${down.join(", ")} ${down.length === 1 ? "is" : "are"} not healthy: ${healthyAfter} healthy of ${others.length} voters would remain (a quorum is ${quorum(others.length)}), so the cluster would tolerate ${Math.max(healthyAfter - quorum(others.length), 0)} more failures; scale-in goes on once every remaining voter is healthy`,
  };
}

/**
 * The next scale-in step: the highest ordinal at or above `replicas` (a pod, or a claim left by an interrupted
 * scale-in): a raft peer is stepped down if active, then removed (see {@link scaleInGate}); then its pod and claim
 * are deleted. Then raft peers that are no pod of ours beyond `replicas` (interrupted removals) are removed.
 */
export function scaleInStep(
  cluster: string,
  replicas: number,
  live: ObservedPod[],
  /** Every pod's name, terminating ones included. */
  podNames: Set<string>,
  claims: string[],
  servers: ObservedPeer[],
  active: string,
  isHealthy: (nodeID: string) => boolean,
): Step | undefined {
  const peerIDs = new Set(servers.map((s) => s.nodeID));
  // Scale-in: highest ordinal first; the peer goes before the pod and its claim.
  const extra = [...live.filter((p) => p.ordinal >= replicas)].sort((a, b) => b.ordinal - a.ordinal)[0];
  const extraClaims = claims
    .map((c) => c.replace(/^data-/, ""))
    .filter((n) => (ordinalOf(cluster, n) ?? -1) >= replicas && !podNames.has(n));
  if (extra !== undefined || extraClaims.length > 0) {
    const victim = extra?.name ?? extraClaims.sort(byOrdinal(cluster)).reverse()[0]!;
    if (peerIDs.has(victim)) {
      if (victim === active) {
        return {
          type: "StepDown",
          pod: victim,
          message: `stepping ${victim} down before removing it (scale-in)`,
        };
      }
      const gate = scaleInGate(victim, servers, isHealthy);
      if (gate !== undefined) return gate;
      return {
        type: "RemovePeer",
        nodeID: victim,
        via: active,
        reason: "ScaleIn",
        message: `scaling in to ${replicas}: removing raft peer ${victim} before its pod and claim`,
      };
    }
    return {
      type: "DeletePod",
      pod: victim,
      deleteClaim: true,
      reason: "ScaleIn",
      message: `scaling in to ${replicas}: deleting ${victim} and its claim (no longer a raft peer)`,
    };
  }

  // Peers that are no pod we want: an interrupted removal or a pod deleted by hand beyond replicas.
  const orphan = servers.find((s) => {
    const ordinal = ordinalOf(cluster, s.nodeID);
    return (ordinal === undefined || ordinal >= replicas) && !podNames.has(s.nodeID) && !s.leader;
  });
  if (orphan !== undefined) {
    return {
      type: "RemovePeer",
      nodeID: orphan.nodeID,
      via: active,
      reason: "Orphan",
      message: `raft peer ${orphan.nodeID} has no pod and is beyond replicas: removing it`,
    };
  }
  return undefined;
}
