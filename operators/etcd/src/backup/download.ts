// `backup-download` and `restore-finish`, the operator image's steps of the restore Job (desired/restore-job.ts): the
// snapshot fetched and checked by @capstan/backup's fetch into the seed claim's work directory, never over member
// data; then the restored data directory renamed into place, once.
import { existsSync } from "node:fs";
import { mkdir, open, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fetchSnapshot, parseFlags, reportResult, TERMINATION_LOG } from "@capstan/backup";
import { type DownloadArgs, parseDownloadArgs } from "../desired/restore-job.ts";

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

/** How the download's errors name the fields to check. */
const DOWNLOAD_HINTS = {
  command: "backup-download",
  path: "spec.bootstrap.restore.pvc.path, or the EtcdBackup's status.location",
  sha256: "spec.bootstrap.restore.sha256 or the backup's status.sha256",
};

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
  const got = await fetchSnapshot(args.from, args.to, args, env, DOWNLOAD_HINTS, 0o700);
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

/** The `backup-download` subcommand. */
export async function backupDownloadCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<DownloadResult> {
  const result = await downloadSnapshot(parseDownloadArgs(argv));
  await reportResult(JSON.stringify(result), terminationLog);
  return result;
}

/** The `restore-finish` subcommand. */
export async function restoreFinishCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<{ moved: boolean }> {
  const result = await finishRestore(parseFinishArgs(argv));
  await reportResult(JSON.stringify(result), terminationLog);
  return result;
}
