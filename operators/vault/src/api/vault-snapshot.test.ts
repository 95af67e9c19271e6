// The VaultSnapshot and spec.restore schemas as far as they can be checked without an API server: the types name the
// schema's properties, the samples use only declared fields, the exactly-one and immutability rules are there. (The
// real CEL runs against the API server in e2e/suites/vault/snapshot.test.ts.)
import { readFileSync } from "node:fs";
import type { BackupDestination, DeletionPolicy } from "@capstan/backup";
import type { Condition } from "@capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import { parse } from "yaml";
import type { VaultCluster } from "./vault-cluster.ts";
import { vaultClusterSchema } from "./vault-cluster.ts";
import { restoreSchema, type VaultRestore } from "./vault-restore.ts";
import {
  type VaultSnapshot,
  type VaultSnapshotPhase,
  type VaultSnapshotSpec,
  type VaultSnapshotStatus,
  vaultSnapshotCrd,
  vaultSnapshotSchema,
} from "./vault-snapshot.ts";

type Schema = { properties?: Record<string, Schema>; "x-kubernetes-validations"?: { rule: string }[] };
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();
const sample = <T>(file: string) =>
  parse(readFileSync(new URL(`../../samples/${file}`, import.meta.url), "utf8")) as T;

describe("VaultSnapshot", () => {
  const spec = (vaultSnapshotSchema as Schema).properties?.spec;
  it("names in its type what its schema declares", () => {
    const keys: Record<keyof VaultSnapshotSpec, true> = {
      clusterName: true,
      destination: true,
      activeDeadlineSeconds: true,
      deletionPolicy: true,
    };
    expect(props(spec)).toEqual(Object.keys(keys).sort());
    expect(props(spec?.properties?.destination)).toEqual(["pvc", "s3"]);
  });

  it("accepts its sample, is immutable, and has a status subresource and the capstan category", () => {
    const s = sample<VaultSnapshot>("vaultsnapshot.yaml");
    expect(s.kind).toBe("VaultSnapshot");
    for (const k of Object.keys(s.spec)) expect(props(spec), k).toContain(k);
    expect(spec?.["x-kubernetes-validations"]?.map((v) => v.rule)).toContain("self == oldSelf");
    const crd = vaultSnapshotCrd();
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    expect(crd.spec.names.categories).toEqual(["capstan"]);
  });
});

describe("VaultSnapshot types, derived from the schema", () => {
  it("have the fields and optionality the reconcile reads", () => {
    expectTypeOf<VaultSnapshotSpec["clusterName"]>().toEqualTypeOf<string>();
    expectTypeOf<VaultSnapshotSpec["destination"]>().toEqualTypeOf<BackupDestination>();
    expectTypeOf<VaultSnapshotSpec["activeDeadlineSeconds"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<VaultSnapshotSpec["deletionPolicy"]>().toEqualTypeOf<DeletionPolicy | undefined>();
    expectTypeOf<VaultSnapshotPhase>().toEqualTypeOf<"Pending" | "Running" | "Succeeded" | "Failed">();
    expectTypeOf<VaultSnapshotStatus["size"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<VaultSnapshotStatus["conditions"]>().toEqualTypeOf<Condition[] | undefined>();
    // @ts-expect-error the schema has no status.bytes: the API server would prune it
    const status: VaultSnapshotStatus = { bytes: 1 };
    expect(status).toEqual({ bytes: 1 });
  });
});

describe("VaultCluster spec.restore", () => {
  it("names in its type what its schema declares; exactly one source; immutable", () => {
    const keys: Record<keyof VaultRestore, true> = {
      snapshot: true,
      s3: true,
      pvc: true,
      sha256: true,
      unsealKeysSecret: true,
    };
    expect(props(restoreSchema as Schema)).toEqual(Object.keys(keys).sort());
    const rules = (restoreSchema as Schema)["x-kubernetes-validations"]?.map((v) => v.rule) ?? [];
    expect(rules).toContain("self == oldSelf");
    expect(rules.some((r) => r.includes("has(self.snapshot)") && r.includes("== 1"))).toBe(true);
    const spec = (vaultClusterSchema as Schema).properties?.spec;
    expect(spec?.["x-kubernetes-validations"]?.map((v) => v.rule)).toContain(
      "has(self.restore) == has(oldSelf.restore)",
    );
  });

  it("accepts its sample", () => {
    const c = sample<VaultCluster>("vaultcluster-restore.yaml");
    expect(c.spec.restore?.snapshot?.name).toBe("demo-before-upgrade");
    for (const k of Object.keys(c.spec.restore ?? {})) expect(props(restoreSchema as Schema), k).toContain(k);
  });
});
