// The recovery's actions: every step's API calls, in order; a claim is never deleted; the survivor's phase is
// written on its claim before its pod is deleted; the flag is on the pod exactly when asked.
import type { Client, KubeObject, PodObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { type EtcdRestore, KEPT_BY_RESTORE_LABEL } from "../../api/etcd-restore.ts";
import { FORCE_NEW_CLUSTER_ANNOTATION } from "../../desired/member-pod.ts";
import { CLAIM_UID_LABEL } from "../../desired/names.ts";
import { RESTORE_CLAIM_ANNOTATION, RESTORE_REQUEST_ANNOTATION } from "../../desired/restore-job.ts";
import type { RecoveryStep } from "../../plan/recovery.ts";
import type { Observation } from "../cluster/observe.ts";
import {
  actRecovery,
  type BackupRecovery,
  RECOVERY_PHASE_ANNOTATION,
  recoveredStatus,
  recoveryJobName,
  recoverySeedName,
  SURVIVOR_ANNOTATION,
} from "./recovery.ts";

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1" },
  spec: { replicas: 3, version: "3.6.15", repository: "repo/etcd", storage: { size: "1Gi" } },
};
const restore: EtcdRestore = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdRestore",
  metadata: { name: "dr", namespace: "ns" },
  spec: { clusterName: "demo", from: "Survivor" },
  status: { phase: "Running", startTime: "T0", keptClaims: ["demo-a-data"] },
};
const NOW = new Date("2026-12-02T07:00:00Z");

function recordingClient() {
  const calls: string[] = [];
  const bodies: unknown[] = [];
  const client = {
    create: async (kind: { kind: string }, obj: KubeObject) => {
      calls.push(`create ${kind.kind} ${obj.metadata.name}`);
      bodies.push(obj);
      return obj;
    },
    delete: async (kind: { kind: string }, name: string) => {
      calls.push(`delete ${kind.kind} ${name}`);
    },
    patch: async (kind: { kind: string }, name: string, _ns: string, body: unknown, type: string) => {
      calls.push(`patch:${type} ${kind.kind} ${name}`);
      bodies.push(body);
      return {};
    },
  };
  return { client: client as unknown as Client, calls, bodies };
}

async function run(step: RecoveryStep, backup?: BackupRecovery, of: EtcdCluster = cluster) {
  const rec = recordingClient();
  const obs = { claims: new Map(), pods: new Map(), endpoints: [], members: [] } as unknown as Observation;
  const status = await actRecovery(step, { client: rec.client, cluster: of, obs }, restore, NOW, backup);
  return { ...rec, status };
}

const fromBackup: EtcdRestore = {
  ...restore,
  metadata: { name: "dr", namespace: "ns", uid: "r-uid-1" },
  spec: { clusterName: "demo", from: "Backup", source: { backup: { name: "nightly" }, bumpRevision: 1000 } },
  status: { phase: "Running", startTime: "T0" },
};
const SEED = recoverySeedName(cluster, fromBackup);
const backupRecovery = (): BackupRecovery => {
  const withSource: EtcdCluster = {
    ...cluster,
    spec: { ...cluster.spec, bootstrap: { restore: fromBackup.spec.source! } },
  };
  return {
    planned: {
      spec: withSource.spec,
      seed: SEED,
      source: "backup/nightly",
      restore: { claims: [], operatorImage: true, backup: { phase: "Succeeded", revision: 42 } },
    },
    cluster: withSource,
    observation: {
      observed: { claims: [], operatorImage: true },
      from: { kind: "pvc", claimName: "backups", path: "ns/demo/nightly.db", sha256: "a".repeat(64) },
      operatorImage: "op:1",
    },
    jobName: recoveryJobName(cluster, fromBackup),
    bumpRevision: 1000,
  };
};

describe("actRecovery", () => {
  it("MarkSurvivor annotates the survivor's claim and records the choice", async () => {
    const r = await run({ type: "MarkSurvivor", name: "demo-b", raftIndex: 9, revision: 5, message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-b-data"]);
    expect(r.bodies[0]).toEqual({ metadata: { annotations: { [SURVIVOR_ANNOTATION]: "dr" } } });
    expect(r.status).toMatchObject({ phase: "Running", survivor: "demo-b", raftIndex: 9, startTime: "T0" });
  });

  it("KeepClaim labels the claim and drops its owner and uid label, never deletes it", async () => {
    const r = await run({ type: "KeepClaim", name: "demo-c", message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-c-data"]);
    expect(r.bodies[0]).toEqual({
      metadata: { labels: { [KEPT_BY_RESTORE_LABEL]: "dr", [CLAIM_UID_LABEL]: null }, ownerReferences: null },
    });
    expect(r.status.keptClaims).toEqual(["demo-a-data", "demo-c-data"]);
  });

  it("GiveBackClaim (whenDeleted Retain, the default): the kept label removed, the uid label back, no owner; never a delete", async () => {
    const r = await run({ type: "GiveBackClaim", name: "demo-a", message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-a-data"]);
    expect(r.bodies[0]).toEqual({
      metadata: { labels: { [KEPT_BY_RESTORE_LABEL]: null, [CLAIM_UID_LABEL]: "u1" } },
    });
    expect(r.status).toMatchObject({ phase: "Running", keptClaims: [] });
  });

  it("GiveBackClaim (whenDeleted Delete): owned again by the cluster's controller reference, the uid label back", async () => {
    const deleting: EtcdCluster = {
      ...cluster,
      spec: { ...cluster.spec, storage: { size: "1Gi", whenDeleted: "Delete" } },
    };
    const r = await run({ type: "GiveBackClaim", name: "demo-a", message: "m" }, undefined, deleting);
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-a-data"]);
    expect(r.bodies[0]).toEqual({
      metadata: {
        labels: { [KEPT_BY_RESTORE_LABEL]: null, [CLAIM_UID_LABEL]: "u1" },
        ownerReferences: [
          {
            apiVersion: "etcd.capstan.dev/v1alpha1",
            kind: "EtcdCluster",
            name: "demo",
            uid: "u1",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    });
  });

  it("RemoveSurvivorMark removes only the mark; CallOff writes nothing but Cancelled", async () => {
    const r = await run({ type: "RemoveSurvivorMark", name: "demo-b", message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-b-data"]);
    expect(r.bodies[0]).toEqual({ metadata: { annotations: { [SURVIVOR_ANNOTATION]: null } } });
    const off = await run({ type: "CallOff", reason: "QuorumReturned", message: "quorum back" });
    expect(off.calls).toEqual([]);
    expect(off.status).toMatchObject({
      phase: "Cancelled",
      message: "quorum back",
      completionTime: NOW.toISOString(),
    });
  });

  it("StopMember deletes only the pod", async () => {
    expect((await run({ type: "StopMember", name: "demo-c", message: "m" })).calls).toEqual([
      "delete Pod demo-c",
    ]);
  });

  it.each([
    ["ForceNewCluster", "force"],
    ["RemoveForceFlag", "unforce"],
  ] as const)("%s writes the phase on the claim before deleting the pod", async (type, phase) => {
    const r = await run({ type, name: "demo-b", message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-b-data", "delete Pod demo-b"]);
    expect(r.bodies[0]).toEqual({ metadata: { annotations: { [RECOVERY_PHASE_ANNOTATION]: phase } } });
  });

  it.each([true, false])("StartSurvivor creates the pod with --force-new-cluster: %s", async (force) => {
    const r = await run({ type: "StartSurvivor", name: "demo-b", forceNewCluster: force, message: "m" });
    expect(r.calls).toEqual(["create Pod demo-b"]);
    const pod = r.bodies[0] as PodObject;
    const args = pod.spec?.containers.find((c) => c.name === "etcd")?.args ?? [];
    expect(args.includes("--force-new-cluster")).toBe(force);
    expect(args).toContain("--initial-cluster-state=existing");
    expect(pod.metadata.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION]).toBe(force ? "dr" : undefined);
  });

  it("Recovered records revision, cluster ID and completion; Refuse fails the request", async () => {
    const done = await run({
      type: "Recovered",
      survivor: "demo-b",
      revision: 41,
      clusterID: "c9",
      message: "m",
    });
    expect(done.calls).toEqual([]);
    expect(done.status).toMatchObject({ phase: "Succeeded", revision: 41, clusterID: "c9" });
    const refused = await run({ type: "Refuse", reason: "QuorumHealthy", message: "no" });
    expect(refused.status).toMatchObject({ phase: "Failed", message: "no" });
  });

  it("derives the seed and the Job from the EtcdRestore's uid: the same for every leader, another for another request", () => {
    expect(recoverySeedName(cluster, fromBackup)).toMatch(/^demo-[a-z0-9]{5}$/);
    expect(recoverySeedName(cluster, structuredClone(fromBackup))).toBe(SEED);
    const other = { ...fromBackup, metadata: { ...fromBackup.metadata, uid: "r-uid-2" } };
    expect(recoverySeedName(cluster, other)).not.toBe(SEED);
    expect(recoveryJobName(cluster, fromBackup)).toBe(`demo-dr-${SEED.slice("demo-".length)}`);
  });

  it("StartRestore from a backup: the seed's claim marked with the request, then its own Job with the bump", async () => {
    const r = await run({ type: "StartRestore", name: SEED, message: "m" }, backupRecovery());
    expect(r.calls).toEqual([
      `create PersistentVolumeClaim ${SEED}-data`,
      `create Job ${recoveryJobName(cluster, fromBackup)}`,
    ]);
    const claim = r.bodies[0] as KubeObject;
    expect(claim.metadata.annotations).toMatchObject({
      [RESTORE_REQUEST_ANNOTATION]: "dr",
      [RESTORE_CLAIM_ANNOTATION]: "pending",
    });
    expect(JSON.stringify(r.bodies[1])).toContain("--bump-revision=1000");
    expect(r.status).toMatchObject({
      phase: "Running",
      seed: SEED,
      source: "backup/nightly",
      snapshotRevision: 42,
    });
  });

  it("FinishRestore marks the seed's claim done; StartSeed creates the seed as a new cluster", async () => {
    const f = await run({ type: "FinishRestore", name: SEED, message: "m" }, backupRecovery());
    expect(f.calls).toEqual([`patch:merge PersistentVolumeClaim ${SEED}-data`]);
    expect(JSON.stringify(f.bodies[0])).toContain('"done"');
    const s = await run({ type: "StartSeed", name: SEED, message: "m" }, backupRecovery());
    expect(s.calls).toEqual([`create PersistentVolumeClaim ${SEED}-data`, `create Pod ${SEED}`]);
    const pod = s.bodies[1] as PodObject;
    expect(pod.spec?.containers.find((c) => c.name === "etcd")?.args).toContain(
      "--initial-cluster-state=new",
    );
  });

  it("Recovered from a backup records the seed, the snapshot's revision and the new cluster ID", async () => {
    const step = {
      type: "Recovered",
      seed: SEED,
      source: "backup/nightly",
      snapshotRevision: 42,
      revision: 1042,
      clusterID: "n1",
      message: "m",
    } as const;
    const done = await run(step, backupRecovery());
    expect(done.calls).toEqual([]);
    expect(done.status).toMatchObject({
      phase: "Succeeded",
      seed: SEED,
      snapshotRevision: 42,
      revision: 1042,
      clusterID: "n1",
      completionTime: NOW.toISOString(),
    });
    expect(done.status.survivor).toBeUndefined();
    const status = recoveredStatus(step, backupRecovery(), { source: "backup/old", clusterID: "old" }, NOW);
    expect(status).toEqual({
      source: "backup/nightly",
      snapshotRevision: 42,
      revision: 1042,
      bumpRevision: 1000,
      completionTime: NOW.toISOString(),
      clusterID: "n1",
    });
    expect(recoveredStatus(step, backupRecovery(), status, new Date(0))).toBe(status);
  });
});
