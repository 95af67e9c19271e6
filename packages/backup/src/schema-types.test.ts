// The types @capstan/backup derives from its schemas (destination, restore sources, schedule): what the operators'
// code reads must be what the CRD holds, or the API server prunes it.

import * as Type from "typebox/type";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type BackupDestination,
  destinationSchemas,
  type PVCSource,
  pvcSourceSchema,
  type S3CredentialsSecret,
  type S3Destination,
  type S3Source,
  s3SourceSchema,
} from "./destination.ts";
import type { BackupRetention } from "./schedule-plan.ts";
import {
  type ScheduleSpecBase,
  type ScheduleStatusBase,
  type ScheduleTemplate,
  scheduleSchema,
} from "./schedule-schema.ts";

const naming = {
  path: "<ns>/<c>/<b>-<uid>.db",
  owner: "EtcdCluster",
  prefixExample: "etcd/prod",
  resource: "backup",
};

describe("schema-derived types", () => {
  it("destination: s3 and pvc, their required fields", () => {
    expectTypeOf<BackupDestination["s3"]>().toEqualTypeOf<S3Destination | undefined>();
    expectTypeOf<S3Destination["bucket"]>().toEqualTypeOf<string>();
    expectTypeOf<S3Destination["prefix"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<S3Destination["forcePathStyle"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<S3CredentialsSecret>().toEqualTypeOf<{
      name: string;
      accessKeyIDKey?: string;
      secretAccessKeyKey?: string;
    }>();
    expectTypeOf<PVCSource>().toEqualTypeOf<{ claimName: string; path: string }>();
    // @ts-expect-error a restore's S3 source has a key, not the destination's prefix
    const prefix: S3Source["prefix"] = "etcd";
    expect(prefix).toBe("etcd");
    expectTypeOf<S3Source["key"]>().toEqualTypeOf<string>();
  });
  it("source schemas: the S3 source drops prefix and requires key", () => {
    const { s3 } = destinationSchemas(naming);
    const source = s3SourceSchema(s3, "restore", "An object.", "a/b.db");
    expect(Object.keys(source.properties)).not.toContain("prefix");
    expect(source.required).toEqual(["bucket", "credentialsSecret", "key"]);
    expect(pvcSourceSchema("restore", "A file.", "a/b.db").required).toEqual(["claimName", "path"]);
  });
  it("schedule: the base fields, retention, and the fields named after the noun", () => {
    expectTypeOf<ScheduleSpecBase["schedule"]>().toEqualTypeOf<string>();
    expectTypeOf<ScheduleSpecBase["retention"]>().toEqualTypeOf<BackupRetention | undefined>();
    expectTypeOf<BackupRetention>().toEqualTypeOf<{ keepLast?: number; maxAge?: string }>();
    expectTypeOf<ScheduleStatusBase["active"]>().toEqualTypeOf<string | undefined>();
    const spec = Type.Object({ clusterName: Type.String() });
    const schema = scheduleSchema({ noun: "backup", kind: "EtcdBackup" }, spec);
    type Spec = Type.Static<typeof schema.properties.spec>;
    type Status = Type.Static<typeof schema.properties.status>;
    expectTypeOf<Spec["backupTemplate"]>().toEqualTypeOf<ScheduleTemplate<{ clusterName: string }>>();
    expectTypeOf<Spec["failedBackupsHistoryLimit"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Status["lastSuccessfulBackup"]>().toEqualTypeOf<string | undefined>();
    expect(schema.properties.spec.required).toEqual(["schedule", "backupTemplate"]);
    expect(Object.keys(schema.properties.status.properties)).toContain("lastSuccessfulBackup");
  });
});
