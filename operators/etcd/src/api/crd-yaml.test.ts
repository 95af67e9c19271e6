// The generated files of this operator's CRDs (crds/*.yaml, docs/operators/etcd.md's reference, the chart's
// copies) are what `capstan crd` writes from the schema, and the committed YAML parses back to the CRD object.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { crdDrift, formatDrift } from "@capstan/cli";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { etcdBackupCrd } from "./backup.ts";
import { etcdBackupScheduleCrd } from "./backup-schedule.ts";
import { crds } from "./crds.ts";
import { etcdClusterCrd } from "./etcd-cluster.ts";
import { etcdRestoreCrd } from "./etcd-restore.ts";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));

describe("generated CRD files", () => {
  it("are current (npm run gen:crd rewrites them)", async () => {
    const drift = await crdDrift(packageDir);
    expect(drift.map((d) => formatDrift(d, packageDir))).toEqual([]);
  });

  it("declare the EtcdCluster, EtcdBackup, EtcdBackupSchedule and EtcdRestore CRDs, and crds/ parses back to them", () => {
    expect(crds.map((c) => c.metadata.name)).toEqual([
      "etcdclusters.etcd.capstan.dev",
      "etcdbackups.etcd.capstan.dev",
      "etcdbackupschedules.etcd.capstan.dev",
      "etcdrestores.etcd.capstan.dev",
    ]);
    for (const crd of [etcdClusterCrd(), etcdBackupCrd(), etcdBackupScheduleCrd(), etcdRestoreCrd()]) {
      const committed = readFileSync(
        new URL(`../../crds/${crd.metadata.name}.yaml`, import.meta.url),
        "utf8",
      );
      expect(parse(committed)).toEqual(crd);
    }
  });
});
