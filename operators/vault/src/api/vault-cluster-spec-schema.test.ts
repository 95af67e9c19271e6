// The CEL rules and patterns of VaultCluster.spec's schema mean what their messages say (checked here with
// JavaScript equivalents; e2e/suites/vault/crd-validation.test.ts runs the real CEL).
import { GO_DURATION_PATTERN } from "@capstan/core";
import { describe, expect, it } from "vitest";
import { OPERATOR_OWNED_CONFIG_KEYS } from "./vault-cluster-defaults.ts";
import type { VaultAutopilot } from "./vault-cluster-spec.ts";
import { AUTOPILOT_MIN_QUORUM_RULES, vaultClusterSpecSchema } from "./vault-cluster-spec-schema.ts";

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
type Rule = { rule: string; message: string };
const spec = vaultClusterSpecSchema as unknown as Schema;
const rules = (s: Schema | undefined) => (s?.["x-kubernetes-validations"] ?? []) as Rule[];

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
