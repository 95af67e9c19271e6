import { createReadStream, existsSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { parseFlags } from "../desired/job-args.ts";
import { type DownloadArgs, parseDownloadArgs } from "../desired/restore-job.ts";
import { TERMINATION_LOG, writeAtomically } from "./upload.ts";

/** The file restore-finish writes into the restored data directory before it is renamed into place. */
export const RESTORE_MARKER = "capstan-restore.json";

/** What backup-download fetched. */
export interface DownloadResult {
  size: number;
  sha256: string;
  /** The data directory already held a restore's data (an attempt interrupted after its rename). */
  alreadyRestored: boolean;
}

/** True when `dir` exists and has entries. */
async function nonEmpty(dir: string): Promise<boolean> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  return entries.length > 0;
}

/** The snapshot's bytes from its source. */
async function openSource(args: DownloadArgs, env: NodeJS.ProcessEnv): Promise<NodeJS.ReadableStream> {
  const f = args.from;
  if (f.kind === "file") {
    if (!existsSync(f.path)) {
      throw new Error(
        `backup-download: ${f.path} does not exist on the source claim (spec.bootstrap.restore.pvc.path, or the EtcdBackup's status.location)`,
      );
    }
    return createReadStream(f.path);
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "backup-download: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (from the Secret named in s3.credentialsSecret)",
    );
  }
  const client = new S3Client({
    region: f.region,
    ...(f.endpoint === undefined ? {} : { endpoint: f.endpoint }),
    forcePathStyle: f.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    ...(f.caFile === undefined
      ? {}
      : { requestHandler: { httpsAgent: new Agent({ ca: await readFile(f.caFile, "utf8") }) } }),
  });
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: f.bucket, Key: f.key }));
    if (!(out.Body instanceof Readable)) {
      throw new Error(`backup-download: s3://${f.bucket}/${f.key} returned no body`);
    }
    out.Body.once("close", () => client.destroy());
    return out.Body;
  } catch (err) {
    client.destroy();
    throw new Error(
      `backup-download: reading s3://${f.bucket}/${f.key}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** Fetches and verifies the snapshot as `args` say. */
export async function downloadSnapshot(
  args: DownloadArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DownloadResult> {
  let alreadyRestored = false;
  if (await nonEmpty(args.dataDir)) {
    if (!existsSync(join(args.dataDir, RESTORE_MARKER))) {
      throw new Error(
        `backup-download: the data directory ${args.dataDir} already holds a member's data; a restore never writes over it (delete the EtcdCluster and its claims to restore again)`,
      );
    }
    // An earlier attempt renamed its data into place and stopped before it exited: redo the rest harmlessly.
    alreadyRestored = true;
  }
  await rm(args.workDir, { recursive: true, force: true });
  await mkdir(args.workDir, { recursive: true, mode: 0o700 });
  const got = await writeAtomically(await openSource(args, env), args.to, 0o700);
  const fail = (what: string) => rm(args.to, { force: true }).then(() => Promise.reject(new Error(what)));
  if (args.size !== undefined && got.size !== args.size) {
    await fail(
      `backup-download: the snapshot is ${got.size} bytes, the backup recorded ${args.size}: not restoring a truncated or different file`,
    );
  }
  if (args.sha256 !== undefined && got.sha256 !== args.sha256) {
    await fail(
      `backup-download: the snapshot's sha256 is ${got.sha256}, expected ${args.sha256} (spec.bootstrap.restore.sha256 or the backup's status.sha256)`,
    );
  }
  return { ...got, alreadyRestored };
}

/** The arguments of `restore-finish`. */
export interface FinishArgs {
  from: string;
  to: string;
  workDir: string;
}

const FINISH_FLAGS = {
  from: { type: "string" },
  to: { type: "string" },
  "work-dir": { type: "string" },
} as const;

/** Reads `restore-finish`'s command line; throws naming the flag that is missing or unknown. */
export function parseFinishArgs(args: string[]): FinishArgs {
  const parsed = parseFlags("restore-finish", args, FINISH_FLAGS, "--from=DIR --to=DIR --work-dir=DIR");
  return { from: parsed.need("from"), to: parsed.need("to"), workDir: parsed.need("work-dir") };
}

/** Moves the restored data directory into place; `finished` is when (recorded in the marker). */
export async function finishRestore(args: FinishArgs, finished = new Date()): Promise<{ moved: boolean }> {
  if (await nonEmpty(args.to)) {
    if (!existsSync(join(args.to, RESTORE_MARKER))) {
      throw new Error(
        `restore-finish: ${args.to} already holds a member's data; the restored data in ${args.from} is not moved over it`,
      );
    }
    await rm(args.workDir, { recursive: true, force: true });
    return { moved: false };
  }
  if (!existsSync(join(args.from, "member"))) {
    throw new Error(`restore-finish: ${args.from} holds no etcd member directory; etcdutl did not finish`);
  }
  await writeFile(
    join(args.from, RESTORE_MARKER),
    `${JSON.stringify({ finished: finished.toISOString() })}\n`,
  );
  // An empty data directory (e.g. made by a mount) would make rename fail: remove it first.
  await rm(args.to, { recursive: true, force: true });
  await rename(args.from, args.to);
  const dir = await open(dirname(args.to), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  await rm(args.workDir, { recursive: true, force: true });
  return { moved: true };
}

async function report(message: string, terminationLog: string): Promise<void> {
  if (existsSync(terminationLog)) await writeFile(terminationLog, message);
  process.stdout.write(`${message}\n`);
}

/** The `backup-download` subcommand. */
export async function backupDownloadCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<DownloadResult> {
  const result = await downloadSnapshot(parseDownloadArgs(argv));
  await report(JSON.stringify(result), terminationLog);
  return result;
}

/** The `restore-finish` subcommand. */
export async function restoreFinishCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<{ moved: boolean }> {
  const result = await finishRestore(parseFinishArgs(argv));
  await report(JSON.stringify(result), terminationLog);
  return result;
}
