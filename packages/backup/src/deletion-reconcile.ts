// The I/O of a backup object's deletion (an EtcdBackup, a VaultSnapshot with deletionPolicy Delete), shared by the
// operators: the deletion planner's step (deletion-plan.ts) taken, its conditions and event reported, the finalizer
// removed once the snapshot is gone. The operator deletes an S3 object itself with the credentials from the object's
// Secret; a Job (delete-job.ts) removes a file from a claim. What keeps the snapshot from being deleted is a
// {@link DeletionError}, which {@link deletionErrorAction} turns into Degraded, an Event and a slower retry.
import {
  ApiError,
  type ErrorAction,
  isAlreadyExists,
  isNotFound,
  Job,
  type JobObject,
  type Kind,
  type KubeObject,
  PersistentVolumeClaim,
  type ReconcileContext,
  type Result,
  removeFinalizer,
  Secret,
  secretData,
} from "@capstan/core";
import { deleteS3Object, type S3ObjectDeleter } from "./delete.ts";
import { deleteJobNameOf } from "./delete-job.ts";
import {
  type DeletionCondition,
  type DeletionPlan,
  type DeletionPlanInput,
  type DeletionSubject,
  planDeletion,
  planDeletionFailure,
  planObjectDeleted,
} from "./deletion-plan.ts";
import {
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_CA_KEY,
  DEFAULT_S3_REGION,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
} from "./destination.ts";
import { type JobOutcome, jobOutcome } from "./job-status.ts";
import type { BackupsInUse } from "./schedule-plan.ts";

/** A deletion failure with the reason the Degraded condition and the Event carry. */
export class DeletionError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * What a controller does with a snapshot that could not be deleted (a {@link DeletionError}: its credentials gone, the
 * storage unreachable or refusing): Progressing False and Degraded with the reason, a Warning, a retry at the
 * Degraded pace; the finalizer stays. Undefined for any other error (retried with backoff).
 */
export function deletionErrorAction(
  err: Error,
  subject: DeletionSubject,
  requeue: DeletionPlanInput["requeue"],
): ErrorAction | undefined {
  if (!(err instanceof DeletionError)) return undefined;
  const plan = planDeletionFailure(subject, requeue, err.reason, err.message);
  const event = plan.event;
  return {
    conditions: plan.conditions,
    ...(plan.requeueAfter === undefined ? {} : { requeueAfter: plan.requeueAfter }),
    ...(event === undefined
      ? {}
      : { event: { type: event.type, reason: event.reason, action: "Delete", note: event.message } }),
  };
}

/** A key of a Secret in `namespace`, read live (the cache holds no user Secrets); throws naming what is missing. */
async function secretKey(
  ctx: ReconcileContext,
  namespace: string,
  name: string,
  key: string,
): Promise<string> {
  let data: Record<string, string>;
  try {
    data = secretData(await ctx.client.get(Secret, name, namespace, ctx.signal));
  } catch (err) {
    if (isNotFound(err))
      throw new DeletionError("CredentialsNotFound", `Secret ${namespace}/${name} does not exist`);
    throw err;
  }
  const value = data[key];
  if (value === undefined)
    throw new DeletionError("CredentialsNotFound", `Secret ${namespace}/${name} has no key ${key}`);
  return value;
}

/**
 * Deletes the subject's S3 object (the key its location names) with its credentials Secret; throws a DeletionError
 * saying why it could not.
 */
export async function deleteStoredObject(
  ctx: ReconcileContext,
  subject: DeletionSubject,
  namespace: string,
  deleter: S3ObjectDeleter,
): Promise<void> {
  const s3 = subject.destination.s3;
  const root = s3 === undefined ? "" : `s3://${s3.bucket}/`;
  if (s3 === undefined || !subject.location.startsWith(root)) return;
  const creds = s3.credentialsSecret;
  const accessKeyId = await secretKey(
    ctx,
    namespace,
    creds.name,
    creds.accessKeyIDKey ?? DEFAULT_ACCESS_KEY_ID_KEY,
  );
  const secretAccessKey = await secretKey(
    ctx,
    namespace,
    creds.name,
    creds.secretAccessKeyKey ?? DEFAULT_SECRET_ACCESS_KEY_KEY,
  );
  const ca =
    s3.caSecret === undefined
      ? undefined
      : await secretKey(ctx, namespace, s3.caSecret.name, s3.caSecret.key ?? DEFAULT_CA_KEY);
  try {
    await deleter(
      {
        bucket: s3.bucket,
        key: subject.location.slice(root.length),
        region: s3.region ?? DEFAULT_S3_REGION,
        ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
        forcePathStyle: s3.forcePathStyle === true,
        credentials: { accessKeyId, secretAccessKey },
        ...(ca === undefined ? {} : { ca }),
      },
      ctx.signal,
    );
  } catch (err) {
    const e = err as Error & { name?: string; $metadata?: { httpStatusCode?: number } };
    const code = e.$metadata?.httpStatusCode;
    const reason = code === 401 || code === 403 ? "StorageAccessDenied" : "StorageUnreachable";
    throw new DeletionError(reason, `${s3.endpoint ?? "S3"}: ${e.name ?? "Error"}: ${e.message}`);
  }
}

/** The live claim of a PVC destination for the deletion planner (undefined: it does not exist). */
async function observeClaimForDeletion(
  ctx: ReconcileContext,
  subject: DeletionSubject,
  namespace: string,
): Promise<{ deleting?: boolean } | undefined> {
  const pvc = subject.destination.pvc;
  if (pvc === undefined) return undefined;
  try {
    const claim = await ctx.client.get(PersistentVolumeClaim, pvc.claimName, namespace, ctx.signal);
    return claim.metadata?.deletionTimestamp === undefined ? {} : { deleting: true };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** What one operator's deletion is made of. */
export interface DeletionDefinition<B extends KubeObject> {
  kind: Kind<B>;
  subject: (obj: B) => DeletionSubject;
  requeue: DeletionPlanInput["requeue"];
  /** The Job removing a PVC destination's file (named {@link deleteJobNameOf} the object's name). */
  deleteJob: (obj: B) => JobObject;
  /** Who uses each stored snapshot, by the object's name, in `namespace`. */
  inUse: (ctx: ReconcileContext, namespace: string) => Promise<BackupsInUse>;
  /** Sets the planned conditions on the object's status (nothing when they are already so). */
  writeConditions: (obj: B, conditions: DeletionCondition[]) => Promise<void>;
  /** Deletes S3 objects (tests replace it). */
  deleteObject?: S3ObjectDeleter | undefined;
}

const ignoreNotFound = (err: unknown) => {
  if (!isNotFound(err)) throw err;
};

/** One reconcile of a backup object being deleted: the deletion planner's step, its conditions and event. */
export async function reconcileBackupDeletion<B extends KubeObject>(
  ctx: ReconcileContext,
  def: DeletionDefinition<B>,
  obj: B,
  backupJob: JobOutcome | undefined,
): Promise<Result | undefined> {
  const namespace = obj.metadata.namespace ?? "";
  const name = obj.metadata.name ?? "";
  const subject = def.subject(obj);
  const pvc = subject.destination.pvc !== undefined;
  const deleteJobName = deleteJobNameOf(name);
  const liveDeleteJob = pvc ? await ctx.cache.get(Job, deleteJobName, namespace) : undefined;
  const claim = pvc ? await observeClaimForDeletion(ctx, subject, namespace) : undefined;
  const inUse = await def.inUse(ctx, namespace);
  let plan: DeletionPlan = planDeletion({
    subject,
    backupJob,
    deleteJob: liveDeleteJob === undefined ? undefined : jobOutcome(liveDeleteJob),
    claim,
    usedBy: inUse.get(name),
    requeue: def.requeue,
  });
  const background = { propagationPolicy: "Background" as const, signal: ctx.signal };
  switch (plan.action?.type) {
    case "DeleteBackupJob":
      await ctx.client.delete(Job, name, namespace, background).catch(ignoreNotFound);
      break;
    case "DeleteObject":
      // A DeletionError (why the object could not be deleted) is the controller's errorPolicy's: Degraded, an Event.
      await deleteStoredObject(ctx, subject, namespace, def.deleteObject ?? deleteS3Object);
      plan = planObjectDeleted(subject);
      break;
    case "CreateDeleteJob":
      try {
        await ctx.client.create(Job, def.deleteJob(obj), { signal: ctx.signal });
      } catch (err) {
        if (isAlreadyExists(err)) break;
        // A namespace being deleted refuses new objects: its claims, and the file with them, go too.
        if (err instanceof ApiError && err.code === 403 && /terminat/i.test(err.message)) {
          plan = {
            action: { type: "RemoveFinalizer" },
            conditions: [],
            event: {
              type: "Normal",
              reason: "ClaimGone",
              message: `namespace ${namespace} is being deleted: the snapshot goes with its claim`,
            },
          };
          break;
        }
        throw err;
      }
      break;
    case "RetryDeleteJob":
      await ctx.client.delete(Job, deleteJobName, namespace, background).catch(ignoreNotFound);
      break;
    default:
      break;
  }
  if (plan.event !== undefined) {
    ctx.recorder.event(obj, plan.event.type, plan.event.reason, "Delete", plan.event.message);
  }
  if (plan.action?.type === "RemoveFinalizer") {
    if (liveDeleteJob !== undefined) {
      await ctx.client.delete(Job, deleteJobName, namespace, background).catch(ignoreNotFound);
    }
    await removeFinalizer(ctx.client, def.kind, obj, subject.finalizer).catch(ignoreNotFound);
    return undefined;
  }
  if (plan.conditions.length > 0) await def.writeConditions(obj, plan.conditions);
  return plan.requeueAfter === undefined ? undefined : { requeueAfter: plan.requeueAfter };
}
