// EtcdBackup: the hand-written types name the schema's properties, the CRD is shaped as the conventions ask, and
// its spec is immutable. (The destination is tested in backup-destination.test.ts, EtcdBackupSchedule in
// backup-schedule.test.ts.)
import { describe, expect, expectTypeOf, it } from "vitest";
import type { BackupDestination, DeletionPolicy, EtcdBackupPhase } from "./backup.ts";
import { type EtcdBackupSpec, type EtcdBackupStatus, etcdBackupCrd, etcdBackupSchema } from "./backup.ts";

// Each record must name every key of its type and nothing else (the compiler checks that side).
const backupSpecKeys: Record<keyof EtcdBackupSpec, true> = {
  clusterName: true,
  destination: true,
  activeDeadlineSeconds: true,
  deletionPolicy: true,
};
const backupStatusKeys: Record<keyof EtcdBackupStatus, true> = {
  observedGeneration: true,
  phase: true,
  conditions: true,
  member: true,
  jobName: true,
  revision: true,
  size: true,
  sha256: true,
  etcdVersion: true,
  clusterID: true,
  location: true,
  startTime: true,
  completionTime: true,
};

type Schema = {
  properties?: Record<string, Schema>;
  "x-kubernetes-validations"?: { rule: string; message: string }[];
  [key: string]: unknown;
};
const backup = etcdBackupSchema as unknown as Schema;
const bSpec = backup.properties!.spec!;
const propertyNames = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("EtcdBackup types match the schema", () => {
  it.each([
    ["EtcdBackup spec", backupSpecKeys, bSpec],
    ["EtcdBackup status", backupStatusKeys, backup.properties!.status],
  ] as const)("%s", (_path, keys, schema) => {
    expect(propertyNames(schema)).toEqual(Object.keys(keys).sort());
  });
});

describe("the EtcdBackup CRD", () => {
  it("is named, namespaced, in capstan, with a status subresource", () => {
    const crd = etcdBackupCrd();
    expect(crd.metadata.name).toBe("etcdbackups.etcd.capstan.dev");
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.names).toMatchObject({
      kind: "EtcdBackup",
      listKind: "EtcdBackupList",
      categories: ["capstan"],
    });
    expect(crd.spec.versions[0]!.subresources).toEqual({ status: {} });
  });

  it("printer columns read existing paths", () => {
    const resolve = (path: string): Schema | undefined =>
      path
        .split(".")
        .slice(1)
        .reduce<Schema | undefined>((s, key) => s?.properties?.[key], backup);
    for (const col of etcdBackupCrd().spec.versions[0]!.additionalPrinterColumns ?? []) {
      if (col.jsonPath.startsWith(".metadata.")) continue;
      expect(resolve(col.jsonPath), `column ${col.name}`).toBeDefined();
    }
  });

  it("makes EtcdBackup's spec immutable", () => {
    expect(bSpec["x-kubernetes-validations"]).toContainEqual(
      expect.objectContaining({ rule: "self == oldSelf" }),
    );
  });
});

describe("EtcdBackup types derived from the schema", () => {
  it("types the fields the code reads as the schema has them", () => {
    expectTypeOf<EtcdBackupSpec["clusterName"]>().toEqualTypeOf<string>();
    expectTypeOf<EtcdBackupSpec["destination"]>().toEqualTypeOf<BackupDestination>();
    expectTypeOf<EtcdBackupSpec["activeDeadlineSeconds"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<EtcdBackupSpec["deletionPolicy"]>().toEqualTypeOf<DeletionPolicy | undefined>();
    expectTypeOf<EtcdBackupStatus["phase"]>().toEqualTypeOf<EtcdBackupPhase | undefined>();
    expectTypeOf<EtcdBackupPhase>().toEqualTypeOf<"Pending" | "Running" | "Succeeded" | "Failed">();
    expectTypeOf<EtcdBackupStatus["revision"]>().toEqualTypeOf<number | undefined>();
  });
  it("refuses a field the schema lacks", () => {
    // @ts-expect-error the CRD has no spec.memberName: the API server would prune it
    const spec: EtcdBackupSpec = { clusterName: "demo", destination: {}, memberName: "demo-0" };
    expect(spec.clusterName).toBe("demo");
  });
});
