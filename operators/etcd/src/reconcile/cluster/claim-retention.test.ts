// Members' claims and spec.storage.whenDeleted: by default a claim carries no owner reference (only the uid of the
// EtcdCluster it was made for), so deleting the EtcdCluster never garbage-collects a member's data; a claim kept
// from an earlier EtcdCluster of the same name is never taken as a member's. Against core's in-memory API server.
import { type KubeObject, PersistentVolumeClaim, setControllerReference } from "@capstan/core";
import { describe, expect, it } from "vitest";
import { EtcdClusterKind } from "../../api/etcd-cluster.ts";
import { memberDataClaim } from "../../desired/cluster-objects.ts";
import { CLAIM_UID_LABEL, dataClaimName } from "../../desired/names.ts";
import { MEMBERS, reconcileCluster, runningMembers, testCluster } from "../test-fixture.ts";

const claims = (objects: readonly KubeObject[]) => objects.filter((o) => o.kind === "PersistentVolumeClaim");

describe("members' claims and storage.whenDeleted", () => {
  it("a member's claim has no owner reference by default, only the uid it was made for; Delete owns it", () => {
    const kept = memberDataClaim(testCluster(), "demo-a")!;
    expect(kept.metadata.ownerReferences).toBeUndefined();
    expect(kept.metadata.labels?.[CLAIM_UID_LABEL]).toBe("u1");
    const owned = memberDataClaim(
      testCluster({ storage: { size: "1Gi", whenDeleted: "Delete" } }),
      "demo-a",
    )!;
    expect(owned.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "EtcdCluster", uid: "u1", controller: true }),
    ]);
  });

  it("claims made owned (by an older operator) are released once under Retain; then nothing is written", async () => {
    const cluster = testCluster();
    const objects = runningMembers(cluster).map((o) => {
      if (o.kind !== "PersistentVolumeClaim") return o;
      const c = structuredClone(o);
      delete c.metadata.labels?.[CLAIM_UID_LABEL];
      setControllerReference(cluster, EtcdClusterKind, c);
      return c;
    });
    const first = await reconcileCluster(cluster, objects);
    first.expectNoError();
    for (const m of MEMBERS) {
      const c = first.get(PersistentVolumeClaim, dataClaimName(m), "ns");
      expect(c?.metadata.ownerReferences ?? [], m).toEqual([]);
      expect(c?.metadata.labels?.[CLAIM_UID_LABEL], m).toBe("u1");
    }
    const again = await reconcileCluster(
      cluster,
      first.objects.filter((o) => o.kind !== "EtcdCluster"),
    );
    again.expectNoError();
    expect(again.writes.filter((w) => w.kind === "PersistentVolumeClaim")).toEqual([]);
  });

  it("a paused cluster's claims are left as they are", async () => {
    const cluster = testCluster({ paused: true, storage: { size: "1Gi", whenDeleted: "Delete" } });
    const run = await reconcileCluster(cluster, runningMembers(testCluster()));
    run.expectNoError();
    expect(run.writes.filter((w) => w.kind === "PersistentVolumeClaim")).toEqual([]);
  });

  it("whenDeleted changed to Delete gives the members' claims their owner reference", async () => {
    const cluster = testCluster({ storage: { size: "1Gi", whenDeleted: "Delete" } });
    const run = await reconcileCluster(cluster, runningMembers(testCluster()));
    run.expectNoError();
    for (const c of claims(run.objects))
      expect(c.metadata.ownerReferences, c.metadata.name).toEqual([expect.objectContaining({ uid: "u1" })]);
  });

  it("a claim kept from an earlier EtcdCluster of the same name is not a member's: left as it is, not counted", async () => {
    // The earlier cluster (uid u0) had member demo-old; the new one (u1) is bootstrapped with three members.
    const earlier = testCluster({}, { uid: "u0" });
    const old = memberDataClaim(earlier, "demo-old")!;
    const cluster = testCluster();
    const run = await reconcileCluster(cluster, [...runningMembers(cluster), old]);
    run.expectNoError();
    expect(run.get(PersistentVolumeClaim, dataClaimName("demo-old"), "ns")).toEqual(
      expect.objectContaining({ metadata: expect.objectContaining({ labels: old.metadata.labels }) }),
    );
    expect(run.writes.filter((w) => w.kind === "PersistentVolumeClaim")).toEqual([]);
  });
});
