// spec.recovery and spec.maintenance: the hand-written types name the same properties as the schema, and the
// waits have the documented defaults and floors.
import { describe, expect, it } from "vitest";
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
const recovery = recoverySchema as Schema;

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
    ["maintenance", maintenanceKeys, maintenanceSchema as Schema],
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
