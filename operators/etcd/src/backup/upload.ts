// `backup-upload`, the last step of a backup Job (run from the operator image): stores the verified snapshot in
// S3-compatible object storage (multipart, via @aws-sdk/lib-storage) or as a file on a PersistentVolumeClaim
// (written under a temporary name, synced, then renamed), and prints {location, size, sha256} to the
// termination message the operator reads. Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { dirname } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { parseUploadArgs, type UploadArgs, type UploadResult } from "../desired/backup-job.ts";

/** Where Kubernetes reads a container's termination message. */
export const TERMINATION_LOG = "/dev/termination-log";
/** Size of each part of a multipart upload (S3's minimum is 5 MiB). */
export const PART_SIZE = 16 * 1024 * 1024;

/** SHA-256 (hex) and size of a file, in one read. */
export async function digestFile(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), size };
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
): Promise<UploadResult> {
  const info = await stat(args.file).catch(() => undefined);
  if (info === undefined || !info.isFile())
    throw new Error(`backup-upload: --file ${args.file} is not a file`);
  const t = args.target;
  if (t.kind === "file") {
    const { sha256, size } = await writeAtomically(createReadStream(args.file), t.path);
    return { location: `file://${t.path}`, size, sha256 };
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "backup-upload: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (from the Secret named in spec.destination.s3.credentialsSecret)",
    );
  }
  const { sha256, size } = await digestFile(args.file);
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
