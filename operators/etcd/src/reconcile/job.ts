// A Job (a backup, its deletion, a restore) as the planners see it: done or failed with its reason, when it ran, and
// what its annotations say it was made for. Shared by the EtcdBackup controller and spec.bootstrap.restore.
import {
  BACKUP_LOCATION_ANNOTATION,
  BACKUP_MEMBER_ANNOTATION,
  type JobObject,
} from "../desired/backup-job.ts";
import type { ObservedJob } from "../plan/backup.ts";

/** The Job as the planner sees it. */
export function observeJob(job: JobObject): ObservedJob {
  const conditions = job.status?.conditions ?? [];
  const isTrue = (type: string) => conditions.find((c) => c.type === type && c.status === "True");
  const failed = isTrue("Failed");
  const complete = isTrue("Complete");
  const member = job.metadata?.annotations?.[BACKUP_MEMBER_ANNOTATION];
  const location = job.metadata?.annotations?.[BACKUP_LOCATION_ANNOTATION];
  const start = job.status?.startTime;
  const end = job.status?.completionTime ?? failed?.lastTransitionTime;
  return {
    succeeded: complete !== undefined,
    ...(member === undefined ? {} : { member }),
    ...(location === undefined ? {} : { location }),
    ...(start === undefined ? {} : { startTime: new Date(start) }),
    ...(end === undefined ? {} : { completionTime: new Date(end) }),
    ...(failed === undefined
      ? {}
      : { failed: { reason: failed.reason ?? "Failed", message: failed.message ?? "" } }),
  };
}
