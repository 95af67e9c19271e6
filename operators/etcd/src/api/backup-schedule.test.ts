// EtcdBackupSchedule: the hand-written types name the schema's properties, the CRD is shaped as the conventions
// ask, and the CEL rules' intent holds on sample values (the real CEL runs against an API server).
import { describe, expect, expectTypeOf, it } from "vitest";
import type { EtcdBackupSpec } from "./backup.ts";
import {
  type BackupRetention,
  type EtcdBackupScheduleSpec,
  type EtcdBackupScheduleStatus,
  type EtcdBackupTemplate,
  etcdBackupScheduleCrd,
  etcdBackupScheduleSchema,
  MAX_AGE_PATTERN,
} from "./backup-schedule.ts";

// Each record must name every key of its type and nothing else (the compiler checks that side).
const backupSpecKeys: Record<keyof EtcdBackupSpec, true> = {
  clusterName: true,
  destination: true,
  activeDeadlineSeconds: true,
  deletionPolicy: true,
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
  "x-kubernetes-validations"?: Rule[];
  [key: string]: unknown;
};
const schedule = etcdBackupScheduleSchema as unknown as Schema;
const sSpec = schedule.properties!.spec!;
const propertyNames = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("EtcdBackupSchedule types match the schema", () => {
  it.each([
    ["EtcdBackupSchedule spec", scheduleSpecKeys, sSpec],
    ["retention", retentionKeys, sSpec.properties!.retention],
    ["EtcdBackupSchedule status", scheduleStatusKeys, schedule.properties!.status],
    ["backupTemplate.spec", backupSpecKeys, sSpec.properties!.backupTemplate!.properties!.spec],
  ] as const)("%s", (_path, keys, schema) => {
    expect(propertyNames(schema)).toEqual(Object.keys(keys).sort());
  });
});

describe("the EtcdBackupSchedule CRD", () => {
  it("is named, namespaced, in capstan, with a status subresource", () => {
    const crd = etcdBackupScheduleCrd();
    expect(crd.metadata.name).toBe("etcdbackupschedules.etcd.capstan.dev");
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.names).toMatchObject({
      kind: "EtcdBackupSchedule",
      listKind: "EtcdBackupScheduleList",
      categories: ["capstan"],
    });
    expect(crd.spec.versions[0]!.subresources).toEqual({ status: {} });
  });

  it("printer columns read existing paths", () => {
    const resolve = (path: string): Schema | undefined =>
      path
        .split(".")
        .slice(1)
        .reduce<Schema | undefined>((s, key) => s?.properties?.[key], schedule);
    for (const col of etcdBackupScheduleCrd().spec.versions[0]!.additionalPrinterColumns ?? []) {
      if (col.jsonPath.startsWith(".metadata.")) continue;
      expect(resolve(col.jsonPath), `column ${col.name}`).toBeDefined();
    }
  });

  it("defaults the schedule's retention to keepLast and failed history", () => {
    expect(sSpec.properties!.retention!.default).toEqual({ keepLast: 7 });
    expect(sSpec.properties!.failedBackupsHistoryLimit!.default).toBe(3);
  });
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

describe("EtcdBackupSchedule types derived from the schema", () => {
  it("names the noun's fields and types them", () => {
    expectTypeOf<EtcdBackupScheduleSpec["schedule"]>().toEqualTypeOf<string>();
    expectTypeOf<EtcdBackupScheduleSpec["backupTemplate"]>().toEqualTypeOf<EtcdBackupTemplate>();
    expectTypeOf<EtcdBackupTemplate["spec"]>().toEqualTypeOf<EtcdBackupSpec>();
    expectTypeOf<EtcdBackupScheduleSpec["failedBackupsHistoryLimit"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<EtcdBackupScheduleSpec["retention"]>().toEqualTypeOf<BackupRetention | undefined>();
    expectTypeOf<EtcdBackupScheduleStatus["lastSuccessfulBackup"]>().toEqualTypeOf<string | undefined>();
  });
  it("refuses another operator's noun", () => {
    // @ts-expect-error an EtcdBackupSchedule's template is backupTemplate, not snapshotTemplate
    const spec: EtcdBackupScheduleSpec["snapshotTemplate"] = undefined;
    expect(spec).toBeUndefined();
  });
});
