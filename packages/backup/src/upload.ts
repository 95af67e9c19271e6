// `backup-upload`, the last step of a backup Job (run from an operator's image): stores the verified snapshot in
// S3-compatible object storage (multipart, via @aws-sdk/lib-storage) or as a file on a PersistentVolumeClaim
// (written under a temporary name, synced, renamed, its directory synced), reads what was stored back (size and
// sha256 of the file, or of the object downloaded again) and prints {location, size, sha256} to the termination
// message the operator reads only once both match: Succeeded means durable and verified. Credentials come from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Also the command line's contract (builder and parser in one place). The AWS SDK is
// imported when an object is stored, not with this module: operators import the package's index at start.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { dirname } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type FileOrS3, fileOrS3Flags, parseFileOrS3, parseFlags, S3_FLAGS } from "./flags.ts";

/** Where a PVC destination is mounted in the upload container. */
export const DESTINATION_MOUNT = "/destination";

/** Where `backup-upload` puts the file. */
export type UploadTarget = FileOrS3;

/** The arguments of `backup-upload`. */
export interface UploadArgs {
  /** The snapshot to store. */
  file: string;
  target: UploadTarget;
}

const UPLOAD_FLAGS = { file: { type: "string" }, "to-file": { type: "string" }, ...S3_FLAGS } as const;

/** `backup-upload`'s command line (after the subcommand name). */
export function uploadArgs(u: UploadArgs): string[] {
  return [`--file=${u.file}`, ...fileOrS3Flags("to-file", u.target)];
}

/** Reads `backup-upload`'s command line back; throws naming the flag that is missing or unknown. */
export function parseUploadArgs(args: string[]): UploadArgs {
  const parsed = parseFlags("backup-upload", args, UPLOAD_FLAGS);
  const file = parsed.need("file");
  return { file, target: parseFileOrS3(parsed, "to-file") };
}

/** What `backup-upload` reports in its termination message. */
export interface UploadResult {
  location: string;
  size: number;
  sha256: string;
}

/** The upload container's termination message, or undefined when it is not an {@link UploadResult}. */
export function parseUploadResult(message: string | undefined): UploadResult | undefined {
  if (message === undefined) return undefined;
  try {
    const v = JSON.parse(message) as Partial<UploadResult>;
    if (
      typeof v.location === "string" &&
      typeof v.size === "number" &&
      Number.isSafeInteger(v.size) &&
      typeof v.sha256 === "string" &&
      /^[0-9a-f]{64}$/.test(v.sha256)
    ) {
      return { location: v.location, size: v.size, sha256: v.sha256 };
    }
  } catch {
    // not JSON: e.g. the log tail of a failed upload
  }
  return undefined;
}

/** Where Kubernetes reads a container's termination message. */
export const TERMINATION_LOG = "/dev/termination-log";
/** Size of each part of a multipart upload (S3's minimum is 5 MiB). */
export const PART_SIZE = 16 * 1024 * 1024;

/** SHA-256 (hex) and size of a file, in one read. */
export function digestFile(path: string): Promise<{ sha256: string; size: number }> {
  return digestStream(createReadStream(path));
}

/** SHA-256 (hex) and size of a stream, in one read. */
async function digestStream(stream: AsyncIterable<unknown>): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), size };
}

/** Throws unless what was read back is what was written. */
function checkReadBack(
  location: string,
  written: { sha256: string; size: number },
  read: { sha256: string; size: number },
): void {
  if (read.size !== written.size || read.sha256 !== written.sha256) {
    throw new Error(
      `backup-upload: ${location} read back differs from the snapshot: ${read.size} bytes, sha256 ${read.sha256}; written ${written.size} bytes, sha256 ${written.sha256}`,
    );
  }
}

/** Test seams of {@link storeSnapshot}: what runs between the write and its read-back. */
export interface StoreHooks {
  afterWrite?: (location: string) => Promise<void>;
}

/**
 * Writes `source` to `to` (creating its directory with `dirMode`) through `to`.partial, fsync and rename, hashing
 * on the way: a reader never sees a partial file under the final name, and a failure removes the partial one.
 */
export async function writeAtomically(
  source: NodeJS.ReadableStream,
  to: string,
  dirMode?: number,
): Promise<{ sha256: string; size: number }> {
  await mkdir(dirname(to), { recursive: true, ...(dirMode === undefined ? {} : { mode: dirMode }) });
  const partial = `${to}.partial`;
  const hash = createHash("sha256");
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, tap, createWriteStream(partial, { mode: 0o600 }));
    const fh = await open(partial, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(partial, to);
    // The rename is durable only once the directory is synced too.
    const dir = await open(dirname(to), "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  return { sha256: hash.digest("hex"), size };
}

/** Stores the snapshot as `args` say; returns what was stored. */
export async function storeSnapshot(
  args: UploadArgs,
  env: NodeJS.ProcessEnv = process.env,
  hooks: StoreHooks = {},
): Promise<UploadResult> {
  const info = await stat(args.file).catch(() => undefined);
  if (info === undefined || !info.isFile())
    throw new Error(`backup-upload: --file ${args.file} is not a file`);
  const t = args.target;
  if (t.kind === "file") {
    const written = await writeAtomically(createReadStream(args.file), t.path);
    const location = `file://${t.path}`;
    await hooks.afterWrite?.(location);
    checkReadBack(location, written, await digestFile(t.path));
    return { location, ...written };
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "backup-upload: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (from the Secret named in spec.destination.s3.credentialsSecret)",
    );
  }
  const { sha256, size } = await digestFile(args.file);
  const [{ GetObjectCommand, S3Client }, { Upload }] = await Promise.all([
    import("@aws-sdk/client-s3"),
    import("@aws-sdk/lib-storage"),
  ]);
  const client = new S3Client({
    region: t.region,
    ...(t.endpoint === undefined ? {} : { endpoint: t.endpoint }),
    forcePathStyle: t.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    ...(t.caFile === undefined
      ? {}
      : { requestHandler: { httpsAgent: new Agent({ ca: await readFile(t.caFile, "utf8") }) } }),
  });
  try {
    await new Upload({
      client,
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false,
      params: {
        Bucket: t.bucket,
        Key: t.key,
        Body: createReadStream(args.file),
        ContentType: "application/octet-stream",
        Metadata: { sha256 },
      },
    }).done();
    await hooks.afterWrite?.(`s3://${t.bucket}/${t.key}`);
    // Downloaded again and hashed (the snapshot's size once more in traffic): what S3 holds is what was sent.
    const object = await client.send(new GetObjectCommand({ Bucket: t.bucket, Key: t.key }));
    if (object.Body === undefined)
      throw new Error(`backup-upload: s3://${t.bucket}/${t.key} read back empty`);
    checkReadBack(
      `s3://${t.bucket}/${t.key}`,
      { sha256, size },
      await digestStream(object.Body as AsyncIterable<unknown>),
    );
  } finally {
    client.destroy();
  }
  return { location: `s3://${t.bucket}/${t.key}`, size, sha256 };
}

/** The subcommand: parse, store, write the termination message; throws (exit 1) with what went wrong. */
export async function backupUploadCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<UploadResult> {
  const result = await storeSnapshot(parseUploadArgs(argv));
  const message = JSON.stringify(result);
  // The kubelet mounts this file into every container; outside a pod there is none, and none is made.
  if (existsSync(terminationLog)) await writeFile(terminationLog, message);
  process.stdout.write(`${message}\n`);
  return result;
}
