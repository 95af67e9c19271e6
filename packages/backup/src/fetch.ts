// Reading a stored snapshot back for a restore: its bytes from S3 (GetObject) or from a file on a read-only mounted
// claim, written through a `.partial` file, synced and renamed, and checked against the size and SHA-256 the backup
// recorded (a truncated or different file is removed and refused). `backup-fetch` is the restore Job's step that
// does only this (the Vault operator's restore); etcd's `backup-download` does it too, inside its data directory
// rules. Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
import { createReadStream, existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { Readable } from "node:stream";
import { type FileOrS3, fileOrS3Flags, parseFileOrS3, parseFlags, S3_FLAGS } from "./flags.ts";
import { TERMINATION_LOG, writeAtomically } from "./upload.ts";

/** Where a restore Job mounts a claim it reads a snapshot from (read-only). */
export const SOURCE_MOUNT = "/source";

/** What a fetch is told to expect and how its errors name the fields to check. */
export interface FetchExpectation {
  sha256?: string;
  size?: number;
}

/** The fields an error points the user to: where the source file is named, where the sha256 came from. */
export interface FetchHints {
  /** The subcommand, e.g. "backup-fetch". */
  command: string;
  /** Where a missing file is named, e.g. "spec.restore.pvc.path, or the VaultSnapshot's status.location". */
  path: string;
  /** Where the expected sha256 comes from. */
  sha256: string;
}

const GENERIC_HINTS: FetchHints = {
  command: "backup-fetch",
  path: "the restore's source",
  sha256: "the restore's sha256 or the snapshot's recorded status.sha256",
};

/** The snapshot's bytes from its source. */
export async function openSnapshot(
  from: FileOrS3,
  env: NodeJS.ProcessEnv = process.env,
  hints: FetchHints = GENERIC_HINTS,
): Promise<NodeJS.ReadableStream> {
  const cmd = hints.command;
  if (from.kind === "file") {
    if (!existsSync(from.path)) {
      throw new Error(`${cmd}: ${from.path} does not exist on the source claim (${hints.path})`);
    }
    return createReadStream(from.path);
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      `${cmd}: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (from the Secret named in s3.credentialsSecret)`,
    );
  }
  const { GetObjectCommand, S3Client } = await import("@aws-sdk/client-s3"); // on use: operators import the index
  const client = new S3Client({
    region: from.region,
    ...(from.endpoint === undefined ? {} : { endpoint: from.endpoint }),
    forcePathStyle: from.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    ...(from.caFile === undefined
      ? {}
      : { requestHandler: { httpsAgent: new Agent({ ca: await readFile(from.caFile, "utf8") }) } }),
  });
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: from.bucket, Key: from.key }));
    if (!(out.Body instanceof Readable)) {
      throw new Error(`${cmd}: s3://${from.bucket}/${from.key} returned no body`);
    }
    out.Body.once("close", () => client.destroy());
    return out.Body;
  } catch (err) {
    client.destroy();
    throw new Error(
      `${cmd}: reading s3://${from.bucket}/${from.key}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * Copies the snapshot from `from` to `to` (through `to`.partial, synced, renamed; its directory made with `dirMode`)
 * and checks it against `expect`: a size or sha256 that differs removes the file and throws naming both.
 */
export async function fetchSnapshot(
  from: FileOrS3,
  to: string,
  expect: FetchExpectation,
  env: NodeJS.ProcessEnv = process.env,
  hints: FetchHints = GENERIC_HINTS,
  dirMode?: number,
): Promise<{ sha256: string; size: number }> {
  const got = await writeAtomically(await openSnapshot(from, env, hints), to, dirMode);
  const fail = (what: string) => rm(to, { force: true }).then(() => Promise.reject(new Error(what)));
  if (expect.size !== undefined && got.size !== expect.size) {
    await fail(
      `${hints.command}: the snapshot is ${got.size} bytes, the backup recorded ${expect.size}: not restoring a truncated or different file`,
    );
  }
  if (expect.sha256 !== undefined && got.sha256 !== expect.sha256) {
    await fail(
      `${hints.command}: the snapshot's sha256 is ${got.sha256}, expected ${expect.sha256} (${hints.sha256})`,
    );
  }
  return got;
}

/** The arguments of `backup-fetch`. */
export interface FetchArgs extends FetchExpectation {
  /** Where the snapshot is written. */
  to: string;
  from: FileOrS3;
}

/** The S3 and expectation flags `backup-fetch` shares with etcd's `backup-download`. */
export const FETCH_FLAGS = {
  to: { type: "string" },
  sha256: { type: "string" },
  size: { type: "string" },
  "from-file": { type: "string" },
  ...S3_FLAGS,
} as const;

/** `backup-fetch`'s command line (after the subcommand name). */
export function fetchArgs(f: FetchArgs): string[] {
  return [
    `--to=${f.to}`,
    ...(f.sha256 === undefined ? [] : [`--sha256=${f.sha256}`]),
    ...(f.size === undefined ? [] : [`--size=${f.size}`]),
    ...fileOrS3Flags("from-file", f.from),
  ];
}

/** Reads --sha256 and --size of a parsed command line; fails naming a malformed one. */
export function parseExpectation(parsed: {
  values: { sha256?: string | undefined; size?: string | undefined };
  fail(message: string): never;
}): FetchExpectation {
  const { sha256, size: sizeFlag } = parsed.values;
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) {
    parsed.fail("--sha256 must be 64 lowercase hexadecimal digits");
  }
  const size = sizeFlag === undefined ? undefined : Number(sizeFlag);
  if (size !== undefined && !(sizeFlag !== "" && Number.isSafeInteger(size) && size >= 0)) {
    parsed.fail(`--size must be a byte count, not "${sizeFlag}"`);
  }
  return {
    ...(sha256 === undefined ? {} : { sha256 }),
    ...(size === undefined ? {} : { size }),
  };
}

/** Reads `backup-fetch`'s command line back; throws naming the flag that is missing, unknown or malformed. */
export function parseFetchArgs(args: string[]): FetchArgs {
  const parsed = parseFlags("backup-fetch", args, FETCH_FLAGS);
  return {
    to: parsed.need("to"),
    ...parseExpectation(parsed),
    from: parseFileOrS3(parsed, "from-file"),
  };
}

/** Writes `message` to the termination log (when the kubelet made one) and to stdout. */
export async function reportResult(message: string, terminationLog = TERMINATION_LOG): Promise<void> {
  // The kubelet mounts this file into every container; outside a pod there is none, and none is made.
  if (existsSync(terminationLog)) await writeFile(terminationLog, message);
  process.stdout.write(`${message}\n`);
}

/** The `backup-fetch` subcommand: fetch, check, report {size, sha256}; throws (exit 1) with what went wrong. */
export async function backupFetchCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<{ sha256: string; size: number }> {
  const a = parseFetchArgs(argv);
  const got = await fetchSnapshot(a.from, a.to, a);
  await reportResult(JSON.stringify(got), terminationLog);
  return got;
}
