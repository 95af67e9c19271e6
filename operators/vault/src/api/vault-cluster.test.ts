// The VaultCluster types and schema agree, the CRD is well formed, and the CEL rules mean what their messages say
// (checked here with JavaScript equivalents; e2e/suites/vault/crd-validation.test.ts runs the real CEL).
import { describe, expect, it } from "vitest";
import {
  AUTOPILOT_MIN_QUORUM_RULES,
  GO_DURATION_PATTERN,
  OPERATOR_OWNED_CONFIG_KEYS,
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
type Rule = { rule: string; message: string };
const root = vaultClusterSchema as Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();
const rules = (s: Schema | undefined) => (s?.["x-kubernetes-validations"] ?? []) as Rule[];

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

describe("version rule", () => {
  const rule = rules(spec.properties!.version)[0]!;
  const regex = new RegExp(/'(.*)'/.exec(rule.rule)![1]!);
  it.each(["1.14.8", "1.14.6", "2.0.0"])("accepts %s", (v) => expect(regex.test(v)).toBe(true));
  it.each(["v1.14.8", "1.14", "1.14.8-ent", "latest"])("rejects %s", (v) =>
    expect(regex.test(v)).toBe(false),
  );
});

describe("Go duration pattern", () => {
  const regex = new RegExp(GO_DURATION_PATTERN);
  it.each(["2160h", "1h30m", "90s", "1.5h", "10m"])("accepts %s", (v) => expect(regex.test(v)).toBe(true));
  it.each(["90d", "1 h", "", "h", "-1h"])("rejects %s", (v) => expect(regex.test(v)).toBe(false));
});

describe("config rule", () => {
  const rule = rules(spec.properties!.config)[0]!;
  it.each(OPERATOR_OWNED_CONFIG_KEYS)("lists %s", (key) => {
    expect(rule.rule).toContain(`!has(self.${key})`);
    expect(rule.message).toContain(key);
  });
});

describe("unseal rules", () => {
  const [notExceed, atLeastTwo, immutable] = rules(spec.properties!.unseal);
  it("threshold must not exceed shares", () => {
    expect(notExceed!.rule).toBe("self.threshold <= self.shares");
    expect(notExceed!.message).toContain("threshold must not exceed shares");
  });
  it("a threshold of 1 only with one share", () => expect(atLeastTwo!.rule).toContain("self.threshold >= 2"));
  it("shares and threshold are transition rules", () => expect(immutable!.rule).toContain("oldSelf.shares"));
});

describe("storage rules", () => {
  const [classImmutable, noShrink] = rules(spec.properties!.storage);
  it("the class is immutable", () => expect(classImmutable!.rule).toContain("oldSelf.storageClassName"));
  it("the size may grow, never shrink (compared as quantities)", () => {
    expect(noShrink!.rule).toBe(
      "!has(oldSelf.size) || !has(self.size) || quantity(self.size).compareTo(quantity(oldSelf.size)) >= 0",
    );
    expect(noShrink!.message).toContain("cannot shrink");
  });
});

describe("autopilot rules", () => {
  // The spec-level CEL rules, read in JavaScript (e2e/suites/vault/crd-validation.test.ts runs the real CEL).
  const allowed = (replicas: number, a: VaultAutopilot) =>
    AUTOPILOT_MIN_QUORUM_RULES.every((r) => {
      expect(rules(spec)).toContainEqual(r);
      const js = r.rule
        .replaceAll("has(self.autopilot)", "(a !== undefined)")
        .replace(/has\(self\.autopilot\.(\w+)\)/g, "(a.$1 !== undefined)")
        .replaceAll("self.autopilot.", "a.")
        .replaceAll("self.replicas / 2", "Math.floor(replicas / 2)")
        .replaceAll("self.replicas", "replicas");
      return new Function("a", "replicas", `return ${js};`)(a, replicas) as boolean;
    });
  it.each<[number, VaultAutopilot, boolean]>([
    [3, {}, true],
    [1, { cleanupDeadServers: false }, true],
    [3, { cleanupDeadServers: true, minQuorum: 3 }, true],
    [5, { cleanupDeadServers: true, minQuorum: 3 }, true],
    [5, { cleanupDeadServers: true, minQuorum: 5 }, true],
    [3, { cleanupDeadServers: true }, false],
    [3, { cleanupDeadServers: true, minQuorum: 2 }, false],
    [1, { cleanupDeadServers: true, minQuorum: 3 }, false],
    [3, { cleanupDeadServers: true, minQuorum: 5 }, false],
    [3, { minQuorum: 5 }, false],
  ])("replicas %i, %j: allowed %s", (replicas, a, ok) => expect(allowed(replicas, a)).toBe(ok));

  it("durations have Vault's floors (0 would mean 'unchanged' to Vault)", () => {
    const p = spec.properties!.autopilot!.properties!;
    expect(rules(p.deadServerLastContactThreshold)[0]!.rule).toBe("duration(self) >= duration('1m')");
    expect(rules(p.serverStabilizationTime)[0]!.rule).toBe("duration(self) >= duration('1s')");
    expect(rules(p.lastContactThreshold)[0]!.rule).toBe("duration(self) >= duration('1s')");
    expect(p.maxTrailingLogs).toMatchObject({ minimum: 1, default: 1000 });
    expect(p.deadServerLastContactThreshold).toMatchObject({ default: "24h", pattern: GO_DURATION_PATTERN });
    expect(spec.properties!.autopilot!.default).toBeUndefined();
  });
});
