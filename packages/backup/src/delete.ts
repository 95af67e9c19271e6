// Deleting a stored snapshot when its backup (deletionPolicy Delete) is deleted: `backup-delete`, the operator
// image's subcommand a short Job runs to remove the file from a PersistentVolumeClaim, and the S3 DeleteObject the
// operator itself sends with the credentials from the backup's Secret. The AWS SDK is imported on the first
// deletion only: the operator process imports this module, and most operators never delete an S3 object (the SDK
// is ~1.5 MiB of code; the operator's bundle keeps it in a chunk of its own, docs/performance.md).
import { rm, stat } from "node:fs/promises";
import { Agent } from "node:https";
import { parseFlags } from "./flags.ts";
import { DESTINATION_MOUNT } from "./upload.ts";

/** Reads `backup-delete`'s command line back: the file, which must be below the claim's mount. */
export function parseDeleteArgs(args: string[]): { file: string } {
  const parsed = parseFlags("backup-delete", args, { file: { type: "string" } }, "--file=PATH");
  const file = parsed.need("file");
  if (!file.startsWith(`${DESTINATION_MOUNT}/`) || file.split("/").includes(".."))
    throw new Error(`backup-delete: --file ${file} must be below ${DESTINATION_MOUNT} without ".."`);
  return { file };
}

/** Removes the snapshot file and a leftover `.partial`; returns whether the file was there. */
export async function removeSnapshotFile(file: string): Promise<boolean> {
  const existed = (await stat(file).catch(() => undefined)) !== undefined;
  await rm(file, { force: true });
  await rm(`${file}.partial`, { force: true });
  return existed;
}

/** The subcommand: parse, remove, say what was done; throws (exit 1) with what went wrong. */
export async function backupDeleteCommand(argv: string[]): Promise<void> {
  const { file } = parseDeleteArgs(argv);
  const existed = await removeSnapshotFile(file);
  process.stdout.write(`${JSON.stringify({ deleted: file, existed })}\n`);
}

/** One S3 object and how to reach it. */
export interface S3ObjectRef {
  bucket: string;
  key: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A PEM CA bundle to trust for the endpoint. */
  ca?: string;
  /** Give up after this long (milliseconds; default 30 s). */
  timeoutMs?: number;
}

/** Deletes an S3 object (deleting one that is not there succeeds, as S3 answers). */
export type S3ObjectDeleter = (ref: S3ObjectRef, signal: AbortSignal) => Promise<void>;

/** The default {@link S3ObjectDeleter}: the AWS SDK's DeleteObject, with its retries. */
export const deleteS3Object: S3ObjectDeleter = async (ref, signal) => {
  const { DeleteObjectCommand, S3Client } = await import("@aws-sdk/client-s3");
  const client = new S3Client({
    region: ref.region,
    ...(ref.endpoint === undefined ? {} : { endpoint: ref.endpoint }),
    forcePathStyle: ref.forcePathStyle,
    credentials: ref.credentials,
    maxAttempts: 3,
    ...(ref.ca === undefined ? {} : { requestHandler: { httpsAgent: new Agent({ ca: ref.ca }) } }),
  });
  try {
    await client.send(new DeleteObjectCommand({ Bucket: ref.bucket, Key: ref.key }), {
      abortSignal: AbortSignal.any([signal, AbortSignal.timeout(ref.timeoutMs ?? 30_000)]),
    });
  } finally {
    client.destroy();
  }
};
