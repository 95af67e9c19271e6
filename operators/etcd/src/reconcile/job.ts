// A Job (a backup, its deletion, a restore) as the planners see it: done or failed with its reason, when it ran
// (@capstan/backup's jobOutcome), and what its annotations say it was made for. Shared by the EtcdBackup controller
// and spec.bootstrap.restore.

import { jobOutcome } from "@capstan/backup";
import type { JobObject } from "@capstan/core";
import { BACKUP_LOCATION_ANNOTATION, BACKUP_MEMBER_ANNOTATION } from "../desired/backup-job.ts";
import type { ObservedJob } from "../plan/backup.ts";

/** The Job as the planner sees it. */
export function observeJob(job: JobObject): ObservedJob {
  const member = job.metadata?.annotations?.[BACKUP_MEMBER_ANNOTATION];
  const location = job.metadata?.annotations?.[BACKUP_LOCATION_ANNOTATION];
  return {
    ...jobOutcome(job),
    ...(member === undefined ? {} : { member }),
    ...(location === undefined ? {} : { location }),
  };
}
