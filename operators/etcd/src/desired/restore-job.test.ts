// The restore Job: golden files for a backup on a PVC and an S3 object with a CA, labels outside the member
// selector, the download arguments' round trip, the source resolved from an EtcdBackup, and the whole Job run as
// built against real etcd binaries (snapshot of a real member, download, etcdutl restore, finish, then etcd started
// on the result), skipped when the local etcd binaries are missing.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EtcdBackup } from "../api/backup.ts";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import type { EtcdBootstrapRestore } from "../api/restore-source.ts";
import { downloadSnapshot, finishRestore, parseFinishArgs } from "../backup/download.ts";
import { haveLocalEtcd, LocalEtcd, localEtcdBinary } from "../etcd/local-etcd.ts";
import { selectorLabels } from "./names.ts";
import {
  DATA_MOUNT,
  type DownloadArgs,
  downloadArgs,
  parseDownloadArgs,
  resolveRestoreSource,
  restoreJob,
  restoreJobSeed,
  restoreLabels,
  SOURCE_MOUNT,
} from "./restore-job.ts";

const run = promisify(execFile);
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);
const SHA = "c".repeat(64);

afterAll(() => {
  if (UPDATE)
    execFileSync("npx", ["biome", "format", "--write", fileURLToPath(TESTDATA)], { stdio: "inherit" });
});

/** Compares `actual` with testdata/<name>.json; with UPDATE_GOLDEN=1 writes it instead. */
function golden(name: string, actual: unknown): void {
  const url = new URL(`${name}.json`, TESTDATA);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) writeFileSync(url, text);
  expect(existsSync(url), `testdata/${name}.json is missing: run UPDATE_GOLDEN=1 npm test`).toBe(true);
  expect(JSON.parse(readFileSync(url, "utf8"))).toEqual(JSON.parse(text));
}

const cluster = (restore: EtcdBootstrapRestore): EtcdCluster => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "restored", namespace: "db", uid: "6f1c0f5e-0000-4000-8000-000000000002" },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "gcr.io/etcd-development/etcd",
    storage: { size: "2Gi" },
    bootstrap: { restore },
  },
});

const backupOn = (destination: EtcdBackup["spec"]["destination"], location: string): EtcdBackup => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdBackup",
  metadata: { name: "nightly", namespace: "db" },
  spec: { clusterName: "demo", destination },
  status: { phase: "Succeeded", location, sha256: SHA, size: 28_672, revision: 4, etcdVersion: "3.6.15" },
});
const pvcBackup = backupOn(
  { pvc: { claimName: "snaps", directory: "etcd" } },
  "pvc://snaps/etcd/db/demo/nightly.db",
);
const s3Backup = backupOn(
  {
    s3: {
      endpoint: "https://s3.storage.svc:9000",
      bucket: "snaps",
      prefix: "etcd",
      forcePathStyle: true,
      credentialsSecret: { name: "s3-creds" },
      caSecret: { name: "s3-ca" },
    },
  },
  "s3://snaps/etcd/db/demo/nightly.db",
);

const OPERATOR = "ghcr.io/capstan-dev/capstan/etcd-operator:0.1.0";

describe("restoreJob", () => {
  it("from a backup on a PVC (golden)", () => {
    const c = cluster({ backup: { name: "nightly" } });
    const job = restoreJob({
      cluster: c,
      seed: "restored-abcde",
      from: resolveRestoreSource(c.spec.bootstrap!.restore!, pvcBackup),
      operatorImage: OPERATOR,
    });
    golden("job-restore-backup-pvc", job);
  });

  it("from an S3 object with a CA and a bump of 0 (golden)", () => {
    const restore: EtcdBootstrapRestore = {
      s3: {
        endpoint: "https://s3.storage.svc:9000",
        bucket: "snaps",
        key: "etcd/db/demo/nightly.db",
        region: "eu-west-1",
        credentialsSecret: { name: "s3-creds", accessKeyIDKey: "id", secretAccessKeyKey: "secret" },
        caSecret: { name: "s3-ca", key: "bundle.pem" },
      },
      sha256: SHA,
      bumpRevision: 0,
    };
    const c = cluster(restore);
    golden(
      "job-restore-s3",
      restoreJob({
        cluster: c,
        seed: "restored-abcde",
        from: resolveRestoreSource(restore),
        operatorImage: OPERATOR,
      }),
    );
  });

  it("names the seed it writes into (read back from its data volume), which the planner compares", () => {
    const c = cluster({ backup: { name: "nightly" } });
    const from = resolveRestoreSource(c.spec.bootstrap!.restore!, pvcBackup);
    for (const seed of ["restored-abcde", "a-data", "x"]) {
      expect(restoreJobSeed(restoreJob({ cluster: c, seed, from, operatorImage: OPERATOR }))).toBe(seed);
    }
    const job = restoreJob({ cluster: c, seed: "restored-abcde", from, operatorImage: OPERATOR });
    job.spec!.template.spec!.volumes = job.spec!.template.spec!.volumes!.filter((v) => v.name !== "data");
    expect(restoreJobSeed(job)).toBeUndefined();
  });

  it("keeps its pod out of the member selector", () => {
    const c = cluster({ backup: { name: "nightly" } });
    const labels = restoreLabels(c);
    const selector = selectorLabels(c);
    expect(Object.entries(selector).every(([k, v]) => labels[k] === v)).toBe(false);
  });
});

describe("resolveRestoreSource", () => {
  const restore = { backup: { name: "nightly" } };
  it("reads a PVC backup's file from its location, with the recorded size and sha256", () => {
    expect(resolveRestoreSource(restore, pvcBackup)).toEqual({
      kind: "pvc",
      claimName: "snaps",
      path: "etcd/db/demo/nightly.db",
      sha256: SHA,
      size: 28_672,
    });
  });
  it("reads an S3 backup's key from its location, without the prefix field", () => {
    const from = resolveRestoreSource(restore, s3Backup);
    expect(from).toMatchObject({ kind: "s3", s3: { bucket: "snaps", key: "etcd/db/demo/nightly.db" } });
    expect(from.kind === "s3" && "prefix" in from.s3).toBe(false);
  });
  it("prefers the expected sha256 of the spec", () => {
    expect(resolveRestoreSource({ ...restore, sha256: "d".repeat(64) }, pvcBackup).sha256).toBe(
      "d".repeat(64),
    );
  });
  it("refuses a location that is not the backup's destination", () => {
    const moved = { ...pvcBackup, status: { ...pvcBackup.status, location: "pvc://other/x.db" } };
    expect(() => resolveRestoreSource(restore, moved)).toThrow(/status.location "pvc:\/\/other\/x.db"/);
  });
  it("refuses a backup source without the backup", () => {
    expect(() => resolveRestoreSource(restore)).toThrow(/spec.bootstrap.restore/);
  });
});

describe("download arguments", () => {
  const cases: DownloadArgs[] = [
    { to: "/w/s.db", dataDir: "/d", workDir: "/w", from: { kind: "file", path: "/source/x.db" } },
    {
      to: "/w/s.db",
      dataDir: "/d",
      workDir: "/w",
      sha256: SHA,
      size: 10,
      from: {
        kind: "s3",
        bucket: "b",
        key: "k/x.db",
        region: "us-east-1",
        endpoint: "http://s3:9000",
        forcePathStyle: true,
        caFile: "/ca.crt",
      },
    },
  ];
  it.each(cases)("round-trip %#", (args) => expect(parseDownloadArgs(downloadArgs(args))).toEqual(args));
  it.each([
    [["--to=/a", "--data-dir=/d"], /--work-dir is required/],
    [["--to=/a", "--data-dir=/d", "--work-dir=/w", "--bogus=1"], /unknown flag --bogus/],
    [["--to=/a", "--data-dir=/d", "--work-dir=/w", "--sha256=xyz", "--from-file=/f"], /--sha256 must be/],
    [["--to=/a", "--data-dir=/d", "--work-dir=/w", "--size=-1", "--from-file=/f"], /--size must be/],
    [["--to=/a", "--data-dir=/d", "--work-dir=/w", "--from-file=/f", "--s3-bucket=b"], /not both/],
    [["--to=/a", "--data-dir=/d", "--work-dir=/w"], /--s3-bucket is required/],
  ])("refuses %j", (args, message) => expect(() => parseDownloadArgs(args)).toThrow(message));
});

// The Job's containers run as built, with the real etcdctl/etcdutl/etcd: the claim's mount and the source's are
// swapped for temp directories, and the download and finish steps are called in-process.
describe.skipIf(!haveLocalEtcd())("the restore Job's steps against a real etcd", () => {
  let etcd: LocalEtcd;
  let root: string;
  const bin = (name: string) => join(dirname(localEtcdBinary()), basename(name));

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    root = mkdtempSync(join(tmpdir(), "capstan-restore-"));
  }, 30_000);
  afterAll(async () => {
    await etcd?.stop();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  const ctl = (url: string, ...args: string[]) => run(bin("etcdctl"), [`--endpoints=${url}`, ...args]);
  const ready = (url: string) =>
    waitFor(
      "etcd ready",
      async () => ((await ctl(url, "endpoint", "health").catch(() => undefined)) ? true : undefined),
      60_000,
    );
  const revisionOf = async (url: string) =>
    (
      JSON.parse((await ctl(url, "endpoint", "status", "--write-out=json")).stdout) as {
        Status: { header: { revision: number } };
      }[]
    )[0]!.Status.header.revision;

  it("restores every key into a seed that starts with the revision bumped, and refuses to run over it", async () => {
    const a = await etcd.allocate("a");
    etcd.start(a, [a], "new");
    await ready(a.clientURL);
    for (let i = 0; i < 20; i++) await ctl(a.clientURL, "put", `k${i}`, `v${i}`);
    const revisionA = await revisionOf(a.clientURL);
    const source = join(root, "source");
    mkdirSync(join(source, "db", "demo"), { recursive: true });
    const file = join(source, "db", "demo", "nightly.db");
    await ctl(a.clientURL, "snapshot", "save", file);
    const bytes = readFileSync(file);
    const sha256 = createHash("sha256").update(bytes).digest("hex");

    const c = cluster({
      pvc: { claimName: "snaps", path: "db/demo/nightly.db" },
      sha256,
      bumpRevision: 1_000_000,
    });
    const from = resolveRestoreSource(c.spec.bootstrap!.restore!);
    const pod = restoreJob({ cluster: c, seed: "restored-abcde", from, operatorImage: OPERATOR }).spec!
      .template.spec!;
    const [download, restore] = pod.initContainers!;
    const finish = pod.containers[0]!;
    const claim = join(root, "claim");
    mkdirSync(claim);
    const localize = (args: string[]) =>
      args.map((x) => x.replaceAll(DATA_MOUNT, claim).replaceAll(SOURCE_MOUNT, source));

    const got = await downloadSnapshot(parseDownloadArgs(localize(download!.args!.slice(1))));
    expect(got).toEqual({ size: bytes.length, sha256, alreadyRestored: false });
    await run(bin(restore!.command![0]!), localize(restore!.args!));
    expect(await finishRestore(parseFinishArgs(localize(finish.args!.slice(1))))).toEqual({ moved: true });
    expect(existsSync(join(claim, "restore"))).toBe(false);

    // The seed, as its pod would start it: its own name and peer URL (here local ones: etcd ignores them on data).
    const b = await etcd.allocate("b");
    const dataB = etcd.dataDir("b");
    rmSync(dataB, { recursive: true, force: true });
    execFileSync("cp", ["-a", join(claim, "data"), dataB]);
    etcd.start(b, [b], "new");
    await ready(b.clientURL);
    for (let i = 0; i < 20; i++) {
      expect((await ctl(b.clientURL, "get", `k${i}`, "--print-value-only")).stdout.trim()).toBe(`v${i}`);
    }
    expect(await revisionOf(b.clientURL)).toBeGreaterThan(revisionA + 1_000_000 - 1);

    // A second run of the Job over the restored claim: the download redoes its work, the finish moves nothing.
    const again = await downloadSnapshot(parseDownloadArgs(localize(download!.args!.slice(1))));
    expect(again.alreadyRestored).toBe(true);
    expect(await finishRestore(parseFinishArgs(localize(finish.args!.slice(1))))).toEqual({ moved: false });
  }, 120_000);
});
