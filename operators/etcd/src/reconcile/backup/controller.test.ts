// One reconcile of the EtcdBackup controller against the in-memory API server (core's test kit) and a scripted
// etcd: the Job is created once on a follower, a running Job changes nothing, the Job's results become status,
// a failed Job fails the backup, and a claim holding member data is refused without a Job. With deletionPolicy
// Delete: the finalizer comes before the Job; a deleted backup's S3 object is deleted with its Secret's credentials,
// or the finalizer stays (Degraded, Warning) when they are gone or the storage fails; a PVC backup gets its Job.

import type { S3ObjectRef } from "@capstan/backup";
import { Job, type KubeObject, PersistentVolumeClaim } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type EtcdBackup, EtcdBackupKind } from "../../api/backup.ts";
import { EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { BACKUP_LABEL, DELETE_LABEL, UPLOAD_CONTAINER } from "../../desired/backup-job.ts";
import { SNAPSHOT_FINALIZER } from "../../plan/backup-deletion.ts";
import { EtcdOperatorMetrics } from "../metrics.ts";
import { healthyEtcd, runningMembers, testCluster } from "../test-fixture.ts";
import {
  type EtcdBackupControllerOptions,
  etcdBackupErrorPolicy,
  reconcileEtcdBackup,
} from "./controller.ts";

const SHA = "0f".repeat(32);

const cluster = testCluster();

const backup = (pvc = false): EtcdBackup => ({
  apiVersion: EtcdBackupKind.apiVersion,
  kind: EtcdBackupKind.kind,
  metadata: { name: "b1", namespace: "ns", uid: "ub1", generation: 1 },
  spec: {
    clusterName: "demo",
    destination: pvc
      ? { pvc: { claimName: "demo-a-data" } }
      : { s3: { bucket: "bk", credentialsSecret: { name: "c" } } },
  },
});

const logs: string[] = [];
const options: EtcdBackupControllerOptions = {
  operatorImage: "ghcr.io/capstan-dev/capstan/etcd-operator:0.1.0",
  etcdClient: healthyEtcd(cluster),
  readLog: async (_ns, pod, container) => {
    logs.push(`${pod}/${container}`);
    return '{"level":"info"}\n{"hash":7,"revision":42,"totalKey":3,"totalSize":28672,"version":"3.6.0"}\n';
  },
};

/** The S3 credentials Secret the backups name (the operator checks it before it creates a Job). */
const creds = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "c", namespace: "ns" },
  data: { AWS_ACCESS_KEY_ID: "YQ==", AWS_SECRET_ACCESS_KEY: "Yg==" },
} as KubeObject;
const withCreds = (objects: readonly KubeObject[]) =>
  objects.some((o) => o.kind === "Secret" && o.metadata.name === "c") ? objects : [...objects, creds];

const reconcile = (objects: readonly KubeObject[]) =>
  reconcileOnce((req, ctx) => reconcileEtcdBackup(req, ctx, options), {
    kinds: [EtcdClusterKind, EtcdBackupKind],
    objects: withCreds(objects),
    request: backup(),
  });

/** The Job of `objects` marked finished, and (when it succeeded) its succeeded pod with the upload's message. */
function finish(objects: KubeObject[], succeeded: boolean): KubeObject[] {
  const out = objects.map((o) => {
    if (o.kind !== "Job") return o;
    const job = structuredClone(o) as KubeObject & { status?: unknown };
    job.status = {
      startTime: "2026-11-30T01:00:00Z",
      ...(succeeded ? { completionTime: "2026-11-30T01:00:40Z" } : {}),
      conditions: [
        succeeded
          ? { type: "Complete", status: "True", lastTransitionTime: "2026-11-30T01:00:40Z" }
          : {
              type: "Failed",
              status: "True",
              reason: "BackoffLimitExceeded",
              message: "Job has reached the specified backoff limit",
              lastTransitionTime: "2026-11-30T01:02:00Z",
            },
      ],
    };
    return job;
  });
  if (!succeeded) return out;
  const result = JSON.stringify({ location: "uploader-view", size: 28704, sha256: SHA });
  return [...out, jobPod("b1-x7k2p", "Succeeded", [terminated(UPLOAD_CONTAINER, 0, result)])];
}

/** A container status of a container that ended with `exitCode` and termination message `message`. */
const terminated = (name: string, exitCode: number, message?: string) => ({
  name,
  image: "i",
  imageID: "",
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode, ...(message === undefined ? {} : { message }) } },
});

/** A pod of the backup Job b1 that ended in `phase`; `init` are its init containers' statuses. */
function jobPod(
  name: string,
  phase: "Succeeded" | "Failed",
  containers: ReturnType<typeof terminated>[],
  init: ReturnType<typeof terminated>[] = [],
  creationTimestamp = "2026-11-30T01:00:00Z",
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "ns", labels: { [BACKUP_LABEL]: "b1" }, creationTimestamp },
    spec: { containers: [{ name: UPLOAD_CONTAINER, image: "i" }] },
    status: {
      phase,
      containerStatuses: containers,
      ...(init.length === 0 ? {} : { initContainerStatuses: init }),
    },
  } as KubeObject;
}

describe("reconcileEtcdBackup", () => {
  it("creates the Job on a follower and marks the backup Running; a second reconcile writes nothing", async () => {
    const run = await reconcile([cluster, ...runningMembers(cluster), backup()]);
    run.expectNoError();
    const jobs = run.writesOf(Job);
    expect(jobs.map((w) => w.verb)).toEqual(["create"]);
    const job = run.get(Job, "b1", "ns");
    expect(job?.metadata?.annotations?.["etcd.capstan.dev/member"]).toBe("demo-b");
    expect(run.get(EtcdBackupKind, "b1", "ns")?.status).toMatchObject({
      phase: "Running",
      member: "demo-b",
      jobName: "b1",
      clusterID: "ff",
      etcdVersion: "3.6.15",
    });
    expect(run.events.map((e) => e.reason)).toEqual(["BackupStarted"]);

    const again = await reconcile(run.objects);
    again.expectNoError();
    again.expectNoWrites();
  });

  it("turns the succeeded Job's results into status", async () => {
    const first = await reconcile([cluster, ...runningMembers(cluster), backup()]);
    logs.length = 0;
    const run = await reconcile(finish(first.objects, true));
    run.expectNoError();
    expect(logs).toEqual(["b1-x7k2p/verify"]);
    // The key holds the backup's uid (unique across Kubernetes clusters sharing the bucket), as the Job recorded it.
    const uid = run.get(EtcdBackupKind, "b1", "ns")?.metadata.uid;
    expect(uid).toBeTruthy();
    expect(run.get(Job, "b1", "ns")?.metadata?.annotations?.["etcd.capstan.dev/location"]).toBe(
      `s3://bk/ns/demo/b1-${uid}.db`,
    );
    expect(run.get(EtcdBackupKind, "b1", "ns")?.status).toMatchObject({
      phase: "Succeeded",
      revision: 42,
      size: 28704,
      sha256: SHA,
      location: `s3://bk/ns/demo/b1-${uid}.db`,
      completionTime: "2026-11-30T01:00:40.000Z",
    });
    const available = run
      .get(EtcdBackupKind, "b1", "ns")
      ?.status?.conditions?.find((c) => c.type === "Available");
    expect(available?.status).toBe("True");
    expect(run.writesOf(Job)).toEqual([]);

    const after = await reconcile(run.objects);
    after.expectNoWrites();
  });

  it("fails the backup with the Job's reason", async () => {
    const first = await reconcile([cluster, ...runningMembers(cluster), backup()]);
    const run = await reconcile(finish(first.objects, false));
    run.expectNoError();
    const status = run.get(EtcdBackupKind, "b1", "ns")?.status;
    expect(status?.phase).toBe("Failed");
    expect(status?.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "JobBackoffLimitExceeded",
    });
    expect(run.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "JobBackoffLimitExceeded"]]);
  });

  it("a failed upload's status carries the upload's own error (the failed container's termination message)", async () => {
    const first = await reconcile([cluster, ...runningMembers(cluster), backup()]);
    const failedPod = jobPod(
      "b1-q9z8w",
      "Failed",
      [terminated(UPLOAD_CONTAINER, 1, "backup-upload: NoSuchBucket: The specified bucket does not exist")],
      [terminated("snapshot", 0)],
      "2026-11-30T01:01:00Z",
    );
    const run = await reconcile([...finish(first.objects, false), failedPod]);
    run.expectNoError();
    const degraded = run
      .get(EtcdBackupKind, "b1", "ns")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded?.message).toContain(
      "upload: backup-upload: NoSuchBucket: The specified bucket does not exist",
    );
    expect(degraded?.message).toContain("Job has reached the specified backoff limit");
  });

  it.each([
    [
      "the credentials Secret is missing",
      [],
      "spec.destination.s3.credentialsSecret.name: Secret ns/c does not exist",
    ],
    [
      "a key of it is missing",
      [{ ...creds, data: { AWS_ACCESS_KEY_ID: "YQ==" } } as KubeObject],
      "spec.destination.s3.credentialsSecret.secretAccessKeyKey: Secret ns/c has no key AWS_SECRET_ACCESS_KEY",
    ],
  ])("fails at once, naming the field, without a Job, when %s", async (_, secrets, message) => {
    const run = await reconcileOnce((req, ctx) => reconcileEtcdBackup(req, ctx, options), {
      kinds: [EtcdClusterKind, EtcdBackupKind],
      objects: [cluster, ...runningMembers(cluster), backup(), ...secrets],
      request: backup(),
    });
    run.expectNoError();
    expect(run.writesOf(Job)).toEqual([]);
    const status = run.get(EtcdBackupKind, "b1", "ns")?.status;
    expect(status?.phase).toBe("Failed");
    const degraded = status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "CredentialsMissing" });
    expect(degraded?.message).toContain(message);
    expect(run.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "CredentialsMissing"]]);
  });

  it("refuses a destination claim holding a member's data, without a Job", async () => {
    const run = await reconcileOnce((req, ctx) => reconcileEtcdBackup(req, ctx, options), {
      kinds: [EtcdClusterKind, EtcdBackupKind],
      objects: [cluster, ...runningMembers(cluster), backup(true)],
      request: backup(true),
    });
    run.expectNoError();
    expect(run.writesOf(Job)).toEqual([]);
    expect(run.get(EtcdBackupKind, "b1", "ns")?.status?.phase).toBe("Failed");
    expect(run.get(PersistentVolumeClaim, "demo-a-data", "ns")).toBeDefined();
  });

  it("waits, Degraded, while the cluster does not exist", async () => {
    const run = await reconcile([backup()]);
    run.expectNoError();
    expect(run.writesOf(Job)).toEqual([]);
    const status = run.get(EtcdBackupKind, "b1", "ns")?.status;
    expect(status?.phase).toBe("Pending");
    expect(status?.conditions?.find((c) => c.type === "Degraded")?.reason).toBe("ClusterNotFound");
    expect(run.result).toEqual({ requeueAfter: 60_000 });
  });
});

describe("reconcileEtcdBackup's metrics", () => {
  const succeeded = (): EtcdBackup => ({
    ...backup(),
    status: { phase: "Succeeded", jobName: "b1", completionTime: "2026-11-30T01:00:40Z" },
  });
  const failed = (): EtcdBackup => ({ ...backup(), status: { phase: "Running", jobName: "b1" } });
  const run = async (objects: KubeObject[], request: EtcdBackup) => {
    const registry = new Registry();
    const metrics = new EtcdOperatorMetrics(registry);
    const r = await reconcileOnce((req, ctx) => reconcileEtcdBackup(req, ctx, { ...options, metrics }), {
      kinds: [EtcdClusterKind, EtcdBackupKind],
      objects: withCreds(objects),
      request,
    });
    r.expectNoError();
    return registry.metrics();
  };

  it("records a succeeded backup's time while its cluster exists, and nothing once it is gone", async () => {
    expect(await run([cluster, succeeded()], succeeded())).toContain(
      'capstan_etcd_backup_last_success_timestamp_seconds{object_namespace="ns",object_name="demo"} 1796000440',
    );
    expect(await run([succeeded()], succeeded())).not.toContain('object_name="demo"');
  });

  it("counts a failed backup while its cluster exists", async () => {
    const first = await reconcile([cluster, ...runningMembers(cluster), backup()]);
    const objects = finish(first.objects, false);
    expect(await run(objects, failed())).toContain(
      'capstan_etcd_backup_failures_total{object_namespace="ns",object_name="demo"} 1',
    );
  });
});

describe("reconcileEtcdBackup with deletionPolicy Delete", () => {
  const SUCCEEDED = { phase: "Succeeded" as const, jobName: "b1", completionTime: "2026-11-30T01:00:40Z" };
  const deleteBackup = (o: { pvc?: boolean; deleting?: boolean } = {}): EtcdBackup => {
    const b = backup(o.pvc === true);
    if (o.pvc === true) b.spec.destination = { pvc: { claimName: "backups" } };
    else
      b.spec.destination = {
        s3: {
          bucket: "bk",
          endpoint: "http://s3.test:8333",
          forcePathStyle: true,
          credentialsSecret: { name: "c" },
        },
      };
    b.spec.deletionPolicy = "Delete";
    if (o.deleting === true) {
      b.metadata.finalizers = [SNAPSHOT_FINALIZER];
      b.metadata.deletionTimestamp = "2026-11-30T02:00:00Z";
      // Stored where an operator before 2026-12-05 put it (no uid in the key): deleted where status says.
      b.status = {
        ...SUCCEEDED,
        location: o.pvc === true ? "pvc://backups/ns/demo/b1.db" : "s3://bk/ns/demo/b1.db",
      };
    }
    return b;
  };
  const creds: KubeObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "c", namespace: "ns" },
    data: {
      AWS_ACCESS_KEY_ID: Buffer.from("id").toString("base64"),
      AWS_SECRET_ACCESS_KEY: Buffer.from("secret").toString("base64"),
    },
  } as KubeObject;
  const claim: KubeObject = {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "backups", namespace: "ns" },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
  } as KubeObject;

  const run = (
    objects: KubeObject[],
    request: EtcdBackup,
    deleteObject?: (ref: S3ObjectRef) => Promise<void>,
  ) =>
    reconcileOnce(
      (req, ctx) =>
        reconcileEtcdBackup(req, ctx, {
          ...options,
          ...(deleteObject === undefined ? {} : { deleteObject: async (ref) => deleteObject(ref) }),
        }),
      // The controller's error policy, as its workers apply it: a snapshot that cannot be deleted is Degraded.
      { kinds: [EtcdClusterKind, EtcdBackupKind], objects, request, errorPolicy: etcdBackupErrorPolicy },
    );

  it("adds the finalizer before creating the Job", async () => {
    const r = await run([cluster, ...runningMembers(cluster), deleteBackup(), creds], deleteBackup());
    r.expectNoError();
    expect(r.get(EtcdBackupKind, "b1", "ns")?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    expect(r.writesOf(Job).map((w) => w.verb)).toEqual(["create"]);
  });

  it("deletes the S3 object with the Secret's credentials, then lets the backup go", async () => {
    const refs: S3ObjectRef[] = [];
    const r = await run(
      [creds, deleteBackup({ deleting: true })],
      deleteBackup({ deleting: true }),
      async (ref) => {
        refs.push(ref);
      },
    );
    r.expectNoError();
    expect(refs).toEqual([
      {
        bucket: "bk",
        key: "ns/demo/b1.db",
        region: "us-east-1",
        endpoint: "http://s3.test:8333",
        forcePathStyle: true,
        credentials: { accessKeyId: "id", secretAccessKey: "secret" },
      },
    ]);
    expect(r.get(EtcdBackupKind, "b1", "ns")?.metadata.finalizers ?? []).not.toContain(SNAPSHOT_FINALIZER);
    expect(r.events.map((e) => e.reason)).toEqual(["SnapshotDeleted"]);
  });

  it("keeps the finalizer, Degraded with a Warning naming the Secret, when the credentials are gone", async () => {
    const refs: S3ObjectRef[] = [];
    const r = await run([deleteBackup({ deleting: true })], deleteBackup({ deleting: true }), async (ref) => {
      refs.push(ref);
    });
    r.expectNoError();
    expect(refs).toEqual([]);
    const b = r.get(EtcdBackupKind, "b1", "ns");
    expect(b?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    expect(b?.status?.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "CredentialsNotFound",
    });
    expect(r.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "CredentialsNotFound"]]);
    expect(r.events[0]?.note).toContain("Secret ns/c does not exist");
    expect(r.result).toEqual({ requeueAfter: 60_000 });
  });

  it("keeps the finalizer, Degraded StorageUnreachable, when the storage does not answer", async () => {
    const r = await run(
      [creds, deleteBackup({ deleting: true })],
      deleteBackup({ deleting: true }),
      async () => {
        throw Object.assign(new Error("connect ECONNREFUSED 10.0.0.9:8333"), { name: "Error" });
      },
    );
    r.expectNoError();
    const b = r.get(EtcdBackupKind, "b1", "ns");
    expect(b?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    expect(b?.status?.conditions?.find((c) => c.type === "Degraded")?.reason).toBe("StorageUnreachable");
    expect(r.events[0]?.note).toContain("ECONNREFUSED");
  });

  it("runs the Job removing a PVC backup's file, and keeps the finalizer meanwhile", async () => {
    const b = deleteBackup({ pvc: true, deleting: true });
    const r = await run([claim, b], b);
    r.expectNoError();
    const created = r.writesOf(Job).map((w) => w.verb);
    expect(created).toEqual(["create"]);
    const job = r.get(Job, "b1-delete", "ns");
    expect(job?.metadata?.labels?.[DELETE_LABEL]).toBe("b1");
    expect(r.get(EtcdBackupKind, "b1", "ns")?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
  });
});
