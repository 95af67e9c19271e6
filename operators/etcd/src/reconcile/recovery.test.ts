// The recovery's actions: every step's API calls, in order; a claim is never deleted; the survivor's phase is
// written on its claim before its pod is deleted; the flag is on the pod exactly when asked.
import type { Client, KubeObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdCluster } from "../api/etcd-cluster.ts";
import { type EtcdRestore, KEPT_BY_RESTORE_LABEL } from "../api/etcd-restore.ts";
import { FORCE_NEW_CLUSTER_ANNOTATION, type PodObject } from "../desired/member-pod.ts";
import type { RecoveryStep } from "../plan/recovery.ts";
import type { Observation } from "./observe.ts";
import { actRecovery, RECOVERY_PHASE_ANNOTATION, SURVIVOR_ANNOTATION } from "./recovery.ts";

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

async function run(step: RecoveryStep) {
  const rec = recordingClient();
  const obs = { claims: new Map(), pods: new Map(), endpoints: [] } as unknown as Observation;
  const status = await actRecovery(step, { client: rec.client, cluster, obs }, restore, NOW);
  return { ...rec, status };
}

describe("actRecovery", () => {
  it("MarkSurvivor annotates the survivor's claim and records the choice", async () => {
    const r = await run({ type: "MarkSurvivor", name: "demo-b", raftIndex: 9, revision: 5, message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-b-data"]);
    expect(r.bodies[0]).toEqual({ metadata: { annotations: { [SURVIVOR_ANNOTATION]: "dr" } } });
    expect(r.status).toMatchObject({ phase: "Running", survivor: "demo-b", raftIndex: 9, startTime: "T0" });
  });

  it("KeepClaim labels the claim and drops its owner, never deletes it", async () => {
    const r = await run({ type: "KeepClaim", name: "demo-c", message: "m" });
    expect(r.calls).toEqual(["patch:merge PersistentVolumeClaim demo-c-data"]);
    expect(r.bodies[0]).toEqual({
      metadata: { labels: { [KEPT_BY_RESTORE_LABEL]: "dr" }, ownerReferences: null },
    });
    expect(r.status.keptClaims).toEqual(["demo-a-data", "demo-c-data"]);
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
});
