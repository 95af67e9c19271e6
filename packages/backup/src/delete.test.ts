// Deleting stored snapshots: `backup-delete` removes the file (and a leftover .partial) below the claim's mount
// only; DeleteObject fails on an unreachable endpoint (so the finalizer stays) and, against a real S3-compatible
// server when CAPSTAN_S3_ENDPOINT, CAPSTAN_S3_BUCKET and AWS credentials are set, removes an uploaded object.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, describe, expect, it } from "vitest";
import { backupDeleteCommand, deleteS3Object, removeSnapshotFile } from "./delete.ts";

const dir = mkdtempSync(join(tmpdir(), "capstan-backup-delete-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("removeSnapshotFile", () => {
  it("removes the file and a leftover .partial, and says whether the file was there", async () => {
    const file = join(dir, "a", "b1.db");
    mkdirSync(join(dir, "a"));
    writeFileSync(file, "snapshot");
    writeFileSync(`${file}.partial`, "half");
    expect(await removeSnapshotFile(file)).toBe(true);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.partial`)).toBe(false);
    // Again: nothing there, still a success (a retried Job).
    expect(await removeSnapshotFile(file)).toBe(false);
  });
});

describe("backup-delete", () => {
  it("refuses a file outside the claim's mount", async () => {
    const file = join(dir, "outside.db");
    writeFileSync(file, "keep");
    await expect(backupDeleteCommand([`--file=${file}`])).rejects.toThrow(/must be below \/destination/);
    expect(existsSync(file)).toBe(true);
  });
});

describe("DeleteObject", () => {
  const ref = (o: { endpoint: string; bucket: string; key: string }) => ({
    ...o,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? "id",
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? "secret",
    },
    timeoutMs: 10_000,
  });

  it("fails when the endpoint cannot be reached", async () => {
    await expect(
      deleteS3Object(
        ref({ endpoint: "http://127.0.0.1:9", bucket: "bk", key: "k.db" }),
        new AbortController().signal,
      ),
    ).rejects.toThrow();
  }, 30_000);

  const endpoint = process.env.CAPSTAN_S3_ENDPOINT;
  const bucket = process.env.CAPSTAN_S3_BUCKET;
  it.skipIf(endpoint === undefined || bucket === undefined)(
    "deletes an object, and deleting it again succeeds",
    async () => {
      const key = `capstan-test/delete-${Date.now()}.db`;
      const client = new S3Client({ region: "us-east-1", endpoint: endpoint!, forcePathStyle: true });
      await client.send(new PutObjectCommand({ Bucket: bucket!, Key: key, Body: "snapshot" }));
      const signal = new AbortController().signal;
      await deleteS3Object(ref({ endpoint: endpoint!, bucket: bucket!, key }), signal);
      await expect(client.send(new HeadObjectCommand({ Bucket: bucket!, Key: key }))).rejects.toThrow();
      await deleteS3Object(ref({ endpoint: endpoint!, bucket: bucket!, key }), signal);
      client.destroy();
    },
    60_000,
  );
});
