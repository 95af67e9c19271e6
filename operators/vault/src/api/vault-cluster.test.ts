// The VaultCluster types derived from the schema are what the code expects, and the CRD is well formed (the spec's CEL rules are checked in
// vault-cluster-spec-schema.test.ts).
import type { S3Source } from "@capstan/backup";
import type { ClaimRetention, Condition, ResourceQuantities, Toleration } from "@capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  PHASES,
  type VaultAutopilot,
  type VaultAutopilotStatus,
  VaultClusterKind,
  type VaultClusterPhase,
  type VaultClusterSpec,
  type VaultClusterStatus,
  type VaultPodTemplate,
  type VaultRaftPeer,
  type VaultStorage,
  type VaultTLS,
  type VaultUnseal,
  vaultClusterCrd,
} from "./vault-cluster.ts";
import type { VaultRestore, VaultRestoreStatus } from "./vault-restore.ts";

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
// The schema as the CRD carries it.
const root = vaultClusterCrd().spec.versions[0]!.schema!.openAPIV3Schema as Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

// The types are derived from the schema (Type.Static): these pin what the operator's code relies on, so a schema
// change that would change them (a field renamed, made optional or dropped) fails to compile here.
describe("VaultCluster types, derived from the schema", () => {
  it("keep defaulted spec fields present and the rest optional", () => {
    expectTypeOf<VaultClusterSpec["replicas"]>().toEqualTypeOf<number>();
    expectTypeOf<VaultClusterSpec["version"]>().toEqualTypeOf<string>();
    expectTypeOf<VaultClusterSpec["storage"]>().toEqualTypeOf<VaultStorage>();
    expectTypeOf<VaultClusterSpec["tls"]>().toEqualTypeOf<VaultTLS>();
    expectTypeOf<VaultClusterSpec["unseal"]>().toEqualTypeOf<VaultUnseal>();
    expectTypeOf<VaultUnseal>().toEqualTypeOf<{
      shares: number;
      threshold: number;
      keepRootToken: boolean;
      retainKeysOnDelete: boolean;
    }>();
    expectTypeOf<VaultClusterSpec["paused"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<VaultClusterSpec["config"]>().toEqualTypeOf<Record<string, unknown> | undefined>();
    expectTypeOf<VaultClusterSpec["restore"]>().toEqualTypeOf<VaultRestore | undefined>();
    expectTypeOf<VaultStorage["whenDeleted"]>().toEqualTypeOf<ClaimRetention | undefined>();
    expectTypeOf<VaultAutopilot["minQuorum"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<VaultPodTemplate["antiAffinity"]>().toEqualTypeOf<"Required" | "Preferred" | undefined>();
    expectTypeOf<VaultPodTemplate["tolerations"]>().toEqualTypeOf<Toleration[] | undefined>();
    expectTypeOf<VaultPodTemplate["resources"]>().toEqualTypeOf<ResourceQuantities | undefined>();
    expectTypeOf<VaultRestore["s3"]>().toEqualTypeOf<S3Source | undefined>();
    // @ts-expect-error the schema has no spec.size (it is spec.storage.size): the API server would prune it
    const wrong: Partial<VaultClusterSpec> = { size: "1Gi" };
    expect(wrong).toBeDefined();
  });

  it("type the status the operator writes", () => {
    expectTypeOf<VaultClusterStatus["phase"]>().toEqualTypeOf<VaultClusterPhase | undefined>();
    expectTypeOf<VaultClusterStatus["conditions"]>().toEqualTypeOf<Condition[] | undefined>();
    expectTypeOf<VaultClusterStatus["tls"]>().toEqualTypeOf<{ notAfter?: string } | undefined>();
    expectTypeOf<VaultClusterStatus["restore"]>().toEqualTypeOf<VaultRestoreStatus | undefined>();
    expectTypeOf<VaultRaftPeer["nodeID"]>().toEqualTypeOf<string>();
    // Optional in the schema (never required of a status), unlike the interface that stood here before.
    expectTypeOf<VaultRaftPeer["voter"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<VaultAutopilotStatus["failureTolerance"]>().toEqualTypeOf<number>();
    expectTypeOf<VaultAutopilotStatus["voters"]>().toEqualTypeOf<string[] | undefined>();
    // @ts-expect-error the schema has no status.leader (it is status.active): the API server would prune it
    const wrong: VaultClusterStatus = { leader: "demo-0" };
    expect(wrong).toBeDefined();
  });
});

describe("VaultCluster schema", () => {
  it("lists every phase in status.phase's enum", () => {
    expect(status.properties!.phase!.enum).toEqual([...PHASES]);
    expect(props(spec)).toContain("restore");
  });
});

describe("vaultClusterCrd", () => {
  const crd = vaultClusterCrd();
  const version = crd.spec.versions[0]!;

  it("is named after the kind's plural and group, with the contract's names", () => {
    expect(crd.metadata.name).toBe("vaultclusters.vault.capstan.dev");
    expect(VaultClusterKind.apiVersion).toBe("vault.capstan.dev/v1alpha1");
    expect(crd.spec.names).toMatchObject({
      kind: "VaultCluster",
      shortNames: ["vault"],
      categories: ["capstan"],
    });
  });

  it("has status and scale subresources pointing at real fields", () => {
    expect(version.subresources?.status).toEqual({});
    expect(version.subresources?.scale).toEqual({
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.selector",
    });
  });

  it("printer columns read existing paths, in the contract's order", () => {
    const cols = version.additionalPrinterColumns ?? [];
    expect(cols.map((c) => c.name)).toEqual([
      "Replicas",
      "Ready",
      "Active",
      "Sealed",
      "Version",
      "Phase",
      "Age",
    ]);
    for (const col of cols) {
      const [, top, field] = /^\.(\w+)\.(\w+)/.exec(col.jsonPath) ?? [];
      if (top === "metadata") continue;
      expect(props(top === "spec" ? spec : status)).toContain(field);
    }
  });

  it("defaults the contract's values", () => {
    const p = spec.properties!;
    expect(p.replicas).toMatchObject({ default: 3, minimum: 1, maximum: 5 });
    expect(p.version).toMatchObject({ default: "1.14.8" });
    expect(p.repository).toMatchObject({ default: "hashicorp/vault" });
    expect(p.storage!.properties!.size).toMatchObject({ default: "1Gi" });
    expect(p.tls!.properties!.duration).toMatchObject({ default: "2160h" });
    expect(p.tls!.properties!.renewBefore).toMatchObject({ default: "720h" });
    expect(p.unseal!.properties!.shares).toMatchObject({ default: 5, minimum: 1, maximum: 10 });
    expect(p.unseal!.properties!.threshold).toMatchObject({ default: 3 });
    expect(p.unseal!.properties!.keepRootToken).toMatchObject({ default: false });
    expect(p.unseal!.properties!.retainKeysOnDelete).toMatchObject({ default: true });
  });

  it("returns a fresh object each time", () => {
    const a = vaultClusterCrd();
    a.spec.names.kind = "Changed";
    expect(vaultClusterCrd().spec.names.kind).toBe("VaultCluster");
  });
});
