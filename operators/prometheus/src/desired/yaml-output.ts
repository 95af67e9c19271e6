// How the operator writes what Prometheus reads (prometheus.yml and the rule files): YAML without line folding or
// aliases, maps in key order, objects named `<namespace>/<name>`. Deterministic, so an unchanged input is no write.
import { stringify } from "yaml";

/** A YAML mapping being built. */
export type Obj = Record<string, unknown>;

/** `<namespace>/<name>` of an object. */
export function keyOf(o: { metadata: { namespace?: string; name?: string } }): string {
  return `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
}

/** Orders strings by UTF-16 code unit (never by locale). */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `m` with its keys in order. */
export function sortedMap<V>(m: Record<string, V>): Record<string, V> {
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => compare(a, b)));
}

/** `value` as YAML, deterministically. */
export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/**
 * What the configuration's renderers (renderConfig, renderRuleFile) read of an object: its name, namespace and spec;
 * never its status, labels, uid or resourceVersion. The reconciler's render cache (reconcile/render-cache.ts) passes
 * them exactly this and keys on it, so a status write is no reason to render again; reading more of an object there
 * fails to compile until the cache passes it too.
 */
export interface RenderInput<Spec> {
  metadata: { name?: string; namespace?: string };
  spec: Spec;
}
