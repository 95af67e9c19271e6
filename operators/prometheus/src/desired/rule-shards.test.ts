// The rule shards (issue 29, item 6): 450 and 2,000 rules spread over Secrets each under the API server's 1 MiB
// (with the margin RULE_SHARD_BYTES leaves), the same input giving the same shards, one rule changed rewriting only
// its shard, a file moving only when its shard overflows; and how the pods mount them (one projected directory,
// slots in blocks, never fewer than the live StatefulSet mounts).
import { describe, expect, it } from "vitest";
import type { Prometheus } from "../api/prometheus.ts";
import { renderConfig } from "./config.ts";
import { defaultSpec, manyRules, none } from "./config-fixtures.ts";
import { configSecret, ruleShardSecrets } from "./objects/secrets.ts";
import { mountedRuleSlots, RULE_SLOT_BLOCK, ruleSlots, statefulSet } from "./objects/statefulset.ts";
import { CONFIG_HASH_ANNOTATION } from "./objects.ts";
import { MAX_RULE_FILE_BYTES, RULE_SHARD_BYTES, ruleFileBytes, shardRuleFiles } from "./rule-shards.ts";

const LIMIT = 1024 * 1024;
const server: Prometheus = {
  apiVersion: "monitoring.capstan.dev/v1alpha1",
  kind: "Prometheus",
  metadata: { name: "main", namespace: "monitoring", uid: "u-1" },
  spec: { ...defaultSpec },
};
const filesOf = (count: number) => renderConfig(server, { ...none, rules: manyRules(count) }).rules;
const bytesOf = (secret: { data?: Record<string, string> }) =>
  Object.entries(secret.data ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.from(v, "base64").length, 0);
const layoutOf = (shards: Record<string, string>[]) =>
  new Map(shards.flatMap((files, i) => Object.keys(files).map((f) => [f, i] as const)));
const changedShards = (a: Record<string, string>[], b: Record<string, string>[]) =>
  Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).filter(
    (i) => JSON.stringify(a[i] ?? {}) !== JSON.stringify(b[i] ?? {}),
  );

describe("shardRuleFiles", () => {
  it.each([
    [450, 3],
    [2000, 11],
  ])("%i rules: every shard Secret well under 1 MiB, every file exactly once", (count, expected) => {
    const files = filesOf(count);
    const shards = shardRuleFiles(files);
    expect(shards).toHaveLength(expected);
    const secrets = ruleShardSecrets(server, shards);
    expect(secrets.map((s) => s.metadata.name)).toEqual(
      Array.from({ length: expected }, (_, i) => `prometheus-main-rules-${i}`),
    );
    for (const s of secrets) {
      expect(bytesOf(s), s.metadata.name).toBeLessThanOrEqual(RULE_SHARD_BYTES);
      // The whole object, as JSON with the data base64-encoded (what a request carries), stays under 1 MiB too.
      expect(JSON.stringify(s).length, s.metadata.name).toBeLessThan(LIMIT);
    }
    const all = shards.flatMap((s) => Object.keys(s));
    expect(all.sort()).toEqual(Object.keys(files).sort());
    // The config Secret no longer carries rule files, only their checksums (about 90 bytes a file).
    const config = configSecret(server, renderConfig(server, { ...none, rules: manyRules(count) }), {});
    expect(Object.keys(config.data ?? {})).toEqual([
      "prometheus.yml.gz",
      "config.sha256",
      "rules.sha256",
      "assets.sha256",
    ]);
    expect(bytesOf(config)).toBeLessThan(LIMIT / 4);
  });

  it("the same input gives the same shards, with or without the layout it produced", () => {
    const files = filesOf(450);
    const first = shardRuleFiles(files);
    expect(shardRuleFiles({ ...files })).toEqual(first);
    expect(shardRuleFiles(files, first)).toEqual(first);
    expect(ruleShardSecrets(server, shardRuleFiles(files))).toEqual(ruleShardSecrets(server, first));
  });

  it("one rule changed: only its shard changes, even when it grows", () => {
    const files = filesOf(450);
    const first = shardRuleFiles(files);
    const target = "monitoring_team-rules-0200.yaml";
    const home = first.findIndex((s) => target in s);
    for (const text of [
      (files[target] ?? "").replace("for: 10m", "for: 15m"),
      `${files[target]}# a comment of 200 bytes ${"x".repeat(176)}\n`,
    ]) {
      const next = shardRuleFiles({ ...files, [target]: text }, first);
      expect(changedShards(first, next)).toEqual([home]);
      expect(next[home]?.[target]).toBe(text);
    }
  });

  it("a file whose shard overflows moves alone to the first shard with room; the others stay", () => {
    const files = filesOf(450);
    const first = shardRuleFiles(files);
    const target = "monitoring_team-rules-0100.yaml";
    const grown = `${files[target]}# ${"x".repeat(20_000)}\n`;
    const next = shardRuleFiles({ ...files, [target]: grown }, first);
    const before = layoutOf(first);
    const after = layoutOf(next);
    const moved = [...after].filter(([f, i]) => before.get(f) !== i).map(([f]) => f);
    expect(moved).toEqual([target]);
    expect(after.get(target)).toBe(2); // shards 0 and 1 are full; 2 has room
    expect(changedShards(first, next)).toEqual([0, 2]);
  });

  it("a new file goes to the first shard with room; a file alone over the budget gets a shard of its own", () => {
    const files = filesOf(450);
    const first = shardRuleFiles(files);
    const big = `groups: []\n# ${"y".repeat(RULE_SHARD_BYTES)}\n`;
    expect(ruleFileBytes("a_big.yaml", big)).toBeLessThan(MAX_RULE_FILE_BYTES);
    const next = shardRuleFiles({ ...files, "a_big.yaml": big, "a_small.yaml": "groups: []\n" }, first);
    const small = next.findIndex((shard) => "a_small.yaml" in shard);
    expect(small).toBeLessThan(3);
    expect(Object.keys(next[3] ?? {})).toEqual(["a_big.yaml"]);
    expect(changedShards(first, next)).toEqual([small, 3]);
  });

  it("files removed leave their shard smaller, or empty (not needed: no Secret)", () => {
    const files = filesOf(450);
    const first = shardRuleFiles(files);
    const kept = Object.fromEntries(Object.entries(files).filter(([f]) => f < "monitoring_team-rules-0100"));
    const next = shardRuleFiles(kept, first);
    expect(next.slice(1).every((s) => Object.keys(s).length === 0)).toBe(true);
    expect(ruleShardSecrets(server, next).map((s) => s.metadata.name)).toEqual(["prometheus-main-rules-0"]);
  });
});

describe("how the pods mount the shards", () => {
  it("one projected directory each for the candidate and the last-good copy: the Secret, then every slot optional", () => {
    const sts = statefulSet(server, { reloaderImage: "busybox:1.37" }, 16);
    const spec = sts.spec?.template.spec;
    const candidate = spec?.volumes?.find((v) => v.name === "candidate");
    expect(candidate?.projected?.sources?.[0]).toEqual({ secret: { name: "prometheus-main" } });
    expect(candidate?.projected?.sources?.slice(1)).toEqual(
      Array.from({ length: 16 }, (_, i) => ({
        secret: { name: `prometheus-main-rules-${i}`, optional: true },
      })),
    );
    expect(candidate?.projected?.defaultMode).toBe(0o440);
    const lastGood = spec?.volumes?.find((v) => v.name === "last-good");
    expect(lastGood?.projected?.sources).toEqual([
      { secret: { name: "prometheus-main-last-good", optional: true } },
      ...Array.from({ length: 16 }, (_, i) => ({
        secret: { name: `prometheus-main-last-good-rules-${i}`, optional: true },
      })),
    ]);
    // Prometheus never reads either: only the live emptyDir the reloader fills (rule_files name
    // /etc/prometheus/rules/<file>, a link into it).
    const prom = spec?.containers?.find((c) => c.name === "prometheus");
    expect(prom?.volumeMounts?.map((m) => `${m.name} ${m.mountPath}`)).toEqual([
      "live /etc/prometheus",
      "data /prometheus",
    ]);
    expect(mountedRuleSlots(sts)).toBe(16);
    expect(JSON.stringify(sts)).not.toContain(CONFIG_HASH_ANNOTATION);
  });

  it("the shard count changing within the slots leaves the pod template alone; the slots never shrink", () => {
    expect(ruleSlots(0)).toBe(RULE_SLOT_BLOCK);
    expect(ruleSlots(3)).toBe(8);
    expect(ruleSlots(8)).toBe(8);
    expect(ruleSlots(11)).toBe(16);
    expect(ruleSlots(2, 16)).toBe(16);
    const settings = { reloaderImage: "busybox:1.37" };
    const three = statefulSet(server, settings, ruleSlots(3));
    expect(statefulSet(server, settings, ruleSlots(8, mountedRuleSlots(three)))).toEqual(three);
    expect(statefulSet(server, settings, ruleSlots(1, mountedRuleSlots(three)))).toEqual(three);
    // 2,000 rules (11 shards) need a second block: the only time the template changes.
    const eleven = statefulSet(server, settings, ruleSlots(11, mountedRuleSlots(three)));
    expect(mountedRuleSlots(eleven)).toBe(16);
    expect(statefulSet(server, settings, ruleSlots(3, mountedRuleSlots(eleven)))).toEqual(eleven);
  });
});
