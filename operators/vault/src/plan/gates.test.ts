// planNext's gates (rules 1 to 3, gates.ts): spec.paused, an operator-owned config key, the listener certificate
// not in place, and a pod of another Vault cluster.
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { healthy3, ID, observed, plan, pod, vaultOf } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

describe("gates", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    ["paused", observed([]), { type: "Wait", reason: "Paused" }, { paused: true }],
    [
      "an owned config key (object older than the CEL rule)",
      observed(healthy3()),
      { type: "Degraded", reason: "ConfigKeyOwned" },
      { config: { ui: true, listener: {} } },
    ],
    [
      "the user's TLS Secret is missing",
      observed(healthy3(), {
        tls: { ready: false, reason: "TLSSecretMissing", message: "Secret x is missing" },
      }),
      { type: "Degraded", reason: "TLSSecretMissing" },
    ],
    [
      "operator TLS being issued",
      observed([], { tls: { ready: false, reason: "TLSIssuing", message: "issuing" } }),
      { type: "Wait", reason: "TLSIssuing" },
    ],
    [
      "a pod answering with another cluster_id: Degraded naming both, no action",
      observed([
        pod(0, "active"),
        pod(1, "standby", { vault: vaultOf("standby", "1.14.8", "beef") }),
        pod(2, "sealed"),
      ]),
      { type: "Degraded", reason: "ClusterIDMismatch", pods: ["demo-1"] },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));

  it("the cluster_id mismatch message names both ids", () => {
    const step = plan(
      observed([pod(0, "active"), pod(1, "standby", { vault: vaultOf("standby", "1.14.8", "beef") })]),
    );
    expect(step.message).toContain("beef");
    expect(step.message).toContain(ID);
  });
});
