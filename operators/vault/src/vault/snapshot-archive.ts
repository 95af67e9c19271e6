// What a Vault raft snapshot is and how it is checked: a gzip'd tar (hashicorp/raft-snapshot's archive) holding
// meta.json (raft's snapshot metadata: index, term), state.bin (the data) and SHA256SUMS ("<hex>  <name>" per file),
// plus Vault's SHA256SUMS.sealed. The check reads the stream once: the gzip and the tar must be whole, SHA256SUMS
// must list meta.json and state.bin, and every file it lists must be there with that SHA-256. The tar reader is
// the small part of the format Go's archive/tar writes for these files (ustar headers, PAX records), streamed, so a
// large state.bin is hashed and never held in memory.
import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";

/** What a verified snapshot says of itself. */
export interface SnapshotContents {
  /** raft's snapshot index and term (meta.json Index, Term). */
  index: number;
  term: number;
  /** Every file of the archive, with its size and SHA-256. */
  files: { name: string; size: number; sha256: string }[];
}

/** The files SHA256SUMS must list. */
export const REQUIRED_FILES = ["meta.json", "state.bin"] as const;

/** Files kept in memory to be read (the others are only hashed); larger ones are refused. */
const SMALL_FILES = new Set(["meta.json", "SHA256SUMS"]);
const SMALL_LIMIT = 1024 * 1024;

const BLOCK = 512;

/** An octal or base-256 number field of a tar header. */
function numberField(header: Buffer, offset: number, length: number): number {
  const field = header.subarray(offset, offset + length);
  if (((field[0] ?? 0) & 0x80) !== 0) {
    // GNU base-256: big-endian, the first byte's high bit set.
    let n = (field[0] ?? 0) & 0x7f;
    for (const b of field.subarray(1)) n = n * 256 + b;
    return n;
  }
  const text = field.toString("latin1").replace(/\0.*$/s, "").trim();
  return text === "" ? 0 : Number.parseInt(text, 8);
}

function stringField(header: Buffer, offset: number, length: number): string {
  const field = header.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString("utf8");
}

/** PAX extended header records ("<len> <key>=<value>\n"). */
function paxRecords(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    if (space < 0) break;
    const len = Number(data.subarray(pos, space).toString("latin1"));
    if (!Number.isSafeInteger(len) || len <= 0) break;
    const record = data.subarray(space + 1, pos + len - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    pos += len;
  }
  return out;
}

interface Entry {
  name: string;
  size: number;
  type: string;
  hash: Hash;
  kept?: Buffer[];
  read: number;
}

/** Reads the decompressed tar stream: each regular file's size and SHA-256, and the small files' bytes. */
async function readTar(
  stream: AsyncIterable<Buffer>,
): Promise<{ files: Map<string, { size: number; sha256: string }>; small: Map<string, Buffer> }> {
  const files = new Map<string, { size: number; sha256: string }>();
  const small = new Map<string, Buffer>();
  let buf: Buffer = Buffer.alloc(0);
  let entry: Entry | undefined;
  let padding = 0;
  let pax: Map<string, string> | undefined;
  let ended = false;
  const finish = (e: Entry) => {
    if (e.type === "x" || e.type === "g") {
      const records = paxRecords(Buffer.concat(e.kept ?? []));
      if (e.type === "x") pax = records;
      return;
    }
    if (e.type === "L") {
      pax = new Map([
        [
          "path",
          Buffer.concat(e.kept ?? [])
            .toString("utf8")
            .replace(/\0+$/, ""),
        ],
      ]);
      return;
    }
    if (e.type !== "0" && e.type !== "") return;
    files.set(e.name, { size: e.size, sha256: e.hash.digest("hex") });
    if (e.kept !== undefined) small.set(e.name, Buffer.concat(e.kept));
  };
  for await (const chunk of stream) {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    for (;;) {
      if (ended) break;
      if (entry !== undefined) {
        const take = Math.min(entry.size - entry.read, buf.length);
        const part = buf.subarray(0, take);
        entry.hash.update(part);
        if (entry.kept !== undefined) entry.kept.push(Buffer.from(part));
        entry.read += take;
        buf = buf.subarray(take);
        if (entry.read < entry.size) break;
        finish(entry);
        entry = undefined;
        continue;
      }
      if (padding > 0) {
        const skip = Math.min(padding, buf.length);
        buf = buf.subarray(skip);
        padding -= skip;
        if (padding > 0) break;
        continue;
      }
      if (buf.length < BLOCK) break;
      const header = buf.subarray(0, BLOCK);
      buf = buf.subarray(BLOCK);
      if (header.every((b) => b === 0)) {
        ended = true;
        break;
      }
      const type = String.fromCharCode(header[156] ?? 0).replace("\0", "");
      let name = stringField(header, 0, 100);
      const prefix = stringField(header, 345, 155);
      if (prefix !== "" && stringField(header, 257, 6).startsWith("ustar")) name = `${prefix}/${name}`;
      let size = numberField(header, 124, 12);
      if (pax !== undefined && type !== "x" && type !== "g" && type !== "L") {
        name = pax.get("path") ?? name;
        const paxSize = pax.get("size");
        if (paxSize !== undefined) size = Number(paxSize);
        pax = undefined;
      }
      const meta = type === "x" || type === "g" || type === "L";
      if (meta && size > SMALL_LIMIT) throw new Error(`a tar extended header of ${size} bytes`);
      const keep = meta || (SMALL_FILES.has(name) && size <= SMALL_LIMIT);
      entry = { name, size, type, hash: createHash("sha256"), read: 0, ...(keep ? { kept: [] } : {}) };
      padding = (BLOCK - (size % BLOCK)) % BLOCK;
      if (size === 0) {
        finish(entry);
        entry = undefined;
      }
    }
  }
  if (entry !== undefined) {
    throw new Error(`the archive ends inside ${entry.name} (${entry.read} of ${entry.size} bytes)`);
  }
  if (!ended && files.size === 0) throw new Error("the archive holds no file");
  return { files, small };
}

/** SHA256SUMS: "<64 hex>  <name>" per line (what raft-snapshot writes); throws on a line of another shape. */
export function parseSums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line.trim());
    if (m === null)
      throw new Error(`SHA256SUMS has a line that is not "<sha256>  <file>": ${line.slice(0, 120)}`);
    sums.set(m[2] ?? "", m[1] ?? "");
  }
  return sums;
}

/**
 * Checks a snapshot stream (gzip'd tar) as described above; resolves with what it holds, or throws naming what is
 * wrong (not gzip, a truncated archive, a file missing from it or from SHA256SUMS, a SHA-256 that differs).
 */
export async function verifySnapshotStream(stream: NodeJS.ReadableStream): Promise<SnapshotContents> {
  const gunzip = createGunzip();
  stream.on("error", (err) => gunzip.destroy(err));
  let read: Awaited<ReturnType<typeof readTar>>;
  try {
    read = await readTar(stream.pipe(gunzip) as AsyncIterable<Buffer>);
  } catch (err) {
    throw new Error(
      `the snapshot is not a whole gzip'd tar: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const sumsFile = read.small.get("SHA256SUMS");
  if (sumsFile === undefined) throw new Error("the snapshot has no SHA256SUMS file");
  const sums = parseSums(sumsFile.toString("utf8"));
  for (const required of REQUIRED_FILES) {
    if (!sums.has(required)) throw new Error(`the snapshot's SHA256SUMS does not list ${required}`);
  }
  for (const [name, sum] of sums) {
    const file = read.files.get(name);
    if (file === undefined) throw new Error(`the snapshot lacks ${name}, which its SHA256SUMS lists`);
    if (file.sha256 !== sum) {
      throw new Error(`the snapshot's ${name} has sha256 ${file.sha256}, its SHA256SUMS says ${sum}`);
    }
  }
  const metaFile = read.small.get("meta.json");
  let meta: { Index?: unknown; Term?: unknown };
  try {
    meta = JSON.parse(metaFile?.toString("utf8") ?? "") as typeof meta;
  } catch {
    throw new Error("the snapshot's meta.json is not JSON");
  }
  if (typeof meta.Index !== "number" || typeof meta.Term !== "number") {
    throw new Error("the snapshot's meta.json has no Index and Term");
  }
  return {
    index: meta.Index,
    term: meta.Term,
    files: [...read.files]
      .map(([name, f]) => ({ name, ...f }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

/** {@link verifySnapshotStream} of a file. */
export function verifySnapshotFile(path: string): Promise<SnapshotContents> {
  return verifySnapshotStream(createReadStream(path));
}
