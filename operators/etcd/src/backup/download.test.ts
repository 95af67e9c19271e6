// backup-download and restore-finish on real temp directories: member data is never written over, a wrong or
// truncated snapshot is refused and leaves nothing behind, a partial earlier attempt is cleared, and the finish
// is one rename whose repetition is harmless.
import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { DownloadArgs } from "../desired/restore-job.ts";
import { downloadSnapshot, finishRestore, RESTORE_MARKER } from "./download.ts";

const root = mkdtempSync(join(tmpdir(), "capstan-download-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const content = randomBytes(200_000);
const sha = createHash("sha256").update(content).digest("hex");
const source = join(root, "source.db");
writeFileSync(source, content);

let claim: string;
let n = 0;
beforeEach(() => {
  claim = join(root, `claim-${n++}`);
  mkdirSync(claim);
});
const args = (o: Partial<DownloadArgs> = {}): DownloadArgs => ({
  to: join(claim, "restore", "snapshot.db"),
  dataDir: join(claim, "data"),
  workDir: join(claim, "restore"),
  from: { kind: "file", path: source },
  ...o,
});
const finish = () => ({
  from: join(claim, "restore", "data"),
  to: join(claim, "data"),
  workDir: join(claim, "restore"),
});

describe("backup-download", () => {
  it("copies the snapshot with its size and sha256 checked", async () => {
    expect(await downloadSnapshot(args({ sha256: sha, size: content.length }))).toEqual({
      size: content.length,
      sha256: sha,
      alreadyRestored: false,
    });
    expect(readFileSync(join(claim, "restore", "snapshot.db")).equals(content)).toBe(true);
  });

  it("refuses a data directory holding a member, and leaves it untouched", async () => {
    mkdirSync(join(claim, "data", "member"), { recursive: true });
    await expect(downloadSnapshot(args())).rejects.toThrow(/already holds a member's data/);
    expect(readdirSync(join(claim, "data"))).toEqual(["member"]);
    expect(existsSync(join(claim, "restore"))).toBe(false);
  });

  it("refuses a snapshot whose sha256 differs, leaving no file", async () => {
    await expect(downloadSnapshot(args({ sha256: "0".repeat(64) }))).rejects.toThrow(
      /sha256 is [0-9a-f]{64}, expected 0+/,
    );
    expect(readdirSync(join(claim, "restore"))).toEqual([]);
  });

  it("refuses a truncated snapshot (size differs)", async () => {
    await expect(downloadSnapshot(args({ size: content.length + 1 }))).rejects.toThrow(
      /bytes, the backup recorded/,
    );
  });

  it("clears what an interrupted attempt left in the work directory", async () => {
    mkdirSync(join(claim, "restore", "data", "member"), { recursive: true });
    writeFileSync(join(claim, "restore", "snapshot.db.partial"), "half");
    await downloadSnapshot(args());
    expect(readdirSync(join(claim, "restore"))).toEqual(["snapshot.db"]);
  });

  it("names the missing source file", async () => {
    await expect(
      downloadSnapshot(args({ from: { kind: "file", path: join(root, "nope.db") } })),
    ).rejects.toThrow(/nope.db does not exist/);
  });

  it("asks for S3 credentials by name", async () => {
    const s3: DownloadArgs["from"] = {
      kind: "s3",
      bucket: "b",
      key: "k",
      region: "us-east-1",
      forcePathStyle: true,
    };
    await expect(downloadSnapshot(args({ from: s3 }), {})).rejects.toThrow(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
  });
});

describe("restore-finish", () => {
  it("moves the restored directory into place with its marker, and removes the work directory", async () => {
    mkdirSync(join(claim, "restore", "data", "member", "snap"), { recursive: true });
    expect(await finishRestore(finish(), new Date("2026-12-02T06:00:00Z"))).toEqual({ moved: true });
    expect(readdirSync(join(claim, "data")).sort()).toEqual([RESTORE_MARKER, "member"]);
    expect(JSON.parse(readFileSync(join(claim, "data", RESTORE_MARKER), "utf8"))).toEqual({
      finished: "2026-12-02T06:00:00.000Z",
    });
    expect(existsSync(join(claim, "restore"))).toBe(false);
  });

  it("refuses to move over a member's data", async () => {
    mkdirSync(join(claim, "restore", "data", "member"), { recursive: true });
    mkdirSync(join(claim, "data", "member"), { recursive: true });
    await expect(finishRestore(finish())).rejects.toThrow(/already holds a member's data/);
    expect(existsSync(join(claim, "restore", "data", "member"))).toBe(true);
  });

  it("refuses a work directory etcdutl did not finish", async () => {
    mkdirSync(join(claim, "restore", "data"), { recursive: true });
    await expect(finishRestore(finish())).rejects.toThrow(/no etcd member directory/);
    expect(existsSync(join(claim, "data"))).toBe(false);
  });

  it("a repeated finish after the rename moves nothing and succeeds", async () => {
    mkdirSync(join(claim, "restore", "data", "member"), { recursive: true });
    await finishRestore(finish());
    mkdirSync(join(claim, "restore", "data", "member"), { recursive: true });
    expect(await finishRestore(finish())).toEqual({ moved: false });
    expect(existsSync(join(claim, "restore"))).toBe(false);
  });
});
