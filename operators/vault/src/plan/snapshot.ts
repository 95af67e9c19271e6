// The VaultSnapshot planner: from the snapshot, its cluster, its destination claim, its Job and the Job's results, the
// one thing to do (make the token and the Job, or nothing) and the status to write. Pure: `now` and the observations
// are inputs; the reconciler reads them and acts. A snapshot ends Succeeded or Failed and is never taken again.
import type { JobOutcome, UploadResult } from "@capstan/backup";
import type { VaultCluster } from "../api/vault-cluster.ts";
import {
  DEFAULT_SNAPSHOT_DEADLINE_SECONDS,
  type VaultSnapshot,
  type VaultSnapshotPhase,
  type VaultSnapshotStatus,
} from "../api/vault-snapshot.ts";
import type { SnapshotResult } from "../desired/snapshot-args.ts";
import { snapshotAccessCommands } from "../vault/policy.ts";

/** The snapshot's Job as the cache shows it; a failure's message ends with the failed step's own words. */
export interface ObservedSnapshotJob extends JobOutcome {
  /** Where the Job stores the snapshot (its annotation). */
  location?: string;
}

/** What the succeeded pod's containers said; undefined fields could not be read. */
export interface SnapshotJobResults {
  save?: SnapshotResult;
  upload?: UploadResult;
}

/** What the planner reads. */
export interface SnapshotInput {
  snapshot: VaultSnapshot;
  /** The VaultCluster named by spec.clusterName; undefined when it does not exist. */
  cluster?: VaultCluster | undefined;
  /** For a PVC destination: the claim (and the VaultCluster owning it, if any); undefined when it does not exist. */
  claim?: { vaultCluster?: string } | undefined;
  /** What the S3 Secrets lack, naming the spec field; undefined when they hold what the Job reads. */
  secretsProblem?: string | undefined;
  job?: ObservedSnapshotJob | undefined;
  /** The results of a succeeded Job; undefined while its pod is not seen. */
  results?: SnapshotJobResults | undefined;
  now: Date;
}

/** A condition to set. */
export interface PlannedCondition {
  type: "Available" | "Progressing" | "Degraded";
  status: "True" | "False";
  reason: string;
  message: string;
}

/** The planner's answer. */
export interface SnapshotPlan {
  /** Make the Job's token (through the active node) and the Job. */
  action?: { type: "CreateJob" };
  /** The Job ended: its token Secret is deleted (the token itself expires or is used up in Vault). */
  dropToken?: boolean;
  /** Status fields to set (merged over the current status). */
  status: VaultSnapshotStatus;
  conditions: PlannedCondition[];
  event?: { type: "Normal" | "Warning"; reason: string; message: string };
  requeueAfter?: number;
}

/** When to look again while waiting (milliseconds). */
export const SNAPSHOT_REQUEUE = { waiting: 10_000, degraded: 60_000 } as const;

function conds(
  phase: VaultSnapshotPhase,
  reason: string,
  message: string,
  degraded: boolean,
): PlannedCondition[] {
  return [
    {
      type: "Available",
      status: phase === "Succeeded" ? "True" : "False",
      reason: phase === "Succeeded" ? "Stored" : reason,
      message: phase === "Succeeded" ? message : `no snapshot stored: ${message}`,
    },
    { type: "Progressing", status: phase === "Running" ? "True" : "False", reason, message },
    {
      type: "Degraded",
      status: degraded ? "True" : "False",
      reason: degraded ? reason : "AsExpected",
      message: degraded ? message : "",
    },
  ];
}

const running = (job: string) => `the Job ${job} takes the snapshot from the active node`;

/** Plans one reconcile of a VaultSnapshot. */
export function planSnapshot(input: SnapshotInput): SnapshotPlan {
  const { snapshot, cluster, job, now } = input;
  const name = snapshot.metadata.name ?? "";
  const ns = snapshot.metadata.namespace ?? "";
  const status = snapshot.status ?? {};
  const iso = (d: Date) => d.toISOString();
  const ended = job !== undefined && (job.succeeded || job.failed !== undefined);

  if (status.phase === "Succeeded" || status.phase === "Failed") {
    return { status: {}, conditions: [], ...(ended ? { dropToken: true } : {}) };
  }
  const fail = (reason: string, message: string): SnapshotPlan => ({
    status: { phase: "Failed", completionTime: iso(job?.completionTime ?? now) },
    conditions: conds("Failed", reason, message, true),
    event: { type: "Warning", reason, message },
    dropToken: true,
  });
  const deadline = snapshot.spec.activeDeadlineSeconds ?? DEFAULT_SNAPSHOT_DEADLINE_SECONDS;
  const created = snapshot.metadata.creationTimestamp;
  const pastDeadline =
    job === undefined &&
    created !== undefined &&
    now.getTime() - new Date(created).getTime() > deadline * 1000;
  const pending = (reason: string, message: string, degraded: boolean): SnapshotPlan => {
    if (pastDeadline) {
      return fail(
        "DeadlineExceeded",
        `the snapshot could not start within ${deadline} s of its creation (spec.activeDeadlineSeconds): ${message}`,
      );
    }
    const changed =
      status.phase !== "Pending" ||
      status.conditions?.find((c) => c.type === "Progressing")?.reason !== reason;
    return {
      status: { phase: "Pending" },
      conditions: conds("Pending", reason, message, degraded),
      ...(changed
        ? { event: { type: degraded ? ("Warning" as const) : ("Normal" as const), reason, message } }
        : {}),
      requeueAfter: degraded ? SNAPSHOT_REQUEUE.degraded : SNAPSHOT_REQUEUE.waiting,
    };
  };

  if (job !== undefined) {
    if (job.failed !== undefined) {
      return fail(
        `Job${job.failed.reason}`,
        `the snapshot Job ${name} failed (${job.failed.reason}): ${job.failed.message}`,
      );
    }
    if (!job.succeeded) {
      return {
        status: {
          phase: "Running",
          jobName: name,
          ...(status.startTime === undefined ? { startTime: iso(job.startTime ?? now) } : {}),
        },
        conditions: conds("Running", "SnapshotInProgress", running(name), false),
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
        requeueAfter: SNAPSHOT_REQUEUE.waiting,
      };
    }
    if (results.save === undefined || results.upload === undefined) {
      const which = results.save === undefined ? "snapshot" : "upload";
      return fail(
        "ResultUnreadable",
        `the Job ${name} succeeded but its ${which} container left no result in its termination message: check its log`,
      );
    }
    if (results.save.sha256 !== results.upload.sha256 || results.save.size !== results.upload.size) {
      return fail(
        "StoredSnapshotDiffers",
        `the Job ${name} stored ${results.upload.size} bytes with sha256 ${results.upload.sha256}, but the snapshot it took and verified was ${results.save.size} bytes with sha256 ${results.save.sha256}`,
      );
    }
    const location = job.location ?? status.location ?? "";
    const message = `snapshot at raft index ${results.save.index} (${results.upload.size} bytes) stored at ${location}`;
    return {
      status: {
        phase: "Succeeded",
        size: results.upload.size,
        sha256: results.upload.sha256,
        location,
        raftIndex: results.save.index,
        raftTerm: results.save.term,
        completionTime: iso(job.completionTime ?? now),
      },
      conditions: conds("Succeeded", "Stored", message, false),
      event: { type: "Normal", reason: "SnapshotSucceeded", message },
      dropToken: true,
    };
  }

  // No Job yet: what the Job needs.
  if (cluster === undefined) {
    return pending(
      "ClusterNotFound",
      `spec.clusterName: VaultCluster ${ns}/${snapshot.spec.clusterName} does not exist: create it, or create another VaultSnapshot naming an existing cluster`,
      true,
    );
  }
  const pvc = snapshot.spec.destination.pvc;
  if (pvc !== undefined) {
    if (input.claim === undefined) {
      return pending(
        "ClaimNotFound",
        `spec.destination.pvc.claimName: PersistentVolumeClaim ${ns}/${pvc.claimName} does not exist: create it`,
        true,
      );
    }
    if (input.claim.vaultCluster !== undefined) {
      return fail(
        "ClaimOwnedByCluster",
        `spec.destination.pvc.claimName: ${pvc.claimName} holds raft data of VaultCluster ${input.claim.vaultCluster}; a snapshot must live on a claim no cluster owns (it would be lost with the server)`,
      );
    }
  }
  if (input.secretsProblem !== undefined) {
    return fail(
      "CredentialsMissing",
      `${input.secretsProblem}: create it (or fix the field), then create another VaultSnapshot`,
    );
  }
  if (cluster.status?.phase === "Restoring") {
    return pending(
      "ClusterRestoring",
      `VaultCluster ${snapshot.spec.clusterName} is being restored from a snapshot (its first server holds a temporary Vault until then): waiting for the restore`,
      false,
    );
  }
  const active = cluster.status?.active;
  if (active === undefined || cluster.status?.clusterID === undefined) {
    return pending(
      "NoActiveNode",
      `VaultCluster ${snapshot.spec.clusterName} has no active node yet: waiting for one`,
      false,
    );
  }
  const version = cluster.status.currentVersion;
  return {
    action: { type: "CreateJob" },
    status: {
      phase: "Running",
      jobName: name,
      startTime: iso(now),
      clusterID: cluster.status.clusterID,
      ...(version === undefined ? {} : { vaultVersion: version }),
    },
    conditions: conds("Running", "SnapshotInProgress", running(name), false),
    event: {
      type: "Normal",
      reason: "SnapshotStarted",
      message: `snapshot of ${snapshot.spec.clusterName} (active node ${active})`,
    },
  };
}

/** The Job's token could not be made: Vault refused it (`forbidden`: 403) or did not answer. */
export function planTokenFailed(
  snapshot: VaultSnapshot,
  now: Date,
  forbidden: boolean,
  error: string,
): SnapshotPlan {
  const message = forbidden
    ? `the operator's Vault policy may not create snapshot tokens (Vault answered: ${error}): the cluster was bootstrapped by an older operator, whose policy lacks the snapshot token role, and the operator does not widen its own policy. Add them with the vault CLI and a root or admin token (VAULT_ADDR, VAULT_TOKEN set): ${snapshotAccessCommands()}`
    : `the snapshot's Vault token could not be made through the active node: ${error}`;
  const deadline = snapshot.spec.activeDeadlineSeconds ?? DEFAULT_SNAPSHOT_DEADLINE_SECONDS;
  const created = snapshot.metadata.creationTimestamp;
  if (created !== undefined && now.getTime() - new Date(created).getTime() > deadline * 1000) {
    const why = `the snapshot could not start within ${deadline} s of its creation (spec.activeDeadlineSeconds): ${message}`;
    return {
      status: { phase: "Failed", completionTime: now.toISOString() },
      conditions: conds("Failed", "DeadlineExceeded", why, true),
      event: { type: "Warning", reason: "DeadlineExceeded", message: why },
      dropToken: true,
    };
  }
  const reason = forbidden ? "SnapshotForbidden" : "VaultUnreachable";
  const changed = snapshot.status?.conditions?.find((c) => c.type === "Progressing")?.reason !== reason;
  return {
    status: { phase: "Pending" },
    conditions: conds("Pending", reason, message, forbidden),
    ...(changed
      ? { event: { type: forbidden ? ("Warning" as const) : ("Normal" as const), reason, message } }
      : {}),
    requeueAfter: forbidden ? SNAPSHOT_REQUEUE.degraded : SNAPSHOT_REQUEUE.waiting,
  };
}
