// The generated CRD files (crds/*.yaml) are what `capstan crd` writes from the schema, and the committed YAML
// parses back to the CRD object.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { crdDrift, formatDrift } from "@capstan/cli";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crds } from "./crds.ts";
import { vaultClusterCrd } from "./vault-cluster.ts";
import { vaultRecoveryCrd } from "./vault-recovery.ts";
import { vaultSnapshotCrd } from "./vault-snapshot.ts";
import { vaultSnapshotScheduleCrd } from "./vault-snapshot-schedule.ts";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));

describe("generated CRD files", () => {
  it("are current (npm run gen:crd rewrites them)", async () => {
    const drift = await crdDrift(packageDir);
    expect(drift.map((d) => formatDrift(d, packageDir))).toEqual([]);
  });

  it("declare the VaultCluster, VaultRecovery, VaultSnapshot and VaultSnapshotSchedule CRDs, and crds/ parses back to them", () => {
    expect(crds.map((c) => c.metadata.name)).toEqual([
      "vaultclusters.vault.capstan.dev",
      "vaultrecoveries.vault.capstan.dev",
      "vaultsnapshots.vault.capstan.dev",
      "vaultsnapshotschedules.vault.capstan.dev",
    ]);
    for (const crd of [
      vaultClusterCrd(),
      vaultRecoveryCrd(),
      vaultSnapshotCrd(),
      vaultSnapshotScheduleCrd(),
    ]) {
      const committed = readFileSync(
        new URL(`../../crds/${crd.metadata.name}.yaml`, import.meta.url),
        "utf8",
      );
      expect(parse(committed)).toEqual(crd);
    }
  });
});
