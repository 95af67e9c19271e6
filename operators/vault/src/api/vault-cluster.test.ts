// The VaultCluster types and schema agree and the CRD is well formed (the spec's CEL rules are checked in
// vault-cluster-spec-schema.test.ts).
import { describe, expect, it } from "vitest";
import {
  type VaultAutopilot,
  type VaultAutopilotStatus,
  VaultClusterKind,
  type VaultClusterSpec,
  type VaultClusterStatus,
  type VaultPodTemplate,
  type VaultRaftPeer,
  type VaultStorage,
  type VaultTLS,
  type VaultUnseal,
  vaultClusterCrd,
  vaultClusterSchema,
} from "./vault-cluster.ts";

// Each record must name every key of its type and nothing else (the compiler checks that side); the tests check
// the schema names the same properties, so the hand-written types and the schema cannot drift.
const specKeys: Record<keyof VaultClusterSpec, true> = {
  replicas: true,
  version: true,
  repository: true,
  storage: true,
  tls: true,
  unseal: true,
  config: true,
  podTemplate: true,
  paused: true,
  autopilot: true,
  restore: true,
};
const storageKeys: Record<keyof VaultStorage, true> = {
  size: true,
  storageClassName: true,
  whenDeleted: true,
};
const tlsKeys: Record<keyof VaultTLS, true> = { secretName: true, duration: true, renewBefore: true };
const unsealKeys: Record<keyof VaultUnseal, true> = {
  shares: true,
  threshold: true,
  keepRootToken: true,
  retainKeysOnDelete: true,
};
const podTemplateKeys: Record<keyof VaultPodTemplate, true> = {
  labels: true,
  annotations: true,
  resources: true,
  affinity: true,
  tolerations: true,
  nodeSelector: true,
  antiAffinity: true,
  topologyKey: true,
};
const statusKeys: Record<keyof VaultClusterStatus, true> = {
  observedGeneration: true,
  phase: true,
  conditions: true,
  replicas: true,
  readyReplicas: true,
  sealedReplicas: true,
  selector: true,
  active: true,
  standbys: true,
  sealed: true,
  raftPeers: true,
  currentVersion: true,
  clusterID: true,
  tls: true,
  endpoint: true,
  autopilot: true,
  restore: true,
};
const autopilotKeys: Record<keyof VaultAutopilot, true> = {
  cleanupDeadServers: true,
  deadServerLastContactThreshold: true,
  minQuorum: true,
  serverStabilizationTime: true,
  lastContactThreshold: true,
  maxTrailingLogs: true,
};
const autopilotStatusKeys: Record<keyof VaultAutopilotStatus, true> = {
  healthy: true,
  failureTolerance: true,
  optimisticFailureTolerance: true,
  voters: true,
  leader: true,
};
const peerKeys: Record<keyof VaultRaftPeer, true> = {
  nodeID: true,
  address: true,
  voter: true,
  leader: true,
};

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
const root = vaultClusterSchema as Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

describe("VaultCluster types match the schema", () => {
  it.each([
    ["spec", specKeys, spec],
    ["spec.storage", storageKeys, spec.properties!.storage],
    ["spec.tls", tlsKeys, spec.properties!.tls],
    ["spec.unseal", unsealKeys, spec.properties!.unseal],
    ["spec.podTemplate", podTemplateKeys, spec.properties!.podTemplate],
    ["spec.autopilot", autopilotKeys, spec.properties!.autopilot],
    ["status", statusKeys, status],
    ["status.autopilot", autopilotStatusKeys, status.properties!.autopilot],
    ["status.raftPeers[]", peerKeys, status.properties!.raftPeers!.items],
  ] as const)("%s", (_path, keys, schema) => {
    expect(props(schema)).toEqual(Object.keys(keys).sort());
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
