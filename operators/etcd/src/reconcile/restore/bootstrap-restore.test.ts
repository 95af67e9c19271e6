// The restore's I/O: StartRestore makes the seed's claim (marked pending) and the Job, and only what is missing;
// FinishRestore marks the claim; status.restore is built from the claim's mark and kept once set.
import type { Client, PersistentVolumeClaimObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdBackup } from "../../api/backup.ts";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { SEED_CLAIM_ANNOTATION } from "../../desired/names.ts";
import { RESTORE_CLAIM_ANNOTATION, RESTORE_TIME_ANNOTATION } from "../../desired/restore-job.ts";
import type { ActContext } from "../cluster/act.ts";
import type { Observation } from "../cluster/observe.ts";
import { recordingClient } from "../test-fixture.ts";
import {
  finishRestore,
  type RestoreObservation,
  restoreStatusOf,
  startRestore,
} from "./bootstrap-restore.ts";

const cluster: EtcdCluster = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1", generation: 1 },
  spec: {
    replicas: 3,
    version: "3.6.15",
    repository: "repo/etcd",
    storage: { size: "1Gi" },
    bootstrap: { restore: { backup: { name: "nightly" }, bumpRevision: 1000 } },
  },
};

const backup: EtcdBackup = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdBackup",
  metadata: { name: "nightly", namespace: "ns" },
  spec: { clusterName: "old", destination: { pvc: { claimName: "snaps" } } },
  status: { phase: "Succeeded", location: "pvc://snaps/ns/old/nightly.db", revision: 77 },
};

const restore: RestoreObservation = {
  observed: { claims: [], operatorImage: true, backup: { phase: "Succeeded" } },
  backup,
  from: { kind: "pvc", claimName: "snaps", path: "ns/old/nightly.db" },
  operatorImage: "op:1",
};

const claim = (name: string, annotations: Record<string, string>): PersistentVolumeClaimObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: `${name}-data`, namespace: "ns", annotations },
});

const ctxWith = (client: Client, claims: Map<string, PersistentVolumeClaimObject>): ActContext => ({
  client,
  cluster,
  obs: { claims, pods: new Map(), endpoints: [] } as unknown as Observation,
});

describe("startRestore", () => {
  it("makes the seed's claim, marked seed and pending, then the Job mounting it", async () => {
    const { client, calls } = recordingClient();
    expect(await startRestore(ctxWith(client, new Map()), restore, "demo-x")).toEqual({ done: true });
    expect(calls.map((c) => `${c.verb} ${c.kind} ${c.name}`)).toEqual([
      "create PersistentVolumeClaim demo-x-data",
      "create Job demo-restore",
    ]);
    const annotations = (calls[0]?.body as PersistentVolumeClaimObject | undefined)?.metadata.annotations;
    expect(annotations).toEqual({ [SEED_CLAIM_ANNOTATION]: "true", [RESTORE_CLAIM_ANNOTATION]: "pending" });
  });

  it("makes only the Job when the claim exists (the operator stopped between the two)", async () => {
    const { client, calls } = recordingClient();
    const claims = new Map([["demo-x", claim("demo-x", { [RESTORE_CLAIM_ANNOTATION]: "pending" })]]);
    await startRestore(ctxWith(client, claims), restore, "demo-x");
    expect(calls.map((c) => `${c.verb} ${c.kind}`)).toEqual(["create Job"]);
  });

  it("waits when the source is not known", async () => {
    const { client, calls } = recordingClient();
    const { from: _from, ...unknown } = restore;
    expect(await startRestore(ctxWith(client, new Map()), unknown, "demo-x")).toMatchObject({ done: false });
    expect(calls).toEqual([]);
  });
});

describe("finishRestore", () => {
  it("marks the claim done with the time, by a merge patch", async () => {
    const { client, calls } = recordingClient();
    await finishRestore(ctxWith(client, new Map()), "demo-x", new Date("2026-12-02T06:00:00Z"));
    expect(calls).toEqual([
      {
        verb: "patch:merge",
        kind: "PersistentVolumeClaim",
        name: "demo-x-data",
        body: {
          metadata: {
            annotations: {
              [RESTORE_CLAIM_ANNOTATION]: "done",
              [RESTORE_TIME_ANNOTATION]: "2026-12-02T06:00:00.000Z",
            },
          },
        },
      },
    ]);
  });
});

describe("restoreStatusOf", () => {
  const done = new Map([
    ["demo-x", claim("demo-x", { [RESTORE_CLAIM_ANNOTATION]: "done", [RESTORE_TIME_ANNOTATION]: "T1" })],
  ]);
  const observedDone: RestoreObservation = {
    ...restore,
    observed: { ...restore.observed, claims: [{ name: "demo-x", state: "done" }] },
  };

  it("is unset while the restore has not finished", () => {
    expect(restoreStatusOf(cluster, undefined, restore, new Map(), undefined)).toBeUndefined();
  });
  it("reports source, revisions and time once the claim is marked, the cluster ID once known", () => {
    expect(restoreStatusOf(cluster, undefined, observedDone, done, undefined)).toEqual({
      source: "backup/nightly",
      snapshotRevision: 77,
      revision: 1077,
      bumpRevision: 1000,
      completionTime: "T1",
    });
    expect(restoreStatusOf(cluster, undefined, observedDone, done, "c1")?.clusterID).toBe("c1");
  });
  it("keeps what it recorded when the backup is gone", () => {
    const before = { source: "backup/nightly", snapshotRevision: 77, revision: 1077, bumpRevision: 1000 };
    const { backup: _b, ...gone } = observedDone;
    expect(restoreStatusOf(cluster, before, gone, done, "c1")).toEqual({
      ...before,
      completionTime: "T1",
      clusterID: "c1",
    });
  });
  it("without a restore in the spec: unchanged", () => {
    const plain = { ...cluster, spec: { ...cluster.spec, bootstrap: {} } };
    expect(restoreStatusOf(plain, undefined, undefined, done, "c1")).toBeUndefined();
  });
});
