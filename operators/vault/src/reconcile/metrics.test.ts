// The Vault operator's gauges label the VaultCluster object_namespace/object_name, never namespace/name: scraped
// without honorLabels, Prometheus would rename an object's `namespace` to `exported_namespace` (the target's wins).
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { VaultOperatorMetrics } from "./metrics.ts";

describe("VaultOperatorMetrics", () => {
  it("labels each cluster's series object_namespace and object_name, and drops them on forget", async () => {
    const registry = new Registry();
    const metrics = new VaultOperatorMetrics(registry);
    metrics.observe("apps", "vault", { active: 1, standby: 1, sealed: 1, uninitialized: 0 }, 3);
    metrics.countUnseal("apps", "vault");
    metrics.countStep("apps", "vault", "JoinRaft");
    const text = await registry.metrics();
    expect(text).toContain(
      'capstan_vault_cluster_pods{object_namespace="apps",object_name="vault",state="sealed"} 1',
    );
    expect(text).toContain('capstan_vault_raft_peers{object_namespace="apps",object_name="vault"} 3');
    expect(text).toContain('capstan_vault_unseal_total{object_namespace="apps",object_name="vault"} 1');
    expect(text).toContain(
      'capstan_vault_steps_total{object_namespace="apps",object_name="vault",step="JoinRaft"} 1',
    );
    // No series carries a label Prometheus would rename.
    expect(text).not.toMatch(/[{,](namespace|name)="/);

    metrics.forget("apps", "vault");
    expect(await registry.getSingleMetricAsString("capstan_vault_raft_peers")).not.toContain("object_name=");
  });

  it("forgets every series of a deleted cluster, the steps taken on it included, and only that cluster's", async () => {
    const registry = new Registry();
    const metrics = new VaultOperatorMetrics(registry);
    for (const name of ["gone", "kept"]) {
      metrics.observe("apps", name, { active: 1, standby: 2, sealed: 0, uninitialized: 0 }, 3, {
        healthy: true,
        failureTolerance: 1,
        leader: "vault-0",
        voters: ["vault-0", "vault-1", "vault-2"],
      });
      metrics.countUnseal("apps", name);
      metrics.countStep("apps", name, "JoinRaft");
      metrics.countStep("apps", name, "RecoveryRemovePeer");
    }
    metrics.forget("apps", "gone");
    const text = await registry.metrics();
    expect(text).not.toContain('object_name="gone"');
    for (const family of [
      "capstan_vault_cluster_pods",
      "capstan_vault_raft_peers",
      "capstan_vault_autopilot_failure_tolerance",
      "capstan_vault_autopilot_voters",
      "capstan_vault_unseal_total",
      "capstan_vault_steps_total",
    ]) {
      expect(text).toMatch(new RegExp(`^${family}\\{object_namespace="apps",object_name="kept"`, "m"));
    }
  });
});
