// The restore planner (spec.restore): from what the objects and the first server's Vault say, the ONE next step of
// a restore into this new cluster, or Done when there is none left (the cluster's own planner then goes on). Pure.
// Every step is judged again from evidence that outlives the operator (the claim's mark, the two Secrets, the Job,
// what Vault answers), never from status alone. The order (docs/operators/vault.md, "Snapshots and restore"):
// checks -> the snapshot's keys become the cluster's -> pod 0 on a claim marked for the restore -> a temporary
// Vault (its keys kept apart) -> unsealed -> a snapshot-force-only token -> the claim marked forced, the Job ->
// unsealed with the snapshot's keys -> confirmed by another cluster_id than the temporary one.
import type { JobOutcome } from "@capstan/backup";
import { compareVersions } from "./versions.ts";

/** The first server as the restore sees it. */
export interface RestorePod {
  exists: boolean;
  terminating?: boolean;
  /** Its Vault answered /v1/sys/health. */
  reachable: boolean;
  initialized?: boolean;
  sealed?: boolean;
  /** Its cluster_id, when unsealed. */
  clusterID?: string;
  /** Why it did not answer. */
  error?: string;
}

/** Everything the restore planner reads. */
export interface RestoreObserved {
  cluster: string;
  /** spec.version. */
  version: string;
  /** The source as one string, for messages. */
  source: string;
  /** With spec.restore.snapshot: the VaultSnapshot, or "missing". */
  snapshot?:
    | "missing"
    | { phase?: string; sha256?: string; vaultVersion?: string; clusterID?: string; readable: boolean };
  /** spec.restore.sha256. */
  expectedSha256?: string;
  /** What the S3 source's Secrets lack, naming the field; undefined when they hold what the Job reads. */
  secretsProblem?: string;
  /** The Secret the snapshot's keys come from (spec.restore.unsealKeysSecret or <name>-unseal-keys). */
  keysSource: { name: string; unsealKeys: number } | { name: string; missing: true };
  /** <name>-unseal-keys when another Secret is the source: how many keys, and whether they are the source's. */
  ownKeys?: { unsealKeys: number; sameAsSource: boolean };
  /** The cluster's data claims, with their restore mark. */
  claims: { name: string; ordinal: number; mark?: string }[];
  pod0: RestorePod;
  /** The init marker on pod 0's claim (set before PUT /v1/sys/init). */
  initStartedAt?: Date;
  /** The temporary Vault's keys Secret: how many keys, its root token, the temporary cluster_id recorded. */
  temporaryKeys?: { unsealKeys: number; rootToken: boolean; clusterID?: string };
  /** The restore token's Secret exists. */
  tokenSecret: boolean;
  /** The restore Job, with the failed step's words in a failure's message. */
  job?: JobOutcome;
  now: Date;
}

/** One step of a restore. */
export type RestoreStep =
  | { type: "Done" }
  | { type: "Refuse"; reason: string; message: string }
  | { type: "Wait"; reason: string; message: string }
  | { type: "CopyKeys"; message: string }
  | { type: "CreateFirstPod"; message: string }
  | { type: "InitTemporary"; message: string }
  | { type: "UnsealTemporary"; message: string }
  | { type: "MakeToken"; message: string }
  | { type: "CreateJob"; message: string }
  | { type: "UnsealRestored"; message: string }
  | { type: "Confirm"; clusterID: string; message: string };

/** An init marker younger than this with pod 0 still uninitialized: the init may still be under way. */
export const RESTORE_INIT_GRACE_MS = 2 * 60_000;

const refuse = (reason: string, message: string): RestoreStep => ({ type: "Refuse", reason, message });
const wait = (reason: string, message: string): RestoreStep => ({ type: "Wait", reason, message });

/** Plans the next step of a restore whose claim 0 is not marked done. */
export function planRestore(o: RestoreObserved): RestoreStep {
  const claim0 = o.claims.find((c) => c.ordinal === 0);
  if (claim0?.mark === "done") return { type: "Done" };
  // A restore never writes over data: any claim it did not make holds a cluster's data.
  const foreign = o.claims.filter((c) => c.mark === undefined);
  if (foreign.length > 0) {
    return refuse(
      "RestoreOverData",
      `the claims ${foreign.map((c) => c.name).join(", ")} exist and hold data (kept from an earlier VaultCluster of this name?): a restore never writes over data; delete them to restore ${o.source}, or remove spec.restore to start on them`,
    );
  }
  const forced = claim0?.mark === "forced" || o.job !== undefined;

  if (!forced) {
    if (o.snapshot === "missing") {
      return refuse(
        "RestoreSnapshotMissing",
        `spec.restore.snapshot: VaultSnapshot ${o.source.replace(/^snapshot\//, "")} does not exist in this namespace`,
      );
    }
    if (o.snapshot !== undefined) {
      if (o.snapshot.phase !== "Succeeded") {
        return refuse(
          "RestoreSnapshotNotSucceeded",
          `spec.restore.snapshot: ${o.source} is ${o.snapshot.phase ?? "not started"}, not Succeeded: restore from a snapshot that was stored and verified`,
        );
      }
      if (
        o.expectedSha256 !== undefined &&
        o.snapshot.sha256 !== undefined &&
        o.expectedSha256 !== o.snapshot.sha256
      ) {
        return refuse(
          "RestoreChecksumMismatch",
          `spec.restore.sha256 is ${o.expectedSha256} but ${o.source} recorded ${o.snapshot.sha256}: fix spec.restore.sha256 or name the snapshot you meant`,
        );
      }
      if (!o.snapshot.readable) {
        return refuse(
          "RestoreSnapshotUnreadable",
          `${o.source}'s status.location does not name its spec.destination: restore from spec.restore.s3 or pvc instead`,
        );
      }
      const from = o.snapshot.vaultVersion;
      if (from !== undefined && compareVersions(from, o.version) > 0) {
        return refuse(
          "RestoreVersionDowngrade",
          `${o.source} was taken from Vault ${from}, newer than spec.version ${o.version}: Vault does not read data of a newer release; set spec.version to ${from} or newer`,
        );
      }
    }
  }
  if (!forced && o.secretsProblem !== undefined) {
    return refuse(
      "RestoreCredentialsMissing",
      `${o.secretsProblem}: the restore Job could not read the snapshot; create it (or fix the field)`,
    );
  }
  const src = o.keysSource;
  if ("missing" in src || src.unsealKeys === 0) {
    return refuse(
      "RestoreKeysMissing",
      `spec.restore.unsealKeysSecret: Secret ${src.name} ${"missing" in src ? "does not exist" : "holds no unseal-key-0"}: the restored data opens only with the unseal keys of the cluster the snapshot was taken from; put them there (or name the Secret that holds them)`,
    );
  }
  if (o.ownKeys !== undefined && !o.ownKeys.sameAsSource) {
    if (o.ownKeys.unsealKeys > 0) {
      return refuse(
        "KeysSecretConflict",
        `the cluster's keys Secret already holds other unseal keys than Secret ${src.name} (spec.restore.unsealKeysSecret): keys are never written over; delete the cluster's keys Secret if it is a leftover, or name it in spec.restore.unsealKeysSecret`,
      );
    }
    return { type: "CopyKeys", message: `copying the snapshot's unseal keys from Secret ${src.name}` };
  }

  const pod = o.pod0;
  if (!pod.exists) {
    return {
      type: "CreateFirstPod",
      message: `creating ${o.cluster}-0 on a new claim, the server ${o.source} is restored into`,
    };
  }
  if (pod.terminating === true || !pod.reachable) {
    return wait("PodStarting", `waiting for ${o.cluster}-0 to answer${pod.error ? `: ${pod.error}` : ""}`);
  }
  const temp = o.temporaryKeys;
  if (pod.initialized !== true) {
    if (
      o.initStartedAt !== undefined &&
      o.now.getTime() - o.initStartedAt.getTime() < RESTORE_INIT_GRACE_MS
    ) {
      return wait(
        "InitInProgress",
        `an init of the temporary Vault started at ${o.initStartedAt.toISOString()}`,
      );
    }
    return {
      type: "InitTemporary",
      message: `initializing a temporary Vault on ${o.cluster}-0 to restore ${o.source} into (its keys are kept apart)`,
    };
  }
  if (pod.sealed === true) {
    if (forced) {
      return {
        type: "UnsealRestored",
        message: `unsealing ${o.cluster}-0 with the snapshot's keys (Secret ${src.name})`,
      };
    }
    if (temp === undefined || temp.unsealKeys === 0) return initLost(o);
    return { type: "UnsealTemporary", message: `unsealing the temporary Vault on ${o.cluster}-0` };
  }
  // Unsealed: the temporary Vault, or the restored data (another cluster_id).
  if (temp?.clusterID !== undefined && pod.clusterID !== undefined && pod.clusterID !== temp.clusterID) {
    return {
      type: "Confirm",
      clusterID: pod.clusterID,
      message: `${o.source} restored: ${o.cluster}-0 serves cluster_id ${pod.clusterID}, unsealed with the snapshot's keys`,
    };
  }
  if (temp === undefined || !temp.rootToken) return initLost(o);
  if (temp.clusterID === undefined || !o.tokenSecret) {
    return {
      type: "MakeToken",
      message: `making the restore Job's token (it may only force-restore a snapshot) in the temporary Vault`,
    };
  }
  const job = o.job;
  if (job === undefined) {
    return {
      type: "CreateJob",
      message: `the Job ${o.cluster}-restore fetches ${o.source}, checks it and force-restores it into ${o.cluster}-0`,
    };
  }
  if (job.failed !== undefined) {
    return refuse(
      "RestoreFailed",
      `the restore Job ${o.cluster}-restore failed (${job.failed.reason}): ${job.failed.message}; ${o.cluster}-0 still holds the temporary Vault: fix the source, then delete the Job (kubectl delete job ${o.cluster}-restore) and a new one is made`,
    );
  }
  return wait(
    job.succeeded ? "RestoreApplying" : "RestoreInProgress",
    job.succeeded
      ? `the Job ${o.cluster}-restore sent ${o.source}; waiting for ${o.cluster}-0 to apply it and seal itself`
      : `the Job ${o.cluster}-restore fetches and restores ${o.source}`,
  );
}

function initLost(o: RestoreObserved): RestoreStep {
  return refuse(
    "RestoreInitLost",
    `${o.cluster}-0 is initialized but the temporary Vault's keys are not in Secret ${o.cluster}-restore-keys (the operator stopped between the init and their write): that server holds only an empty temporary Vault; delete the pod ${o.cluster}-0 and its claim data-${o.cluster}-0 and the restore starts again`,
  );
}
