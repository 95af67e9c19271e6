// A deleted VaultSnapshot with deletionPolicy Delete, against the in-memory API server (@capstan/backup's deletion
// reconcile, as the etcd operator's EtcdBackup uses it): its S3 object is deleted with the Secret's credentials and
// the finalizer goes; a failure keeps the finalizer, Degraded with a Warning; a claim's file is removed by a Job
// running as the user that wrote it; a snapshot a VaultCluster's spec.restore has not restored yet is kept.
import type { S3ObjectRef } from "@capstan/backup";
import { Job, type KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { VaultClusterKind } from "../api/vault-cluster.ts";
import { type VaultSnapshot, VaultSnapshotKind } from "../api/vault-snapshot.ts";
import { SNAPSHOT_FINALIZER } from "../plan/snapshot-deletion.ts";
import { reconcileVaultSnapshot, vaultSnapshotErrorPolicy } from "./snapshot.ts";
import { cluster } from "./test-fixture.ts";

const snapshot = (o: { pvc?: boolean; status?: VaultSnapshot["status"] } = {}): VaultSnapshot => ({
  apiVersion: VaultSnapshotKind.apiVersion,
  kind: VaultSnapshotKind.kind,
  metadata: {
    name: "s1",
    namespace: "ns",
    uid: "u-s1",
    generation: 1,
    finalizers: [SNAPSHOT_FINALIZER],
    deletionTimestamp: "2026-12-07T12:00:00Z",
  },
  spec: {
    clusterName: "demo",
    destination:
      o.pvc === true
        ? { pvc: { claimName: "snaps", directory: "vault" } }
        : {
            s3: {
              bucket: "snaps",
              prefix: "prod",
              endpoint: "http://s3.test:8333",
              forcePathStyle: true,
              credentialsSecret: { name: "creds" },
            },
          },
    deletionPolicy: "Delete",
  },
  status: o.status ?? {
    phase: "Succeeded",
    jobName: "s1",
    location:
      o.pvc === true ? "pvc://snaps/vault/ns/demo/s1-u-s1.snap" : "s3://snaps/prod/ns/demo/s1-u-s1.snap",
  },
});

const creds = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "creds", namespace: "ns" },
  data: {
    AWS_ACCESS_KEY_ID: Buffer.from("id").toString("base64"),
    AWS_SECRET_ACCESS_KEY: Buffer.from("secret").toString("base64"),
  },
} as KubeObject;
const claim = {
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "snaps", namespace: "ns" },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
} as KubeObject;

const run = (
  objects: KubeObject[],
  request: VaultSnapshot,
  deleteObject?: (ref: S3ObjectRef) => Promise<void>,
) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileVaultSnapshot(req, ctx, {
        operatorImage: "op:1",
        ...(deleteObject === undefined ? {} : { deleteObject: async (ref) => deleteObject(ref) }),
      }),
    // The controller's error policy, as its workers apply it: a file that cannot be deleted is Degraded.
    { kinds: [VaultClusterKind, VaultSnapshotKind], objects, request, errorPolicy: vaultSnapshotErrorPolicy },
  );

describe("a deleted VaultSnapshot with deletionPolicy Delete", () => {
  it("deletes its S3 object with the Secret's credentials, then lets the snapshot go", async () => {
    const refs: S3ObjectRef[] = [];
    const r = await run([creds, snapshot()], snapshot(), async (ref) => {
      refs.push(ref);
    });
    r.expectNoError();
    expect(refs).toEqual([
      {
        bucket: "snaps",
        key: "prod/ns/demo/s1-u-s1.snap",
        region: "us-east-1",
        endpoint: "http://s3.test:8333",
        forcePathStyle: true,
        credentials: { accessKeyId: "id", secretAccessKey: "secret" },
      },
    ]);
    expect(r.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers ?? []).not.toContain(SNAPSHOT_FINALIZER);
    expect(r.events.map((e) => [e.reason, e.note])).toEqual([
      ["SnapshotDeleted", "deleted s3://snaps/prod/ns/demo/s1-u-s1.snap"],
    ]);
  });

  it("keeps the finalizer, Degraded with a Warning naming the Secret, when the credentials are gone", async () => {
    const refs: S3ObjectRef[] = [];
    const r = await run([snapshot()], snapshot(), async (ref) => {
      refs.push(ref);
    });
    r.expectNoError();
    expect(refs).toEqual([]);
    const s = r.get(VaultSnapshotKind, "s1", "ns");
    expect(s?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    expect(s?.status?.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "CredentialsNotFound",
    });
    expect(r.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "CredentialsNotFound"]]);
    expect(r.events[0]?.note).toContain("Secret ns/creds does not exist");
    expect(r.events[0]?.note).toContain("the VaultSnapshot stays until the snapshot is deleted");
    expect(r.result).toEqual({ requeueAfter: 60_000 });
  });

  it("keeps the finalizer, Degraded StorageAccessDenied, when the storage refuses", async () => {
    const r = await run([creds, snapshot()], snapshot(), async () => {
      throw Object.assign(new Error("Access Denied"), {
        name: "AccessDenied",
        $metadata: { httpStatusCode: 403 },
      });
    });
    r.expectNoError();
    const s = r.get(VaultSnapshotKind, "s1", "ns");
    expect(s?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    expect(s?.status?.conditions?.find((c) => c.type === "Degraded")?.reason).toBe("StorageAccessDenied");
  });

  it("runs the Job removing a claim's file as the operator's user, keeps the finalizer, then lets go", async () => {
    const s = snapshot({ pvc: true });
    const r = await run([claim, s], s);
    r.expectNoError();
    expect(r.writesOf(Job).map((w) => `${w.verb} ${w.name}`)).toEqual(["create s1-delete"]);
    const job = r.get(Job, "s1-delete", "ns");
    const pod = job?.spec?.template.spec;
    expect(pod?.containers[0]?.args).toEqual([
      "backup-delete",
      "--file=/destination/vault/ns/demo/s1-u-s1.snap",
    ]);
    expect(pod?.securityContext?.runAsUser).toBe(1000);
    expect(pod?.volumes?.[0]?.persistentVolumeClaim?.claimName).toBe("snaps");
    expect(job?.metadata?.ownerReferences).toBeUndefined();
    expect(r.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);

    const done = { ...(job as KubeObject), status: { conditions: [{ type: "Complete", status: "True" }] } };
    const after = await run([...r.objects.filter((o) => o.kind !== "Job"), done as KubeObject], s);
    after.expectNoError();
    expect(after.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers ?? []).not.toContain(
      SNAPSHOT_FINALIZER,
    );
    expect(after.events.map((e) => e.reason)).toEqual(["SnapshotDeleted"]);
  });

  it("keeps the file while a VaultCluster's spec.restore has not restored it", async () => {
    const restoring = { ...cluster(3), spec: { ...cluster(3).spec, restore: { snapshot: { name: "s1" } } } };
    const refs: S3ObjectRef[] = [];
    const r = await run([creds, restoring, snapshot()], snapshot(), async (ref) => {
      refs.push(ref);
    });
    r.expectNoError();
    expect(refs).toEqual([]);
    expect(r.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers).toEqual([SNAPSHOT_FINALIZER]);
    expect(r.events.map((e) => e.reason)).toEqual(["SnapshotInUse"]);
    expect(r.events[0]?.note).toContain("VaultCluster demo's spec.restore (not restored yet)");
  });

  it("lets go at once when nothing was stored", async () => {
    const s = snapshot({ status: { phase: "Pending" } });
    const r = await run([s], s);
    r.expectNoError();
    expect(r.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers ?? []).not.toContain(SNAPSHOT_FINALIZER);
    expect(r.events.map((e) => e.reason)).toEqual(["NothingStored"]);
  });
});
