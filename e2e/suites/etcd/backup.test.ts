// EtcdBackups under the chart-installed operator, on the real node, in namespaces enforcing Pod Security
// "restricted": a one-shot backup of a one-member cluster to a PersistentVolumeClaim succeeds with revision, size
// and sha256 in its status, and a pod reading the claim finds the file with that size and digest; deleting a
// Retain backup leaves its file, deleting a Delete backup removes its file before the EtcdBackup goes; a schedule
// every minute to a real S3 server (versitygw) with keepLast 2 puts backups in the bucket, and retention deletes
// the oldest EtcdBackup and its object.
import { type Client, PersistentVolumeClaim, Pod, restrictedContainerSecurityContext } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scrape } from "../core/fixtures/metrics-scraper.ts";
import {
  etcdCluster,
  printFailureReport,
  putKeys,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import {
  type EtcdBackup,
  EtcdBackupKind,
  type EtcdBackupSchedule,
  EtcdBackupScheduleKind,
  EtcdClusterKind,
} from "./fixtures/operator-api.ts";
import {
  etcdSuitesEnabled,
  installOperator,
  metricsReaderToken,
  nodeName,
  type OperatorRelease,
  operatorPods,
} from "./fixtures/operator-release.ts";
import { deployS3Server, type S3Server } from "./fixtures/s3.ts";

const name = "bk";
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;
/** The busybox image on the local node (e2e/images/busybox). */
const busybox = process.env.CAPSTAN_BUSYBOX_IMAGE ?? "capstan.local/busybox:1";
/** etcd's user, which the backup Job writes the file as. */
const ETCD_UID = 65532;

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";
const servers: S3Server[] = [];

/** A one-shot backup of the suite's cluster to the claim "backups". */
const pvcBackup = (backupName: string, deletionPolicy?: "Retain" | "Delete"): EtcdBackup => ({
  apiVersion: EtcdBackupKind.apiVersion,
  kind: EtcdBackupKind.kind,
  metadata: { name: backupName, namespace: ns },
  spec: {
    clusterName: name,
    destination: { pvc: { claimName: "backups", directory: "etcd" } },
    ...(deletionPolicy === undefined ? {} : { deletionPolicy }),
  },
});

/** Waits for the backup to end and returns it. */
function waitEnded(backupName: string): Promise<EtcdBackup> {
  return eventually(
    async () => {
      const b = await client.get(EtcdBackupKind, backupName, ns);
      if (b.status?.phase !== "Succeeded" && b.status?.phase !== "Failed")
        throw new Error(`phase ${b.status?.phase}`);
      return b;
    },
    { timeoutMs: minutes(3), intervalMs: 2_000, message: `EtcdBackup ${backupName} ends` },
  );
}

/** Deletes every EtcdBackup of the suite while the operator still runs (their finalizers need it). */
async function deleteBackups(): Promise<void> {
  const list = await client.list(EtcdBackupKind, { namespace: ns });
  for (const b of list.items)
    await client.delete(EtcdBackupKind, b.metadata.name ?? "", ns).catch(() => undefined);
  await eventually(
    async () => {
      const left = (await client.list(EtcdBackupKind, { namespace: ns })).items;
      if (left.length > 0) throw new Error(`left: ${left.map((b) => b.metadata.name).join(", ")}`);
    },
    { timeoutMs: minutes(2), intervalMs: 2_000, message: "every EtcdBackup is deleted" },
  ).catch(async (err: unknown) => {
    console.warn(`cleanup: ${err}; removing the finalizers by hand`);
    for (const b of (await client.list(EtcdBackupKind, { namespace: ns })).items)
      await client.patch(
        EtcdBackupKind,
        b.metadata.name ?? "",
        ns,
        { metadata: { finalizers: null } },
        "merge",
      );
  });
}

/** The backup's events, for failure messages. */
async function describeBackup(backupName: string): Promise<string> {
  const b = await client.get(EtcdBackupKind, backupName, ns).catch(() => undefined);
  return JSON.stringify(b?.status ?? "(no backup)", null, 1);
}

/** Runs a busybox pod mounting `claim` at /backup and returns its log once it has succeeded. */
async function runOnClaim(podName: string, claim: string, script: string): Promise<string> {
  await client.create(Pod, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: podName, namespace: ns },
    spec: {
      restartPolicy: "Never",
      nodeSelector: { "kubernetes.io/hostname": nodeName },
      securityContext: {
        runAsNonRoot: true,
        runAsUser: ETCD_UID,
        runAsGroup: ETCD_UID,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "read",
          image: busybox,
          imagePullPolicy: "IfNotPresent",
          command: ["sh", "-c", script],
          securityContext: restrictedContainerSecurityContext(),
          volumeMounts: [{ name: "backup", mountPath: "/backup", readOnly: true }],
        },
      ],
      volumes: [{ name: "backup", persistentVolumeClaim: { claimName: claim, readOnly: true } }],
    },
  });
  await eventually(
    async () => {
      const phase = (await client.get(Pod, podName, ns)).status?.phase;
      if (phase === "Failed") return;
      if (phase !== "Succeeded") throw new Error(`pod ${podName} is ${phase}`);
    },
    { timeoutMs: minutes(2), intervalMs: 1_000, message: `pod ${podName} reading claim ${claim} ends` },
  );
  const log = await client.raw(`/api/v1/namespaces/${ns}/pods/${podName}/log`);
  return typeof log === "string" ? log : JSON.stringify(log);
}

describe.skipIf(!etcdSuitesEnabled)("EtcdBackup, in namespaces enforcing Pod Security restricted", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "etcd-backup-op", restricted);
    clusterNs = await createNamespace(client, "etcd-backup", restricted);
    ns = clusterNs.name;
    op = await installOperator(client, opNs.name, { watchNamespace: ns });
    await client.create(EtcdClusterKind, etcdCluster(ns, name, { replicas: 1 }));
    await waitAvailable(client, ns, name, 1);
  }, minutes(5));

  afterAll(async () => {
    if (client !== undefined && ns !== "")
      await deleteBackups().catch((err) => console.warn(`cleanup: ${err}`));
    await tearDownSuite(client, { namespace: ns, name }, op, [clusterNs, opNs]);
  }, minutes(6));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it(
    "a one-shot backup to a PVC succeeds with revision, size and sha256, and the file on the claim matches them",
    async () => {
      const view = await waitEtcdHealthy(client, ns, name, 1);
      await putKeys(view.etcd, "/backup/pvc/", 50);
      const written = (await view.etcd.status([...view.endpoints.values()][0] ?? "")).header.revision;

      await client.create(PersistentVolumeClaim, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "backups", namespace: ns },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      });
      const created = await client.create(EtcdBackupKind, pvcBackup("once"));
      // A one-shot backup keeps its snapshot when deleted, by default.
      expect(created.spec.deletionPolicy).toBe("Retain");
      const done = await waitEnded("once");
      const status = done.status ?? {};
      expect(status.phase, await describeBackup("once")).toBe("Succeeded");
      expect(status.revision).toBeGreaterThanOrEqual(written);
      expect(status.size).toBeGreaterThan(0);
      expect(status.sha256).toMatch(/^[0-9a-f]{64}$/);
      // The file name holds the backup's uid: unique even across Kubernetes clusters sharing the destination.
      const path = `etcd/${ns}/${name}/once-${done.metadata.uid}.db`;
      expect(status.location).toBe(`pvc://backups/${path}`);
      expect(status.member).toBe(view.leader);
      expect(status.etcdVersion).toMatch(/^3\.[56]\.\d+$/);
      expect(done.status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");

      // The file on the claim, read by another pod: its size and digest are the status's.
      const log = await runOnClaim(
        "read-backup",
        "backups",
        `wc -c < /backup/${path} && sha256sum /backup/${path}`,
      );
      const [size, sum] = log.trim().split("\n");
      expect(Number(size?.trim())).toBe(status.size);
      expect(sum?.split(/\s+/)[0]).toBe(status.sha256);

      // The operator's /metrics carry the backup's completion time for the cluster.
      const token = await metricsReaderToken(client, op!);
      const [pod] = await operatorPods(client, op!);
      const res = await scrape(`https://${pod?.status?.podIP}:8080/metrics`, token);
      expect(res.status).toBe(200);
      const series = `capstan_etcd_backup_last_success_timestamp_seconds{object_namespace="${ns}",object_name="${name}"}`;
      const line = res.body.split("\n").find((l) => l.startsWith(series));
      expect(line, `${series} in /metrics`).toBeDefined();
      expect(Number(line?.split(" ")[1])).toBe(Math.floor(Date.parse(status.completionTime ?? "") / 1000));
    },
    minutes(5),
  );

  it(
    "deleting a Retain backup leaves its file; deleting a Delete backup removes its file first",
    async () => {
      await client.create(EtcdBackupKind, pvcBackup("doomed", "Delete"));
      const doomed = await waitEnded("doomed");
      expect(doomed.status?.phase).toBe("Succeeded");
      expect(doomed.metadata.finalizers).toContain("etcd.capstan.dev/delete-snapshot");
      const once = await client.get(EtcdBackupKind, "once", ns);
      const keptFile = `once-${once.metadata.uid}.db`;
      const kept = `/backup/etcd/${ns}/${name}/${keptFile}`;
      const removed = `/backup/etcd/${ns}/${name}/doomed-${doomed.metadata.uid}.db`;
      expect(await runOnClaim("before", "backups", `ls ${kept} ${removed}`)).toContain(removed);

      await client.delete(EtcdBackupKind, "once", ns);
      await client.delete(EtcdBackupKind, "doomed", ns);
      await eventually(
        async () => {
          const left = (await client.list(EtcdBackupKind, { namespace: ns })).items.map(
            (b) => b.metadata.name,
          );
          if (left.length > 0) throw new Error(`still there: ${left.join(", ")}`);
        },
        { timeoutMs: minutes(2), intervalMs: 1_000, message: "both EtcdBackups are gone" },
      );
      const listing = await runOnClaim("after", "backups", `ls /backup/etcd/${ns}/${name}/`);
      expect(listing.split(/\s+/).filter(Boolean)).toEqual([keptFile]);
    },
    minutes(5),
  );

  it(
    "a schedule every minute to S3 with keepLast 2: backups land in the bucket, retention deletes the oldest EtcdBackup and its object",
    async () => {
      const s3 = await deployS3Server(client, ns);
      servers.push(s3);
      await client.create(EtcdBackupScheduleKind, {
        apiVersion: EtcdBackupScheduleKind.apiVersion,
        kind: EtcdBackupScheduleKind.kind,
        metadata: { name: "every", namespace: ns },
        spec: {
          schedule: "* * * * *",
          retention: { keepLast: 2 },
          backupTemplate: {
            spec: {
              clusterName: name,
              destination: {
                s3: {
                  endpoint: s3.endpoint,
                  bucket: s3.bucket,
                  region: s3.region,
                  forcePathStyle: true,
                  prefix: "sched",
                  credentialsSecret: { name: s3.credentials.secretName },
                },
              },
            },
          },
        },
      } as EtcdBackupSchedule);
      const keyOf = (b: EtcdBackup) => `sched/${ns}/${name}/${b.metadata.name}-${b.metadata.uid}.db`;
      const scheduled = async () =>
        (await client.list(EtcdBackupKind, { namespace: ns })).items.filter(
          (b) => b.metadata.labels?.["etcd.capstan.dev/schedule"] === "every",
        );
      // The first scheduled backup, whose object retention must delete once two newer ones succeeded.
      const first = await eventually(
        async () => {
          const done = (await scheduled()).filter((b) => b.status?.phase === "Succeeded");
          if (done.length === 0) throw new Error("no scheduled backup has succeeded yet");
          return done.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))[0]!;
        },
        { timeoutMs: minutes(2), intervalMs: 2_000, message: "the first scheduled backup succeeds" },
      );
      expect(first.spec.deletionPolicy).toBe("Delete");
      expect(first.status?.location).toBe(`s3://${s3.bucket}/${keyOf(first)}`);
      const stored = await s3.listObjects("sched/");
      expect(stored.find((o) => o.key === keyOf(first))?.size).toBe(first.status?.size);

      const kept = await eventually(
        async () => {
          const all = await scheduled();
          if (all.some((b) => b.metadata.name === first.metadata.name))
            throw new Error(`${all.length} scheduled backups, the first still there`);
          const done = all.filter((b) => b.status?.phase === "Succeeded");
          if (done.length < 2) throw new Error(`${done.length} succeeded`);
          return done;
        },
        { timeoutMs: minutes(3), intervalMs: 2_000, message: "retention deletes the first scheduled backup" },
      );
      const keys = (await s3.listObjects("sched/")).map((o) => o.key);
      expect(keys).not.toContain(keyOf(first));
      for (const b of kept) expect(keys).toContain(keyOf(b));
      // Nothing else in the bucket: every object belongs to a backup that exists.
      expect(keys.length).toBeLessThanOrEqual(kept.length + 1);
      await client.patch(EtcdBackupScheduleKind, "every", ns, { spec: { suspend: true } });
    },
    minutes(6),
  );
});
