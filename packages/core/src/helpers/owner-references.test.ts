import { describe, expect, it } from "vitest";
import { ConfigMap, defineKind, Namespace } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import {
  AlreadyOwnedError,
  getControllerOf,
  isControlledBy,
  ownerReferenceFor,
  setControllerReference,
  setOwnerReference,
} from "./owner-references.ts";

const EtcdCluster = defineKind({
  group: "etcd.capstan.dev",
  version: "v1alpha1",
  kind: "EtcdCluster",
  plural: "etcdclusters",
  namespaced: true,
});
const ClusterThing = defineKind({
  group: "example.capstan.dev",
  version: "v1",
  kind: "ClusterThing",
  plural: "clusterthings",
  namespaced: false,
});

const owner = (name = "main", uid = "uid-main", namespace = "ns"): KubeObject => ({
  metadata: { name, uid, namespace },
});
const child = (namespace = "ns"): KubeObject => ({
  kind: "ConfigMap",
  metadata: { name: "main-config", ...(namespace === "" ? {} : { namespace }) },
});

const controllerRef = {
  apiVersion: "etcd.capstan.dev/v1alpha1",
  kind: "EtcdCluster",
  name: "main",
  uid: "uid-main",
  controller: true,
  blockOwnerDeletion: true,
};

describe("ownerReferenceFor", () => {
  it("builds plain and controller references from the kind", () => {
    expect(ownerReferenceFor(owner(), EtcdCluster)).toEqual({
      apiVersion: "etcd.capstan.dev/v1alpha1",
      kind: "EtcdCluster",
      name: "main",
      uid: "uid-main",
    });
    expect(ownerReferenceFor(owner(), EtcdCluster, true)).toEqual(controllerRef);
  });

  it("requires a uid", () => {
    expect(() => ownerReferenceFor({ metadata: { name: "main", namespace: "ns" } }, EtcdCluster)).toThrow(
      /EtcdCluster ns\/main has no metadata.uid/,
    );
  });
});

describe("setControllerReference", () => {
  it("adds a controller reference next to existing ones", () => {
    const obj = child();
    const other = { apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "uid-x" };
    obj.metadata.ownerReferences = [other];
    setControllerReference(owner(), EtcdCluster, obj);
    expect(obj.metadata.ownerReferences).toEqual([other, controllerRef]);
    expect(getControllerOf(obj)).toEqual(controllerRef);
    expect(isControlledBy(obj, owner())).toBe(true);
    expect(isControlledBy(obj, owner("other", "uid-other"))).toBe(false);
  });

  it("is idempotent for the same owner, and updates the uid of a re-created owner", () => {
    const obj = child();
    setControllerReference(owner(), EtcdCluster, obj);
    setControllerReference(owner(), EtcdCluster, obj);
    expect(obj.metadata.ownerReferences).toEqual([controllerRef]);
    setControllerReference(owner("main", "uid-new"), EtcdCluster, obj, { blockOwnerDeletion: false });
    expect(obj.metadata.ownerReferences).toEqual([
      { ...controllerRef, uid: "uid-new", blockOwnerDeletion: false },
    ]);
  });

  it("throws AlreadyOwnedError naming both owners when another controller exists", () => {
    const obj = child();
    setControllerReference(owner(), EtcdCluster, obj);
    let err: unknown;
    try {
      setControllerReference(owner("rival", "uid-rival"), EtcdCluster, obj);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AlreadyOwnedError);
    expect((err as Error).message).toMatch(
      /ConfigMap ns\/main-config is already controlled by EtcdCluster main/,
    );
    expect((err as Error).message).toMatch(/EtcdCluster rival/);
    expect(obj.metadata.ownerReferences).toEqual([controllerRef]);
  });

  it("rejects a namespaced owner in another namespace", () => {
    expect(() => setControllerReference(owner("main", "uid-main", "other"), EtcdCluster, child())).toThrow(
      /cross-namespace owner references are not allowed: EtcdCluster other\/main cannot own ConfigMap ns\/main-config/,
    );
  });

  it("rejects a namespaced owner of a cluster-scoped object", () => {
    expect(() => setControllerReference(owner(), EtcdCluster, child(""))).toThrow(/is cluster-scoped/);
  });

  it("allows a cluster-scoped owner of a namespaced object", () => {
    const obj = child();
    const clusterOwner: KubeObject = { metadata: { name: "global", uid: "uid-g" } };
    setControllerReference(clusterOwner, ClusterThing, obj);
    expect(getControllerOf(obj)).toMatchObject({ kind: "ClusterThing", name: "global", uid: "uid-g" });
    const ns = { metadata: { name: "team-a", uid: "uid-ns" } };
    const obj2 = child();
    setOwnerReference(ns, Namespace, obj2);
    expect(obj2.metadata.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Namespace", name: "team-a", uid: "uid-ns" },
    ]);
  });

  it("rejects an owner without a uid", () => {
    expect(() =>
      setControllerReference({ metadata: { name: "main", namespace: "ns" } }, EtcdCluster, child()),
    ).toThrow(/no metadata.uid/);
  });
});

describe("setOwnerReference", () => {
  it("adds a non-controller reference and upserts it by uid", () => {
    const obj = child();
    setOwnerReference(owner(), EtcdCluster, obj);
    setOwnerReference(owner("b", "uid-b"), ConfigMap, obj);
    setOwnerReference(owner("main", "uid-main"), EtcdCluster, obj);
    expect(obj.metadata.ownerReferences).toEqual([
      { apiVersion: "etcd.capstan.dev/v1alpha1", kind: "EtcdCluster", name: "main", uid: "uid-main" },
      { apiVersion: "v1", kind: "ConfigMap", name: "b", uid: "uid-b" },
    ]);
    expect(getControllerOf(obj)).toBeUndefined();
  });

  it("keeps the controller flag of an existing controller reference", () => {
    const obj = child();
    setControllerReference(owner(), EtcdCluster, obj);
    setOwnerReference(owner(), EtcdCluster, obj);
    expect(obj.metadata.ownerReferences).toEqual([controllerRef]);
  });
});
