// A server whose data claim is gone or being deleted (a node with local storage lost, a claim deleted by hand):
// its data is going, so it is given a new claim and joins fresh. Pure.
//  - A pod whose claim is being deleted (the kubelet's pvc-protection holds the claim while the pod uses it), or
//    that was made on a claim that no longer exists (Pending for over CLAIM_GONE_AFTER_MS: "persistentvolumeclaim
//    not found"; a younger pod's claim may just not be in the cache yet): while it is
//    a raft peer, its peer is removed first (StepDown first if it is the active node), only while the other
//    healthy voters keep a quorum of the smaller configuration; then the pod is deleted (claim left alone).
//  - No pod is made on a claim that is being deleted (it would wait for ever on a claim that is about to vanish):
//    the pod is made again, with a new claim, once the old one is gone.
// Each step's message names the real cause (the claim), not the scheduler's symptom.
import type { ObservedPeer, ObservedPod, Step } from "./types.ts";

/** What the rule reads. */
export interface ClaimLostInput {
  /** Live pods (not terminating). */
  live: ObservedPod[];
  /** Names of the data claims that exist and are not being deleted. */
  claims: readonly string[];
  /** Names of the data claims being deleted. */
  claimsTerminating: readonly string[];
  servers: ObservedPeer[];
  /** The active pod's name. */
  active: string;
  /** Whether `nodeID` is a voter the cluster can count on (ready, unsealed, a voter). */
  healthy: (nodeID: string) => boolean;
  quorum: (voters: number) => number;
  now: Date;
}

/** A Pending pod whose claim is not seen this long after its creation was made on a claim that is gone. */
export const CLAIM_GONE_AFTER_MS = 30_000;

const claimOf = (pod: string) => `data-${pod}`;

/** The step for the first pod whose claim is lost, or undefined. */
export function claimLostStep(input: ClaimLostInput): Step | undefined {
  const terminating = new Set(input.claimsTerminating);
  const existing = new Set(input.claims);
  for (const p of [...input.live].sort((a, b) => a.ordinal - b.ordinal)) {
    const claim = claimOf(p.name);
    const gone =
      !existing.has(claim) &&
      p.pendingSince !== undefined &&
      input.now.getTime() - p.pendingSince.getTime() > CLAIM_GONE_AFTER_MS;
    const why = terminating.has(claim)
      ? `its data claim ${claim} is being deleted`
      : gone
        ? `its data claim ${claim} no longer exists (the pod is Pending on it)`
        : undefined;
    if (why === undefined) continue;
    const peer = input.servers.find((s) => s.nodeID === p.name);
    if (peer !== undefined) {
      if (p.name === input.active && input.live.length > 1) {
        return { type: "StepDown", pod: p.name, message: `stepping ${p.name} down: ${why}; it is replaced` };
      }
      const voters = input.servers.filter((s) => s.voter);
      const others = voters.filter((s) => s.nodeID !== p.name);
      const healthyOthers = others.filter((s) => input.healthy(s.nodeID)).length;
      if (peer.voter && healthyOthers < input.quorum(others.length)) {
        return {
          type: "Degraded",
          reason: "ClaimLost",
          message: `${p.name}: ${why}, and removing its raft peer would leave ${healthyOthers} healthy voters of ${others.length}, fewer than a quorum: waiting for the other voters before it is replaced`,
          pods: [p.name],
        };
      }
      return {
        type: "RemovePeer",
        nodeID: p.name,
        via: input.active,
        reason: "ClaimLost",
        message: `${p.name}: ${why}: removing its raft peer first; it is then made again on a new claim and joins fresh`,
      };
    }
    return {
      type: "DeletePod",
      pod: p.name,
      deleteClaim: false,
      reason: "ClaimLost",
      message: `${p.name}: ${why}: deleting the pod so it is made again on a new claim (it joins the cluster fresh)`,
    };
  }
  return undefined;
}

/** A CreatePod on a claim that is being deleted becomes a wait for it to go. */
export function holdCreateOnTerminatingClaim(step: Step, claimsTerminating: readonly string[]): Step {
  if (step.type !== "CreatePod" || !claimsTerminating.includes(claimOf(step.pod))) return step;
  return {
    type: "Wait",
    reason: "ClaimTerminating",
    message: `the data claim ${claimOf(step.pod)} of ${step.pod} is being deleted: ${step.pod} is made again, on a new claim, once it is gone`,
  };
}
