// The VaultRecovery schema: what it accepts as far as it can be checked without an API server (declared fields,
// patterns, the CEL rules' JavaScript equivalents), and samples/vaultrecovery.yaml is one of those. The real CEL runs
// against the API server in the e2e suite that creates one (e2e/suites/vault/quorum-recovery.test.ts).
import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import { parse } from "yaml";
import {
  type VaultRecovery,
  type VaultRecoveryCandidate,
  type VaultRecoveryPhase,
  type VaultRecoverySpec,
  type VaultRecoveryStatus,
  vaultRecoveryCrd,
  vaultRecoverySchema,
} from "./vault-recovery.ts";

type Props = Record<string, { pattern?: string; maxLength?: number }>;
const specSchema = (vaultRecoverySchema.properties as Record<string, unknown>).spec as {
  properties: Props;
  required: string[];
  "x-kubernetes-validations": { rule: string }[];
};

/** What of `spec` the schema refuses (the CEL survivor rule as JavaScript). */
function problems(spec: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const r of specSchema.required) if (spec[r] === undefined) out.push(`${r}: required`);
  for (const [k, v] of Object.entries(spec)) {
    const p = specSchema.properties[k];
    if (p === undefined) out.push(`${k}: not declared`);
    else if (p.pattern !== undefined && !new RegExp(p.pattern).test(String(v))) out.push(`${k}: pattern`);
    else if (p.maxLength !== undefined && String(v).length > p.maxLength) out.push(`${k}: too long`);
  }
  const { clusterName, survivor } = spec as { clusterName?: string; survivor?: string };
  if (survivor !== undefined && !survivor.startsWith(`${clusterName}-`))
    out.push("survivor: not of clusterName");
  return out;
}

describe("VaultRecovery schema", () => {
  it("accepts the sample (samples/vaultrecovery.yaml)", () => {
    const sample = parse(
      readFileSync(new URL("../../samples/vaultrecovery.yaml", import.meta.url), "utf8"),
    ) as VaultRecovery;
    expect(sample.kind).toBe("VaultRecovery");
    expect(problems(sample.spec as unknown as Record<string, unknown>)).toEqual([]);
  });

  it("refuses a survivor of another cluster, or one that is no pod name, and a missing clusterName", () => {
    expect(problems({ clusterName: "demo", survivor: "other-0" })).toEqual(["survivor: not of clusterName"]);
    expect(problems({ clusterName: "demo", survivor: "demo" })).toContain("survivor: pattern");
    expect(problems({ survivor: "demo-0" })).toContain("clusterName: required");
    expect(problems({ clusterName: "demo", survivor: "demo-2" })).toEqual([]);
  });

  it("makes spec immutable, and the CRD has a status subresource and the capstan category", () => {
    expect(specSchema["x-kubernetes-validations"].map((v) => v.rule)).toContain("self == oldSelf");
    const crd = vaultRecoveryCrd();
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    expect(crd.spec.names.categories).toEqual(["capstan"]);
  });
});

describe("VaultRecovery types, derived from the schema", () => {
  it("have the fields and optionality the reconcile reads", () => {
    expectTypeOf<VaultRecoverySpec["clusterName"]>().toEqualTypeOf<string>();
    expectTypeOf<VaultRecoverySpec["survivor"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<VaultRecoveryPhase>().toEqualTypeOf<
      "Pending" | "Running" | "Succeeded" | "Failed" | "Cancelled"
    >();
    expectTypeOf<VaultRecoveryStatus["raftIndex"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<VaultRecoveryCandidate["server"]>().toEqualTypeOf<string>();
    expectTypeOf<VaultRecoveryCandidate["appliedIndex"]>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error the schema has no spec.force: the API server would prune it
    const spec: VaultRecoverySpec = { clusterName: "demo", force: true };
    expect(spec.clusterName).toBe("demo");
  });
});
