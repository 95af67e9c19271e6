// Raft snapshots end to end, against a real S3 server (versitygw, the etcd backup suites' fixture): a secret written,
// a VaultSnapshot taken and stored (its object's size is the status's), the VaultCluster deleted with its claims (the
// keys Secret kept, as unseal.retainKeysOnDelete does by default), then a new VaultCluster of the same name created
// with spec.restore naming the snapshot: it restores, unseals with the kept keys, grows to three servers, serves the
// same secret under the same cluster_id, and leaves none of the restore's temporary objects behind. Then a
// VaultSnapshotSchedule every minute with keepLast 1: it takes verified snapshots, and retention deletes the older
// VaultSnapshot and, through its deletionPolicy Delete finalizer, its S3 object.
import { type Client, Job, PersistentVolumeClaim, Secret } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deployS3Server, type S3Server } from "../etcd/fixtures/s3.ts";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import {
  clusterSelector,
  names,
  VaultClusterKind,
  VaultSnapshotKind,
  VaultSnapshotScheduleKind,
} from "./fixtures/vault-api.ts";
import {
  printFailureReport,
  secretExists,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvGet, kvPut } from "./fixtures/vault-http.ts";

const name = "snap";
const scheduled = "sched";
const scheduleName = "every-minute";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let s3: S3Server | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled)("VaultSnapshot and a restore into a new VaultCluster", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-snapshot");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
    s3 = await deployS3Server(client, ns, { bucket: "vault-snapshots" });
  }, minutes(6));

  afterAll(async () => {
    // The schedule's snapshots hold a finalizer until their objects are deleted: let the operator do that before it
    // is uninstalled, so the namespace can go.
    await deleteSchedule().catch((err) => console.warn(`cleanup: ${err}`));
    await s3?.teardown();
    await tearDownSuite(
      client,
      [
        { namespace: ns, name },
        { namespace: ns, name: scheduled },
      ],
      op,
      [nsObj],
    );
  }, minutes(8));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "a snapshot taken to S3, the cluster deleted with its claims, a new VaultCluster restored from it serving the same secret",
    async () => {
      const server = s3 as S3Server;
      await client.create(VaultClusterKind, vaultCluster(ns, name, { replicas: 1 }));
      await waitAvailable(client, ns, name, 1, minutes(6));
      const before = await waitVault(client, ns, name, 1);
      const active = await serviceTarget(client, ns, names(name).activeService, before.ca, name);
      await enableKv(active, before.token);
      await kvPut(active, before.token, "app/db", { password: "s3cr3t-before-snapshot" });

      await client.create(VaultSnapshotKind, {
        apiVersion: VaultSnapshotKind.apiVersion,
        kind: VaultSnapshotKind.kind,
        metadata: { name: "snap-1", namespace: ns },
        spec: {
          clusterName: name,
          destination: s3Destination(server, "vault"),
        },
      });
      const taken = await eventually(
        async () => {
          const s = await client.get(VaultSnapshotKind, "snap-1", ns);
          expect(s.status?.phase, JSON.stringify(s.status?.conditions)).toBe("Succeeded");
          return s;
        },
        { timeoutMs: minutes(5), intervalMs: 2_000, message: "VaultSnapshot snap-1 Succeeded" },
      );
      expect(taken.status?.clusterID).toBe(before.clusterId);
      expect(taken.status?.raftIndex).toBeGreaterThan(0);
      const key = (taken.status?.location ?? "").replace(`s3://${server.bucket}/`, "");
      expect(key).toMatch(new RegExp(`^vault/${ns}/${name}/snap-1-[0-9a-f-]+\\.snap$`));
      const objects = await server.listObjects("vault/");
      expect(objects.map((o) => [o.key, o.size])).toEqual([[key, taken.status?.size]]);
      // The Job's token Secret is gone once the Job ended.
      expect(await secretExists(client, ns, "snap-1-vault-token")).toBe(false);

      // The cluster deleted, and its data with it: only the keys Secret stays.
      await client.delete(VaultClusterKind, name, ns);
      await eventually(
        async () => {
          const clusters = await client.list(VaultClusterKind, { namespace: ns });
          expect(clusters.items.map((c) => c.metadata.name)).not.toContain(name);
        },
        { timeoutMs: minutes(3), intervalMs: 1_000, message: "the VaultCluster is deleted" },
      );
      for (const c of (
        await client.list(PersistentVolumeClaim, { namespace: ns, labelSelector: clusterSelector(name) })
      ).items)
        await client.delete(PersistentVolumeClaim, c.metadata.name ?? "", ns);
      await eventually(
        async () => {
          const left = await client.list(PersistentVolumeClaim, {
            namespace: ns,
            labelSelector: clusterSelector(name),
          });
          expect(left.items.map((c) => c.metadata.name)).toEqual([]);
        },
        { timeoutMs: minutes(3), intervalMs: 1_000, message: "the data claims are deleted" },
      );
      expect(await secretExists(client, ns, names(name).keys)).toBe(true);

      // A new VaultCluster of the same name, restored from the snapshot, with three servers.
      await client.create(
        VaultClusterKind,
        vaultCluster(ns, name, { restore: { snapshot: { name: "snap-1" } } }),
      );
      await waitAvailable(client, ns, name, 3, minutes(10));
      const after = await waitVault(client, ns, name, 3);
      expect(after.clusterId).toBe(before.clusterId);
      const again = await serviceTarget(client, ns, names(name).activeService, after.ca, name);
      expect(await kvGet(again, after.token, "app/db")).toEqual({ password: "s3cr3t-before-snapshot" });
      const restored = await client.get(VaultClusterKind, name, ns);
      expect(restored.status?.restore).toMatchObject({
        source: "snapshot/snap-1",
        clusterID: before.clusterId,
      });
      expect(restored.status?.restore?.completionTime).toBeDefined();
      // Nothing of the restore is left: the temporary keys, the token, the Job.
      expect(await secretExists(client, ns, `${name}-restore-keys`)).toBe(false);
      expect(await secretExists(client, ns, `${name}-restore-token`)).toBe(false);
      await eventually(
        async () => {
          const jobs = await client.list(Job, { namespace: ns });
          expect(jobs.items.map((j) => j.metadata.name)).not.toContain(`${name}-restore`);
        },
        { timeoutMs: minutes(1), intervalMs: 1_000, message: "the restore Job is deleted" },
      );
      expect((await client.get(Secret, names(name).keys, ns)).data?.["unseal-key-0"]).toBeDefined();
    },
    minutes(30),
  );

  it(
    "a VaultSnapshotSchedule every minute takes verified snapshots; keepLast 1 deletes the older one and its object",
    async () => {
      const server = s3 as S3Server;
      await client.create(VaultClusterKind, vaultCluster(ns, scheduled, { replicas: 1 }));
      await waitAvailable(client, ns, scheduled, 1, minutes(6));
      await client.create(VaultSnapshotScheduleKind, {
        apiVersion: VaultSnapshotScheduleKind.apiVersion,
        kind: VaultSnapshotScheduleKind.kind,
        metadata: { name: scheduleName, namespace: ns },
        spec: {
          schedule: "* * * * *",
          retention: { keepLast: 1 },
          snapshotTemplate: {
            spec: {
              clusterName: scheduled,
              destination: s3Destination(server, "scheduled"),
            },
          },
        },
      });
      const owned = async () =>
        (
          await client.list(VaultSnapshotKind, {
            namespace: ns,
            labelSelector: `vault.capstan.dev/schedule=${scheduleName}`,
          })
        ).items;
      // The first scheduled snapshot succeeds, and the schedule says so.
      const first = await eventually(
        async () => {
          const sched = await client.get(VaultSnapshotScheduleKind, scheduleName, ns);
          const last = sched.status?.lastSuccessfulSnapshot;
          expect(last, JSON.stringify(sched.status)).toBeDefined();
          return last as string;
        },
        { timeoutMs: minutes(4), intervalMs: 2_000, message: "a scheduled snapshot Succeeded" },
      );
      const snap = await client.get(VaultSnapshotKind, first, ns);
      expect(snap.spec.deletionPolicy).toBe("Delete");
      expect(snap.metadata.finalizers).toContain("vault.capstan.dev/delete-snapshot");
      expect(snap.status?.raftIndex).toBeGreaterThan(0);
      const firstKey = (snap.status?.location ?? "").replace(`s3://${server.bucket}/`, "");
      expect(firstKey).toMatch(new RegExp(`^scheduled/${ns}/${scheduled}/${first}-[0-9a-f-]+\\.snap$`));
      // A later one succeeds: the first VaultSnapshot goes, and its object with it; one object is left, the newest's.
      await eventually(
        async () => {
          const sched = await client.get(VaultSnapshotScheduleKind, scheduleName, ns);
          const last = sched.status?.lastSuccessfulSnapshot;
          expect(last).toBeDefined();
          expect(last).not.toBe(first);
          const left = await owned();
          expect(left.map((s) => s.metadata.name)).not.toContain(first);
          const newest = await client.get(VaultSnapshotKind, last as string, ns);
          const keys = (await server.listObjects("scheduled/")).map((o) => o.key);
          expect(keys).not.toContain(firstKey);
          expect(keys).toContain((newest.status?.location ?? "").replace(`s3://${server.bucket}/`, ""));
          expect(sched.status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
        },
        {
          timeoutMs: minutes(5),
          intervalMs: 3_000,
          message: "retention deleted the first snapshot and its object",
        },
      );
      await deleteSchedule();
      expect(await server.listObjects("scheduled/")).toEqual([]);
    },
    minutes(20),
  );
});

/** A snapshot destination in the suite's bucket, below `prefix`. */
function s3Destination(server: S3Server, prefix: string) {
  return {
    s3: {
      endpoint: server.endpoint,
      bucket: server.bucket,
      prefix,
      forcePathStyle: true,
      credentialsSecret: { name: server.credentials.secretName },
    },
  };
}

/**
 * Suspends the schedule and waits until none of its snapshots runs (a deleted snapshot's running Job is stopped, but
 * its pod may still finish an upload), then deletes it and waits until its VaultSnapshots are gone (the garbage
 * collector deletes them; each one's finalizer holds it until its object is deleted).
 */
async function deleteSchedule(): Promise<void> {
  if (client === undefined || ns === "") return;
  try {
    await client.patch(VaultSnapshotScheduleKind, scheduleName, ns, { spec: { suspend: true } }, "merge");
  } catch {
    return;
  }
  await eventually(
    async () => {
      const sched = await client.get(VaultSnapshotScheduleKind, scheduleName, ns);
      expect(sched.status?.active).toBeUndefined();
    },
    { timeoutMs: minutes(3), intervalMs: 2_000, message: "no scheduled snapshot runs" },
  );
  await client.delete(VaultSnapshotScheduleKind, scheduleName, ns);
  await eventually(
    async () => {
      const left = await client.list(VaultSnapshotKind, {
        namespace: ns,
        labelSelector: `vault.capstan.dev/schedule=${scheduleName}`,
      });
      expect(left.items.map((s) => s.metadata.name)).toEqual([]);
    },
    { timeoutMs: minutes(3), intervalMs: 2_000, message: "the schedule's snapshots are deleted" },
  );
}
