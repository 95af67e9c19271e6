// @capstan/backup: what the operators' backups share. The S3-or-claim destination API (types and schema builders), a
// backup's phases, the opening and closing fields of its status and its printer columns,
// the operator images' Job steps (backup-upload, backup-fetch, backup-delete) with their command lines, how a Job's
// container reaches S3, the S3 Secrets check, a Job's outcome as planners read it, deletionPolicy Delete (the
// deletion planner, the removal Job, the S3 DeleteObject and the finalizer's reconcile), and backup schedules (the
// cron planner with retention, the schedule's schema, conditions and reconcile).
export * from "./backup-schema.ts";
export * from "./delete.ts";
export * from "./delete-job.ts";
export * from "./deletion-plan.ts";
export * from "./deletion-reconcile.ts";
export * from "./destination.ts";
export * from "./fetch.ts";
export * from "./flags.ts";
export * from "./job-status.ts";
export * from "./location.ts";
export * from "./s3-access.ts";
export * from "./s3-secrets.ts";
export * from "./schedule-conditions.ts";
export * from "./schedule-plan.ts";
export * from "./schedule-reconcile.ts";
export * from "./schedule-schema.ts";
export * from "./upload.ts";
