// Data claims and spec.storage.whenDeleted (issue 28, item 14): by default a claim carries no owner reference, so
// deleting the VaultCluster (kubectl, a GitOps prune, a Helm uninstall) never garbage-collects the raft data; a
// VaultCluster created again under the same name takes the kept claims back. Against core's in-memory API server.
import { PersistentVolumeClaim, Pod, setControllerReference } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { CLAIM_UID_LABEL } from "../desired/names.ts";
import { INIT_STARTED_ANNOTATION } from "../desired/objects.ts";
import { cluster, keysSecretWithToken, podObjects, reconcile } from "./test-fixture.ts";

const withPolicy = (whenDeleted: "Retain" | "Delete", uid = "u1"): VaultCluster => {
  const c = cluster();
  c.metadata.uid = uid;
  c.spec.storage = { ...c.spec.storage, whenDeleted };
  return c;
};

describe("data claims and storage.whenDeleted", () => {
  it("a new claim has no owner reference by default, only the uid it was made for", async () => {
    const run = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [cluster()],
      request: cluster(),
    });
    run.expectNoError();
    const claim = run.get(PersistentVolumeClaim, "data-demo-0", "ns");
    expect(claim?.metadata.ownerReferences).toBeUndefined();
    expect(claim?.metadata.labels?.[CLAIM_UID_LABEL]).toBe("u1");
  });

  it("with whenDeleted: Delete the claim is owned, so it goes with the cluster", async () => {
    const c = withPolicy("Delete");
    const run = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [c],
      request: c,
    });
    run.expectNoError();
    expect(run.get(PersistentVolumeClaim, "data-demo-0", "ns")?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "VaultCluster", uid: "u1", controller: true }),
    ]);
  });

  it("a claim made owned (before the field, or under Delete) is released once under Retain; then nothing is written", async () => {
    const c = cluster();
    const [pod, claim] = podObjects(c, 0);
    setControllerReference(c, VaultClusterKind, claim!);
    delete claim!.metadata.labels?.[CLAIM_UID_LABEL];
    const first = await reconcileOnce(reconcile([], { initialized: true, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [c, pod!, claim!, keysSecretWithToken()],
      request: c,
    });
    first.expectNoError();
    const released = first.get(PersistentVolumeClaim, "data-demo-0", "ns");
    expect(released?.metadata.ownerReferences ?? []).toEqual([]);
    expect(released?.metadata.labels?.[CLAIM_UID_LABEL]).toBe("u1");
    const again = await reconcileOnce(reconcile([], { initialized: true, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: first.objects,
      request: c,
    });
    again.expectNoError();
    expect(again.writes.filter((w) => w.kind === "PersistentVolumeClaim")).toEqual([]);
  });

  it("a policy changed to Delete gives the kept claim its owner reference", async () => {
    const c = withPolicy("Delete");
    const [pod, claim] = podObjects(cluster(), 0); // made under Retain
    const run = await reconcileOnce(reconcile([], { initialized: true, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [c, pod!, claim!, keysSecretWithToken()],
      request: c,
    });
    run.expectNoError();
    expect(run.get(PersistentVolumeClaim, "data-demo-0", "ns")?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ uid: "u1", controller: true }),
    ]);
  });

  it("a VaultCluster created again under the same name takes its kept claim back: its pod on it, no second init", async () => {
    // The earlier VaultCluster (uid u1) was deleted: its claim and keys Secret stayed, its pod went.
    const [, claim] = podObjects(cluster(), 0);
    claim!.metadata.annotations = { [INIT_STARTED_ANNOTATION]: "2026-12-01T00:00:00.000Z" };
    const again = withPolicy("Retain", "u2");
    const calls: string[] = [];
    const run = await reconcileOnce(reconcile(calls, { initialized: true, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [again, claim!, keysSecretWithToken()],
      request: again,
    });
    run.expectNoError();
    expect(run.get(Pod, "demo-0", "ns")).toBeDefined();
    const taken = run.get(PersistentVolumeClaim, "data-demo-0", "ns");
    expect(taken?.metadata.labels?.[CLAIM_UID_LABEL]).toBe("u2");
    expect(taken?.metadata.annotations?.[INIT_STARTED_ANNOTATION]).toBe("2026-12-01T00:00:00.000Z");
    expect(run.writes.filter((w) => w.kind === "PersistentVolumeClaim" && w.verb === "create")).toEqual([]);
    expect(calls.filter((c) => c.startsWith("init"))).toEqual([]);
  });

  it("created again without its keys Secret: never a second init, Degraded InitResponseLost", async () => {
    const [, claim] = podObjects(cluster(), 0);
    claim!.metadata.annotations = { [INIT_STARTED_ANNOTATION]: "2026-12-01T00:00:00.000Z" };
    const again = withPolicy("Retain", "u2");
    const [pod] = podObjects(again, 0); // made by the new cluster on the kept claim; its Vault is initialized
    const calls: string[] = [];
    const run = await reconcileOnce(reconcile(calls, { initialized: true, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [again, pod!, claim!],
      request: again,
    });
    run.expectNoError();
    expect(calls.filter((c) => c.startsWith("init"))).toEqual([]);
    const degraded = run
      .get(VaultClusterKind, "demo", "ns")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "InitResponseLost" });
  });

  it("never takes a claim another VaultCluster controls", async () => {
    const other = cluster();
    other.metadata.uid = "u-other";
    const [, claim] = podObjects(other, 0);
    setControllerReference(other, VaultClusterKind, claim!);
    const c = withPolicy("Retain", "u2");
    const run = await reconcileOnce(reconcile([], { initialized: false, sealed: true }), {
      kinds: [VaultClusterKind],
      objects: [c, claim!],
      request: c,
    });
    expect(run.get(PersistentVolumeClaim, "data-demo-0", "ns")?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ uid: "u-other" }),
    ]);
    expect(run.get(PersistentVolumeClaim, "data-demo-0", "ns")?.metadata.labels?.[CLAIM_UID_LABEL]).toBe(
      "u-other",
    );
  });
});
