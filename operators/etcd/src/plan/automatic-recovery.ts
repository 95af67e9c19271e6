// Opt-in automatic disaster recovery (spec.recovery.automatic): the pure decision, each reconcile of a cluster the
// membership planner runs (no EtcdRestore active), of what to record about quorum loss and whether to create the ONE
// EtcdRestore: from: Survivor when a voting member still answers with this cluster's data at least as new as the
// newest backup's, else from: Backup of the newest Succeeded EtcdBackup of this cluster. The clock starts at
// status.quorumLostSince, written the first time no quorum is seen, so an operator restart or a new leader neither
// resets nor shortens the wait; the EtcdRestore's name is derived from that time, so a restart between its creation
// and the next reconcile cannot make a second one for the same loss. A Failed automatic recovery blocks every later
// one: a human decides.
//
// Kubernetes' own failover comes first. A node that stops answering has its pods evicted after 300 s (the default
// tolerations of node.kubernetes.io/unreachable and not-ready) and its volumes force-detached 6 minutes after that,
// after which the members' pods start again elsewhere on their own data and the quorum comes back with nothing lost.
// So the wait is never shorter than the operator's floor (default 900 s: eviction, detach, and 4 minutes to schedule,
// pull and rejoin), and while any member's pod is being deleted (that failover, or a pod stuck Terminating on a node
// that is gone) the clock does not run: it starts again once the pods are gone, giving their replacements the whole
// wait to come back on their data.

import { chooseSurvivor } from "./recovery.ts";
import type { RecoveryMember } from "./recovery-types.ts";

/** Default spec.recovery.automatic.afterSeconds. */
export const DEFAULT_AUTOMATIC_AFTER_SECONDS = 900;
/** The least spec.recovery.automatic.afterSeconds the API accepts (a lower operator floor is for test clusters). */
export const MIN_AUTOMATIC_AFTER_SECONDS = 300;
/**
 * The operator's default floor under afterSeconds (--automatic-recovery-floor-seconds): Kubernetes' default node
 * failover (eviction after 300 s, force-detach 360 s later) plus time for the member to start again elsewhere.
 */
export const DEFAULT_AUTOMATIC_FLOOR_SECONDS = 900;

/** What the automatic-recovery decision reads. */
export interface AutomaticRecoveryObserved {
  /** spec.recovery.automatic.enabled. */
  enabled: boolean;
  /** spec.recovery.automatic.afterSeconds. */
  afterSeconds: number;
  /**
   * The operator's floor under afterSeconds (default {@link DEFAULT_AUTOMATIC_FLOOR_SECONDS}): the wait is the
   * larger of the two, so a cluster's node failover always comes first.
   */
  floorSeconds?: number;
  /** Member pods being deleted that have not gone yet: while any is, the clock does not run. */
  terminating?: { name: string; since: Date }[];
  /**
   * The members that answered their own status alone (no quorum needed), when they were asked (only once a recovery
   * is due): the voter with the newest data of this cluster is recovered from rather than a backup.
   */
  survivors?: RecoveryMember[];
  /** spec.paused: nothing is created while paused (the clock still runs). */
  paused: boolean;
  /** The cluster was bootstrapped (status.clusterID): a cluster still starting has no quorum to lose. */
  bootstrapped: boolean;
  /** A quorum of healthy voters answers now. */
  quorum: boolean;
  /**
   * No quorum answers the operator, but independent evidence does not confirm a loss (plan/quorum-evidence.ts: a
   * majority of the voters' pods Ready by their kubelet, or the operator's own authentication or TLS failing).
   */
  unconfirmed?: { reason: string; message: string };
  /** status.quorumLostSince, when recorded. */
  lostSince?: Date;
  now: Date;
  /** The EtcdRestores of this cluster. */
  restores: { name: string; phase?: string; automatic: boolean }[];
  /** The EtcdBackups naming this cluster, with the cluster ID each snapshot was taken from (status.clusterID). */
  backups: { name: string; phase?: string; completionTime?: Date; clusterID?: string; revision?: number }[];
  /**
   * The cluster IDs whose snapshots hold this cluster's data: its own (status.clusterID) and, after a restore from
   * a backup (which starts a new cluster ID), the ID that backup was taken from. A backup of any other ID (a cluster
   * deleted and created again under the same name) or of none recorded is never restored automatically.
   */
  clusterIDs: string[];
  /** The name of the EtcdRestore for a loss that began at `since` (deterministic). */
  nameFor: (since: Date) => string;
}

/** What to do. Every decision carries what status.quorumLostSince must say afterwards. */
export type AutomaticRecoveryDecision = { lostSince?: Date } & (
  | { type: "None" }
  /** Quorum lost, not yet long enough (or disabled, or paused): nothing but the clock. */
  | { type: "Wait"; message: string }
  /** Create the EtcdRestore (from: Survivor, or from: Backup of `backup`), with an Event. */
  | ({ type: "CreateRestore"; name: string; message: string } & (
      | { from: "Survivor"; survivor: string }
      | { from: "Backup"; backup: string }
    ))
  /**
   * Member pods are being deleted (Kubernetes' failover of their node, or a pod stuck Terminating): the clock does
   * not run (quorumLostSince is cleared) until they are gone.
   */
  | { type: "Failover"; pods: string[]; message: string }
  /** No member answers with this cluster's data and no Succeeded EtcdBackup of it: Degraded naming the field. */
  | { type: "NoBackup"; message: string }
  /** An automatic recovery of this cluster failed: no other until a human deletes it (or recovers by hand). */
  | { type: "Blocked"; name: string; message: string }
);

const FIELD = "spec.recovery.automatic";

/**
 * In order: a quorum answers (or the cluster was never bootstrapped) -> None, quorumLostSince cleared. The loss
 * is not confirmed by independent evidence (`unconfirmed`) -> None too: the clock is reset, so an armed one never
 * fires while the operator is merely cut off, and starts again only once a loss is confirmed. Else the
 * loss is dated (the recorded time, or now). Disabled -> Wait (only the clock). An EtcdRestore of this cluster
 * still active -> Wait (whoever made it). An automatic one Failed -> Blocked. A member's pod being deleted ->
 * Failover, the clock cleared (Kubernetes' failover first). Not yet the larger of afterSeconds and the operator's
 * floor since the loss, or paused -> Wait. The restore for this loss exists already (ended: Succeeded and the loss
 * is back) -> Wait. Then the source, of this cluster's data only (by cluster ID): the voter that answers with the
 * newest data (raft index, then revision) when its revision is at least the newest backup's -> CreateRestore from:
 * Survivor (nothing acknowledged by it is lost); else the newest Succeeded backup (by completion time, then name)
 * -> CreateRestore from: Backup; neither -> NoBackup.
 */
export function planAutomaticRecovery(o: AutomaticRecoveryObserved): AutomaticRecoveryDecision {
  if (o.quorum || !o.bootstrapped || o.unconfirmed !== undefined) return { type: "None" };
  const lostSince = o.lostSince ?? o.now;
  const wait = (message: string): AutomaticRecoveryDecision => ({ type: "Wait", lostSince, message });
  if (!o.enabled) return wait("quorum lost; automatic recovery is off");
  const active = o.restores.find(
    (r) => r.phase !== "Succeeded" && r.phase !== "Failed" && r.phase !== "Cancelled",
  );
  if (active !== undefined) return wait(`EtcdRestore ${active.name} is under way`);
  const failed = o.restores
    .filter((r) => r.automatic && r.phase === "Failed")
    .sort((a, b) => (a.name < b.name ? -1 : 1))[0];
  if (failed !== undefined) {
    return {
      type: "Blocked",
      lostSince,
      name: failed.name,
      message: `the automatic recovery ${failed.name} failed: ${FIELD} makes no other; recover by hand (an EtcdRestore) and delete ${failed.name} to re-arm it`,
    };
  }
  const terminating = [...(o.terminating ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1));
  if (terminating.length > 0) {
    const pods = terminating.map((p) => p.name);
    return {
      type: "Failover",
      pods,
      message: `${FIELD} waits for Kubernetes' failover: the pods of ${terminating.map((p) => `${p.name} (being deleted since ${p.since.toISOString()})`).join(", ")} have not gone yet; the clock starts once they are gone, so their members can come back on their own data. A pod stuck Terminating on a node that is down for good is force-deleted by the node's lifecycle or by you (kubectl delete pod --force) once the node is confirmed down`,
    };
  }
  const after = Math.max(o.afterSeconds, o.floorSeconds ?? DEFAULT_AUTOMATIC_FLOOR_SECONDS) * 1000;
  const due = new Date(lostSince.getTime() + after);
  if (o.now < due) {
    return wait(
      `quorum lost since ${lostSince.toISOString()}; ${FIELD} recovers (from the member with the newest data, or the newest backup) at ${due.toISOString()}`,
    );
  }
  if (o.paused) return wait(`quorum lost since ${lostSince.toISOString()}; spec.paused holds ${FIELD} back`);
  const name = o.nameFor(lostSince);
  if (o.restores.some((r) => r.name === name)) {
    return wait(`EtcdRestore ${name} for this loss of quorum exists already`);
  }
  const since = `quorum lost since ${lostSince.toISOString()} (over ${after / 1000} s, ${FIELD})`;
  const succeeded = o.backups.filter((b) => b.phase === "Succeeded");
  const newest = succeeded
    .filter((b) => b.clusterID !== undefined && o.clusterIDs.includes(b.clusterID))
    .sort(
      (a, b) =>
        (b.completionTime?.getTime() ?? 0) - (a.completionTime?.getTime() ?? 0) ||
        (a.name < b.name ? 1 : a.name > b.name ? -1 : 0),
    )[0];
  // The same choice a recovery from a survivor makes (plan/recovery.ts), among members of this cluster's data only.
  const chosen = chooseSurvivor(
    (o.survivors ?? []).filter((m) => m.status !== undefined && o.clusterIDs.includes(m.status.clusterID)),
  );
  const survivor = chosen?.status === undefined ? undefined : { name: chosen.name, ...chosen.status };
  if (survivor !== undefined && (newest?.revision === undefined || survivor.revision >= newest.revision)) {
    return {
      type: "CreateRestore",
      lostSince,
      name,
      from: "Survivor",
      survivor: survivor.name,
      message: `${since}: recovering from ${survivor.name}, the member with the newest data (revision ${survivor.revision}${newest === undefined ? "" : `; the newest backup, EtcdBackup ${newest.name}, is older`}), with EtcdRestore ${name}; writes it did not receive are lost`,
    };
  }
  if (newest === undefined) {
    const foreign = succeeded.map((b) => `${b.name} (${b.clusterID ?? "no cluster ID recorded"})`);
    return {
      type: "NoBackup",
      lostSince,
      message:
        foreign.length === 0
          ? `quorum lost since ${lostSince.toISOString()} and ${FIELD} is on, but no member answers with this cluster's data and this cluster has no Succeeded EtcdBackup to recover from: recover by hand (an EtcdRestore from: Survivor, or from: Backup naming a snapshot)`
          : `quorum lost since ${lostSince.toISOString()} and ${FIELD} is on, but no member answers with this cluster's data and no Succeeded EtcdBackup was taken from this cluster (cluster ID ${o.clusterIDs.join(" or ") || "unknown"}): ${foreign.join(", ")} hold other data (a cluster deleted and created again under the same name?) and are never restored automatically: recover by hand (an EtcdRestore from: Survivor, or from: Backup naming the snapshot you choose)`,
    };
  }
  const older =
    survivor === undefined
      ? ""
      : ` (${survivor.name} answers, but at revision ${survivor.revision}, older than the backup's ${newest.revision})`;
  return {
    type: "CreateRestore",
    lostSince,
    name,
    from: "Backup",
    backup: newest.name,
    message: `${since}: recovering from the newest backup, EtcdBackup ${newest.name}${older}, with EtcdRestore ${name}; writes made after that backup are lost`,
  };
}
