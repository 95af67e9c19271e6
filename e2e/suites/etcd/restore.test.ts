// A new EtcdCluster restored from another's backup, under the chart-installed operator on the real node, in
// namespaces enforcing Pod Security "restricted": keys written into cluster A, A backed up to a PVC (EtcdBackup),
// cluster B created with spec.bootstrap.restore naming that backup; B holds every key, its revision is past A's
// at the backup by the bump, it grows to its size with learners, and status.restore and a Restored Event say so.
// Then disaster recovery: a three-member cluster loses two members with their claims (quorum lost), an
// EtcdRestore from the survivor brings it back with every key and the same cluster ID, and it grows back to three.
import { type Client, PersistentVolumeClaim, Pod } from "@capstan/core";
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
import {
  dataClaimName,
  type EtcdBackup,
  EtcdBackupKind,
  EtcdClusterKind,
  type EtcdRestore,
  EtcdRestoreKind,
} from "./fixtures/operator-api.ts";
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

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster restored from an EtcdBackup; EtcdRestore", () => {
  const lost = "rsc";
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
      for (const c of [restored, lost]) {
        await deleteCluster(client, ns, c).catch((err) => console.warn(`cleanup: ${err}`));
      }
    }
    await tearDownSuite(client, { namespace: ns, name: source }, op, [clusterNs, opNs]);
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printFailureReport(client, ns, restored, op);
      await printFailureReport(client, ns, lost, op);
      const r = await client.get(EtcdRestoreKind, "dr", ns).catch(() => undefined);
      console.log(`EtcdRestore dr: ${JSON.stringify(r?.status ?? "(none)", null, 1)}`);
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

  it(
    "two of three members lost with their claims: recovered from the survivor with every key and the same cluster ID, grown back to three",
    async () => {
      await client.create(EtcdClusterKind, etcdCluster(ns, lost, { replicas: 3 }));
      await waitAvailable(client, ns, lost, 3);
      const view = await waitEtcdHealthy(client, ns, lost, 3);
      const written = await putKeys(view.etcd, "/dr/", 100);
      const clusterID = (await client.get(EtcdClusterKind, lost, ns)).status?.clusterID;

      // Destroy two followers with their data: claims first (they go once their pods do), then pods.
      const victims = [...view.endpoints.keys()].filter((n) => n !== view.leader).slice(0, 2);
      for (const v of victims) await client.delete(PersistentVolumeClaim, dataClaimName(v), ns);
      for (const v of victims) await client.delete(Pod, v, ns, { gracePeriodSeconds: 0 });
      await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, lost, ns);
          if (c.status?.phase !== "QuorumLost") throw new Error(`phase ${c.status?.phase}`);
        },
        { timeoutMs: minutes(2), intervalMs: 2_000, message: `${lost} reports QuorumLost` },
      );

      const request: EtcdRestore = {
        apiVersion: EtcdRestoreKind.apiVersion,
        kind: EtcdRestoreKind.kind,
        metadata: { name: "dr", namespace: ns },
        spec: { clusterName: lost, from: "Survivor" },
      };
      await client.create(EtcdRestoreKind, request);
      const done = await eventually(
        async () => {
          const r = await client.get(EtcdRestoreKind, "dr", ns);
          if (r.status?.phase !== "Succeeded" && r.status?.phase !== "Failed") {
            throw new Error(`phase ${r.status?.phase}: ${r.status?.message}`);
          }
          return r;
        },
        { timeoutMs: minutes(3), intervalMs: 2_000, message: "EtcdRestore dr ends" },
      );
      expect(done.status?.phase, JSON.stringify(done.status)).toBe("Succeeded");
      expect(done.status?.survivor).toBe(view.leader);
      expect(done.status?.revision).toBeGreaterThan(0);
      expect(done.status?.clusterID).toBe(clusterID);

      await waitAvailable(client, ns, lost, 3);
      const after = await waitEtcdHealthy(client, ns, lost, 3);
      for (const [key, value] of written) expect(await after.etcd.get(key), key).toBe(value);
      const events = await clusterEvents(client, ns, lost);
      expect(events.some((e) => e.reason === "Recovered")).toBe(true);
    },
    minutes(7),
  );
});
