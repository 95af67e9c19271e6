// VaultSnapshotSchedule: the types derived from the schema (the shared schedule schema in the Vault operator's
// words), the sample uses only declared fields, the name rule leaves room for a snapshot's suffix, and the
// printer columns read existing paths. (The real CEL runs against an API server in e2e.)
import { readFileSync } from "node:fs";
import type { BackupRetention } from "@capstan/backup";
import { describe, expect, expectTypeOf, it } from "vitest";
import { parse } from "yaml";
import type { VaultSnapshotSpec } from "./vault-snapshot.ts";
import {
  MAX_SNAPSHOT_SCHEDULE_NAME_LENGTH,
  type VaultSnapshotSchedule,
  type VaultSnapshotScheduleSpec,
  type VaultSnapshotScheduleStatus,
  vaultSnapshotScheduleCrd,
  vaultSnapshotScheduleSchema,
} from "./vault-snapshot-schedule.ts";

type Schema = {
  properties?: Record<string, Schema>;
  "x-kubernetes-validations"?: { rule: string; message: string }[];
  default?: unknown;
};
const schema = vaultSnapshotScheduleSchema as Schema;
const spec = schema.properties?.spec;
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("VaultSnapshotSchedule", () => {
  it("derives its types from its schema (the shared schedule schema in the Vault operator's words)", () => {
    expectTypeOf<VaultSnapshotScheduleSpec["schedule"]>().toEqualTypeOf<string>();
    expectTypeOf<VaultSnapshotScheduleSpec["snapshotTemplate"]["spec"]>().toEqualTypeOf<VaultSnapshotSpec>();
    expectTypeOf<VaultSnapshotScheduleSpec["failedSnapshotsHistoryLimit"]>().toEqualTypeOf<
      number | undefined
    >();
    expectTypeOf<VaultSnapshotScheduleSpec["retention"]>().toEqualTypeOf<BackupRetention | undefined>();
    expectTypeOf<VaultSnapshotScheduleStatus["lastSuccessfulSnapshot"]>().toEqualTypeOf<string | undefined>();
    // @ts-expect-error a VaultSnapshotSchedule's template is snapshotTemplate, not etcd's backupTemplate
    const other: VaultSnapshotScheduleSpec["backupTemplate"] = undefined;
    expect(other).toBeUndefined();
    expect(props(spec?.properties?.snapshotTemplate?.properties?.spec)).toEqual(
      ["activeDeadlineSeconds", "clusterName", "deletionPolicy", "destination"].sort(),
    );
  });

  it("accepts its sample", () => {
    const s = parse(
      readFileSync(new URL("../../samples/vaultsnapshotschedule.yaml", import.meta.url), "utf8"),
    ) as VaultSnapshotSchedule;
    expect(s.kind).toBe("VaultSnapshotSchedule");
    for (const k of Object.keys(s.spec)) expect(props(spec), k).toContain(k);
    const template = spec?.properties?.snapshotTemplate?.properties?.spec;
    for (const k of Object.keys(s.spec.snapshotTemplate.spec)) expect(props(template), k).toContain(k);
    expect(s.metadata.name?.length).toBeLessThanOrEqual(MAX_SNAPSHOT_SCHEDULE_NAME_LENGTH);
  });

  it("keeps a scheduled snapshot's name within a VaultSnapshot's 52 characters, and its template mutable", () => {
    expect(schema["x-kubernetes-validations"]?.[0]?.rule).toContain(
      `size() <= ${MAX_SNAPSHOT_SCHEDULE_NAME_LENGTH}`,
    );
    // Minutes since 1970 stay 8 digits until the year 2160.
    const name = `${"s".repeat(MAX_SNAPSHOT_SCHEDULE_NAME_LENGTH)}-${Math.floor(Date.UTC(2150, 0, 1) / 60_000)}`;
    expect(name.length).toBeLessThanOrEqual(52);
    // The template may be edited: only a VaultSnapshot's own spec is immutable.
    expect(
      spec?.properties?.snapshotTemplate?.properties?.spec?.["x-kubernetes-validations"],
    ).toBeUndefined();
  });

  it("defaults retention and the failed history, and the template's deletionPolicy to Delete", () => {
    expect(spec?.properties?.retention?.default).toEqual({ keepLast: 7 });
    expect(spec?.properties?.failedSnapshotsHistoryLimit?.default).toBe(3);
    expect(spec?.properties?.snapshotTemplate?.properties?.spec?.properties?.deletionPolicy?.default).toBe(
      "Delete",
    );
  });

  it("is a namespaced CRD in capstan whose printer columns read existing paths", () => {
    const crd = vaultSnapshotScheduleCrd();
    expect(crd.metadata.name).toBe("vaultsnapshotschedules.vault.capstan.dev");
    expect(crd.spec.names.categories).toEqual(["capstan"]);
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    const resolve = (path: string) =>
      path
        .split(".")
        .slice(1)
        .reduce<Schema | undefined>((s, key) => s?.properties?.[key], schema);
    for (const col of crd.spec.versions[0]?.additionalPrinterColumns ?? []) {
      if (col.jsonPath.startsWith(".metadata.")) continue;
      expect(resolve(col.jsonPath), `column ${col.name}`).toBeDefined();
    }
  });
});
