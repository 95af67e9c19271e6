// Opt-in automatic disaster recovery (spec.recovery.automatic): the pure decision, each reconcile of a cluster the
// membership planner runs (no EtcdRestore active), of what to record about quorum loss and whether to create the ONE
// EtcdRestore from: Backup of the newest Succeeded EtcdBackup. The clock starts at status.quorumLostSince, written
// the first time no quorum is seen, so an operator restart or a new leader neither resets nor shortens the wait;
// the EtcdRestore's name is derived from that time, so a restart between its creation and the next reconcile
// cannot make a second one for the same loss. A Failed automatic recovery blocks every later one: a human decides.

/** Default and least spec.recovery.automatic.afterSeconds. */
export const DEFAULT_AUTOMATIC_AFTER_SECONDS = 600;
export const MIN_AUTOMATIC_AFTER_SECONDS = 300;

/** What the automatic-recovery decision reads. */
export interface AutomaticRecoveryObserved {
  /** spec.recovery.automatic.enabled. */
  enabled: boolean;
  /** spec.recovery.automatic.afterSeconds. */
  afterSeconds: number;
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
  backups: { name: string; phase?: string; completionTime?: Date; clusterID?: string }[];
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
  /** Create the EtcdRestore (from: Backup of `backup`), with an Event. */
  | { type: "CreateRestore"; name: string; backup: string; message: string }
  /** No Succeeded EtcdBackup of this cluster: Degraded naming spec.recovery.automatic, with an Event. */
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
 * still active -> Wait (whoever made it). An automatic one Failed -> Blocked. Not yet afterSeconds since the loss,
 * or paused -> Wait. The restore for this loss exists already (ended: Succeeded and the loss is back) -> Wait. No
 * Succeeded EtcdBackup -> NoBackup. Else CreateRestore of the newest (by completion time, then name).
 */
export function planAutomaticRecovery(o: AutomaticRecoveryObserved): AutomaticRecoveryDecision {
  if (o.quorum || !o.bootstrapped || o.unconfirmed !== undefined) return { type: "None" };
  const lostSince = o.lostSince ?? o.now;
  const wait = (message: string): AutomaticRecoveryDecision => ({ type: "Wait", lostSince, message });
  if (!o.enabled) return wait("quorum lost; automatic recovery is off");
  const active = o.restores.find((r) => r.phase !== "Succeeded" && r.phase !== "Failed");
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
  const after = Math.max(o.afterSeconds, MIN_AUTOMATIC_AFTER_SECONDS) * 1000;
  const due = new Date(lostSince.getTime() + after);
  if (o.now < due) {
    return wait(
      `quorum lost since ${lostSince.toISOString()}; ${FIELD} recovers from the newest backup at ${due.toISOString()}`,
    );
  }
  if (o.paused) return wait(`quorum lost since ${lostSince.toISOString()}; spec.paused holds ${FIELD} back`);
  const name = o.nameFor(lostSince);
  if (o.restores.some((r) => r.name === name)) {
    return wait(`EtcdRestore ${name} for this loss of quorum exists already`);
  }
  const succeeded = o.backups.filter((b) => b.phase === "Succeeded");
  const newest = succeeded
    .filter((b) => b.clusterID !== undefined && o.clusterIDs.includes(b.clusterID))
    .sort(
      (a, b) =>
        (b.completionTime?.getTime() ?? 0) - (a.completionTime?.getTime() ?? 0) ||
        (a.name < b.name ? 1 : a.name > b.name ? -1 : 0),
    )[0];
  if (newest === undefined) {
    const foreign = succeeded.map((b) => `${b.name} (${b.clusterID ?? "no cluster ID recorded"})`);
    return {
      type: "NoBackup",
      lostSince,
      message:
        foreign.length === 0
          ? `quorum lost since ${lostSince.toISOString()} and ${FIELD} is on, but this cluster has no Succeeded EtcdBackup to recover from: recover by hand (an EtcdRestore from: Survivor, or from: Backup naming a snapshot)`
          : `quorum lost since ${lostSince.toISOString()} and ${FIELD} is on, but no Succeeded EtcdBackup was taken from this cluster (cluster ID ${o.clusterIDs.join(" or ") || "unknown"}): ${foreign.join(", ")} hold other data (a cluster deleted and created again under the same name?) and are never restored automatically: recover by hand (an EtcdRestore from: Survivor, or from: Backup naming the snapshot you choose)`,
    };
  }
  return {
    type: "CreateRestore",
    lostSince,
    name,
    backup: newest.name,
    message: `quorum lost since ${lostSince.toISOString()} (over ${after / 1000} s, ${FIELD}): recovering from the newest backup, EtcdBackup ${newest.name}, with EtcdRestore ${name}; writes made after that backup are lost`,
  };
}
