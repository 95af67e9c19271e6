// The Job steps' shared flag parser: what it refuses (and the message naming the flag), the S3 flags' round-trip,
// and that every subcommand (upload, download, delete, finish) refuses alike.

import { type FileOrS3, fileOrS3Flags, parseFileOrS3, parseFlags, S3_FLAGS } from "@capstan/backup";
import { describe, expect, it } from "vitest";
import { parseFinishArgs } from "../backup/download.ts";
import { parseDeleteArgs, parseUploadArgs } from "./backup-job.ts";
import { parseDownloadArgs } from "./restore-job.ts";

const OPTIONS = { name: { type: "string" }, force: { type: "boolean" } } as const;

describe("parseFlags", () => {
  it("reads values given as --name=value and --name value, and switches", () => {
    expect(parseFlags("cmd", ["--name=a=b", "--force"], OPTIONS).values).toEqual({
      name: "a=b",
      force: true,
    });
    expect(parseFlags("cmd", ["--name", "x"], OPTIONS).values).toEqual({ name: "x" });
    expect(parseFlags("cmd", ["--name=-x"], OPTIONS).values).toEqual({ name: "-x" });
    expect(parseFlags("cmd", [], OPTIONS).values).toEqual({});
  });

  it.each([
    [["--bogus=1"], "cmd: unknown flag --bogus"],
    [["-n"], "cmd: unknown flag -n"],
    [["positional"], 'cmd: unexpected argument "positional": flags are --name=value'],
    [["--", "--name=x"], 'cmd: unexpected argument "--"'],
    [["--name"], "cmd: --name needs a value (--name=VALUE)"],
    [["--name", "--force"], "cmd: --name needs a value (--name=VALUE)"],
    [["--force=false"], 'cmd: --force is a switch and takes no value ("--force=false")'],
    [["--constructor=x"], "cmd: unknown flag --constructor"],
  ])("refuses %j", (args, message) => {
    expect(() => parseFlags("cmd", args, OPTIONS)).toThrow(message);
  });

  it("need() refuses a missing or empty value; the usage follows every message", () => {
    expect(() => parseFlags("cmd", [], OPTIONS).need("name")).toThrow("cmd: --name is required");
    expect(() => parseFlags("cmd", ["--name="], OPTIONS, "--name=N").need("name")).toThrow(
      "cmd: --name is required; usage: cmd --name=N",
    );
    expect(() => parseFlags("cmd", ["x"], OPTIONS, "--name=N")).toThrow(/; usage: cmd --name=N$/);
    expect(parseFlags("cmd", ["--name=n"], OPTIONS).need("name")).toBe("n");
  });
});

describe("the file-or-S3 flags", () => {
  const FLAGS = { out: { type: "string" }, ...S3_FLAGS } as const;
  const parse = (args: string[]) => parseFileOrS3(parseFlags("cmd", args, FLAGS), "out");
  it.each<FileOrS3>([
    { kind: "file", path: "/d/x.db" },
    { kind: "s3", bucket: "b", key: "k/x.db", region: "us-east-1", forcePathStyle: false },
    {
      kind: "s3",
      bucket: "b",
      key: "k",
      region: "eu-1",
      endpoint: "https://s3:9000",
      forcePathStyle: true,
      caFile: "/ca.crt",
    },
  ])("round-trip %#", (where) => expect(parse(fileOrS3Flags("out", where))).toEqual(where));

  it("defaults the region", () => {
    expect(parse(["--s3-bucket=b", "--s3-key=k"])).toMatchObject({ region: "us-east-1" });
  });

  it.each([
    [["--out=/x", "--s3-bucket=b"], "give --out or --s3-bucket, not both"],
    [["--out="], "--out is required"],
    [["--s3-key=k"], "--s3-bucket is required"],
    [["--s3-bucket=b"], "--s3-key is required"],
  ])("refuses %j", (args, message) => expect(() => parse(args)).toThrow(`cmd: ${message}`));
});

describe("every subcommand parses with it", () => {
  it.each([
    // A value flag without its value was read as the string "true" by the hand-written parsers.
    [() => parseUploadArgs(["--file", "--s3-bucket=b", "--s3-key=k"]), "backup-upload: --file needs a value"],
    [() => parseUploadArgs(["--file=/f", "--to-file"]), "backup-upload: --to-file needs a value"],
    [
      () => parseUploadArgs(["--file=/f", "--s3-bucket=b", "--s3-key=k", "--s3-force-path-style=false"]),
      "backup-upload: --s3-force-path-style is a switch",
    ],
    [
      () => parseDownloadArgs(["--to=/a", "--data-dir=/d", "--work-dir=/w", "--from-file"]),
      "backup-download: --from-file needs a value",
    ],
    // An empty --size was read as 0 bytes.
    [
      () => parseDownloadArgs(["--to=/a", "--data-dir=/d", "--work-dir=/w", "--size=", "--from-file=/f"]),
      'backup-download: --size must be a byte count, not ""',
    ],
    [() => parseDeleteArgs([]), "backup-delete: --file is required; usage: backup-delete --file=PATH"],
    [() => parseDeleteArgs(["--file=/destination/x", "y"]), 'backup-delete: unexpected argument "y"'],
    [() => parseFinishArgs(["--from=/a", "--to=/b"]), "restore-finish: --work-dir is required; usage:"],
    [() => parseFinishArgs(["--from=/a", "--bogus"]), "restore-finish: unknown flag --bogus"],
  ])("%#", (parse, message) => expect(parse).toThrow(message));

  it("accepts what the builders write", () => {
    expect(parseDeleteArgs(["--file=/destination/db/x.db"])).toEqual({ file: "/destination/db/x.db" });
    expect(parseFinishArgs(["--from=/a", "--to=/b", "--work-dir=/w"])).toEqual({
      from: "/a",
      to: "/b",
      workDir: "/w",
    });
  });
});
