// @capstan/backup: what the operators' backups share. The S3-or-claim destination API (types and schema builders),
// the operator images' Job steps (backup-upload, backup-fetch, backup-delete) with their command lines, how a Job's
// container reaches S3, the S3 Secrets check, and a Job's outcome as planners read it.
export * from "./delete.ts";
export * from "./destination.ts";
export * from "./fetch.ts";
export * from "./flags.ts";
export * from "./job-status.ts";
export * from "./location.ts";
export * from "./s3-access.ts";
export * from "./s3-secrets.ts";
export * from "./upload.ts";
