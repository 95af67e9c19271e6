// A new EtcdCluster restored from another's backup, under the chart-installed operator on the real node, in
// namespaces enforcing Pod Security "restricted": keys written into cluster A, A backed up to a PVC (EtcdBackup),
// cluster B created with spec.bootstrap.restore naming that backup; B holds every key, its revision is past A's
// at the backup by the bump, it grows to its size with learners, and status.restore and a Restored Event say so.
import { type Client, PersistentVolumeClaim } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  clusterEvents,
  deleteCluster,
  etcdCluster,
  printFailureReport,
  putKeys,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import { type EtcdBackup, EtcdBackupKind, EtcdClusterKind } from "./fixtures/operator-api.ts";
import { etcdSuitesEnabled, installOperator, type OperatorRelease } from "./fixtures/operator-release.ts";

const source = "rsa";
const restored = "rsb";
const BUMP = 1_000_000;
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster restored from an EtcdBackup", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "etcd-restore-op", restricted);
    clusterNs = await createNamespace(client, "etcd-restore", restricted);
    ns = clusterNs.name;
    op = await installOperator(client, opNs.name, { watchNamespace: ns });
    await client.create(EtcdClusterKind, etcdCluster(ns, source, { replicas: 1 }));
    await waitAvailable(client, ns, source, 1);
  }, minutes(5));

  afterAll(async () => {
    if (client !== undefined) {
      await deleteCluster(client, ns, restored).catch((err) => console.warn(`cleanup: ${err}`));
    }
    await tearDownSuite(client, { namespace: ns, name: source }, op, [clusterNs, opNs]);
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printFailureReport(client, ns, restored, op);
    });
  });

  it(
    "a new cluster from A's backup holds every key, with its revision bumped past A's",
    async () => {
      const a = await waitEtcdHealthy(client, ns, source, 1);
      const written = await putKeys(a.etcd, "/restore/", 100);

      await client.create(PersistentVolumeClaim, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "backups", namespace: ns },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      });
      const backup: EtcdBackup = {
        apiVersion: EtcdBackupKind.apiVersion,
        kind: EtcdBackupKind.kind,
        metadata: { name: "snap", namespace: ns },
        spec: { clusterName: source, destination: { pvc: { claimName: "backups" } } },
      };
      await client.create(EtcdBackupKind, backup);
      const done = await eventually(
        async () => {
          const b = await client.get(EtcdBackupKind, "snap", ns);
          if (b.status?.phase !== "Succeeded" && b.status?.phase !== "Failed") {
            throw new Error(`phase ${b.status?.phase}`);
          }
          return b;
        },
        { timeoutMs: minutes(3), intervalMs: 2_000, message: "EtcdBackup snap ends" },
      );
      expect(done.status?.phase, JSON.stringify(done.status)).toBe("Succeeded");
      const backupRevision = done.status?.revision ?? 0;
      // Written after the backup: B must not have it.
      await a.etcd.put("/restore/after", "x");

      await client.create(
        EtcdClusterKind,
        etcdCluster(ns, restored, {
          replicas: 3,
          bootstrap: { restore: { backup: { name: "snap" }, bumpRevision: BUMP } },
        }),
      );
      await waitAvailable(client, ns, restored, 3);
      const b = await waitEtcdHealthy(client, ns, restored, 3);
      for (const [key, value] of written) expect(await b.etcd.get(key), key).toBe(value);
      expect(await b.etcd.get("/restore/after")).toBeUndefined();
      const revisionB = (await b.etcd.status([...b.endpoints.values()][0] ?? "")).header.revision;
      expect(revisionB).toBeGreaterThanOrEqual(backupRevision + BUMP);

      const cluster = await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, restored, ns);
          if (c.status?.restore?.clusterID === undefined) throw new Error("status.restore.clusterID unset");
          return c;
        },
        { timeoutMs: minutes(1), intervalMs: 2_000, message: "status.restore records the cluster ID" },
      );
      expect(cluster.status?.restore).toMatchObject({
        source: "backup/snap",
        snapshotRevision: backupRevision,
        revision: backupRevision + BUMP,
        clusterID: cluster.status?.clusterID,
      });
      const sourceID = (await client.get(EtcdClusterKind, source, ns)).status?.clusterID;
      expect(cluster.status?.clusterID).not.toBe(sourceID);
      const events = await clusterEvents(client, ns, restored);
      expect(events.some((e) => e.reason === "Restored")).toBe(true);
    },
    minutes(6),
  );
});
