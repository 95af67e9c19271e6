// EtcdBackup and EtcdBackupSchedule: the hand-written types name the schema's properties, the CRDs are shaped as
// the conventions ask, and the CEL rules' intent holds on sample values (the real CEL runs against an API server).
import { describe, expect, it } from "vitest";
import {
  type BackupRetention,
  type EtcdBackupScheduleSpec,
  type EtcdBackupScheduleStatus,
  type EtcdBackupSpec,
  type EtcdBackupStatus,
  etcdBackupCrd,
  etcdBackupScheduleCrd,
  etcdBackupScheduleSchema,
  etcdBackupSchema,
  MAX_AGE_PATTERN,
  type PVCDestination,
  type S3Destination,
} from "./backup.ts";

// Each record must name every key of its type and nothing else (the compiler checks that side).
const backupSpecKeys: Record<keyof EtcdBackupSpec, true> = {
  clusterName: true,
  destination: true,
  activeDeadlineSeconds: true,
  deletionPolicy: true,
};
const s3Keys: Record<keyof S3Destination, true> = {
  endpoint: true,
  bucket: true,
  prefix: true,
  region: true,
  forcePathStyle: true,
  credentialsSecret: true,
  caSecret: true,
};
const pvcKeys: Record<keyof PVCDestination, true> = { claimName: true, directory: true };
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
const scheduleSpecKeys: Record<keyof EtcdBackupScheduleSpec, true> = {
  schedule: true,
  timeZone: true,
  startingDeadlineSeconds: true,
  suspend: true,
  retention: true,
  failedBackupsHistoryLimit: true,
  backupTemplate: true,
};
const retentionKeys: Record<keyof BackupRetention, true> = { keepLast: true, maxAge: true };
const scheduleStatusKeys: Record<keyof EtcdBackupScheduleStatus, true> = {
  observedGeneration: true,
  conditions: true,
  lastScheduleTime: true,
  lastMissedTime: true,
  lastSuccessfulTime: true,
  lastSuccessfulBackup: true,
  nextScheduleTime: true,
  active: true,
};

type Rule = { rule: string; message: string };
type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  "x-kubernetes-validations"?: Rule[];
  [key: string]: unknown;
};
const backup = etcdBackupSchema as Schema;
const schedule = etcdBackupScheduleSchema as Schema;
const bSpec = backup.properties!.spec!;
const sSpec = schedule.properties!.spec!;
const destination = bSpec.properties!.destination!;
const propertyNames = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("backup types match the schemas", () => {
  it.each([
    ["EtcdBackup spec", backupSpecKeys, bSpec],
    ["destination.s3", s3Keys, destination.properties!.s3],
    ["destination.pvc", pvcKeys, destination.properties!.pvc],
    ["EtcdBackup status", backupStatusKeys, backup.properties!.status],
    ["EtcdBackupSchedule spec", scheduleSpecKeys, sSpec],
    ["retention", retentionKeys, sSpec.properties!.retention],
    ["EtcdBackupSchedule status", scheduleStatusKeys, schedule.properties!.status],
    ["backupTemplate.spec", backupSpecKeys, sSpec.properties!.backupTemplate!.properties!.spec],
  ] as const)("%s", (_path, keys, schema) => {
    expect(propertyNames(schema)).toEqual(Object.keys(keys).sort());
  });
});

describe("the CRDs", () => {
  it.each([
    [etcdBackupCrd(), "etcdbackups.etcd.capstan.dev", "EtcdBackup"],
    [etcdBackupScheduleCrd(), "etcdbackupschedules.etcd.capstan.dev", "EtcdBackupSchedule"],
  ] as const)("%#: named, namespaced, in capstan, with a status subresource", (crd, name, kind) => {
    expect(crd.metadata.name).toBe(name);
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.names).toMatchObject({ kind, listKind: `${kind}List`, categories: ["capstan"] });
    expect(crd.spec.versions[0]!.subresources).toEqual({ status: {} });
  });

  it("printer columns read existing paths", () => {
    const resolve = (root: Schema, path: string): Schema | undefined =>
      path
        .split(".")
        .slice(1)
        .reduce<Schema | undefined>((s, key) => s?.properties?.[key], root);
    for (const [crd, root] of [
      [etcdBackupCrd(), backup],
      [etcdBackupScheduleCrd(), schedule],
    ] as const) {
      for (const col of crd.spec.versions[0]!.additionalPrinterColumns ?? []) {
        if (col.jsonPath.startsWith(".metadata.")) continue;
        expect(resolve(root, col.jsonPath), `${crd.spec.names.kind} column ${col.name}`).toBeDefined();
      }
    }
  });

  it("makes EtcdBackup's spec immutable", () => {
    expect(bSpec["x-kubernetes-validations"]).toContainEqual(
      expect.objectContaining({ rule: "self == oldSelf" }),
    );
  });

  it("defaults the schedule's retention to keepLast and failed history", () => {
    expect(sSpec.properties!.retention!.default).toEqual({ keepLast: 7 });
    expect(sSpec.properties!.failedBackupsHistoryLimit!.default).toBe(3);
  });
});

// JavaScript equivalents of the CEL rules, checked on sample values.
describe("destination rule", () => {
  const rule = destination["x-kubernetes-validations"]![0]!;
  const holds = (d: Record<string, unknown>) => "s3" in d !== "pvc" in d;
  it("is the exactly-one rule", () => expect(rule.rule).toBe("has(self.s3) != has(self.pvc)"));
  it.each([
    [{ s3: {} }, true],
    [{ pvc: {} }, true],
    [{}, false],
    [{ s3: {}, pvc: {} }, false],
  ])("%j -> %s", (d, ok) => expect(holds(d)).toBe(ok));
  it("names both fields in its message", () => expect(rule.message).toMatch(/exactly one of s3 or pvc/));
});

describe("maxAge pattern", () => {
  const re = new RegExp(MAX_AGE_PATTERN);
  it.each(["7d", "36h", "1d12h", "90m", "3600s"])("accepts %s", (v) => expect(re.test(v)).toBe(true));
  it.each(["", "7", "1w", "1.5h", "-1d", "7 d", "d"])("rejects %j", (v) => expect(re.test(v)).toBe(false));
});

describe("schedule name rule", () => {
  const rule = schedule["x-kubernetes-validations"]![0]!;
  it("leaves room for the -<minutes> suffix within 63 characters", () => {
    expect(rule.rule).toContain("size() <= 52");
    // Minutes since 1970 stay 8 digits until the year 2160.
    expect(`${"s".repeat(52)}-${Math.floor(Date.UTC(2150, 0, 1) / 60_000)}`.length).toBeLessThanOrEqual(63);
  });
});
