// Table tests of the restore planner, through planNext (the hook plan.ts calls while no member answers), and a
// small simulation of a restore interrupted at every step.
import { describe, expect, it } from "vitest";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import type { EtcdBootstrapRestore } from "../api/restore-source.ts";
import { type Observed, planNext, type Step } from "./plan.ts";
import type { ObservedRestore } from "./restore.ts";

const NOW = new Date("2026-12-02T06:00:00Z");
const FRESH = "demo-fresh";
const SHA = "a".repeat(64);
const OTHER_SHA = "b".repeat(64);

const spec = (restore?: EtcdBootstrapRestore, o: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec => ({
  replicas: 3,
  version: "3.6.15",
  repository: "gcr.io/etcd-development/etcd",
  storage: { size: "1Gi" },
  ...(restore === undefined ? {} : { bootstrap: { restore } }),
  ...o,
});

const fromBackup: EtcdBootstrapRestore = { backup: { name: "nightly" } };
const fromS3: EtcdBootstrapRestore = {
  s3: { bucket: "snaps", key: "ns/demo/x.db", credentialsSecret: { name: "s3" } },
};
const succeeded = { phase: "Succeeded", etcdVersion: "3.6.15", sha256: SHA, revision: 42 };

const unreachable = { reachable: false as const, error: "no member pod has an IP address" };

/** A cluster never bootstrapped, no member answering, with `restore` observed. */
const fresh = (restore: Partial<ObservedRestore>, o: Partial<Observed> = {}): Observed => ({
  etcd: unreachable,
  pods: [],
  volumes: [],
  bootstrapped: false,
  restore: { claims: [], operatorImage: true, ...restore },
  ...o,
});

type Case = [string, EtcdClusterSpec, Observed, Partial<Step>];

const cases: Case[] = [
  ["no restore asked: an empty seed as before", spec(), fresh({}), { type: "CreateSeed", name: FRESH }],
  [
    "backup Succeeded, nothing made yet: start the restore into a fresh seed",
    spec(fromBackup),
    fresh({ backup: succeeded }),
    { type: "StartRestore", name: FRESH },
  ],
  ["s3 source: no backup to wait for", spec(fromS3), fresh({}), { type: "StartRestore", name: FRESH }],
  [
    "backup missing: Degraded naming the field, nothing made",
    spec(fromBackup),
    fresh({}),
    { type: "Degraded", reason: "RestoreBackupMissing", field: "spec.bootstrap.restore.backup.name" },
  ],
  [
    "backup still running: Degraded, waits",
    spec(fromBackup),
    fresh({ backup: { phase: "Running" } }),
    { type: "Degraded", reason: "RestoreBackupNotSucceeded" },
  ],
  [
    "backup failed: Degraded",
    spec(fromBackup),
    fresh({ backup: { phase: "Failed" } }),
    { type: "Degraded", reason: "RestoreBackupNotSucceeded" },
  ],
  [
    "expected sha256 differs from the backup's: Degraded naming sha256",
    spec({ ...fromBackup, sha256: OTHER_SHA }),
    fresh({ backup: succeeded }),
    { type: "Degraded", reason: "RestoreChecksumMismatch", field: "spec.bootstrap.restore.sha256" },
  ],
  [
    "expected sha256 equal to the backup's: restore",
    spec({ ...fromBackup, sha256: SHA }),
    fresh({ backup: succeeded }),
    { type: "StartRestore", name: FRESH },
  ],
  [
    "snapshot from a newer minor than spec.version: Degraded naming spec.version",
    spec(fromBackup, { version: "3.5.21" }),
    fresh({ backup: succeeded }),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "snapshot from an older patch of the same minor: restore",
    spec(fromBackup, { version: "3.6.16" }),
    fresh({ backup: succeeded }),
    { type: "StartRestore", name: FRESH },
  ],
  [
    "snapshot from 3.5.32 into 3.6: restore (a supported upgrade)",
    spec(fromBackup),
    fresh({ backup: { ...succeeded, etcdVersion: "3.5.32" } }),
    { type: "StartRestore", name: FRESH },
  ],
  [
    "snapshot two minors back (3.4 into 3.6): Degraded",
    spec(fromBackup),
    fresh({ backup: { ...succeeded, etcdVersion: "3.4.30" } }),
    { type: "Degraded", reason: "UnsupportedVersionChange" },
  ],
  [
    "source without a readable location: Degraded",
    spec(fromBackup),
    fresh({ backup: succeeded, sourceError: "EtcdBackup nightly: status.location is empty" }),
    { type: "Degraded", reason: "RestoreSourceInvalid" },
  ],
  [
    "operator without its own image: Degraded",
    spec(fromS3),
    fresh({ operatorImage: false }),
    { type: "Degraded", reason: "RestoreUnavailable" },
  ],
  [
    "operator stopped after making the claim: the Job is made for that claim, no second seed",
    spec(fromBackup),
    fresh({ backup: succeeded, claims: [{ name: "demo-x", state: "pending" }] }, { volumes: ["demo-x"] }),
    { type: "StartRestore", name: "demo-x" },
  ],
  [
    "Job running: wait",
    spec(fromBackup),
    fresh(
      { backup: succeeded, claims: [{ name: "demo-x", state: "pending" }], job: { succeeded: false } },
      { volumes: ["demo-x"] },
    ),
    { type: "Wait", reason: "Restoring" },
  ],
  [
    "Job failed after its retries: Degraded with its message, the claim kept",
    spec(fromBackup),
    fresh(
      {
        backup: succeeded,
        claims: [{ name: "demo-x", state: "pending" }],
        job: { succeeded: false, failed: { reason: "BackoffLimitExceeded", message: "sha256 differs" } },
      },
      { volumes: ["demo-x"] },
    ),
    { type: "Degraded", reason: "RestoreFailed" },
  ],
  [
    "Job succeeded: finish (mark the claim restored)",
    spec(fromBackup),
    fresh(
      { backup: succeeded, claims: [{ name: "demo-x", state: "pending" }], job: { succeeded: true } },
      { volumes: ["demo-x"] },
    ),
    { type: "FinishRestore", name: "demo-x" },
  ],
  [
    "the seed's claim deleted after its Job succeeded: no fresh claim is made and the old Job is not trusted",
    spec(fromBackup),
    fresh({ backup: succeeded, claims: [], job: { succeeded: true, seed: "demo-x" } }),
    { type: "Degraded", reason: "RestoreJobStale", field: "spec.bootstrap.restore" },
  ],
  [
    "a pending claim of another seed than the succeeded Job wrote into: never marked restored",
    spec(fromBackup),
    fresh(
      {
        backup: succeeded,
        claims: [{ name: "demo-y", state: "pending" }],
        job: { succeeded: true, seed: "demo-x" },
      },
      { volumes: ["demo-y"] },
    ),
    { type: "Degraded", reason: "RestoreJobStale" },
  ],
  [
    "a running Job of another seed: not waited for as this seed's restore",
    spec(fromBackup),
    fresh(
      {
        backup: succeeded,
        claims: [{ name: "demo-y", state: "pending" }],
        job: { succeeded: false, seed: "demo-x" },
      },
      { volumes: ["demo-y"] },
    ),
    { type: "Degraded", reason: "RestoreJobStale" },
  ],
  [
    "Job succeeded into this seed's claim: finish",
    spec(fromBackup),
    fresh(
      {
        backup: succeeded,
        claims: [{ name: "demo-x", state: "pending" }],
        job: { succeeded: true, seed: "demo-x" },
      },
      { volumes: ["demo-x"] },
    ),
    { type: "FinishRestore", name: "demo-x" },
  ],
  [
    "claim restored, no pod: the seed starts on it",
    spec(fromBackup),
    fresh(
      { backup: succeeded, claims: [{ name: "demo-x", state: "done" }], job: { succeeded: true } },
      { volumes: ["demo-x"], seedVolumes: ["demo-x"] },
    ),
    { type: "CreateSeed", name: "demo-x" },
  ],
  [
    "claim restored and the backup since deleted: the seed still starts (the data is on the claim)",
    spec(fromBackup),
    fresh({ claims: [{ name: "demo-x", state: "done" }] }, { volumes: ["demo-x"], seedVolumes: ["demo-x"] }),
    { type: "CreateSeed", name: "demo-x" },
  ],
  [
    "seed pod starting on restored data: wait",
    spec(fromBackup),
    fresh(
      { backup: succeeded, claims: [{ name: "demo-x", state: "done" }] },
      { volumes: ["demo-x"], seedVolumes: ["demo-x"], pods: [{ name: "demo-x", ready: false }] },
    ),
    { type: "Wait", reason: "SeedStarting" },
  ],
  [
    "status wiped after the restored cluster grew: members restarted on their data, never restored again",
    spec(fromBackup),
    fresh(
      { backup: succeeded, claims: [{ name: "demo-x", state: "done" }] },
      { volumes: ["demo-x", "demo-y", "demo-z"], seedVolumes: ["demo-x"] },
    ),
    { type: "StartMemberPod", name: "demo-x", reason: "PodMissing" },
  ],
  [
    "status wiped, claims without a restore mark (data of a running cluster): restarted, never restored over",
    spec(fromBackup),
    fresh({ backup: succeeded }, { volumes: ["demo-a", "demo-b"] }),
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "a pending claim next to member data: the data wins, no restore",
    spec(fromBackup),
    fresh(
      { backup: succeeded, claims: [{ name: "demo-x", state: "pending" }], job: { succeeded: true } },
      { volumes: ["demo-a", "demo-x"] },
    ),
    { type: "StartMemberPod", name: "demo-a", reason: "PodMissing" },
  ],
  [
    "a member pod without a claim exists: no restore, wait for it",
    spec(fromBackup),
    fresh({ backup: succeeded }, { pods: [{ name: "demo-a", ready: false }] }),
    { type: "Wait", reason: "SeedStarting" },
  ],
  [
    "pods still terminating: wait before restoring",
    spec(fromBackup),
    fresh({ backup: succeeded }, { terminating: [{ name: "demo-old", since: NOW }] }),
    { type: "Wait", reason: "PodTerminating" },
  ],
  [
    "bootstrapped cluster that does not answer: quorum lost, never a restore",
    spec(fromBackup),
    fresh({ backup: succeeded }, { bootstrapped: true, knownClusterID: "abc" }),
    { type: "QuorumLost" },
  ],
];

describe("planNext with spec.bootstrap.restore", () => {
  it.each(cases)("%s", (_name, s, observed, want) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(want);
  });

  it("every restore step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });
});

/** The world a restore acts on: claims (with their mark), the Job, the seed pod, and whether etcd answers. */
class RestoreSim {
  claims = new Map<string, "pending" | "done">();
  job: "none" | "running" | "succeeded" = "none";
  pod = false;
  steps: Step[] = [];

  observe(): Observed {
    return {
      etcd: unreachable,
      pods: this.pod ? [...this.claims.keys()].map((name) => ({ name, ready: false })) : [],
      volumes: [...this.claims.keys()],
      seedVolumes: [...this.claims.keys()],
      bootstrapped: false,
      restore: {
        backup: succeeded,
        claims: [...this.claims].map(([name, state]) => ({ name, state })),
        ...(this.job === "none" ? {} : { job: { succeeded: this.job === "succeeded" } }),
        operatorImage: true,
      },
    };
  }

  /** One reconcile; `stopAfter` models the operator dying part way through a two-part step. */
  reconcile(freshName: string, stopAfterFirstWrite = false): Step {
    const step = planNext(spec(fromBackup), this.observe(), NOW, { freshName });
    this.steps.push(step);
    switch (step.type) {
      case "StartRestore":
        if (!this.claims.has(step.name)) {
          this.claims.set(step.name, "pending");
          if (stopAfterFirstWrite) break;
        }
        if (this.job === "none") this.job = "running";
        break;
      case "FinishRestore":
        this.claims.set(step.name, "done");
        break;
      case "CreateSeed":
        this.pod = true;
        break;
    }
    return step;
  }
}

describe("restore, interrupted at every step", () => {
  it("reaches a seed on restored data with one claim, one Job, whatever step the operator died in", () => {
    for (let dieAt = 0; dieAt < 6; dieAt++) {
      const sim = new RestoreSim();
      for (let i = 0; i < 10 && !sim.pod; i++) {
        // Each reconcile picks a new fresh name, as the controller does.
        sim.reconcile(`demo-n${i}`, i === dieAt);
        if (sim.job === "running" && i >= dieAt) sim.job = "succeeded";
      }
      expect(sim.pod, `died at reconcile ${dieAt}: ${sim.steps.map((s) => s.type).join(", ")}`).toBe(true);
      expect([...sim.claims.values()]).toEqual(["done"]);
      expect(sim.steps.filter((s) => s.type === "CreateSeed")).toHaveLength(1);
    }
  });
});
