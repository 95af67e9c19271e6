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
});
