// The etcd operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { Counter, Gauge, type Registry } from "prom-client";

/** Member states counted by capstan_etcd_cluster_members. */
export const MEMBER_STATES = ["healthy", "unhealthy", "learner"] as const;
/** One of {@link MEMBER_STATES}. */
export type MemberState = (typeof MEMBER_STATES)[number];

/** Labels of capstan_etcd_certificate_expiry_timestamp_seconds beside the cluster's. */
type CertificateLabel = "secret" | "key" | "source";

/** One certificate a cluster uses, for {@link EtcdOperatorMetrics.certificatesObserved}. */
export interface CertificateSeries {
  /** The Secret holding it (in the cluster's namespace). */
  secret: string;
  /** tls.crt or ca.crt. */
  key: string;
  /** Where spec.tls takes it from: secretRef, certManager or operatorManaged. */
  source: string;
  notAfter: Date;
  /** When the operator starts warning about it: notAfter less its warning window (plan/certificate-expiry.ts). */
  warnFrom: Date;
}

/** Metrics of the EtcdCluster controller, registered on the manager's registry. */
export class EtcdOperatorMetrics {
  /** capstan_etcd_cluster_members{object_namespace,object_name,state}: members by state (learners counted apart). */
  readonly members: Gauge<"object_namespace" | "object_name" | "state">;
  /** capstan_etcd_cluster_quorum{object_namespace,object_name}: 1 while a quorum of voting members is healthy. */
  readonly quorum: Gauge<"object_namespace" | "object_name">;
  /** capstan_etcd_cluster_has_leader{object_namespace,object_name}: 1 while the cluster has a leader. */
  readonly hasLeader: Gauge<"object_namespace" | "object_name">;
  /** capstan_etcd_membership_changes_total{object_namespace,object_name,step}: membership and pod steps taken. */
  readonly steps: Counter<"object_namespace" | "object_name" | "step">;
  /**
   * capstan_etcd_backup_last_success_timestamp_seconds{object_namespace,object_name}: completion time of the
   * newest successful EtcdBackup of the EtcdCluster object_name (set again from every succeeded backup after a
   * restart).
   */
  readonly lastBackupSuccess: Gauge<"object_namespace" | "object_name">;
  /** capstan_etcd_backup_failures_total{object_namespace,object_name}: EtcdBackups of the cluster that ended Failed. */
  readonly backupFailures: Counter<"object_namespace" | "object_name">;
  /**
   * capstan_etcd_backup_schedule_stale{object_namespace,object_name}: 1 while the EtcdBackupSchedule object_name is
   * Degraded BackupStale (its newest successful backup is older than twice its interval), else 0.
   */
  readonly scheduleStale: Gauge<"object_namespace" | "object_name">;
  /**
   * capstan_etcd_certificate_expiry_timestamp_seconds{object_namespace,object_name,secret,key,source}: notAfter of
   * each certificate the EtcdCluster object_name uses (tls.crt or ca.crt of Secret `secret`; `source` is spec.tls's:
   * secretRef, certManager or operatorManaged), as its last reconcile read them.
   */
  readonly certificateExpiry: Gauge<"object_namespace" | "object_name" | CertificateLabel>;
  /**
   * capstan_etcd_certificate_warning_timestamp_seconds{object_namespace,object_name,secret,key,source}: the time from
   * which the operator warns about that certificate (its notAfter less its warning window: half of its renewer's
   * renewBefore, or a third of its lifetime when nobody known renews it, at most 14 days), so the alert follows the
   * CertificatesValid condition and never fires while a renewal is merely due.
   */
  readonly certificateWarning: Gauge<"object_namespace" | "object_name" | CertificateLabel>;
  /** The certificate series set per "namespace/cluster", so that the ones no longer used are removed. */
  readonly #certificates = new Map<string, Map<string, Record<CertificateLabel, string>>>();
  /** The value of lastBackupSuccess per "namespace/cluster" (prom-client reads its values asynchronously). */
  readonly #lastSuccess = new Map<string, number>();
  /** The steps counted per "namespace/cluster", so that forget() can remove each one's series. */
  readonly #steps = new Map<string, Set<string>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.members = new Gauge({
      name: "capstan_etcd_cluster_members",
      help: "etcd members of an EtcdCluster by state (healthy and unhealthy voters, learners).",
      labelNames: ["object_namespace", "object_name", "state"],
      registers,
    });
    this.quorum = new Gauge({
      name: "capstan_etcd_cluster_quorum",
      help: "1 while a quorum of the EtcdCluster's voting members is healthy, else 0.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.hasLeader = new Gauge({
      name: "capstan_etcd_cluster_has_leader",
      help: "1 while the EtcdCluster has an etcd leader, else 0.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.steps = new Counter({
      name: "capstan_etcd_membership_changes_total",
      help: "Steps the operator took on EtcdClusters (AddLearner, PromoteLearner, RemoveMember, UpgradeMember, ...).",
      labelNames: ["object_namespace", "object_name", "step"],
      registers,
    });
    this.lastBackupSuccess = new Gauge({
      name: "capstan_etcd_backup_last_success_timestamp_seconds",
      help: "Unix time the newest successful EtcdBackup of an EtcdCluster completed.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.backupFailures = new Counter({
      name: "capstan_etcd_backup_failures_total",
      help: "EtcdBackups of an EtcdCluster that ended Failed.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.scheduleStale = new Gauge({
      name: "capstan_etcd_backup_schedule_stale",
      help: "1 while an EtcdBackupSchedule's newest successful backup is older than twice its interval, else 0.",
      labelNames: ["object_namespace", "object_name"],
      registers,
    });
    this.certificateExpiry = new Gauge({
      name: "capstan_etcd_certificate_expiry_timestamp_seconds",
      help: "Unix time a certificate an EtcdCluster uses expires (notAfter), per Secret and key (tls.crt, ca.crt).",
      labelNames: ["object_namespace", "object_name", "secret", "key", "source"],
      registers,
    });
    this.certificateWarning = new Gauge({
      name: "capstan_etcd_certificate_warning_timestamp_seconds",
      help: "Unix time from which the operator warns that a certificate an EtcdCluster uses is not renewed (notAfter less its warning window).",
      labelNames: ["object_namespace", "object_name", "secret", "key", "source"],
      registers,
    });
  }

  /**
   * Records the certificates cluster `namespace/name` uses now: each one's notAfter; the series of certificates it
   * no longer uses (a member gone, a Secret replaced) are removed.
   */
  certificatesObserved(namespace: string, name: string, certificates: readonly CertificateSeries[]): void {
    const key = `${namespace}/${name}`;
    const cluster = { object_namespace: namespace, object_name: name };
    const before = this.#certificates.get(key) ?? new Map<string, Record<CertificateLabel, string>>();
    const now = new Map<string, Record<CertificateLabel, string>>();
    for (const c of certificates) {
      const labels = { secret: c.secret, key: c.key, source: c.source };
      now.set(JSON.stringify(labels), labels);
      this.certificateExpiry.set({ ...cluster, ...labels }, Math.floor(c.notAfter.getTime() / 1000));
      this.certificateWarning.set({ ...cluster, ...labels }, Math.floor(c.warnFrom.getTime() / 1000));
    }
    for (const [id, labels] of before) {
      if (now.has(id)) continue;
      this.certificateExpiry.remove({ ...cluster, ...labels });
      this.certificateWarning.remove({ ...cluster, ...labels });
    }
    if (now.size === 0) this.#certificates.delete(key);
    else this.#certificates.set(key, now);
  }

  /** Records whether the schedule `namespace/name` is stale (see scheduleStale). */
  scheduleObserved(namespace: string, name: string, stale: boolean): void {
    this.scheduleStale.set({ object_namespace: namespace, object_name: name }, stale ? 1 : 0);
  }

  /** Drops the series of a deleted schedule. */
  forgetSchedule(namespace: string, name: string): void {
    this.scheduleStale.remove({ object_namespace: namespace, object_name: name });
  }

  /** Records a successful backup of cluster `namespace/cluster` completed at `completed`; an older one changes nothing. */
  backupSucceeded(namespace: string, cluster: string, completed: Date): void {
    const key = `${namespace}/${cluster}`;
    const seconds = Math.floor(completed.getTime() / 1000);
    const current = this.#lastSuccess.get(key);
    if (current !== undefined && current >= seconds) return;
    this.#lastSuccess.set(key, seconds);
    this.lastBackupSuccess.set({ object_namespace: namespace, object_name: cluster }, seconds);
    // The failure counter starts at 0 for a cluster with backups, so "failures in the last hour" reads 0, not "no
    // data" (Prometheus's advice: initialize labelled counters you know of).
    this.backupFailures.inc({ object_namespace: namespace, object_name: cluster }, 0);
  }

  /** Counts one backup of cluster `namespace/cluster` that ended Failed. */
  backupFailed(namespace: string, cluster: string): void {
    this.backupFailures.inc({ object_namespace: namespace, object_name: cluster });
  }

  /** Counts one step the operator took on cluster `ref`. */
  countStep(ref: { namespace: string; name: string }, step: string): void {
    const key = `${ref.namespace}/${ref.name}`;
    const steps = this.#steps.get(key) ?? new Set<string>();
    this.#steps.set(key, steps.add(step));
    this.steps.inc({ object_namespace: ref.namespace, object_name: ref.name, step });
  }

  /** Records one observation of a cluster. */
  observe(
    namespace: string,
    name: string,
    counts: Record<MemberState, number>,
    quorum: boolean,
    hasLeader: boolean,
  ): void {
    for (const state of MEMBER_STATES)
      this.members.set({ object_namespace: namespace, object_name: name, state }, counts[state]);
    this.quorum.set({ object_namespace: namespace, object_name: name }, quorum ? 1 : 0);
    this.hasLeader.set({ object_namespace: namespace, object_name: name }, hasLeader ? 1 : 0);
  }

  /**
   * Drops every series of a deleted cluster: its members, quorum and leader, the steps taken on it, its certificates,
   * and its backups' (its EtcdBackups outlive it, but the backup controller records nothing for a cluster that does
   * not exist).
   */
  forget(namespace: string, name: string): void {
    const labels = { object_namespace: namespace, object_name: name };
    const key = `${namespace}/${name}`;
    for (const state of MEMBER_STATES) this.members.remove({ ...labels, state });
    this.quorum.remove(labels);
    this.hasLeader.remove(labels);
    for (const step of this.#steps.get(key) ?? []) this.steps.remove({ ...labels, step });
    this.#steps.delete(key);
    this.lastBackupSuccess.remove(labels);
    this.#lastSuccess.delete(key);
    this.backupFailures.remove(labels);
    this.certificatesObserved(namespace, name, []);
  }
}
