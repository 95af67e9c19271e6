// Where a backup's snapshot is stored: `<prefix or directory>/<namespace>/<cluster>/<backup>-<backup uid>.<ext>` in
// its S3 bucket or on its claim, as a location string (s3://<bucket>/<key>, pvc://<claim>/<path>), as the upload's
// target, and read back from a recorded location for a restore. The backup object's uid makes the path unique to
// it, so two Kubernetes clusters sharing a bucket and prefix (or a claim's directory), with the same namespace,
// cluster and backup names, never overwrite or delete each other's snapshots.
import type { BackupDestination, PVCSource, S3Destination, S3Source } from "./destination.ts";
import { SOURCE_MOUNT } from "./fetch.ts";
import { type FileOrS3, s3ObjectOf } from "./flags.ts";
import { DESTINATION_MOUNT, type UploadArgs } from "./upload.ts";

/** The backup object a path is made for. */
export interface SnapshotRef {
  /** Its kind, for messages (e.g. "EtcdBackup"). */
  kind: string;
  name: string;
  namespace: string;
  /** The cluster it snapshots. */
  cluster: string;
  /** Its metadata.uid; without one (an object not read from the API server) the path has none. */
  uid?: string | undefined;
  destination: BackupDestination;
  /** status.location, once recorded. */
  recorded?: string | undefined;
  /** The file extension, without the dot ("db", "snap"). */
  extension: string;
}

/**
 * The snapshot's path below its destination: `<namespace>/<cluster>/<name>-<uid>.<ext>`. `legacy`: without the uid
 * (the etcd operator's Jobs before 2026-12-05). A name longer than 200 characters is cut in the file name.
 */
export function snapshotPath(ref: SnapshotRef, legacy = false): string {
  // A file name has at most 255 bytes: a long name is cut (the uid keeps the path unique).
  const file =
    legacy || ref.uid === undefined || ref.uid === "" ? ref.name : `${ref.name.slice(0, 200)}-${ref.uid}`;
  return `${ref.namespace}/${ref.cluster}/${file}.${ref.extension}`;
}

/** `rest` below `dir` (none: `rest` itself). */
export function joinPath(dir: string | undefined, rest: string): string {
  return dir === undefined || dir === "" ? rest : `${dir.replace(/\/+$/, "")}/${rest}`;
}

/** The scheme and root of a location, `s3://<bucket>/` or `pvc://<claim>/`, and the prefix or directory below it. */
export function locationRoot(ref: Pick<SnapshotRef, "kind" | "name" | "destination">): {
  root: string;
  dir: string | undefined;
} {
  const { s3, pvc } = ref.destination;
  if (s3 !== undefined) return { root: `s3://${s3.bucket}/`, dir: s3.prefix };
  if (pvc !== undefined) return { root: `pvc://${pvc.claimName}/`, dir: pvc.directory };
  throw new Error(`${ref.kind} ${ref.name}: spec.destination must set s3 or pvc`);
}

/**
 * The snapshot's path below its destination root (the S3 key, or the file below the claim's root): where the
 * recorded location says it was stored, else where a new Job stores it.
 */
export function storedPath(ref: SnapshotRef): string {
  const { root, dir } = locationRoot(ref);
  const recorded = ref.recorded;
  if (recorded?.startsWith(root) === true && recorded.length > root.length)
    return recorded.slice(root.length);
  return joinPath(dir, snapshotPath(ref));
}

/** Where the snapshot is stored, s3://<bucket>/<key> or pvc://<claim>/<path>: the recorded one, else the Job's. */
export function snapshotLocation(ref: SnapshotRef): string {
  return `${locationRoot(ref).root}${storedPath(ref)}`;
}

/** The upload of the snapshot at `file` (in the Job's pod) to where {@link storedPath} says. */
export function uploadTargetOf(ref: SnapshotRef, file: string): UploadArgs {
  const { s3, pvc } = ref.destination;
  if (s3 !== undefined) return { file, target: { kind: "s3", ...s3ObjectOf(s3, storedPath(ref)) } };
  if (pvc !== undefined) {
    return { file, target: { kind: "file", path: `${DESTINATION_MOUNT}/${storedPath(ref)}` } };
  }
  throw new Error(`${ref.kind} ${ref.name}: spec.destination must set s3 or pvc`);
}

/** Where a recorded snapshot is read from for a restore, with the size and sha256 it was recorded with. */
export type StoredSnapshot =
  | { kind: "s3"; s3: S3Source; sha256?: string; size?: number }
  | { kind: "pvc"; claimName: string; path: string; sha256?: string; size?: number };

/**
 * The stored snapshot a location names (s3://<bucket>/<key> or pvc://<claim>/<path>), read with the destination it
 * was stored to (the bucket's endpoint and credentials, or the claim); undefined when the location does not name
 * that destination.
 */
export function storedSnapshotAt(
  location: string,
  destination: BackupDestination,
  known: { sha256?: string | undefined; size?: number | undefined },
): StoredSnapshot | undefined {
  const m = /^(s3|pvc):\/\/([^/]+)\/(.+)$/.exec(location);
  const { s3, pvc } = destination;
  const recorded = {
    ...(known.sha256 === undefined ? {} : { sha256: known.sha256 }),
    ...(known.size === undefined ? {} : { size: known.size }),
  };
  if (m?.[1] === "s3" && s3 !== undefined && m[2] === s3.bucket) {
    const { prefix: _prefix, ...rest }: S3Destination = s3;
    return { kind: "s3", s3: { ...rest, key: m[3] ?? "" }, ...recorded };
  }
  if (m?.[1] === "pvc" && pvc !== undefined && m[2] === pvc.claimName) {
    return { kind: "pvc", claimName: pvc.claimName, path: m[3] ?? "", ...recorded };
  }
  return undefined;
}

/** The source as one string, for status and messages: s3://<bucket>/<key> or pvc://<claim>/<path>. */
export function sourceLocation(source: { s3?: S3Source; pvc?: PVCSource }): string | undefined {
  if (source.s3 !== undefined) return `s3://${source.s3.bucket}/${source.s3.key}`;
  if (source.pvc !== undefined) return `pvc://${source.pvc.claimName}/${source.pvc.path}`;
  return undefined;
}

/** Where a restore Job's fetch reads `stored`: the S3 object, or the file below the read-only {@link SOURCE_MOUNT}. */
export function fetchSourceOf(stored: StoredSnapshot): FileOrS3 {
  if (stored.kind === "pvc") return { kind: "file", path: `${SOURCE_MOUNT}/${stored.path}` };
  return { kind: "s3", ...s3ObjectOf(stored.s3, stored.s3.key) };
}
