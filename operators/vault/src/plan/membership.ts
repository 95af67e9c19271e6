// Raft membership (rules 9, 11 and 14 of the planner), one change at a time and only while the quorum of healthy
// voters allows it: a new or wiped pod joins through the active node (its old peer removed first), a server whose
// claim is lost or that is no peer any more starts afresh, the scale-in takes the highest ordinal out (scale-in.ts),
// and the scale-out makes the lowest missing one. Pure.
import { quorum } from "@capstan/core";
import { claimLostStep } from "./claim-lost.ts";
import { scaleInStep } from "./scale-in.ts";
import type { Step } from "./types.ts";
import type { RaftView } from "./view.ts";

/**
 * Rule 9: an uninitialized pod (a new pod, or one whose data was lost): its node ID still a raft peer -> RemovePeer
 * (DataLost) first; else JoinRaft towards the active pod (not beyond spec.replicas: being scaled in).
 */
export function joinRaft(r: RaftView): Step | undefined {
  const { active } = r;
  for (const p of r.live) {
    if (!p.vault.reachable || p.vault.initialized) continue;
    if (r.peerIDs.has(p.name)) {
      return {
        type: "RemovePeer",
        nodeID: p.name,
        via: active.name,
        reason: "DataLost",
        message: `${p.name} reports uninitialized (its data was lost) while it is still a raft peer: removing its old peer before it rejoins`,
      };
    }
    if (p.ordinal >= r.spec.replicas) continue; // being scaled in: not joined again
    return {
      type: "JoinRaft",
      pod: p.name,
      leader: active.name,
      message: `${p.name} joins the raft cluster through ${active.name}`,
    };
  }
  return undefined;
}

/** A server whose data claim is gone or being deleted starts afresh on a new claim (claim-lost.ts). */
export function claimLost(r: RaftView): Step | undefined {
  return claimLostStep({
    live: r.live,
    claims: r.observed.claims,
    claimsTerminating: r.observed.claimsTerminating ?? [],
    servers: r.servers,
    active: r.active.name,
    healthy: r.healthyID,
    quorum,
    now: r.now,
  });
}

/**
 * Rule 9, last part: a pod below spec.replicas that is initialized and unsealed, Ready for `notPeerAfterMs`, and
 * still not in the raft configuration the active node reports is no peer any more (a scale-in reverted after its
 * peer was removed, autopilot's dead-server cleanup, a peer removed by hand). Its data is of no use to the cluster
 * (the cluster's data is in the quorum, which holds without it): its pod and claim are deleted, and a new pod on a
 * new claim joins fresh. Only while the healthy voters keep a quorum.
 */
export function notAPeer(r: RaftView): Step | undefined {
  const afterMs = r.opts.notPeerAfterMs;
  const quorumHolds = () =>
    r.servers.filter((s) => s.voter && r.healthyID(s.nodeID)).length >= quorum(r.voterCount);
  for (const p of r.live) {
    if (p.ordinal >= r.spec.replicas || r.peerIDs.has(p.name)) continue;
    if (!p.vault.reachable || !p.vault.initialized || p.vault.sealed) continue;
    const readyFor = p.readySince === undefined ? undefined : r.now.getTime() - p.readySince.getTime();
    if (!p.ready || readyFor === undefined || readyFor < afterMs) continue;
    if (!quorumHolds()) return undefined;
    return {
      type: "DeletePod",
      pod: p.name,
      deleteClaim: true,
      reason: "NotAPeer",
      message: `${p.name} is unsealed but not in the raft configuration (its peer was removed: a reverted scale-in, autopilot's dead-server cleanup, or by hand), so its data is of no use to the cluster: deleting its pod and claim; a new pod on a new claim joins fresh`,
    };
  }
  return undefined;
}

/** Rule 11: the scale-in's next pod, peer or claim (scale-in.ts), and raft peers that are no pod of ours. */
export function scaleIn(r: RaftView): Step | undefined {
  return scaleInStep(
    r.cluster,
    r.spec.replicas,
    r.live,
    r.podNames,
    r.observed.claims,
    r.servers,
    r.active.name,
    r.healthyID,
  );
}

/** Rule 14: the lowest missing ordinal below spec.replicas -> CreatePod(ScaleOut), one at a time. */
export function scaleOut(r: RaftView): Step | undefined {
  for (let ordinal = 0; ordinal < r.spec.replicas; ordinal++) {
    const pod = `${r.cluster}-${ordinal}`;
    if (r.podNames.has(pod)) continue;
    return {
      type: "CreatePod",
      pod,
      reason: "ScaleOut",
      message: `scaling out to ${r.spec.replicas}: creating ${pod}`,
    };
  }
  return undefined;
}
