// One reconcile of the EtcdBackup controller against the in-memory API server (core's test kit) and a scripted
// etcd: the Job is created once on a follower, a running Job changes nothing, the Job's results become status,
// a failed Job fails the backup, and a claim holding member data is refused without a Job.
import { Job, type KubeObject, PersistentVolumeClaim } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { type EtcdBackup, EtcdBackupKind } from "../api/backup.ts";
import { type EtcdCluster, EtcdClusterKind } from "../api/etcd-cluster.ts";
import { BACKUP_LABEL, UPLOAD_CONTAINER } from "../desired/backup-job.ts";
import { memberDataClaim } from "../desired/cluster-objects.ts";
import { memberPod } from "../desired/member-pod.ts";
import { peerURL } from "../desired/names.ts";
import type { EtcdClient, EtcdMember } from "../etcd/etcd-client.ts";
import { type EtcdBackupControllerOptions, reconcileEtcdBackup } from "./backup-controller.ts";

const names = ["demo-a", "demo-b", "demo-c"];
const SHA = "0f".repeat(32);

const cluster: EtcdCluster = {
  apiVersion: EtcdClusterKind.apiVersion,
  kind: EtcdClusterKind.kind,
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" } },
  status: { clusterID: "ff", observedGeneration: 1 },
};

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

/** The running member pods and claims of the 3-member cluster. */
function members(): KubeObject[] {
  const initial = names.map((n) => ({ name: n, peerURL: peerURL(cluster, n) }));
  return names.flatMap((n, i) => {
    const pod = memberPod({ cluster, member: n, initialCluster: initial, initialClusterState: "existing" });
    pod.status = {
      phase: "Running",
      podIP: `10.0.0.${i + 1}`,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-30T00:00:00Z" }],
    };
    return [pod, memberDataClaim(cluster, n)!];
  });
}

/** A healthy 3-voter etcd led by demo-a, every member at raft index 100. */
function fakeEtcd() {
  const list: EtcdMember[] = names.map((n, i) => ({
    id: String(101 + i),
    name: n,
    peerURLs: [peerURL(cluster, n)],
    clientURLs: [],
    isLearner: false,
  }));
  const header = { clusterId: "255", memberId: "101", revision: 1, raftTerm: 1 };
  return () =>
    ({
      memberList: async () => ({ header, members: list }),
      status: async (endpoint: string) => ({
        endpoint,
        header,
        memberId: "0",
        leader: "101",
        version: "3.6.15",
        dbSize: 1,
        dbSizeInUse: 1,
        raftIndex: 100,
        raftTerm: 1,
        raftAppliedIndex: 100,
        isLearner: false,
        errors: [],
      }),
      health: async (endpoint: string) => ({ endpoint, healthy: true }),
      alarmList: async () => [],
    }) as unknown as EtcdClient;
}

const logs: string[] = [];
const options: EtcdBackupControllerOptions = {
  operatorImage: "capstan.local/etcd-operator:0.1.0",
  etcdClient: fakeEtcd(),
  readLog: async (_ns, pod, container) => {
    logs.push(`${pod}/${container}`);
    return '{"level":"info"}\n{"hash":7,"revision":42,"totalKey":3,"totalSize":28672,"version":"3.6.0"}\n';
  },
};

const reconcile = (objects: readonly KubeObject[]) =>
  reconcileOnce((req, ctx) => reconcileEtcdBackup(req, ctx, options), {
    kinds: [EtcdClusterKind, EtcdBackupKind],
    objects,
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
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "b1-x7k2p", namespace: "ns", labels: { [BACKUP_LABEL]: "b1" } },
    spec: { containers: [{ name: UPLOAD_CONTAINER, image: "i" }] },
    status: {
      phase: "Succeeded",
      containerStatuses: [
        {
          name: UPLOAD_CONTAINER,
          image: "i",
          imageID: "",
          ready: false,
          restartCount: 0,
          state: {
            terminated: {
              exitCode: 0,
              message: JSON.stringify({ location: "uploader-view", size: 28704, sha256: SHA }),
            },
          },
        },
      ],
    },
  };
  return [...out, pod as KubeObject];
}

describe("reconcileEtcdBackup", () => {
  it("creates the Job on a follower and marks the backup Running; a second reconcile writes nothing", async () => {
    const run = await reconcile([cluster, ...members(), backup()]);
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
    const first = await reconcile([cluster, ...members(), backup()]);
    logs.length = 0;
    const run = await reconcile(finish(first.objects, true));
    run.expectNoError();
    expect(logs).toEqual(["b1-x7k2p/verify"]);
    expect(run.get(EtcdBackupKind, "b1", "ns")?.status).toMatchObject({
      phase: "Succeeded",
      revision: 42,
      size: 28704,
      sha256: SHA,
      location: "s3://bk/ns/demo/b1.db",
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
    const first = await reconcile([cluster, ...members(), backup()]);
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

  it("refuses a destination claim holding a member's data, without a Job", async () => {
    const run = await reconcileOnce((req, ctx) => reconcileEtcdBackup(req, ctx, options), {
      kinds: [EtcdClusterKind, EtcdBackupKind],
      objects: [cluster, ...members(), backup(true)],
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
