// The EtcdBackup planner: from the backup, its cluster, its destination claim, its Job and the Job's results, the
// one thing to do (create the Job, or nothing) and the status to write. Pure: `now` and the observations are
// inputs; the reconciler reads them and performs the action. A backup ends Succeeded or Failed and is never
// taken again (its spec is immutable: another snapshot is another EtcdBackup).
import type { JobOutcome } from "@capstan/backup";
import {
  DEFAULT_BACKUP_DEADLINE_SECONDS,
  type EtcdBackup,
  type EtcdBackupPhase,
  type EtcdBackupStatus,
} from "../api/backup.ts";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import { jobLocation, type SnapshotStatus, type UploadResult } from "../desired/backup-job.ts";
import { chooseBackupMember } from "./backup-member.ts";
import type { ObservedMember } from "./plan.ts";

/** The destination claim of a PVC backup, as the cache shows it. */
export interface ObservedClaim {
  /** Name of the EtcdCluster whose member data it holds (its cluster label or owner), if any. */
  etcdCluster?: string;
}

/** The backup's Job, as the cache shows it (its failure message ends with the failed container's own). */
export interface ObservedJob extends JobOutcome {
  /** The member it snapshots (its annotation). */
  member?: string;
  /** Where the Job stores the snapshot (its location annotation; absent on a Job of an operator before 2026-12-05). */
  location?: string;
}

/** What the succeeded pod of the Job reported; undefined fields could not be parsed. */
export interface JobResults {
  upload?: UploadResult;
  snapshot?: SnapshotStatus;
}

/** What the planner reads. */
export interface BackupInput {
  backup: EtcdBackup;
  /** The EtcdCluster named by spec.clusterName; undefined when it does not exist. */
  cluster?: EtcdCluster | undefined;
  /** The etcd members the operator sees (undefined when no member answered). */
  members?: ObservedMember[] | undefined;
  /** For a PVC destination: the claim, or undefined when it does not exist. */
  claim?: ObservedClaim | undefined;
  /** The backup's Job, or undefined when none exists. */
  job?: ObservedJob | undefined;
  /** The results of a succeeded Job; undefined while they have not been read (e.g. the log request failed). */
  results?: JobResults | undefined;
  /**
   * For an S3 destination with no Job yet: what the Job's Secrets lack, naming the spec field (a Secret or a key
   * missing); undefined when they hold what it needs.
   */
  secretsProblem?: string | undefined;
  now: Date;
}

/** A condition to set on the backup. */
export interface PlannedCondition {
  type: "Available" | "Progressing" | "Degraded";
  status: "True" | "False";
  reason: string;
  message: string;
}

/** The planner's answer. */
export interface BackupPlan {
  /** Create the Job snapshotting `member`. */
  action?: { type: "CreateJob"; member: string };
  /** Status fields to set (merged over the current status). */
  status: EtcdBackupStatus;
  conditions: PlannedCondition[];
  /** A Warning or Normal event worth recording (on a change of phase or reason). */
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
  /** When to look again (milliseconds); undefined: only on a change. */
  requeueAfter?: number;
}

/** When to look again while waiting for something outside the operator's objects (milliseconds). */
export const BACKUP_REQUEUE = { waiting: 10_000, degraded: 60_000 } as const;

const conds = (
  phase: EtcdBackupPhase,
  reason: string,
  message: string,
  degraded: boolean,
): PlannedCondition[] => [
  {
    type: "Available",
    status: phase === "Succeeded" ? "True" : "False",
    reason: phase === "Succeeded" ? "Stored" : reason,
    message: phase === "Succeeded" ? message : `no snapshot stored: ${message}`,
  },
  {
    type: "Progressing",
    status: phase === "Running" ? "True" : "False",
    reason,
    message,
  },
  {
    type: "Degraded",
    status: degraded ? "True" : "False",
    reason: degraded ? reason : "AsExpected",
    message: degraded ? message : "",
  },
];

/** The Progressing message while the Job runs: the same when planned and when seen running, so no status churn. */
const snapshotMessage = (job: string, member: string | undefined) =>
  `the Job ${job} takes the snapshot${member === undefined ? "" : ` from ${member}`}`;

/** Plans one reconcile of an EtcdBackup. */
export function planBackup(input: BackupInput): BackupPlan {
  const { backup, cluster, job, now } = input;
  const name = backup.metadata.name ?? "";
  const ns = backup.metadata.namespace ?? "";
  const { clusterName, destination } = backup.spec;
  const status = backup.status ?? {};
  const iso = (d: Date) => d.toISOString();

  // Ended: never taken again, whatever happens to the Job afterwards.
  if (status.phase === "Succeeded" || status.phase === "Failed") {
    return { status: {}, conditions: [] };
  }

  const fail = (reason: string, message: string): BackupPlan => ({
    status: { phase: "Failed", completionTime: iso(job?.completionTime ?? now) },
    conditions: conds("Failed", reason, message, true),
    event: { type: "Warning", reason, message },
  });
  // A backup that cannot start gets the same deadline as one that runs (spec.activeDeadlineSeconds, from its
  // creation): past it, it fails with what it waited for, so a schedule (which runs one backup at a time) goes on.
  const deadlineSeconds = backup.spec.activeDeadlineSeconds ?? DEFAULT_BACKUP_DEADLINE_SECONDS;
  const created = backup.metadata.creationTimestamp;
  const pastDeadline =
    job === undefined &&
    created !== undefined &&
    now.getTime() - new Date(created).getTime() > deadlineSeconds * 1000;
  const pending = (reason: string, message: string, degraded: boolean): BackupPlan =>
    pastDeadline
      ? fail(
          "DeadlineExceeded",
          `the backup could not start within ${deadlineSeconds} s of its creation (spec.activeDeadlineSeconds): ${message}`,
        )
      : waiting(reason, message, degraded);
  const waiting = (reason: string, message: string, degraded: boolean): BackupPlan => ({
    status: { phase: "Pending" },
    conditions: conds("Pending", reason, message, degraded),
    ...(status.phase !== "Pending" ||
    status.conditions?.find((c) => c.type === "Progressing")?.reason !== reason
      ? { event: { type: degraded ? ("Warning" as const) : ("Normal" as const), reason, message } }
      : {}),
    requeueAfter: degraded ? BACKUP_REQUEUE.degraded : BACKUP_REQUEUE.waiting,
  });

  if (job !== undefined) {
    if (job.failed !== undefined) {
      return fail(
        `Job${job.failed.reason}`,
        `the backup Job ${name} failed (${job.failed.reason}): ${job.failed.message}`,
      );
    }
    if (!job.succeeded) {
      return {
        status: {
          phase: "Running",
          jobName: name,
          ...(job.member === undefined ? {} : { member: job.member }),
          ...(status.startTime === undefined ? { startTime: iso(job.startTime ?? now) } : {}),
        },
        conditions: conds("Running", "SnapshotInProgress", snapshotMessage(name, job.member), false),
      };
    }
    const results = input.results;
    if (results === undefined) {
      return {
        status: { phase: "Running", jobName: name },
        conditions: conds(
          "Running",
          "ReadingResults",
          `the Job ${name} succeeded; reading its results`,
          false,
        ),
        requeueAfter: BACKUP_REQUEUE.waiting,
      };
    }
    if (results.upload === undefined) {
      return fail(
        "ResultUnreadable",
        `the Job ${name} succeeded but its upload container left no {location, size, sha256} termination message: check the upload container's log`,
      );
    }
    if (results.snapshot === undefined) {
      return fail(
        "ResultUnreadable",
        `the Job ${name} succeeded but its verify container's log holds no etcdutl snapshot status line: check that container's log`,
      );
    }
    const version = status.etcdVersion ?? results.snapshot.version;
    // Where the operator told the Job to put it (the uploader reports its own view, e.g. a path in its pod).
    const location = jobLocation(backup, job.location);
    const message = `snapshot at revision ${results.snapshot.revision} (${results.upload.size} bytes) stored at ${location}`;
    return {
      status: {
        phase: "Succeeded",
        revision: results.snapshot.revision,
        size: results.upload.size,
        sha256: results.upload.sha256,
        location,
        ...(version === undefined ? {} : { etcdVersion: version }),
        completionTime: iso(job.completionTime ?? now),
      },
      conditions: conds("Succeeded", "Stored", message, false),
      event: { type: "Normal", reason: "BackupSucceeded", message },
    };
  }

  // No Job yet: check what the Job needs, then choose the member.
  if (cluster === undefined) {
    return pending(
      "ClusterNotFound",
      `spec.clusterName: EtcdCluster ${ns}/${clusterName} does not exist: create it, or create another EtcdBackup naming an existing cluster`,
      true,
    );
  }
  if (destination.pvc !== undefined) {
    if (input.claim === undefined) {
      return pending(
        "ClaimNotFound",
        `spec.destination.pvc.claimName: PersistentVolumeClaim ${ns}/${destination.pvc.claimName} does not exist: create it`,
        true,
      );
    }
    if (input.claim.etcdCluster !== undefined) {
      return fail(
        "ClaimOwnedByCluster",
        `spec.destination.pvc.claimName: ${destination.pvc.claimName} holds data of EtcdCluster ${input.claim.etcdCluster}; a backup must live on a claim no cluster owns (it would be lost with the member)`,
      );
    }
  }
  if (input.secretsProblem !== undefined) {
    // A Job would wait for ever in CreateContainerConfigError (DeadlineExceeded an hour later): fail now, naming it.
    return fail(
      "CredentialsMissing",
      `${input.secretsProblem}: create it (or fix the field), then create another EtcdBackup (a schedule's next one picks it up)`,
    );
  }
  if (input.members === undefined) {
    return pending(
      "ClusterUnreachable",
      `no member of EtcdCluster ${clusterName} answers: waiting for one`,
      false,
    );
  }
  const choice = chooseBackupMember(input.members);
  if (!choice.ok) return pending("NoMemberToSnapshot", choice.reason, false);
  const clusterID = cluster.status?.clusterID;
  return {
    action: { type: "CreateJob", member: choice.member },
    status: {
      phase: "Running",
      jobName: name,
      member: choice.member,
      startTime: iso(now),
      ...(choice.version === undefined ? {} : { etcdVersion: choice.version }),
      ...(clusterID === undefined ? {} : { clusterID }),
    },
    conditions: conds("Running", "SnapshotInProgress", snapshotMessage(name, choice.member), false),
    event: {
      type: "Normal",
      reason: "BackupStarted",
      message: `snapshot of ${clusterName} from member ${choice.member}`,
    },
  };
}
