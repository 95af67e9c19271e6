// Table tests of the EtcdBackup planner: what must exist before the Job, the member choice, the Job's life, its
// results, and that an ended backup is never taken again.
import { describe, expect, it } from "vitest";
import type { EtcdBackup, EtcdBackupStatus } from "../api/backup.ts";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import { type BackupInput, type BackupPlan, planBackup } from "./backup.ts";
import type { ObservedMember } from "./plan.ts";

const NOW = new Date("2026-11-29T12:00:00Z");
const SHA = "ab".repeat(32);

const backup = (status?: EtcdBackupStatus, pvc = false): EtcdBackup => ({
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdBackup",
  metadata: { name: "b1", namespace: "db" },
  spec: {
    clusterName: "demo",
    destination: pvc
      ? { pvc: { claimName: "backups" } }
      : { s3: { bucket: "bk", credentialsSecret: { name: "creds" } } },
  },
  ...(status === undefined ? {} : { status }),
});

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "db" },
  spec: { replicas: 3, version: "3.6.15", repository: "r", storage: { size: "1Gi" } },
  status: { clusterID: "cafe" },
};

const member = (name: string, o: Partial<ObservedMember> = {}): ObservedMember => ({
  id: `id-${name}`,
  name,
  peerURLs: [],
  isLearner: false,
  started: true,
  healthy: true,
  leader: false,
  version: "3.6.15",
  raftIndex: 100,
  ...o,
});
const members = [member("demo-a", { leader: true }), member("demo-b"), member("demo-c")];

const input = (o: Partial<BackupInput> = {}): BackupInput => ({
  backup: backup(),
  cluster,
  members,
  now: NOW,
  ...o,
});

const running: EtcdBackupStatus = {
  phase: "Running",
  startTime: "2026-11-29T11:59:00Z",
  etcdVersion: "3.6.15",
};
const succeededJob = { succeeded: true, member: "demo-b", completionTime: new Date("2026-11-29T11:59:40Z") };
const results = {
  upload: { location: "uploader-view:/scratch/elsewhere", size: 28704, sha256: SHA },
  snapshot: { hash: 1, revision: 42, totalKey: 3, totalSize: 28672, version: "3.6.0" },
};

type Case = [string, BackupInput, Partial<BackupPlan> & { phase?: string; degraded?: string }];

const cases: Case[] = [
  [
    "new backup: a Job on a follower, with the cluster ID and member version recorded",
    input(),
    {
      action: { type: "CreateJob", member: "demo-b" },
      status: {
        phase: "Running",
        jobName: "b1",
        member: "demo-b",
        startTime: NOW.toISOString(),
        etcdVersion: "3.6.15",
        clusterID: "cafe",
      },
    },
  ],
  [
    "cluster missing: Pending, Degraded naming spec.clusterName",
    input({ cluster: undefined }),
    { phase: "Pending", degraded: "ClusterNotFound" },
  ],
  [
    "claim missing: Pending, Degraded naming the claim",
    input({ backup: backup(undefined, true) }),
    { phase: "Pending", degraded: "ClaimNotFound" },
  ],
  [
    "a claim holding the cluster's member data: Failed, never written to",
    input({ backup: backup(undefined, true), claim: { etcdCluster: "demo" } }),
    { phase: "Failed", degraded: "ClaimOwnedByCluster" },
  ],
  [
    "a claim of its own: the Job is created",
    input({ backup: backup(undefined, true), claim: {} }),
    { action: { type: "CreateJob", member: "demo-b" } },
  ],
  [
    "no member answers: Pending, waiting, not degraded",
    input({ members: undefined }),
    { phase: "Pending", requeueAfter: 10_000, degraded: "" },
  ],
  [
    "no member fit (only learners and a lagging one): Pending with the reasons",
    input({
      members: [member("demo-a", { leader: true, healthy: false }), member("demo-x", { isLearner: true })],
    }),
    { phase: "Pending", requeueAfter: 10_000 },
  ],
  [
    "Job running: Running, the start time kept",
    input({ backup: backup(running), job: { succeeded: false, member: "demo-b" } }),
    { status: { phase: "Running", jobName: "b1", member: "demo-b" } },
  ],
  [
    "Job running, first seen (status lost): the Job's start time is taken",
    input({ job: { succeeded: false, member: "demo-c", startTime: new Date("2026-11-29T11:58:00Z") } }),
    { status: { phase: "Running", jobName: "b1", member: "demo-c", startTime: "2026-11-29T11:58:00.000Z" } },
  ],
  [
    "Job succeeded, results not read yet: still Running, look again",
    input({ backup: backup(running), job: succeededJob }),
    { status: { phase: "Running", jobName: "b1" }, requeueAfter: 10_000 },
  ],
  [
    "Job succeeded with results: Succeeded with revision, size, sha256, location and version",
    input({ backup: backup(running), job: succeededJob, results }),
    {
      status: {
        phase: "Succeeded",
        revision: 42,
        size: 28704,
        sha256: SHA,
        location: "s3://bk/db/demo/b1.db",
        etcdVersion: "3.6.15",
        completionTime: "2026-11-29T11:59:40.000Z",
      },
      event: expect.objectContaining({ type: "Normal", reason: "BackupSucceeded" }),
    },
  ],
  [
    "Job succeeded but no upload result: Failed, pointing at the upload container's log",
    input({ backup: backup(running), job: succeededJob, results: { snapshot: results.snapshot } }),
    { phase: "Failed", degraded: "ResultUnreadable" },
  ],
  [
    "Job succeeded but no verify line: Failed",
    input({ backup: backup(running), job: succeededJob, results: { upload: results.upload } }),
    { phase: "Failed", degraded: "ResultUnreadable" },
  ],
  [
    "Job failed (deadline): Failed with the Job's reason",
    input({
      backup: backup(running),
      job: {
        succeeded: false,
        failed: { reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" },
      },
    }),
    { phase: "Failed", degraded: "JobDeadlineExceeded" },
  ],
  [
    "Succeeded: nothing more, ever",
    input({ backup: backup({ phase: "Succeeded" }), job: undefined }),
    { status: {}, conditions: [] },
  ],
  [
    "Failed: nothing more, not even a new Job",
    input({ backup: backup({ phase: "Failed" }) }),
    { status: {}, conditions: [] },
  ],
];

describe("planBackup", () => {
  it.each(cases)("%s", (_name, given, { phase, degraded, ...expected }) => {
    const plan = planBackup(given);
    expect(plan).toMatchObject(expected);
    if (phase !== undefined) expect(plan.status.phase).toBe(phase);
    if (degraded !== undefined) {
      const d = plan.conditions.find((c) => c.type === "Degraded");
      expect(d?.status).toBe(degraded === "" ? "False" : "True");
      if (degraded !== "") expect(d?.reason).toBe(degraded);
    }
    if (plan.action === undefined || phase !== undefined) expect(plan.action).toBeUndefined();
  });

  it.each([
    ["no member answers", { members: undefined }, "no member of EtcdCluster demo answers"],
    ["the cluster does not exist", { cluster: undefined }, "EtcdCluster db/demo does not exist"],
  ])("fails with DeadlineExceeded once a backup that cannot start (%s) is past its deadline", (_, o, why) => {
    const created = (ageS: number, deadline?: number): EtcdBackup => ({
      ...backup({ phase: "Pending" }),
      metadata: {
        name: "b1",
        namespace: "db",
        creationTimestamp: new Date(NOW.getTime() - ageS * 1000).toISOString(),
      },
      spec: { ...backup().spec, ...(deadline === undefined ? {} : { activeDeadlineSeconds: deadline }) },
    });
    // Within the default deadline (1 h): still waiting.
    expect(planBackup(input({ ...o, backup: created(3599) })).status.phase).toBe("Pending");
    const late = planBackup(input({ ...o, backup: created(3601) }));
    expect(late.status.phase).toBe("Failed");
    expect(late.event).toMatchObject({ type: "Warning", reason: "DeadlineExceeded" });
    expect(late.event?.message).toContain(why);
    expect(late.conditions.find((c) => c.type === "Degraded")?.reason).toBe("DeadlineExceeded");
    // spec.activeDeadlineSeconds sets it.
    expect(planBackup(input({ ...o, backup: created(120, 60) })).status.phase).toBe("Failed");
  });

  it("names the field and what to do in a Degraded message", () => {
    const plan = planBackup(input({ cluster: undefined }));
    expect(plan.conditions.find((c) => c.type === "Degraded")?.message).toMatch(
      /^spec.clusterName: EtcdCluster db\/demo does not exist: create it/,
    );
  });

  it("records a Pending event once per reason, not on every reconcile", () => {
    const first = planBackup(input({ cluster: undefined }));
    expect(first.event?.reason).toBe("ClusterNotFound");
    const again = planBackup(
      input({
        cluster: undefined,
        backup: backup({
          phase: "Pending",
          conditions: first.conditions.map((c) => ({ ...c, lastTransitionTime: NOW.toISOString() })),
        }),
      }),
    );
    expect(again.event).toBeUndefined();
  });

  it("marks a succeeded backup Available, a running one Progressing", () => {
    const ok = planBackup(input({ backup: backup(running), job: succeededJob, results }));
    expect(ok.conditions.find((c) => c.type === "Available")?.status).toBe("True");
    const run = planBackup(input());
    expect(run.conditions.find((c) => c.type === "Progressing")?.status).toBe("True");
    expect(run.conditions.find((c) => c.type === "Available")?.status).toBe("False");
  });
});
