// spec.recovery and spec.maintenance: the types derived from the schema are what the code reads, and the
// waits have the documented defaults and floors.
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type EtcdAutomaticRecovery,
  type EtcdMaintenance,
  type EtcdRecovery,
  maintenanceSchema,
  recoverySchema,
} from "./etcd-cluster-upkeep.ts";

type Schema = {
  properties?: Record<string, Schema>;
  default?: unknown;
  minimum?: number;
  [key: string]: unknown;
};
const names = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();
const recovery = recoverySchema as unknown as Schema;

const recoveryKeys: Record<keyof EtcdRecovery, true> = {
  memberNotReadySeconds: true,
  unschedulableSeconds: true,
  terminatingSeconds: true,
  learnerStallSeconds: true,
  automatic: true,
};
const automaticKeys: Record<keyof EtcdAutomaticRecovery, true> = { enabled: true, afterSeconds: true };
const maintenanceKeys: Record<keyof EtcdMaintenance, true> = {
  autoCompactionMode: true,
  autoCompactionRetention: true,
  defragThresholdPercent: true,
};

describe("EtcdCluster spec.recovery and spec.maintenance types match the schema", () => {
  it.each([
    ["recovery", recoveryKeys, recovery],
    ["recovery.automatic", automaticKeys, recovery.properties!.automatic],
    ["maintenance", maintenanceKeys, maintenanceSchema as unknown as Schema],
  ] as const)("%s", (_path, keys, schema) => {
    expect(names(schema)).toEqual(Object.keys(keys).sort());
  });
});

describe("recovery waits", () => {
  it.each([
    ["memberNotReadySeconds", 300, 30],
    ["unschedulableSeconds", 300, 30],
    ["terminatingSeconds", 300, 30],
    ["learnerStallSeconds", 600, 60],
  ])("%s defaults to %i s, at least %i s", (field, dflt, minimum) => {
    const s = recovery.properties![field]!;
    expect([s.default, s.minimum]).toEqual([dflt, minimum]);
  });

  it("automatic recovery is off by default and waits at least 300 s", () => {
    const automatic = recovery.properties!.automatic!.properties!;
    expect([
      automatic.enabled!.default,
      automatic.afterSeconds!.default,
      automatic.afterSeconds!.minimum,
    ]).toEqual([false, 900, 300]);
  });
});

describe("upkeep types derived from the schema", () => {
  it("types the waits, the automatic recovery and the compaction mode", () => {
    expectTypeOf<EtcdRecovery["memberNotReadySeconds"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<EtcdRecovery["automatic"]>().toEqualTypeOf<EtcdAutomaticRecovery | undefined>();
    expectTypeOf<EtcdAutomaticRecovery["enabled"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<EtcdMaintenance["autoCompactionMode"]>().toEqualTypeOf<
      "periodic" | "revision" | undefined
    >();
    expectTypeOf<EtcdMaintenance["defragThresholdPercent"]>().toEqualTypeOf<number | undefined>();
  });
  it("refuses a field the schema lacks", () => {
    // @ts-expect-error the CRD has no spec.recovery.memberReadySeconds
    const recovery: EtcdRecovery = { memberReadySeconds: 60 };
    expect(recovery).toBeDefined();
  });
});
