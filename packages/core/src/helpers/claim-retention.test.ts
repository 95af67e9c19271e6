import { describe, expect, expectTypeOf, it } from "vitest";
import { defineKind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import {
  type ClaimRetention,
  claimBelongsTo,
  claimRetentionPatch,
  claimRetentionSchema,
  retainedClaim,
} from "./claim-retention.ts";

const Db = defineKind({
  group: "db.example.dev",
  version: "v1",
  kind: "Db",
  plural: "dbs",
  namespaced: true,
});
const LABEL = "db.example.dev/uid";
const owner: KubeObject = { metadata: { name: "main", namespace: "ns", uid: "uid-1" } };
const claim = (metadata: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
  kind: "PersistentVolumeClaim",
  metadata: { name: "data-main-0", namespace: "ns", resourceVersion: "7", ...metadata },
});
const ref = { apiVersion: "db.example.dev/v1", kind: "Db", name: "main", uid: "uid-1" };
const controllerRef = { ...ref, controller: true, blockOwnerDeletion: true };

describe("retainedClaim", () => {
  it("Retain: no owner reference (nothing garbage-collects it), the owner's uid in a label", () => {
    const c = retainedClaim(owner, Db, claim({ labels: { app: "db" } }), "Retain", LABEL);
    expect(c.metadata.ownerReferences).toBeUndefined();
    expect(c.metadata.labels).toEqual({ app: "db", [LABEL]: "uid-1" });
  });
  it("Delete: a controller reference, so it goes with the owner", () => {
    const c = retainedClaim(owner, Db, claim(), "Delete", LABEL);
    expect(c.metadata.ownerReferences).toEqual([controllerRef]);
  });
});

describe("claimBelongsTo", () => {
  it("a claim the owner controls, or an uncontrolled one made for it", () => {
    expect(claimBelongsTo(owner, claim({ ownerReferences: [controllerRef] }), LABEL)).toBe(true);
    expect(claimBelongsTo(owner, claim({ labels: { [LABEL]: "uid-1" } }), LABEL)).toBe(true);
  });
  it("not one made for an earlier resource of the same name, unless retained claims are adopted", () => {
    const earlier = claim({ labels: { [LABEL]: "uid-0" } });
    expect(claimBelongsTo(owner, earlier, LABEL)).toBe(false);
    expect(claimBelongsTo(owner, earlier, LABEL, { adoptRetained: true })).toBe(true);
  });
  it("never one another controller holds, adopting or not", () => {
    const other = claim({
      ownerReferences: [{ ...controllerRef, uid: "uid-0" }],
      labels: { [LABEL]: "uid-1" },
    });
    expect(claimBelongsTo(owner, other, LABEL)).toBe(false);
    expect(claimBelongsTo(owner, other, LABEL, { adoptRetained: true })).toBe(false);
  });
});

describe("claimRetentionPatch", () => {
  it("nothing to write when the claim matches its policy (steady state)", () => {
    expect(
      claimRetentionPatch(owner, Db, claim({ labels: { [LABEL]: "uid-1" } }), "Retain", LABEL),
    ).toBeUndefined();
    expect(
      claimRetentionPatch(owner, Db, claim({ ownerReferences: [controllerRef] }), "Delete", LABEL),
    ).toBeUndefined();
  });
  it("Retain on an owned claim (made before the policy existed): drops the reference, keeps other owners", () => {
    const other = { apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "uid-x" };
    expect(
      claimRetentionPatch(owner, Db, claim({ ownerReferences: [controllerRef] }), "Retain", LABEL),
    ).toEqual({
      metadata: { resourceVersion: "7", labels: { [LABEL]: "uid-1" }, ownerReferences: null },
    });
    expect(
      claimRetentionPatch(owner, Db, claim({ ownerReferences: [other, controllerRef] }), "Retain", LABEL),
    ).toEqual({ metadata: { resourceVersion: "7", labels: { [LABEL]: "uid-1" }, ownerReferences: [other] } });
  });
  it("Retain on an adopted claim of an earlier resource: the label takes the new uid", () => {
    expect(claimRetentionPatch(owner, Db, claim({ labels: { [LABEL]: "uid-0" } }), "Retain", LABEL)).toEqual({
      metadata: { resourceVersion: "7", labels: { [LABEL]: "uid-1" } },
    });
  });
  it("Delete on a kept claim: adds the controller reference; another controller's claim is left alone", () => {
    expect(claimRetentionPatch(owner, Db, claim({ labels: { [LABEL]: "uid-1" } }), "Delete", LABEL)).toEqual({
      metadata: { resourceVersion: "7", ownerReferences: [controllerRef] },
    });
    const foreign = claim({ ownerReferences: [{ ...controllerRef, uid: "uid-0" }] });
    expect(claimRetentionPatch(owner, Db, foreign, "Delete", LABEL)).toBeUndefined();
  });
  it("the schema: Retain or Delete, Retain by default", () => {
    const s = claimRetentionSchema("the data claims");
    expect(s.enum).toEqual(["Retain", "Delete"]);
    expect(s.default).toBe("Retain");
    expect(s.description).toMatch(/^What happens to the data claims/);
    expect(claimRetentionSchema("the data claims", "More.").description).toBe(`${s.description} More.`);
  });
  it("types a whenDeleted field from the schema: Retain or Delete", () => {
    expectTypeOf<ClaimRetention>().toEqualTypeOf<"Retain" | "Delete">();
    // @ts-expect-error a value the schema's enum lacks is not a ClaimRetention
    const orphan: ClaimRetention = "Orphan";
    expect(orphan).toBe("Orphan");
  });
});
