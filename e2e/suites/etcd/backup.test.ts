// EtcdBackups under the chart-installed operator, on the real node, in namespaces enforcing Pod Security
// "restricted": a one-shot backup of a one-member cluster to a PersistentVolumeClaim succeeds with revision, size
// and sha256 in its status, and a pod reading the claim finds the file with that size and digest.
import { type Client, PersistentVolumeClaim, Pod, restrictedContainerSecurityContext } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  etcdCluster,
  printFailureReport,
  putKeys,
  tearDownSuite,
  waitAvailable,
  waitEtcdHealthy,
} from "./fixtures/etcd-cluster.ts";
import { type EtcdBackup, EtcdBackupKind, EtcdClusterKind } from "./fixtures/operator-api.ts";
import {
  etcdSuitesEnabled,
  installOperator,
  nodeName,
  type OperatorRelease,
} from "./fixtures/operator-release.ts";

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

  afterAll(() => tearDownSuite(client, { namespace: ns, name }, op, [clusterNs, opNs]), minutes(5));

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
      const backup: EtcdBackup = {
        apiVersion: EtcdBackupKind.apiVersion,
        kind: EtcdBackupKind.kind,
        metadata: { name: "once", namespace: ns },
        spec: { clusterName: name, destination: { pvc: { claimName: "backups", directory: "etcd" } } },
      };
      await client.create(EtcdBackupKind, backup);
      const done = await eventually(
        async () => {
          const b = await client.get(EtcdBackupKind, "once", ns);
          if (b.status?.phase === "Failed") return b;
          if (b.status?.phase !== "Succeeded") throw new Error(`phase ${b.status?.phase}`);
          return b;
        },
        { timeoutMs: minutes(3), intervalMs: 2_000, message: "EtcdBackup once ends" },
      );
      const status = done.status ?? {};
      expect(status.phase, await describeBackup("once")).toBe("Succeeded");
      expect(status.revision).toBeGreaterThanOrEqual(written);
      expect(status.size).toBeGreaterThan(0);
      expect(status.sha256).toMatch(/^[0-9a-f]{64}$/);
      const path = `etcd/${ns}/${name}/once.db`;
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
    },
    minutes(5),
  );
});
