// EtcdRestore and the snapshot source it shares with spec.bootstrap.restore: the types are derived from the CRD
// schema, so what the recovery code reads is what the API server keeps.
import type { Condition } from "@capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type EtcdRestorePhase,
  type EtcdRestoreSpec,
  type EtcdRestoreStatus,
  etcdRestoreSchema,
} from "./etcd-restore.ts";
import type {
  EtcdBootstrapRestore,
  EtcdClusterRestoreStatus,
  PVCSource,
  S3Source,
} from "./restore-source.ts";

describe("EtcdRestore types derived from the schema", () => {
  it("types the fields the recovery reads", () => {
    expectTypeOf<EtcdRestoreSpec["from"]>().toEqualTypeOf<"Survivor" | "Backup">();
    expectTypeOf<EtcdRestoreSpec["source"]>().toEqualTypeOf<EtcdBootstrapRestore | undefined>();
    expectTypeOf<EtcdRestorePhase>().toEqualTypeOf<
      "Pending" | "Running" | "Succeeded" | "Failed" | "Cancelled"
    >();
    expectTypeOf<EtcdRestoreStatus["keptClaims"]>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<EtcdRestoreStatus["conditions"]>().toEqualTypeOf<Condition[] | undefined>();
    expectTypeOf<EtcdBootstrapRestore["s3"]>().toEqualTypeOf<S3Source | undefined>();
    expectTypeOf<EtcdBootstrapRestore["pvc"]>().toEqualTypeOf<PVCSource | undefined>();
    expectTypeOf<EtcdBootstrapRestore["bumpRevision"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<EtcdClusterRestoreStatus["source"]>().toEqualTypeOf<string>();
  });
  it("refuses a field the schema lacks", () => {
    // @ts-expect-error the CRD has no spec.survivor (the survivor is chosen, in status)
    const spec: EtcdRestoreSpec = { clusterName: "demo", from: "Survivor", survivor: "demo-0" };
    expect(spec.from).toBe("Survivor");
  });
  it("requires spec, and clusterName and from in it", () => {
    expect(etcdRestoreSchema.required).toEqual(["spec"]);
    expect(etcdRestoreSchema.properties.spec.required).toEqual(["clusterName", "from"]);
  });
});
