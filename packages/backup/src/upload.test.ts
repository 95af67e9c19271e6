// backup-upload: a file destination for real (temp dirs), the errors that name what to fix, and an S3 round trip
// (multipart) against a real S3-compatible server when CAPSTAN_S3_ENDPOINT, CAPSTAN_S3_BUCKET and AWS credentials
// are set (skipped otherwise).
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, describe, expect, it } from "vitest";
import { backupUploadCommand, digestFile, PART_SIZE, storeSnapshot, uploadArgs } from "./upload.ts";

const dir = mkdtempSync(join(tmpdir(), "capstan-upload-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const snapshot = join(dir, "snapshot.db");
const content = randomBytes(300_000);
writeFileSync(snapshot, content);
const sha = createHash("sha256").update(content).digest("hex");

describe("backup-upload to a file", () => {
  it("copies the snapshot into a new directory, with its size and sha256, and leaves no partial file", async () => {
    const to = join(dir, "dest", "db", "demo", "b1.db");
    const termination = join(dir, "termination-log");
    writeFileSync(termination, ""); // the kubelet's file
    const result = await backupUploadCommand(
      uploadArgs({ file: snapshot, target: { kind: "file", path: to } }),
      termination,
    );
    expect(result).toEqual({ location: `file://${to}`, size: content.length, sha256: sha });
    expect(readFileSync(to).equals(content)).toBe(true);
    expect(statSync(to).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, "dest", "db", "demo"))).toEqual(["b1.db"]);
    expect(JSON.parse(readFileSync(termination, "utf8"))).toEqual(result);
  });

  it("reads the stored file back: a copy that differs from the snapshot fails the upload", async () => {
    const to = join(dir, "corrupted", "b1.db");
    await expect(
      storeSnapshot(
        { file: snapshot, target: { kind: "file", path: to } },
        {},
        {
          afterWrite: async () => writeFileSync(to, content.subarray(0, 1000)),
        },
      ),
    ).rejects.toThrow(/read back differs from the snapshot: 1000 bytes/);
  });

  it("makes no termination-log file outside a pod", async () => {
    const termination = join(dir, "no-termination-log");
    await backupUploadCommand(
      uploadArgs({ file: snapshot, target: { kind: "file", path: join(dir, "again.db") } }),
      termination,
    );
    expect(existsSync(termination)).toBe(false);
  });

  it("refuses a missing snapshot, naming the flag", async () => {
    await expect(
      storeSnapshot({ file: join(dir, "nope.db"), target: { kind: "file", path: join(dir, "x.db") } }),
    ).rejects.toThrow(/--file .*nope.db is not a file/);
    expect(existsSync(join(dir, "x.db"))).toBe(false);
  });

  it("digests a file", async () => {
    expect(await digestFile(snapshot)).toEqual({ sha256: sha, size: content.length });
  });
});

describe("backup-upload to S3", () => {
  it("asks for credentials by the Secret they come from", async () => {
    await expect(
      storeSnapshot(
        {
          file: snapshot,
          target: { kind: "s3", bucket: "b", key: "k", region: "us-east-1", forcePathStyle: true },
        },
        {},
      ),
    ).rejects.toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set .*credentialsSecret/);
  });

  const endpoint = process.env.CAPSTAN_S3_ENDPOINT;
  const bucket = process.env.CAPSTAN_S3_BUCKET;
  it.skipIf(endpoint === undefined || bucket === undefined)(
    "uploads a multipart snapshot that reads back byte for byte",
    async () => {
      const big = join(dir, "big.db");
      const bytes = randomBytes(PART_SIZE + 1_000_000); // two parts
      writeFileSync(big, bytes);
      const key = `capstan-test/${Date.now()}.db`;
      const result = await storeSnapshot({
        file: big,
        target: {
          kind: "s3",
          bucket: bucket!,
          key,
          region: "us-east-1",
          endpoint: endpoint!,
          forcePathStyle: true,
        },
      });
      expect(result.size).toBe(bytes.length);
      const client = new S3Client({ region: "us-east-1", endpoint: endpoint!, forcePathStyle: true });
      const got = await client.send(new GetObjectCommand({ Bucket: bucket!, Key: key }));
      const body = Buffer.from(await got.Body!.transformToByteArray());
      client.destroy();
      expect(body.equals(bytes)).toBe(true);
      expect(got.Metadata?.sha256).toBe(result.sha256);
    },
    120_000,
  );
});
