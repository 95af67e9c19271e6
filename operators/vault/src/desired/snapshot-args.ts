// The command lines of the Vault operator image's own Job steps: `vault-snapshot-save` (take the raft snapshot from
// the active node and verify it) and `vault-snapshot-restore` (verify a fetched snapshot and force-restore it), with
// their parsers, so the Job builders and the subcommands cannot disagree. @capstan/backup's strict flag parser. The
// token is always a file (a mounted Secret): never an argument.
import { parseFlags } from "@capstan/backup";

/** How a step reaches one Vault node. */
export interface VaultEndpointArgs {
  /** Base URL, e.g. https://demo-active.ns.svc:8200. */
  address: string;
  /** The cluster's CA bundle (PEM file). */
  caFile: string;
  /** The file holding the token (a mounted Secret). */
  tokenFile: string;
}

/** The arguments of `vault-snapshot-save`. */
export interface SaveArgs extends VaultEndpointArgs {
  /** Where the snapshot is written. */
  to: string;
}

/** The arguments of `vault-snapshot-restore`. */
export interface RestoreArgs extends VaultEndpointArgs {
  /** The fetched snapshot. */
  file: string;
}

const ENDPOINT_FLAGS = {
  address: { type: "string" },
  "ca-file": { type: "string" },
  "token-file": { type: "string" },
} as const;

function endpointArgs(e: VaultEndpointArgs): string[] {
  return [`--address=${e.address}`, `--ca-file=${e.caFile}`, `--token-file=${e.tokenFile}`];
}

function checkAddress(address: string, fail: (message: string) => never): string {
  if (!/^https:\/\/[^/\s]+$/.test(address)) fail(`--address must be https://<host>:<port>, not "${address}"`);
  return address;
}

/** `vault-snapshot-save`'s command line (after the subcommand name). */
export function saveArgs(a: SaveArgs): string[] {
  return [...endpointArgs(a), `--to=${a.to}`];
}

/** Reads `vault-snapshot-save`'s command line back; throws naming the flag that is missing or unknown. */
export function parseSaveArgs(args: string[]): SaveArgs {
  const parsed = parseFlags("vault-snapshot-save", args, { ...ENDPOINT_FLAGS, to: { type: "string" } });
  return {
    address: checkAddress(parsed.need("address"), parsed.fail),
    caFile: parsed.need("ca-file"),
    tokenFile: parsed.need("token-file"),
    to: parsed.need("to"),
  };
}

/** `vault-snapshot-restore`'s command line (after the subcommand name). */
export function restoreArgs(a: RestoreArgs): string[] {
  return [...endpointArgs(a), `--file=${a.file}`];
}

/** Reads `vault-snapshot-restore`'s command line back; throws naming the flag that is missing or unknown. */
export function parseRestoreArgs(args: string[]): RestoreArgs {
  const parsed = parseFlags("vault-snapshot-restore", args, { ...ENDPOINT_FLAGS, file: { type: "string" } });
  return {
    address: checkAddress(parsed.need("address"), parsed.fail),
    caFile: parsed.need("ca-file"),
    tokenFile: parsed.need("token-file"),
    file: parsed.need("file"),
  };
}

/** What `vault-snapshot-save` (and `-restore`) report in their termination message. */
export interface SnapshotResult {
  size: number;
  sha256: string;
  /** raft's snapshot index and term (meta.json). */
  index: number;
  term: number;
}

/** A step's termination message, or undefined when it is not a {@link SnapshotResult}. */
export function parseSnapshotResult(message: string | undefined): SnapshotResult | undefined {
  if (message === undefined) return undefined;
  try {
    const v = JSON.parse(message) as Partial<SnapshotResult>;
    if (
      Number.isSafeInteger(v.size) &&
      typeof v.sha256 === "string" &&
      /^[0-9a-f]{64}$/.test(v.sha256) &&
      Number.isSafeInteger(v.index) &&
      Number.isSafeInteger(v.term)
    ) {
      return { size: v.size as number, sha256: v.sha256, index: v.index as number, term: v.term as number };
    }
  } catch {
    // not JSON: the log tail of a failed step
  }
  return undefined;
}
