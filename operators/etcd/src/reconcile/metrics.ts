// The etcd operator's own metrics, beside core's controller_runtime_* and workqueue_* families.
import { type ObjectCounter, type ObjectGauge, ObjectMetrics } from "@capstan/core";
import type { Registry } from "prom-client";

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

/**
 * Metrics of the EtcdCluster controller, registered on the manager's registry. The series are made by core's
 * ObjectMetrics, per EtcdCluster (object_namespace, object_name) but for scheduleStale, per EtcdBackupSchedule, so
 * that {@link forget} drops all of a deleted cluster's and {@link forgetSchedule} all of a deleted schedule's.
 */
export class EtcdOperatorMetrics {
  /** capstan_etcd_cluster_members{object_namespace,object_name,state}: members by state (learners counted apart). */
  readonly members: ObjectGauge<"state">;
  /** capstan_etcd_cluster_quorum{object_namespace,object_name}: 1 while a quorum of voting members is healthy. */
  readonly quorum: ObjectGauge<never>;
  /** capstan_etcd_cluster_has_leader{object_namespace,object_name}: 1 while the cluster has a leader. */
  readonly hasLeader: ObjectGauge<never>;
  /** capstan_etcd_membership_changes_total{object_namespace,object_name,step}: membership and pod steps taken. */
  readonly steps: ObjectCounter<"step">;
  /**
   * capstan_etcd_backup_last_success_timestamp_seconds{object_namespace,object_name}: completion time of the
   * newest successful EtcdBackup of the EtcdCluster object_name (set again from every succeeded backup after a
   * restart).
   */
  readonly lastBackupSuccess: ObjectGauge<never>;
  /** capstan_etcd_backup_failures_total{object_namespace,object_name}: EtcdBackups of the cluster that ended Failed. */
  readonly backupFailures: ObjectCounter<never>;
  /**
   * capstan_etcd_backup_schedule_stale{object_namespace,object_name}: 1 while the EtcdBackupSchedule object_name is
   * Degraded BackupStale (its newest successful backup is older than twice its interval), else 0.
   */
  readonly scheduleStale: ObjectGauge<never>;
  /**
   * capstan_etcd_certificate_expiry_timestamp_seconds{object_namespace,object_name,secret,key,source}: notAfter of
   * each certificate the EtcdCluster object_name uses (tls.crt or ca.crt of Secret `secret`; `source` is spec.tls's:
   * secretRef, certManager or operatorManaged), as its last reconcile read them.
   */
  readonly certificateExpiry: ObjectGauge<CertificateLabel>;
  /**
   * capstan_etcd_certificate_warning_timestamp_seconds{object_namespace,object_name,secret,key,source}: the time from
   * which the operator warns about that certificate (its notAfter less its warning window: half of its renewer's
   * renewBefore, or a third of its lifetime when nobody known renews it, at most 14 days), so the alert follows the
   * CertificatesValid condition and never fires while a renewal is merely due.
   */
  readonly certificateWarning: ObjectGauge<CertificateLabel>;
  /** The EtcdClusters' series, per cluster (the backup series too: they are the cluster's). */
  readonly #clusters: ObjectMetrics;
  /** The EtcdBackupSchedules' series, per schedule (a schedule may share a cluster's name). */
  readonly #schedules: ObjectMetrics;
  /** The value of lastBackupSuccess per "namespace/cluster" (prom-client reads its values asynchronously). */
  readonly #lastSuccess = new Map<string, number>();

  constructor(registry: Registry) {
    const clusters = new ObjectMetrics(registry);
    const schedules = new ObjectMetrics(registry);
    this.#clusters = clusters;
    this.#schedules = schedules;
    this.members = clusters.gauge({
      name: "capstan_etcd_cluster_members",
      help: "etcd members of an EtcdCluster by state (healthy and unhealthy voters, learners).",
      labelNames: ["state"],
    });
    this.quorum = clusters.gauge({
      name: "capstan_etcd_cluster_quorum",
      help: "1 while a quorum of the EtcdCluster's voting members is healthy, else 0.",
    });
    this.hasLeader = clusters.gauge({
      name: "capstan_etcd_cluster_has_leader",
      help: "1 while the EtcdCluster has an etcd leader, else 0.",
    });
    this.steps = clusters.counter({
      name: "capstan_etcd_membership_changes_total",
      help: "Steps the operator took on EtcdClusters (AddLearner, PromoteLearner, RemoveMember, UpgradeMember, ...).",
      labelNames: ["step"],
    });
    this.lastBackupSuccess = clusters.gauge({
      name: "capstan_etcd_backup_last_success_timestamp_seconds",
      help: "Unix time the newest successful EtcdBackup of an EtcdCluster completed.",
    });
    this.backupFailures = clusters.counter({
      name: "capstan_etcd_backup_failures_total",
      help: "EtcdBackups of an EtcdCluster that ended Failed.",
    });
    this.scheduleStale = schedules.gauge({
      name: "capstan_etcd_backup_schedule_stale",
      help: "1 while an EtcdBackupSchedule's newest successful backup is older than twice its interval, else 0.",
    });
    const certificateLabels: CertificateLabel[] = ["secret", "key", "source"];
    this.certificateExpiry = clusters.gauge({
      name: "capstan_etcd_certificate_expiry_timestamp_seconds",
      help: "Unix time a certificate an EtcdCluster uses expires (notAfter), per Secret and key (tls.crt, ca.crt).",
      labelNames: certificateLabels,
    });
    this.certificateWarning = clusters.gauge({
      name: "capstan_etcd_certificate_warning_timestamp_seconds",
      help: "Unix time from which the operator warns that a certificate an EtcdCluster uses is not renewed (notAfter less its warning window).",
      labelNames: certificateLabels,
    });
  }

  /**
   * Records the certificates cluster `namespace/name` uses now: each one's notAfter; the series of certificates it
   * no longer uses (a member gone, a Secret replaced) are removed.
   */
  certificatesObserved(namespace: string, name: string, certificates: readonly CertificateSeries[]): void {
    const labels = (c: CertificateSeries) => ({ secret: c.secret, key: c.key, source: c.source });
    const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
    this.certificateExpiry.replace(
      { namespace, name },
      certificates.map((c) => ({ labels: labels(c), value: seconds(c.notAfter) })),
    );
    this.certificateWarning.replace(
      { namespace, name },
      certificates.map((c) => ({ labels: labels(c), value: seconds(c.warnFrom) })),
    );
  }

  /** Records whether the schedule `namespace/name` is stale (see scheduleStale). */
  scheduleObserved(namespace: string, name: string, stale: boolean): void {
    this.scheduleStale.set({ namespace, name }, stale ? 1 : 0);
  }

  /** Drops the series of a deleted schedule. */
  forgetSchedule(namespace: string, name: string): void {
    this.#schedules.forget({ namespace, name });
  }

  /** Records a successful backup of cluster `namespace/cluster` completed at `completed`; an older one changes nothing. */
  backupSucceeded(namespace: string, cluster: string, completed: Date): void {
    const key = `${namespace}/${cluster}`;
    const seconds = Math.floor(completed.getTime() / 1000);
    const current = this.#lastSuccess.get(key);
    if (current !== undefined && current >= seconds) return;
    this.#lastSuccess.set(key, seconds);
    this.lastBackupSuccess.set({ namespace, name: cluster }, seconds);
    // The failure counter starts at 0 for a cluster with backups, so "failures in the last hour" reads 0, not "no
    // data" (Prometheus's advice: initialize labelled counters you know of).
    this.backupFailures.inc({ namespace, name: cluster }, 0);
  }

  /** Counts one backup of cluster `namespace/cluster` that ended Failed. */
  backupFailed(namespace: string, cluster: string): void {
    this.backupFailures.inc({ namespace, name: cluster });
  }

  /** Counts one step the operator took on cluster `ref`. */
  countStep(ref: { namespace: string; name: string }, step: string): void {
    this.steps.inc(ref, { step });
  }

  /** Records one observation of a cluster. */
  observe(
    namespace: string,
    name: string,
    counts: Record<MemberState, number>,
    quorum: boolean,
    hasLeader: boolean,
  ): void {
    const cluster = { namespace, name };
    for (const state of MEMBER_STATES) this.members.set(cluster, { state }, counts[state]);
    this.quorum.set(cluster, quorum ? 1 : 0);
    this.hasLeader.set(cluster, hasLeader ? 1 : 0);
  }

  /**
   * Drops every series of a deleted cluster: its members, quorum and leader, the steps taken on it, its certificates,
   * and its backups' (its EtcdBackups outlive it, but the backup controller records nothing for a cluster that does
   * not exist).
   */
  forget(namespace: string, name: string): void {
    this.#clusters.forget({ namespace, name });
    this.#lastSuccess.delete(`${namespace}/${name}`);
  }
}
