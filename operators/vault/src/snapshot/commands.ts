// The Vault operator image's own Job steps. `vault-snapshot-save`: GET /v1/sys/storage/raft/snapshot from the node
// at --address (the -active Service), streamed into a file through a `.partial` name, then verified (gzip, tar,
// SHA256SUMS); a snapshot that fails the check is removed and the step fails (the Job's next attempt takes a new
// one). `vault-snapshot-restore`: the fetched file verified the same way, then POSTed to
// /v1/sys/storage/raft/snapshot-force. Both print {size, sha256, index, term} as their termination message. The
// token is read from --token-file (a mounted Secret) and is never printed.
import { createReadStream } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { digestFile, reportResult, TERMINATION_LOG, writeAtomically } from "@capstan/backup";
import { Agent, request } from "undici";
import {
  parseRestoreArgs,
  parseSaveArgs,
  type SnapshotResult,
  type VaultEndpointArgs,
} from "../desired/snapshot-args.ts";
import { verifySnapshotFile } from "../vault/snapshot-archive.ts";

/** No byte for this long while a snapshot streams: the connection is taken for dead. */
const STALL_MS = 5 * 60_000;

async function endpoint(e: VaultEndpointArgs): Promise<{ agent: Agent; token: string }> {
  const token = (await readFile(e.tokenFile, "utf8")).trim();
  if (token === "") throw new Error(`${e.tokenFile} is empty: no Vault token to use`);
  const agent = new Agent({ connect: { ca: await readFile(e.caFile, "utf8"), timeout: 30_000 } });
  return { agent, token };
}

/** Vault's error answer as one line (its "errors", else the body's start); never the request's headers. */
async function vaultError(
  path: string,
  statusCode: number,
  body: { text(): Promise<string> },
): Promise<Error> {
  const text = await body.text().catch(() => "");
  let errors: string[] | undefined;
  try {
    errors = (JSON.parse(text) as { errors?: string[] }).errors;
  } catch {
    errors = undefined;
  }
  return new Error(`Vault ${path}: HTTP ${statusCode}: ${(errors ?? [text.slice(0, 300)]).join("; ")}`);
}

/** Takes the snapshot into `args.to` and verifies it; resolves with what it holds. */
export async function saveSnapshot(args: ReturnType<typeof parseSaveArgs>): Promise<SnapshotResult> {
  const { agent, token } = await endpoint(args);
  const path = "/v1/sys/storage/raft/snapshot";
  try {
    const res = await request(`${args.address}${path}`, {
      method: "GET",
      headers: { "x-vault-token": token },
      dispatcher: agent,
      headersTimeout: 120_000,
      bodyTimeout: STALL_MS,
    });
    if (res.statusCode !== 200) throw await vaultError(path, res.statusCode, res.body);
    const written = await writeAtomically(res.body, args.to, 0o700);
    try {
      const contents = await verifySnapshotFile(args.to);
      return { ...written, index: contents.index, term: contents.term };
    } catch (err) {
      await rm(args.to, { force: true });
      throw new Error(
        `vault-snapshot-save: the snapshot from ${args.address} failed its check: ${(err as Error).message}`,
      );
    }
  } finally {
    await agent.close();
  }
}

/** Verifies `args.file` and force-restores it into the node at `args.address`. */
export async function restoreSnapshot(args: ReturnType<typeof parseRestoreArgs>): Promise<SnapshotResult> {
  let contents: Awaited<ReturnType<typeof verifySnapshotFile>>;
  try {
    contents = await verifySnapshotFile(args.file);
  } catch (err) {
    throw new Error(
      `vault-snapshot-restore: ${args.file} failed its check, nothing was sent to Vault: ${(err as Error).message}`,
    );
  }
  const { size, sha256 } = await digestFile(args.file);
  const { agent, token } = await endpoint(args);
  const path = "/v1/sys/storage/raft/snapshot-force";
  try {
    const res = await request(`${args.address}${path}`, {
      method: "POST",
      headers: {
        "x-vault-token": token,
        "content-type": "application/octet-stream",
        "content-length": String(size),
      },
      body: createReadStream(args.file),
      dispatcher: agent,
      headersTimeout: STALL_MS,
      bodyTimeout: STALL_MS,
    });
    if (res.statusCode >= 300) throw await vaultError(path, res.statusCode, res.body);
    await res.body.dump();
  } finally {
    await agent.close();
  }
  return { size, sha256, index: contents.index, term: contents.term };
}

/** The `vault-snapshot-save` subcommand. */
export async function vaultSnapshotSaveCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<SnapshotResult> {
  const result = await saveSnapshot(parseSaveArgs(argv));
  await reportResult(JSON.stringify(result), terminationLog);
  return result;
}

/** The `vault-snapshot-restore` subcommand. */
export async function vaultSnapshotRestoreCommand(
  argv: string[],
  terminationLog = TERMINATION_LOG,
): Promise<SnapshotResult> {
  const result = await restoreSnapshot(parseRestoreArgs(argv));
  await reportResult(JSON.stringify(result), terminationLog);
  return result;
}
