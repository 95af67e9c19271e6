// The Secrets of a server's configuration: the config Secret (the candidate generation: prometheus.yml gzipped, the
// asset files, the generation's checksums), the rule shards (Secrets holding the rule files, see rule-shards.ts), and
// the last-good copies of both (what a starting pod loads: see reloader.ts).

import { gzipSync } from "node:zlib";
import type { SecretObject } from "@capstan/core";
import type { Prometheus } from "../../api/prometheus.ts";
import type { RenderedConfig } from "../config.ts";
import { CHECKSUM_KEYS, generationOf } from "../generation.ts";
import {
  CONFIG_HASH_ANNOTATION,
  GENERATION_ANNOTATION,
  LAST_GOOD_COMPONENT,
  LAST_GOOD_SHARD_COMPONENT,
  LAST_GOOD_VERSION_ANNOTATION,
  lastGoodName,
  lastGoodShardName,
  RULE_SHARD_COMPONENT,
  ruleShardName,
  serverName,
} from "../objects.ts";
import { CONFIG_KEY, VERSION_KEY } from "../reloader.ts";
import { meta, owned } from "./metadata.ts";

/** configData of each frozen configuration (the reconciler's render cache hands the same one out while unchanged). */
const gzipped = new WeakMap<RenderedConfig, string>();

/** The config Secret's contents besides the asset files: prometheus.yml gzipped (the rule files are in shards). */
export function configData(config: RenderedConfig): Record<string, string> {
  // gzip output is deterministic for the same input (no name, mtime 0), so an unchanged config is no write. A frozen
  // configuration's yaml cannot change, so its gzip is computed once (1.6 MiB at level 9 is ~20 ms).
  let gz = gzipped.get(config);
  if (gz === undefined) {
    gz = gzipSync(Buffer.from(config.yaml, "utf8"), { level: 9 }).toString("base64");
    if (Object.isFrozen(config)) gzipped.set(config, gz);
  }
  return { [CONFIG_KEY]: gz };
}

/**
 * The Secret `prometheus-<name>`, the candidate generation: prometheus.yml gzipped (key CONFIG_KEY), one key per
 * asset file (`assets`: assetKey -> the referenced Secret/ConfigMap value, already base64), and the generation's
 * checksum files (generation.ts) covering those and the rule files in the shards. Annotated with the configuration
 * hash (which covers the rule files too) and the generation id. Projected with the rule shards at CANDIDATE_DIR in the
 * reloader, which installs it once complete.
 */
export function configSecret(
  p: Prometheus,
  config: RenderedConfig,
  assets: Record<string, string>,
): SecretObject {
  const data: Record<string, string> = { ...configData(config) };
  const sortedAssets: Record<string, string> = {};
  for (const key of Object.keys(assets).sort()) sortedAssets[key] = assets[key] ?? "";
  Object.assign(data, sortedAssets);
  const generation = generationOf(
    CONFIG_KEY,
    Buffer.from(data[CONFIG_KEY] ?? "", "base64"),
    config.rules,
    sortedAssets,
  );
  for (const k of CHECKSUM_KEYS) data[k] = b64(generation.checksums[k]);
  return owned<SecretObject>(p, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      ...meta(p, serverName(p)),
      annotations: { [CONFIG_HASH_ANNOTATION]: config.hash, [GENERATION_ANNOTATION]: generation.id },
    },
    type: "Opaque",
    data,
  });
}

/** The last-good generation: its Secret and rule shards (what {@link lastGoodSecrets} builds). */
export interface LastGood {
  secret: SecretObject;
  shards: SecretObject[];
}

/**
 * The last-good copy of a candidate generation that every pod of Prometheus `version` accepted: the Secret
 * `prometheus-<name>-last-good` (the config Secret's data, plus the key `version`) and `prometheus-<name>-last-good-
 * rules-<i>` (rule shard i's data), so the same sizes and limits hold as for the candidate. The copy is
 * content-addressed (annotated with the generation id): recording the same generation again is no write.
 */
export function lastGoodSecrets(
  p: Prometheus,
  candidate: SecretObject,
  shards: readonly SecretObject[],
  version: string,
): LastGood {
  const base = meta(p, lastGoodName(p));
  const secret = owned<SecretObject>(p, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      ...base,
      labels: { ...base.labels, "app.kubernetes.io/component": LAST_GOOD_COMPONENT },
      annotations: {
        [GENERATION_ANNOTATION]: candidate.metadata.annotations?.[GENERATION_ANNOTATION] ?? "",
        [LAST_GOOD_VERSION_ANNOTATION]: version,
      },
    },
    type: "Opaque",
    data: { ...candidate.data, [VERSION_KEY]: b64(version) },
  });
  const prefix = `${serverName(p)}-rules-`;
  const copies = shards.map((s) => {
    const index = Number((s.metadata.name ?? "").slice(prefix.length));
    const m = meta(p, lastGoodShardName(p, index));
    return owned<SecretObject>(p, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { ...m, labels: { ...m.labels, "app.kubernetes.io/component": LAST_GOOD_SHARD_COMPONENT } },
      type: "Opaque",
      data: { ...s.data },
    });
  });
  return { secret, shards: copies };
}

function b64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

/**
 * The rule shards `prometheus-<name>-rules-<i>` of `shards` (shardRuleFiles' answer: index -> file name -> YAML), one
 * Secret per shard that holds a file, each key a rule file (its name under RULES_DIR). Labelled with the component
 * `rules`, owned by the server.
 */
export function ruleShardSecrets(p: Prometheus, shards: readonly Record<string, string>[]): SecretObject[] {
  const out: SecretObject[] = [];
  shards.forEach((files, i) => {
    const names = Object.keys(files).sort();
    if (names.length === 0) return;
    const metadata = meta(p, ruleShardName(p, i));
    out.push(
      owned<SecretObject>(p, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          ...metadata,
          labels: { ...metadata.labels, "app.kubernetes.io/component": RULE_SHARD_COMPONENT },
        },
        type: "Opaque",
        data: Object.fromEntries(names.map((f) => [f, b64(files[f] ?? "")])),
      }),
    );
  });
  return out;
}
