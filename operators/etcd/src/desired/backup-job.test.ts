// The backup Job: golden files for S3 and PVC destinations, its labels stay out of the member selector, the
// upload arguments round-trip, the result parsers, and the snapshot and verify steps run as built against a real
// etcd (skipped when the local etcd binaries are missing).
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EtcdBackup } from "../api/backup.ts";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import { haveLocalEtcd, LocalEtcd, localEtcdBinary } from "../etcd/local-etcd.ts";
import {
  BACKUP_LABEL,
  backupJob,
  backupLocation,
  DELETE_LABEL,
  deleteArgs,
  deleteJob,
  deleteJobName,
  jobLocation,
  parseDeleteArgs,
  parseSnapshotStatus,
  parseUploadArgs,
  parseUploadResult,
  SNAPSHOT_PATH,
  type UploadArgs,
  uploadArgs,
  uploadTarget,
} from "./backup-job.ts";
import { selectorLabels } from "./names.ts";

const run = promisify(execFile);
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

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

const cluster = (o: Partial<EtcdCluster["spec"]> = {}): EtcdCluster => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "db", uid: "6f1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "gcr.io/etcd-development/etcd",
    storage: { size: "2Gi" },
    ...o,
  },
});

const backup = (
  destination: EtcdBackup["spec"]["destination"],
  o: Partial<EtcdBackup["spec"]> = {},
): EtcdBackup => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdBackup",
  metadata: { name: "nightly-29891580", namespace: "db", uid: "6f1c0f5e-0000-4000-8000-0000000000b1" },
  spec: { clusterName: "demo", destination, ...o },
});

const s3Full = backup(
  {
    s3: {
      endpoint: "https://minio.storage.svc:9000",
      bucket: "etcd-backups",
      prefix: "prod/eu",
      region: "eu-central-1",
      forcePathStyle: true,
      credentialsSecret: { name: "s3-creds", accessKeyIDKey: "id", secretAccessKeyKey: "secret" },
      caSecret: { name: "minio-ca", key: "bundle.pem" },
    },
  },
  { activeDeadlineSeconds: 600 },
);
const s3Minimal = backup({ s3: { bucket: "etcd-backups", credentialsSecret: { name: "s3-creds" } } });
const pvc = backup({ pvc: { claimName: "backups", directory: "etcd" } });
const OPERATOR_IMAGE = "ghcr.io/capstan-dev/capstan/etcd-operator:0.1.0";
const input = (b: EtcdBackup, c = cluster()) => ({
  backup: b,
  cluster: c,
  member: "demo-b2c3d",
  operatorImage: OPERATOR_IMAGE,
});

describe("golden files", () => {
  it.each([
    ["job-backup-s3-full", () => backupJob(input(s3Full))],
    ["job-backup-s3-minimal", () => backupJob(input(s3Minimal))],
    [
      "job-backup-pvc-ephemeral-cluster",
      () => backupJob(input(pvc, cluster({ storage: { ephemeral: true } }))),
    ],
    ["job-backup-delete-pvc", () => deleteJob(pvc, OPERATOR_IMAGE)],
    [
      "job-backup-auth",
      () =>
        backupJob(
          input(s3Minimal, cluster({ auth: { enabled: true, rootSecretRef: { name: "demo-creds" } } })),
        ),
    ],
  ])("%s", (name, build) => golden(name, build()));
});

describe("etcd authentication", () => {
  const containerOf = (c: EtcdCluster) =>
    backupJob(input(s3Minimal, c)).spec?.template.spec?.initContainers?.find((x) => x.name === "snapshot");

  it("gives etcdctl the root user and the password from the root Secret in its environment, never in args", () => {
    const snapshot = containerOf(cluster({ auth: { enabled: true } }));
    expect(snapshot?.env).toEqual([
      { name: "ETCDCTL_USER", value: "root" },
      { name: "ETCDCTL_PASSWORD", valueFrom: { secretKeyRef: { name: "demo-root", key: "password" } } },
    ]);
    expect(snapshot?.args?.join(" ")).not.toMatch(/user|password/);
  });

  it("sets no credentials when auth is off", () => {
    expect(containerOf(cluster())?.env).toBeUndefined();
    expect(containerOf(cluster({ auth: { enabled: false } }))?.env).toBeUndefined();
  });
});

describe("deleteJob", () => {
  it("removes the file the upload wrote, is not owned by the backup (a foreground deletion would delete it first) and is never taken for its results", () => {
    const job = deleteJob(pvc, OPERATOR_IMAGE);
    const upload = uploadTarget(pvc).target;
    expect(upload.kind === "file" && deleteArgs(pvc)).toEqual([
      `--file=${upload.kind === "file" ? upload.path : ""}`,
    ]);
    expect(parseDeleteArgs(deleteArgs(pvc))).toEqual({
      file: "/destination/etcd/db/demo/nightly-29891580-6f1c0f5e-0000-4000-8000-0000000000b1.db",
    });
    expect(job.metadata?.ownerReferences).toBeUndefined();
    expect(job.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0);
    const labels = job.spec?.template.metadata?.labels ?? {};
    expect(labels[BACKUP_LABEL]).toBeUndefined();
    expect(labels[DELETE_LABEL]).toBe("nightly-29891580");
  });

  it("is only for a PVC destination", () => {
    expect(() => deleteJob(s3Minimal, OPERATOR_IMAGE)).toThrow(/only a pvc destination/);
  });

  it("has a name of at most 63 characters, distinct for long backup names", () => {
    expect(deleteJobName(pvc)).toBe("nightly-29891580-delete");
    const long = (n: string) => ({ ...pvc, metadata: { ...pvc.metadata, name: n } });
    const a = deleteJobName(long(`${"a".repeat(60)}-x1`));
    const b = deleteJobName(long(`${"a".repeat(60)}-x2`));
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
  });

  it("parses only a file below the claim's mount", () => {
    expect(() => parseDeleteArgs(["--file=/etc/passwd"])).toThrow(/must be below \/destination/);
    expect(() => parseDeleteArgs(["--file=/destination/../etc/passwd"])).toThrow(/must be below/);
    expect(() => parseDeleteArgs([])).toThrow(/usage/);
  });
});

describe("backupJob", () => {
  it("is controlled by the EtcdBackup and named after it", () => {
    const job = backupJob(input(s3Minimal));
    expect(job.metadata?.name).toBe("nightly-29891580");
    expect(job.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "EtcdBackup", name: "nightly-29891580", controller: true }),
    ]);
  });

  it("labels its pod so the cluster's member selector never picks it", () => {
    const labels = backupJob(input(s3Minimal)).spec?.template.metadata?.labels ?? {};
    const selector = selectorLabels(cluster());
    expect(Object.entries(selector).every(([k, v]) => labels[k] === v)).toBe(false);
    expect(labels[BACKUP_LABEL]).toBe("nightly-29891580");
  });

  it("refuses a cluster other than spec.clusterName", () => {
    const other = { ...cluster(), metadata: { ...cluster().metadata, name: "other" } };
    expect(() => backupJob(input(s3Minimal, other))).toThrow(
      /spec.clusterName is demo, not the EtcdCluster db\/other/,
    );
  });

  it("lets etcdctl stream for the whole deadline (its --command-timeout covers the snapshot)", () => {
    const args = backupJob(input(s3Full)).spec?.template.spec?.initContainers?.[0]?.args ?? [];
    expect(args).toContain("--command-timeout=600s");
    expect(backupJob(input(s3Full)).spec?.activeDeadlineSeconds).toBe(600);
  });
});

describe("backupLocation", () => {
  const U = "6f1c0f5e-0000-4000-8000-0000000000b1";
  it.each([
    [s3Full, `s3://etcd-backups/prod/eu/db/demo/nightly-29891580-${U}.db`],
    [s3Minimal, `s3://etcd-backups/db/demo/nightly-29891580-${U}.db`],
    [pvc, `pvc://backups/etcd/db/demo/nightly-29891580-${U}.db`],
    [backup({ pvc: { claimName: "backups" } }), `pvc://backups/db/demo/nightly-29891580-${U}.db`],
  ])("%#: %s", (b, location) => expect(backupLocation(b)).toBe(location));

  it("is unique per EtcdBackup: a backup of the same names in another Kubernetes cluster (another uid) never shares a key", () => {
    const there = structuredClone(s3Minimal);
    there.metadata.uid = "0b7e0000-0000-4000-8000-000000000002";
    expect(backupLocation(there)).not.toBe(backupLocation(s3Minimal));
    const t = uploadTarget(there).target;
    expect(t.kind === "s3" && t.key).toBe("db/demo/nightly-29891580-0b7e0000-0000-4000-8000-000000000002.db");
  });

  it("once stored, is where status says: an older backup's key is deleted and restored from where it is", () => {
    const older = structuredClone(s3Minimal);
    older.status = { phase: "Succeeded", location: "s3://etcd-backups/db/demo/nightly-29891580.db" };
    expect(backupLocation(older)).toBe("s3://etcd-backups/db/demo/nightly-29891580.db");
    const t = uploadTarget(older).target;
    expect(t.kind === "s3" && t.key).toBe("db/demo/nightly-29891580.db");
    const onClaim = structuredClone(pvc);
    onClaim.status = { phase: "Succeeded", location: "pvc://backups/etcd/db/demo/nightly-29891580.db" };
    expect(parseDeleteArgs(deleteArgs(onClaim))).toEqual({
      file: "/destination/etcd/db/demo/nightly-29891580.db",
    });
  });

  it("the Job records where it stores the snapshot; a Job without that record (an older operator's) used the old key", () => {
    expect(jobLocation(s3Minimal, backupLocation(s3Minimal))).toBe(backupLocation(s3Minimal));
    expect(jobLocation(s3Minimal, undefined)).toBe("s3://etcd-backups/db/demo/nightly-29891580.db");
    expect(jobLocation(pvc, undefined)).toBe("pvc://backups/etcd/db/demo/nightly-29891580.db");
  });
});

describe("upload arguments", () => {
  it.each([
    ["s3, every option", uploadTarget(s3Full)],
    ["s3, defaults", uploadTarget(s3Minimal)],
    ["a file on a claim", uploadTarget(pvc)],
  ] as [string, UploadArgs][])("%s round-trip", (_name, args) => {
    expect(parseUploadArgs(uploadArgs(args))).toEqual(args);
  });

  it("puts the S3 key where the location says", () => {
    const t = uploadTarget(s3Full).target;
    expect(t.kind === "s3" && `s3://${t.bucket}/${t.key}`).toBe(backupLocation(s3Full));
  });

  it.each([
    [["--s3-bucket=b", "--s3-key=k"], /--file is required/],
    [["--file=/f", "--s3-key=k"], /--s3-bucket is required/],
    [["--file=/f", "--s3-bucket=b"], /--s3-key is required/],
    [["--file=/f", "--to-file=/d/x", "--s3-bucket=b"], /not both/],
    [["--file=/f", "--bucket=b"], /unknown flag --bucket/],
    [["--file=/f", "positional"], /unexpected argument "positional"/],
  ])("%j is refused", (args, message) => expect(() => parseUploadArgs(args)).toThrow(message));
});

describe("parseUploadResult", () => {
  const sha = "a".repeat(64);
  it.each([
    [
      JSON.stringify({ location: "s3://b/k", size: 28704, sha256: sha }),
      { location: "s3://b/k", size: 28704, sha256: sha },
    ],
    [JSON.stringify({ location: "s3://b/k", size: 28704, sha256: "abc" }), undefined],
    [JSON.stringify({ location: "s3://b/k", size: "28704", sha256: sha }), undefined],
    ["Error: Access Denied\n    at upload", undefined],
    [undefined, undefined],
  ])("%#", (message, expected) => expect(parseUploadResult(message)).toEqual(expected));
});

describe("parseSnapshotStatus", () => {
  it("reads etcdutl's JSON line among log lines", () => {
    const log = [
      '{"level":"info","msg":"something"}',
      '{"hash":268754692,"revision":2,"totalKey":1,"totalSize":28672,"version":"3.6.0"}',
      "",
    ].join("\n");
    expect(parseSnapshotStatus(log)).toEqual({
      hash: 268754692,
      revision: 2,
      totalKey: 1,
      totalSize: 28672,
      version: "3.6.0",
    });
  });
  it("leaves out an empty version (a 3.5 snapshot)", () => {
    expect(parseSnapshotStatus('{"hash":1,"revision":9,"totalKey":3,"totalSize":100,"version":""}')).toEqual({
      hash: 1,
      revision: 9,
      totalKey: 3,
      totalSize: 100,
    });
  });
  it.each(["", "Error: snapshot file integrity check failed", '{"level":"info"}'])(
    "finds none in %j",
    (log) => expect(parseSnapshotStatus(log)).toBeUndefined(),
  );
});

// The Job's first two containers, run as built with the real etcdctl and etcdutl: only the member URL and the
// scratch directory are swapped for the local ones.
const available = haveLocalEtcd();
describe.skipIf(!available)("the snapshot and verify steps against a real etcd", () => {
  let etcd: LocalEtcd;
  let url: string;
  let scratch: string;
  const bin = (command: string) => join(dirname(localEtcdBinary()), basename(command));
  const localize = (args: string[]) =>
    args.map((a) => (a.startsWith("--endpoints=") ? `--endpoints=${url}` : a.replace("/scratch", scratch)));

  beforeAll(async () => {
    etcd = await LocalEtcd.create();
    const spec = await etcd.allocate("m0");
    etcd.start(spec, [spec], "new");
    url = spec.clientURL;
    scratch = mkdtempSync(join(tmpdir(), "capstan-backup-"));
    const etcdctl = bin("etcdctl");
    await waitFor(
      "etcd ready",
      async () =>
        (await run(etcdctl, [`--endpoints=${url}`, "endpoint", "health"]).catch(() => undefined))
          ? true
          : undefined,
      60_000,
    );
    for (const k of ["a", "b", "c"]) await run(etcdctl, [`--endpoints=${url}`, "put", k, `value-${k}`]);
  }, 90_000);

  afterAll(async () => {
    await etcd?.stop();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  it("saves a snapshot that verifies with the revision and keys written", async () => {
    const pod = backupJob(input(s3Minimal)).spec!.template.spec!;
    const [snapshot, verify] = pod.initContainers!;
    await run(bin(snapshot!.command![0]!), localize(snapshot!.args!));
    expect(existsSync(SNAPSHOT_PATH.replace("/scratch", scratch))).toBe(true);
    const { stdout, stderr } = await run(bin(verify!.command![0]!), localize(verify!.args!));
    const status = parseSnapshotStatus(`${stderr}\n${stdout}`);
    expect(status).toMatchObject({ revision: 4, totalKey: 3 });
    expect(status?.version).toMatch(/^3\.6\./);
  }, 60_000);

  it("fails verification of a damaged snapshot", async () => {
    const pod = backupJob(input(s3Minimal)).spec!.template.spec!;
    const [snapshot, verify] = pod.initContainers!;
    await run(bin(snapshot!.command![0]!), localize(snapshot!.args!));
    truncateSync(SNAPSHOT_PATH.replace("/scratch", scratch), 4096);
    await expect(run(bin(verify!.command![0]!), localize(verify!.args!))).rejects.toThrow();
  }, 60_000);
});
