// The restore planner: for a cluster never bootstrapped whose spec.bootstrap.restore names a snapshot, the ONE next
// step towards a seed whose data came from it. Pure, like plan.ts, which asks it first while no member answers.
// The restore only ever writes into a claim made for it: any other member data, or a pod, means the cluster ran
// (its status was lost) and the ordinary rules bring it back from that data instead.
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { parseEtcdVersion, unsupportedVersionChange } from "./etcd-version.ts";
import type { Observed, ObservedRestore, PlanOptions, Step } from "./types.ts";

export type { ObservedRestore, RestoreStep } from "./types.ts";

const FIELD = "spec.bootstrap.restore";

/**
 * The next restore step, or undefined when there is none and plan.ts's bootstrap rules apply: no restore asked; a
 * restore done (its claim says so: CreateSeed on it follows); or data or pods that are not a pending restore's
 * (a cluster whose status was lost is never restored over). In order:
 *  1. Pods being deleted -> Wait.
 *  2. With backup: the EtcdBackup missing, or not Succeeded -> Degraded (the restore waits for it, nothing is
 *     made); its sha256 differs from spec.bootstrap.restore.sha256 -> Degraded; the snapshot's etcd version
 *     cannot move to spec.version (a minor downgrade, skipping a minor) -> Degraded naming spec.version.
 *  3. A source that names no readable location, or an operator without its own image -> Degraded.
 *  4. A Job of another seed than the pending claim's (that claim, or the Job's, was deleted) -> Degraded: delete
 *     the Job to restore again. No claim for the restore -> StartRestore(freshName); its claim but no Job ->
 *     StartRestore on it.
 *  5. The Job failed (after its retries) -> Degraded with its message; running -> Wait; succeeded -> FinishRestore.
 */
export function planRestore(
  spec: EtcdClusterSpec,
  observed: Observed,
  options: PlanOptions,
): Step | undefined {
  const restore = spec.bootstrap?.restore;
  if (restore === undefined) return undefined;
  const r: ObservedRestore = observed.restore ?? { claims: [], operatorImage: false };
  if (r.claims.some((c) => c.state === "done")) return undefined;
  const pending = r.claims
    .filter((c) => c.state === "pending")
    .map((c) => c.name)
    .sort();
  const other = observed.volumes.filter((v) => !pending.includes(v));
  if (other.length > 0 || observed.pods.length > 0) return undefined;
  const terminating = observed.terminating ?? [];
  if (terminating.length > 0) {
    return {
      type: "Wait",
      reason: "PodTerminating",
      message: `waiting for ${terminating.map((p) => p.name).join(", ")} to go away before restoring`,
    };
  }

  if (restore.backup !== undefined) {
    const name = restore.backup.name;
    const b = r.backup;
    if (b === undefined) {
      return degraded(
        "RestoreBackupMissing",
        `${FIELD}.backup.name`,
        `EtcdBackup ${name} named in ${FIELD}.backup does not exist in this namespace; the restore waits for it (nothing is created until then)`,
      );
    }
    if (b.phase !== "Succeeded") {
      return degraded(
        "RestoreBackupNotSucceeded",
        `${FIELD}.backup.name`,
        `EtcdBackup ${name} is ${b.phase ?? "not yet started"}, not Succeeded; the restore waits until it succeeds (or name another backup in a new EtcdCluster)`,
      );
    }
    if (restore.sha256 !== undefined && b.sha256 !== undefined && restore.sha256 !== b.sha256) {
      return degraded(
        "RestoreChecksumMismatch",
        `${FIELD}.sha256`,
        `${FIELD}.sha256 is ${restore.sha256} but EtcdBackup ${name} recorded ${b.sha256}: not restoring a snapshot other than the one expected`,
      );
    }
    const target = parseEtcdVersion(spec.version);
    const from = b.etcdVersion === undefined ? undefined : parseEtcdVersion(b.etcdVersion);
    if (target === undefined) {
      return degraded(
        "InvalidVersion",
        "spec.version",
        `spec.version "${spec.version}" is not MAJOR.MINOR.PATCH`,
      );
    }
    const refused = from === undefined ? undefined : unsupportedVersionChange(from, target);
    if (refused !== undefined) {
      return degraded(
        "UnsupportedVersionChange",
        "spec.version",
        `spec.version: the snapshot in EtcdBackup ${name} was taken from etcd ${b.etcdVersion}: ${refused}`,
      );
    }
  }
  if (r.sourceError !== undefined) return degraded("RestoreSourceInvalid", FIELD, r.sourceError);
  if (!r.operatorImage) {
    return degraded(
      "RestoreUnavailable",
      FIELD,
      "the operator does not know its own image (the restore Job runs it): set the chart's image or OPERATOR_IMAGE",
    );
  }

  const seed = pending[0];
  // A Job writes into one claim: a Job of another seed (the seed's claim was deleted after, or while, it ran)
  // says nothing about this one, and a fresh claim must not be taken for restored because an old Job succeeded.
  if (r.job?.seed !== undefined && r.job.seed !== seed) {
    return degraded(
      "RestoreJobStale",
      FIELD,
      `the restore Job wrote into the claim of seed ${r.job.seed}, which ${seed === undefined ? "is gone" : `is not the pending seed ${seed}`}: delete the restore Job to restore ${sourceName(spec)} again (a finished Job is never trusted for another claim)`,
    );
  }
  if (seed === undefined) {
    return {
      type: "StartRestore",
      name: options.freshName,
      message: `restoring seed member ${options.freshName} from ${sourceName(spec)}`,
    };
  }
  const job = r.job;
  if (job === undefined) {
    return {
      type: "StartRestore",
      name: seed,
      message: `restoring seed member ${seed} from ${sourceName(spec)}`,
    };
  }
  if (job.failed !== undefined) {
    return degraded(
      "RestoreFailed",
      FIELD,
      `the restore of ${sourceName(spec)} into ${seed} failed (${job.failed.reason}): ${job.failed.message}; fix the source, then delete the restore Job to try again (the seed's claim is reused, nothing else was made)`,
    );
  }
  if (!job.succeeded) {
    return {
      type: "Wait",
      reason: "Restoring",
      message: `restoring ${sourceName(spec)} into seed member ${seed}`,
    };
  }
  return {
    type: "FinishRestore",
    name: seed,
    message: `restored ${sourceName(spec)} into seed member ${seed}; starting it`,
  };
}

function sourceName(spec: EtcdClusterSpec): string {
  const r = spec.bootstrap?.restore;
  if (r?.backup !== undefined) return `EtcdBackup ${r.backup.name}`;
  if (r?.s3 !== undefined) return `s3://${r.s3.bucket}/${r.s3.key}`;
  if (r?.pvc !== undefined) return `pvc://${r.pvc.claimName}/${r.pvc.path}`;
  return "the snapshot";
}

function degraded(reason: string, field: string, message: string): Step {
  return { type: "Degraded", reason, field, message };
}
