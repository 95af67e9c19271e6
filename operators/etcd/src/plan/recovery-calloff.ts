// Calling a recovery off (issue 27, item 2): an EtcdRestore deleted, or a quorum answering again, while the recovery
// has started but not forked gives back what the request took, one step per reconcile, each re-planned from the
// objects: every claim it kept (labelled kept-by-restore, disowned) is the cluster's again, then the survivor mark is
// removed, then the request ends (its finalizer released, or Cancelled). Everything before the fork is reversible;
// the fork (the survivor's claim marked "force", or the seed's claim and restore Job made) is not, so after it
// nothing calls the recovery off: a deletion waits for its end (a half-forked cluster is worse than either), and a
// quorum answering then is the forked cluster's own. Pure: planned from what RecoveryObserved holds.
import { RECOVERY_FINALIZER } from "../api/etcd-restore.ts";
import type { CallOffReason, RecoveryMember, RecoveryObserved, RecoveryStep } from "./recovery-types.ts";

export type { CallOffReason } from "./recovery-types.ts";

/**
 * The step that forked the cluster, if it has been taken: from a survivor, a phase on the marked claim (or its pod
 * built with --force-new-cluster) -> "ForceNewCluster"; from a backup, the seed's claim or this request's restore Job
 * exists -> "StartRestore" (a Job whose claim was deleted is held too: it restores into a claim of that name).
 */
export function forkedAt(o: RecoveryObserved): "ForceNewCluster" | "StartRestore" | undefined {
  if (o.from === "Backup") {
    const b = o.backup;
    if (b === undefined) return undefined;
    const seeded =
      b.restore.claims.some((c) => c.name === b.seed) ||
      b.restore.job !== undefined ||
      o.members.some((m) => m.name === b.seed && (m.claimOwned || m.pod));
    return seeded ? "StartRestore" : undefined;
  }
  const forced = o.members.some(
    (m) => m.survivorMark === true && (m.recoveryPhase !== undefined || m.forceNewCluster === true),
  );
  return forced ? "ForceNewCluster" : undefined;
}

/** What a deleted EtcdRestore says while the fork holds its deletion; undefined when it is not held. */
export function deletionHeld(o: RecoveryObserved): string | undefined {
  if (o.deleting !== true) return undefined;
  const step = forkedAt(o);
  if (step === undefined) return undefined;
  return `deletion waits for the recovery to finish (the cluster was forked at ${step}); remove the finalizer by hand only if the operator is gone for good or the recovery can never finish (finalizer ${RECOVERY_FINALIZER}), and then finish or undo the recovery yourself: the claims it kept are labelled etcd.capstan.dev/kept-by-restore=${o.request}`;
}

/**
 * The next call-off step, or undefined when the recovery is not called off. In order: neither deleted nor a quorum
 * answering -> undefined; forked -> undefined (the recovery goes on; a deletion is held, see deletionHeld); a quorum
 * answering a request that never started (no finalizer, nothing kept nor marked) -> undefined (refused QuorumHealthy
 * as before); a claim this request kept -> GiveBackClaim, one at a time by name; the survivor mark ->
 * RemoveSurvivorMark; else CallOff (deleted: the finalizer released; a quorum back: Cancelled).
 */
export function planCallOff(o: RecoveryObserved): RecoveryStep | undefined {
  const reason: CallOffReason | undefined =
    o.deleting === true ? "Deleted" : o.quorum ? "QuorumReturned" : undefined;
  if (reason === undefined || forkedAt(o) !== undefined) return undefined;
  const byName = [...o.members].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const started = (m: RecoveryMember) => m.claimKept === true || m.survivorMark === true;
  if (reason === "QuorumReturned" && o.finalizer !== true && !byName.some(started)) return undefined;
  const why =
    reason === "Deleted"
      ? `EtcdRestore ${o.request} is being deleted before the recovery forked the cluster`
      : `a quorum of members answers again before EtcdRestore ${o.request} forked the cluster`;
  const kept = byName.find((m) => m.claimKept === true);
  if (kept !== undefined) {
    return {
      type: "GiveBackClaim",
      name: kept.name,
      message: `${why}: giving the claim of ${kept.name} back to the cluster (the kept-by-restore label removed, owned as storage.whenDeleted says)`,
    };
  }
  const marked = byName.find((m) => m.survivorMark === true);
  if (marked !== undefined) {
    return {
      type: "RemoveSurvivorMark",
      name: marked.name,
      message: `${why}: removing the survivor mark from the claim of ${marked.name}`,
    };
  }
  return {
    type: "CallOff",
    reason,
    message:
      reason === "Deleted"
        ? `recovery called off: EtcdRestore ${o.request} was deleted before the cluster was forked; every claim it kept is the cluster's again and the stopped members start again on their own data`
        : `recovery called off (Cancelled): a quorum of members answers again before the cluster was forked, so there is nothing to recover; every claim it kept is the cluster's again and the stopped members start again on their own data`,
  };
}
