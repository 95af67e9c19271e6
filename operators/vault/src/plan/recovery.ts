// The VaultRecovery planner (issue 28, item 13): a VaultCluster that lost its raft quorum for good is recovered, on
// request, by Vault's documented peers.json recovery from the surviving server with the newest data. Pure: from
// what the reconcile observed (recovery-types.ts), the ONE next step; the reconcile performs it and plans again.
//
// The order (the first that applies wins):
//  1. Called off: the request is deleted, or a quorum answers again, before the fork -> RemoveSurvivorMark, then
//     CallOff (Cancelled, or the finalizer released). A request that never started is refused QuorumHealthy.
//  2. Not started: a quorum answers -> Refuse QuorumHealthy; a majority of the voters' pods Ready by their kubelet
//     (they would elect a leader: the operator may only be cut off from them) -> Refuse QuorumLossUnconfirmed.
//  3. No survivor marked: spec.survivor, checked (a data claim, this cluster's data), or the server with the newest
//     data among those that answer for this cluster (a sealed one is unsealed first, so it can answer): the highest
//     raft applied index, then committed index (each from the server's own sys/leader), then the lowest ordinal
//     (equal indexes are the same data). Refused when no server answers, when one that answers for this cluster
//     cannot say its indexes, or when one that keeps its data claim cannot be asked (its data cannot be compared, and
//     its claim is replaced later: only spec.survivor makes that choice) -> MarkSurvivor, on the survivor's claim.
//  4. Before the fork: every other server's pod is deleted (StopServer; their claims are KEPT) and the fork waits
//     until each is gone, not Terminating (core's fence) -> Fork: the survivor's claim is marked "fork", with the
//     claims to replace (name and uid), and the survivor's pod is deleted. The fork is the point of no return.
//  5. After the fork: the survivor's pod is made again with the init container that writes peers.json naming only
//     itself (StartSurvivor), unsealed (Vault reads peers.json as raft starts), and once it answers as the active
//     node with itself as the only raft voter -> Verified (its claim marked "rejoin"). Any other server's pod that
//     appears meanwhile is stopped again (its old data must not rejoin a forked cluster).
//  6. Rejoin: the replaced claims (those recorded at the fork, by uid) are deleted (WipeServer): their data is an
//     older, divergent copy of the cluster; then Rejoin: the VaultCluster's own planner makes each server again on a
//     new claim and joins it fresh (items 5 and 6), and the request succeeds once the cluster is in sync.
import { fence, quorum } from "@capstan/core";
import type { VaultRecoveryCandidate } from "../api/vault-recovery.ts";
import type { RecoveryObserved, RecoveryServer, RecoveryStep } from "./recovery-types.ts";

export type {
  RecoveryIndex,
  RecoveryObserved,
  RecoveryServer,
  RecoveryStep,
  ReplacedClaim,
} from "./recovery-types.ts";

const claimOf = (server: string) => `data-${server}`;

/** The step that forked the cluster has been taken (the survivor's claim carries this request's phase). */
export function forked(o: RecoveryObserved): boolean {
  return o.phase !== undefined;
}

/** What a deleted VaultRecovery says while the fork holds its deletion; undefined when it is not held. */
export function deletionHeld(o: RecoveryObserved): string | undefined {
  if (o.deleting !== true || !forked(o) || rejoining(o)) return undefined;
  return `deletion waits until the survivor serves alone (the cluster was forked: ${o.survivorMark ?? "the survivor"} was restarted on a peers.json naming only itself); remove the finalizer vault.capstan.dev/recovery by hand only if the operator is gone for good, and then finish the recovery yourself`;
}

/** After the fork, the survivor verified and every replaced claim gone: the cluster's own planner rejoins the others. */
export function rejoining(o: RecoveryObserved): boolean {
  if (o.phase !== "rejoin") return false;
  return o.replaced.every((r) => !o.servers.some((s) => s.claimUID === r.uid));
}

/** The next step of the recovery. */
export function planRecovery(o: RecoveryObserved): RecoveryStep {
  const calledOff = planCallOff(o);
  if (calledOff !== undefined) return calledOff;
  if (o.survivorMark === undefined) {
    const refused = refusal(o);
    if (refused !== undefined) return refused;
    return chooseSurvivor(o);
  }
  const survivor = o.servers.find((s) => s.name === o.survivorMark);
  if (!forked(o)) return beforeFork(o, o.survivorMark, survivor);
  if (o.phase === "fork") return afterFork(o, o.survivorMark, survivor);
  return rejoin(o, o.survivorMark);
}

/** Rule 1: deleted, or a quorum back, before the fork. */
function planCallOff(o: RecoveryObserved): RecoveryStep | undefined {
  if (forked(o)) return undefined;
  const reason = o.deleting === true ? "Deleted" : o.quorum ? "QuorumReturned" : undefined;
  if (reason === undefined) return undefined;
  const started = o.survivorMark !== undefined || o.finalizer === true;
  if (reason === "QuorumReturned" && !started) return undefined; // refused QuorumHealthy (rule 2)
  const why =
    reason === "Deleted"
      ? `VaultRecovery ${o.request} is being deleted before the cluster was forked`
      : `a quorum of raft voters answers again before VaultRecovery ${o.request} forked the cluster`;
  if (o.survivorMark !== undefined) {
    return {
      type: "RemoveSurvivorMark",
      server: o.survivorMark,
      message: `${why}: removing the survivor mark from the claim of ${o.survivorMark}`,
    };
  }
  return {
    type: "CallOff",
    reason,
    message:
      reason === "Deleted"
        ? `recovery called off: VaultRecovery ${o.request} was deleted before the cluster was forked; no data was changed, and the stopped servers start again on their own claims`
        : `recovery called off (Cancelled): a quorum of raft voters answers again before the cluster was forked, so there is nothing to recover; no data was changed, and the stopped servers start again on their own claims`,
  };
}

/** Rule 2: nothing is started while a quorum answers, or while the loss is not confirmed by the kubelet. */
function refusal(o: RecoveryObserved): RecoveryStep | undefined {
  if (o.quorum) {
    return {
      type: "Refuse",
      reason: "QuorumHealthy",
      message: `VaultCluster ${o.cluster} has a quorum (${o.active ?? "a node"} is active with a majority of its raft voters unsealed): there is nothing to recover; nothing was changed`,
    };
  }
  const voters = o.voters;
  const ready = o.servers.filter((s) => voters.includes(s.name) && s.pod === "live" && s.ready === true);
  if (voters.length > 0 && ready.length >= quorum(voters.length)) {
    return {
      type: "Refuse",
      reason: "QuorumLossUnconfirmed",
      message: `no active node answers the operator, but ${ready.length} of ${voters.length} raft voters' pods are Ready by their kubelet (${ready.map((s) => s.name).join(", ")}: unsealed and serving), enough to elect a leader: the operator may be cut off from them (a NetworkPolicy, DNS, its own network) rather than the quorum lost; nothing was changed. Fix what cuts the operator off; if the quorum is then still lost, create another VaultRecovery`,
    };
  }
  return undefined;
}

/** The candidates' table for status: what each server reported. */
function candidateTable(o: RecoveryObserved): VaultRecoveryCandidate[] {
  return o.servers.map((s): VaultRecoveryCandidate => {
    const excluded = exclusion(o, s);
    const index = s.index !== undefined && "applied" in s.index ? s.index : undefined;
    return {
      server: s.name,
      ...(index === undefined ? {} : { appliedIndex: index.applied, committedIndex: index.committed }),
      ...(excluded === undefined ? {} : { excluded }),
    };
  });
}

/** Why `s` cannot be the survivor, or undefined when it can (it answered its indexes for this cluster). */
function exclusion(o: RecoveryObserved, s: RecoveryServer): string | undefined {
  if (!s.claim) return "no data claim";
  if (s.pod !== "live") return s.pod === "none" ? "no pod" : `its pod is ${s.pod}`;
  const v = s.vault;
  if (v === undefined || !v.reachable) return `does not answer${v?.error ? `: ${v.error}` : ""}`;
  if (!v.initialized) return "uninitialized (no data)";
  if (o.knownClusterID !== undefined && v.clusterID !== undefined && v.clusterID !== o.knownClusterID) {
    return `answers for another cluster (cluster_id ${v.clusterID}, this cluster is ${o.knownClusterID})`;
  }
  if (v.sealed) return "sealed";
  if (s.index === undefined) return "its raft indexes were not asked";
  if ("error" in s.index) return `cannot say its raft indexes: ${s.index.error}`;
  return undefined;
}

/** Rule 3: spec.survivor checked, or the server with the newest data. */
function chooseSurvivor(o: RecoveryObserved): RecoveryStep {
  const candidates = candidateTable(o);
  if (o.named !== undefined) {
    const s = o.servers.find((x) => x.name === o.named);
    if (s === undefined || !s.claim) {
      return {
        type: "Refuse",
        reason: "SurvivorHasNoData",
        field: "spec.survivor",
        message: `spec.survivor ${o.named} has no data claim (${claimOf(o.named)}${s?.claimTerminating === true ? " is being deleted" : " does not exist"}): it cannot be recovered from; nothing was changed`,
      };
    }
    const v = s.vault;
    if (v?.reachable === true && !v.initialized) {
      return {
        type: "Refuse",
        reason: "SurvivorHasNoData",
        field: "spec.survivor",
        message: `spec.survivor ${o.named} answers uninitialized: its claim holds no Vault data; nothing was changed`,
      };
    }
    if (
      v?.reachable === true &&
      o.knownClusterID !== undefined &&
      v.clusterID !== undefined &&
      v.clusterID !== o.knownClusterID
    ) {
      return {
        type: "Refuse",
        reason: "SurvivorOtherCluster",
        field: "spec.survivor",
        message: `spec.survivor ${o.named} answers for another Vault cluster (cluster_id ${v.clusterID}; this VaultCluster is ${o.knownClusterID}); nothing was changed`,
      };
    }
    const index = s.index !== undefined && "applied" in s.index ? s.index.applied : undefined;
    return {
      type: "MarkSurvivor",
      server: s.name,
      ...(index === undefined ? {} : { appliedIndex: index }),
      candidates,
      message: `recovering from ${s.name}, named by spec.survivor${index === undefined ? "" : ` (raft applied index ${index})`}`,
    };
  }
  // A sealed server of this cluster is unsealed first: raft runs (and reports its indexes) only once unsealed.
  const sealed = o.servers.find(
    (s) =>
      s.claim &&
      s.pod === "live" &&
      s.vault?.reachable === true &&
      s.vault.initialized &&
      s.vault.sealed &&
      !(
        o.knownClusterID !== undefined &&
        s.vault.clusterID !== undefined &&
        s.vault.clusterID !== o.knownClusterID
      ),
  );
  if (sealed !== undefined) {
    return {
      type: "Unseal",
      server: sealed.name,
      message: `unsealing ${sealed.name} so that it can report its raft indexes (the survivor is the server with the newest data)`,
    };
  }
  const usable = o.servers.filter((s) => exclusion(o, s) === undefined);
  const unclear = o.servers.filter(
    (s) =>
      s.claim &&
      s.pod === "live" &&
      s.vault?.reachable === true &&
      s.vault.initialized &&
      !s.vault.sealed &&
      (s.index === undefined || "error" in s.index) &&
      !(
        o.knownClusterID !== undefined &&
        s.vault.clusterID !== undefined &&
        s.vault.clusterID !== o.knownClusterID
      ),
  );
  const table = candidates
    .map((c) => `${c.server}: ${c.excluded ?? `applied ${c.appliedIndex}, committed ${c.committedIndex}`}`)
    .join("; ");
  if (unclear.length > 0) {
    return {
      type: "Refuse",
      reason: "SurvivorUnclear",
      field: "spec.survivor",
      message: `cannot judge which server has the newest data: ${unclear.map((s) => s.name).join(", ")} answer${unclear.length === 1 ? "s" : ""} for this cluster but cannot say ${unclear.length === 1 ? "its" : "their"} raft indexes (${table}); nothing was changed. Name the server to recover from in spec.survivor of a new VaultRecovery`,
    };
  }
  if (usable.length === 0) {
    return {
      type: "Refuse",
      reason: "NoSurvivor",
      field: "spec.survivor",
      message: `no server with a data claim answers for this cluster with its raft indexes (${table || "no server"}): the operator cannot choose a survivor; nothing was changed. Name one in spec.survivor of a new VaultRecovery if you know its data is the newest`,
    };
  }
  // A server that keeps a data claim but could not be asked (its pod gone, Pending, not answering) may hold newer
  // data than any that answered, and its claim is replaced once the survivor serves alone: the operator does not
  // make that choice alone. Naming the survivor in spec.survivor does.
  const unasked = o.servers.filter(
    (s) =>
      s.claim &&
      !usable.includes(s) &&
      !unclear.includes(s) &&
      !(s.vault?.reachable === true && !s.vault.initialized) &&
      !(
        s.vault?.reachable === true &&
        o.knownClusterID !== undefined &&
        s.vault.clusterID !== undefined &&
        s.vault.clusterID !== o.knownClusterID
      ),
  );
  if (unasked.length > 0) {
    const names = unasked.map((s) => s.name).join(", ");
    return {
      type: "Refuse",
      reason: "SurvivorUnclear",
      field: "spec.survivor",
      message: `cannot judge which server has the newest data: ${names} ${unasked.length === 1 ? "keeps its data claim" : "keep their data claims"} but cannot be asked ${unasked.length === 1 ? "its" : "their"} raft indexes (${table}), and ${unasked.length === 1 ? "its claim" : "their claims"} would be replaced once the survivor serves alone; nothing was changed. Bring ${unasked.length === 1 ? "it" : "them"} back so the operator can compare, or name the server to recover from in spec.survivor of a new VaultRecovery (accepting that the data only ${names} ${unasked.length === 1 ? "holds" : "hold"} is lost)`,
    };
  }
  const indexOf = (s: RecoveryServer) =>
    s.index !== undefined && "applied" in s.index ? s.index : { applied: 0, committed: 0 };
  const best = [...usable].sort(
    (a, b) =>
      indexOf(b).applied - indexOf(a).applied ||
      indexOf(b).committed - indexOf(a).committed ||
      a.ordinal - b.ordinal,
  )[0];
  if (best === undefined) throw new Error("unreachable: no usable survivor");
  const i = indexOf(best);
  return {
    type: "MarkSurvivor",
    server: best.name,
    appliedIndex: i.applied,
    candidates,
    message: `recovering from ${best.name}, the server with the newest data (raft applied index ${i.applied}, committed ${i.committed}; ${table})`,
  };
}

/** Rule 4: stop the others, keep their claims, fence, then fork. */
function beforeFork(o: RecoveryObserved, name: string, survivor: RecoveryServer | undefined): RecoveryStep {
  if (survivor === undefined || !survivor.claim) {
    // Marked, and its claim went since (deleted by hand): nothing was forked; refuse and give the mark back.
    return {
      type: "Refuse",
      reason: "SurvivorLost",
      message: `the claim ${claimOf(name)} of the chosen survivor ${name} is gone or being deleted before the fork: nothing was forked; create another VaultRecovery`,
    };
  }
  const others = o.servers.filter((s) => s.name !== name);
  const running = others.find((s) => s.pod === "live" || s.pod === "ended");
  if (running !== undefined) {
    return {
      type: "StopServer",
      server: running.name,
      message: `stopping ${running.name} (its pod is deleted; its data claim is kept until ${name} serves alone) so that it cannot answer next to the recovered cluster`,
    };
  }
  const fenced = fence(
    others
      .filter((s) => s.pod === "terminating")
      .map((s) => ({
        name: s.name,
        ...(s.terminatingSince === undefined ? {} : { terminatingSince: s.terminatingSince }),
        ...(s.node === undefined ? {} : { node: s.node }),
      })),
    `restarting ${name} on a peers.json that names only itself`,
    { operand: "Vault", server: "server" },
  );
  if (fenced !== undefined) return fenced;
  const replaced = others
    .filter((s) => s.claim && s.claimUID !== undefined)
    .map((s) => ({ claim: claimOf(s.name), uid: s.claimUID ?? "" }));
  return {
    type: "Fork",
    server: name,
    replaced,
    message: `every other server's pod is gone: restarting ${name} on its data with a peers.json that names only itself (Vault's outage recovery); the claims ${replaced.map((r) => r.claim).join(", ") || "(none)"} are kept until it serves alone`,
  };
}

/** Rule 5: the survivor on peers.json, unsealed, verified the only voter and leader. */
function afterFork(o: RecoveryObserved, name: string, survivor: RecoveryServer | undefined): RecoveryStep {
  // Nothing of the old cluster may run next to the fork (a human may have made a pod again).
  const stray = o.servers.find((s) => s.name !== name && (s.pod === "live" || s.pod === "ended"));
  if (stray !== undefined) {
    return {
      type: "StopServer",
      server: stray.name,
      message: `stopping ${stray.name} again: the cluster was forked on ${name}, and ${stray.name}'s old data must not rejoin it`,
    };
  }
  if (survivor === undefined || !survivor.claim) {
    return {
      type: "Wait",
      reason: "SurvivorClaimLost",
      message: `the claim ${claimOf(name)} of the survivor ${name} is gone after the fork: the recovery cannot go on; restore the claim, or recover the cluster from a backup`,
    };
  }
  if (survivor.pod !== "live" || survivor.recoveryPod !== true) {
    return {
      type: "StartSurvivor",
      server: name,
      message: `starting ${name} on its data with the init container that writes peers.json naming only itself`,
    };
  }
  if (survivor.initFailure !== undefined) {
    return {
      type: "Wait",
      reason: "PeersJsonFailed",
      message: `the init container raft-recovery of ${name} fails: ${survivor.initFailure}; peers.json is not written and Vault does not start (kubectl logs ${name} -c raft-recovery)`,
      pods: [name],
    };
  }
  const v = survivor.vault;
  if (v === undefined || !v.reachable) {
    return {
      type: "Wait",
      reason: "SurvivorStarting",
      message: `waiting for ${name} to answer on peers.json${v?.reachable === false && v.error ? `: ${v.error}` : ""}`,
      pods: [name],
    };
  }
  if (!v.initialized) {
    return {
      type: "Wait",
      reason: "SurvivorUninitialized",
      message: `${name} answers uninitialized after the fork: its claim holds no Vault data; restore its data or recover from a backup`,
      pods: [name],
    };
  }
  if (v.sealed) {
    return {
      type: "Unseal",
      server: name,
      message: `unsealing ${name}: Vault applies peers.json as raft starts`,
    };
  }
  if (o.active !== name) {
    return {
      type: "Wait",
      reason: "ElectingLeader",
      message: `${name} is unsealed and not yet active: waiting for it to elect itself, the only voter of peers.json`,
      pods: [name],
    };
  }
  if (o.raft === undefined || "error" in o.raft) {
    return {
      type: "Wait",
      reason: "RaftUnknown",
      message: `${name} is active; its raft configuration could not be read yet${o.raft !== undefined && "error" in o.raft ? `: ${o.raft.error}` : ""}`,
    };
  }
  const servers = o.raft.servers;
  const alone = servers.length === 1 && servers[0]?.nodeID === name && servers[0].voter && servers[0].leader;
  if (!alone) {
    return {
      type: "Wait",
      reason: "PeersNotApplied",
      message: `${name} is active but its raft configuration lists ${servers.map((s) => `${s.nodeID}${s.voter ? "" : " (non-voter)"}`).join(", ")}, not itself alone: peers.json was not applied (see the log of its init container raft-recovery and of vault)`,
      pods: [name],
    };
  }
  return {
    type: "Verified",
    server: name,
    message: `${name} serves alone: the active node and the only raft voter; the other servers' old claims are replaced next and they join fresh`,
  };
}

/** Rule 6: the replaced claims deleted, then the cluster's own planner rejoins the others. */
function rejoin(o: RecoveryObserved, name: string): RecoveryStep {
  for (const r of o.replaced) {
    const s = o.servers.find((x) => x.claimUID === r.uid);
    if (s === undefined) continue;
    if (s.pod === "live" || s.pod === "ended") {
      return {
        type: "StopServer",
        server: s.name,
        message: `stopping ${s.name} before its old claim is replaced`,
      };
    }
    return {
      type: "WipeServer",
      server: s.name,
      claim: r.claim,
      message: `deleting the old claim ${r.claim} of ${s.name}: its data is an older copy of the cluster than ${name}'s; ${s.name} is made again on a new claim and joins fresh`,
    };
  }
  return {
    type: "Rejoin",
    message: `${name} serves alone; the other servers are made again on new claims and join it (the VaultCluster's own steps)`,
  };
}
