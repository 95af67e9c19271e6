// A new EtcdCluster restored from another's backup, under the chart-installed operator on the real node, in
// namespaces enforcing Pod Security "restricted": keys written into cluster A, A backed up to a PVC (EtcdBackup),
// cluster B created with spec.bootstrap.restore naming that backup; B holds every key, its revision is past A's
// at the backup by the bump, it grows to its size with learners, and status.restore and a Restored Event say so.
// Then disaster recovery, each under a sequential writer that keeps writing through the loss and the recovery: a
// three-member cluster loses two members with their claims (quorum lost) and a human's EtcdRestore from: Backup of
// the cluster's newest backup (taken under the writer) brings back every write acknowledged at or before the
// backup's revision and none after it, as a new cluster (new ID, revision bumped), grown back to three; the writes
// acknowledged by the recovered cluster are kept. Then the same loss on a cluster with spec.recovery.automatic (and
// a backup): after afterSeconds the operator itself makes an EtcdRestore, from the survivor rather than the older
// backup, which brings the cluster back with every acknowledged write and the same cluster ID, grown back to three.
import { type Client, isNotFound, PersistentVolumeClaim, Pod } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  backUpToClaim,
  clusterEvents,
  deleteCluster,
  etcdCluster,
  keysUnder,
  printFailureReport,
  putKeys,
  readyEndpoints,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import {
  AUTOMATIC_RESTORE_LABEL,
  dataClaimName,
  EtcdClusterKind,
  type EtcdRestore,
  EtcdRestoreKind,
  KEPT_BY_RESTORE_LABEL,
} from "./fixtures/operator-api.ts";
import { etcdSuitesEnabled, installOperator, type OperatorRelease } from "./fixtures/operator-release.ts";
import {
  compareWrites,
  compareWritesAcrossRestore,
  type SequentialWriter,
  startWriter,
} from "./fixtures/sequential-writer.ts";

const source = "rsa";
const restored = "rsb";
const BUMP = 1_000_000;
/** spec.recovery.automatic.afterSeconds of the automatic case: the least the API accepts (the floor lowered to it). */
const AUTOMATIC_AFTER_SECONDS = 300;
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster restored from an EtcdBackup; EtcdRestore", () => {
  const lost = "rsc";
  const lostToBackup = "rsd";
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "etcd-restore-op", restricted);
    clusterNs = await createNamespace(client, "etcd-restore", restricted);
    ns = clusterNs.name;
    // The automatic case's afterSeconds (300) below the operator's default floor (900 s, for Kubernetes' node
    // failover): nothing here waits for a node.
    op = await installOperator(client, opNs.name, {
      watchNamespace: ns,
      automaticRecoveryFloorSeconds: AUTOMATIC_AFTER_SECONDS,
    });
    await client.create(EtcdClusterKind, etcdCluster(ns, source, { replicas: 1 }));
    await waitAvailable(client, ns, source, 1);
  }, minutes(5));

  afterAll(async () => {
    if (client !== undefined) {
      for (const c of [restored, lost, lostToBackup]) {
        await deleteCluster(client, ns, c).catch((err) => console.warn(`cleanup: ${err}`));
      }
    }
    await tearDownSuite(client, { namespace: ns, name: source }, op, [clusterNs, opNs]);
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printFailureReport(client, ns, restored, op);
      await printFailureReport(client, ns, lost, op);
      await printFailureReport(client, ns, lostToBackup, op);
      const restores = await client.list(EtcdRestoreKind, { namespace: ns }).catch(() => undefined);
      for (const r of restores?.items ?? []) {
        console.log(`EtcdRestore ${r.metadata.name}: ${JSON.stringify(r.status ?? "(no status)", null, 1)}`);
      }
    });
  });

  /** A PVC-backed EtcdBackup of `cluster`, waited for until it Succeeded. */
  const backUp = (cluster: string, name: string) => backUpToClaim(client, ns, cluster, name);

  /** Destroys two followers of `cluster` with their data (claims first, then pods); waits for QuorumLost. */
  async function loseTwo(cluster: string, followers: string[]): Promise<void> {
    for (const v of followers) await client.delete(PersistentVolumeClaim, dataClaimName(v), ns);
    for (const v of followers) await client.delete(Pod, v, ns, { gracePeriodSeconds: 0 });
    await eventually(
      async () => {
        const c = await client.get(EtcdClusterKind, cluster, ns);
        if (c.status?.phase !== "QuorumLost") throw new Error(`phase ${c.status?.phase}`);
      },
      { timeoutMs: minutes(2), intervalMs: 2_000, message: `${cluster} reports QuorumLost` },
    );
  }

  /** Waits for an EtcdRestore to end. */
  async function restoreEnds(name: string): Promise<EtcdRestore> {
    return eventually(
      async () => {
        const r = await client.get(EtcdRestoreKind, name, ns);
        if (r.status?.phase !== "Succeeded" && r.status?.phase !== "Failed") {
          throw new Error(`phase ${r.status?.phase}: ${r.status?.message}`);
        }
        return r;
      },
      { timeoutMs: minutes(4), intervalMs: 2_000, message: `EtcdRestore ${name} ends` },
    );
  }

  it(
    "a new cluster from A's backup holds every key, with its revision bumped past A's",
    async () => {
      const a = await waitEtcdHealthy(client, ns, source, 1);
      const written = await putKeys(a.etcd, "/restore/", 100);

      const done = await backUp(source, "snap");
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

  /** Waits until the writer has had `n` more writes acknowledged than `from`. */
  async function writesAcked(
    writer: SequentialWriter,
    from: number,
    n: number,
    what: string,
  ): Promise<number> {
    return eventually(
      async () => {
        const { acked, lastError } = writer.stats();
        if (acked < from + n)
          throw new Error(`${acked - from} of ${n} acknowledged (last error: ${lastError})`);
        return acked;
      },
      { timeoutMs: minutes(2), intervalMs: 500, message: what },
    );
  }

  it(
    "two of three members lost with their claims under a writer: an EtcdRestore from: Backup recovers every write before the backup's revision and none after, as a new cluster grown back to three",
    async () => {
      await client.create(EtcdClusterKind, etcdCluster(ns, lostToBackup, { replicas: 3 }));
      await waitAvailable(client, ns, lostToBackup, 3);
      const view = await waitEtcdHealthy(client, ns, lostToBackup, 3);
      const oldID = (await client.get(EtcdClusterKind, lostToBackup, ns)).status?.clusterID;
      const prefix = "/drb/";
      const writer = startWriter({ prefix, endpoints: () => readyEndpoints(client, ns, lostToBackup) });
      try {
        await writesAcked(writer, 0, 100, "writes before the backup");
        // The backup is taken while the writer writes; it is the newest (the only one) of this cluster.
        const backup = await backUp(lostToBackup, "snap-dr");
        const backupRevision = backup.status?.revision ?? 0;
        // Written after the backup: lost with the two members, not in the backup.
        await writesAcked(writer, writer.stats().acked, 50, "writes after the backup");

        const followers = [...view.endpoints.keys()].filter((n) => n !== view.leader).slice(0, 2);
        await loseTwo(lostToBackup, followers);
        // A human's choice: the backup, although the leader survives (recovery from it would keep more).
        const name = "dr-backup";
        await client.create(EtcdRestoreKind, {
          apiVersion: EtcdRestoreKind.apiVersion,
          kind: EtcdRestoreKind.kind,
          metadata: { name, namespace: ns },
          spec: { clusterName: lostToBackup, from: "Backup", source: { backup: { name: "snap-dr" } } },
        });

        const done = await restoreEnds(name);
        expect(done.status?.phase, JSON.stringify(done.status)).toBe("Succeeded");
        expect(done.status).toMatchObject({ source: "backup/snap-dr", snapshotRevision: backupRevision });
        const restoredRevision = done.status?.revision ?? 0;
        expect(restoredRevision).toBeGreaterThan(backupRevision);
        expect(done.status?.clusterID).toBeDefined();
        expect(done.status?.clusterID).not.toBe(oldID);
        // The survivor's claim is kept for the user (labelled, no longer the cluster's), never deleted.
        const kept = await client.get(PersistentVolumeClaim, dataClaimName(view.leader ?? ""), ns);
        expect(kept.metadata.labels?.[KEPT_BY_RESTORE_LABEL]).toBe(name);
        expect(kept.metadata.ownerReferences ?? []).toEqual([]);

        await waitAvailable(client, ns, lostToBackup, 3);
        await writesAcked(writer, writer.stats().acked, 50, "writes after the recovery");
        const stats = await writer.stop();
        const after = await waitEtcdHealthy(client, ns, lostToBackup, 3);
        for (const endpoint of after.endpoints.values()) {
          const found = await keysUnder(endpoint, prefix);
          const across = compareWritesAcrossRestore(found, prefix, stats, backupRevision, restoredRevision);
          console.log(
            `${endpoint}: writes ${JSON.stringify(across.counts)}, ${stats.failures} failed attempts`,
          );
          expect(across.counts.beforeSnapshot).toBeGreaterThan(0);
          expect(across.counts.betweenSnapshotAndRestore).toBeGreaterThan(0);
          expect(across.counts.afterRestore).toBeGreaterThan(0);
          expect(
            {
              lostBeforeSnapshot: across.lostBeforeSnapshot,
              keptAfterSnapshot: across.keptAfterSnapshot,
              lostAfterRestore: across.lostAfterRestore,
              unexpected: compareWrites(found, prefix, stats).unexpected,
            },
            endpoint,
          ).toEqual({ lostBeforeSnapshot: [], keptAfterSnapshot: [], lostAfterRestore: [], unexpected: [] });
        }
        const cluster = await client.get(EtcdClusterKind, lostToBackup, ns);
        expect(cluster.status?.clusterID).toBe(done.status?.clusterID);
        expect(cluster.status?.quorumLostSince).toBeUndefined();
        expect(cluster.status?.restore).toMatchObject({
          source: "backup/snap-dr",
          snapshotRevision: backupRevision,
          clusterID: done.status?.clusterID,
        });
        expect((await clusterEvents(client, ns, lostToBackup)).some((e) => e.reason === "Recovered")).toBe(
          true,
        );
        const old = await client.get(Pod, view.leader ?? "", ns).catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
        expect(old, "the old survivor's pod is stopped").toBeUndefined();
      } finally {
        await writer.stop();
      }
    },
    minutes(14),
  );
  it(
    "two of three members lost with their claims under a writer, with spec.recovery.automatic and a backup: after afterSeconds the operator recovers from the survivor (newer than the backup) with every acknowledged write and the same cluster ID, grown back to three",
    async () => {
      await client.create(
        EtcdClusterKind,
        etcdCluster(ns, lost, {
          replicas: 3,
          recovery: { automatic: { enabled: true, afterSeconds: AUTOMATIC_AFTER_SECONDS } },
        }),
      );
      await waitAvailable(client, ns, lost, 3);
      const view = await waitEtcdHealthy(client, ns, lost, 3);
      const clusterID = (await client.get(EtcdClusterKind, lost, ns)).status?.clusterID;
      const prefix = "/dr/";
      const writer = startWriter({ prefix, endpoints: () => readyEndpoints(client, ns, lost) });
      try {
        await writesAcked(writer, 0, 100, "writes before the backup");
        // A backup under the writer: older than what the survivor holds once more writes are acknowledged.
        const backup = await backUp(lost, "snap-auto");
        const beforeLoss = await writesAcked(writer, writer.stats().acked, 100, "writes after the backup");
        // Destroy two followers with their data while the writer writes: claims first (they go once their pods
        // do), then pods.
        await loseTwo(lost, [...view.endpoints.keys()].filter((n) => n !== view.leader).slice(0, 2));

        const lostSince = await eventually(
          async () => {
            const since = (await client.get(EtcdClusterKind, lost, ns)).status?.quorumLostSince;
            if (since === undefined) throw new Error("status.quorumLostSince unset");
            return since;
          },
          { timeoutMs: minutes(1), intervalMs: 2_000, message: "status.quorumLostSince is recorded" },
        );
        // The operator makes the EtcdRestore itself once quorum has been lost for afterSeconds.
        const name = await eventually(
          async () => {
            const made = (await client.list(EtcdRestoreKind, { namespace: ns })).items.filter(
              (r) => r.metadata.labels?.[AUTOMATIC_RESTORE_LABEL] === lost,
            );
            if (made.length === 0) throw new Error("no automatic EtcdRestore yet");
            expect(made.length, "one automatic EtcdRestore per loss").toBe(1);
            return made[0]?.metadata.name ?? "";
          },
          {
            timeoutMs: AUTOMATIC_AFTER_SECONDS * 1000 + minutes(2),
            intervalMs: 5_000,
            message: "the automatic EtcdRestore",
          },
        );
        const madeBy = await client.get(EtcdRestoreKind, name, ns);
        // Made no earlier than afterSeconds after the recorded loss (creationTimestamp has whole seconds).
        const waitedMs = Date.parse(madeBy.metadata.creationTimestamp ?? "") - Date.parse(lostSince);
        console.log(
          `automatic recovery ${name} made ${Math.round(waitedMs / 1000)}s after status.quorumLostSince`,
        );
        expect(waitedMs).toBeGreaterThanOrEqual(AUTOMATIC_AFTER_SECONDS * 1000 - 1000);
        // From the survivor, not the older backup: nothing it acknowledged is lost.
        expect(madeBy.spec).toEqual({ clusterName: lost, from: "Survivor" });
        const automatic = (await clusterEvents(client, ns, lost)).find(
          (e) => e.reason === "AutomaticRecovery",
        );
        expect(automatic?.note ?? "").toContain(`EtcdBackup ${backup.metadata.name}, is older`);

        const done = await restoreEnds(name);
        expect(done.status?.phase, JSON.stringify(done.status)).toBe("Succeeded");
        expect(done.status?.survivor).toBe(view.leader);
        expect(done.status?.revision).toBeGreaterThan(0);
        expect(done.status?.clusterID).toBe(clusterID);

        await waitAvailable(client, ns, lost, 3);
        const atRecovery = writer.stats().acked;
        await writesAcked(writer, atRecovery, 50, "writes after the recovery");
        const stats = await writer.stop();
        console.log(
          `survivor recovery under a writer: ${beforeLoss}+ writes acknowledged before the loss, ${stats.acked} in all, ${stats.failures} failed attempts (retried)`,
        );
        const after = await waitEtcdHealthy(client, ns, lost, 3);
        for (const endpoint of after.endpoints.values()) {
          expect(compareWrites(await keysUnder(endpoint, prefix), prefix, stats), endpoint).toEqual({
            missing: [],
            unexpected: [],
          });
        }
        const events = await clusterEvents(client, ns, lost);
        expect(events.some((e) => e.reason === "Recovered")).toBe(true);
      } finally {
        await writer.stop();
      }
    },
    minutes(14),
  );
});
