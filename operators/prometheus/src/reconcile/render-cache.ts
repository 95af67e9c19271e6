// What a server's last reconcile rendered, so a reconcile whose inputs have not changed does not render again: the
// configuration (renderConfig: at 500 ServiceMonitors, 1.6 MiB of YAML stringified and hashed, two thirds of a
// steady reconcile's CPU) and each PrometheusRule's rule file (which selectMonitors renders to check its size).
//
// The renderers get each object as a RenderInput (yaml-output.ts: name, namespace, spec; their parameter types allow
// no more), and the key is the content of their arguments, all of them: the sha256 of their V8 serialization (the
// structured-clone encoding, which tells apart every value a plain object can hold: undefined from absent, -0, NaN;
// and throws on what it cannot encode, which is then rendered uncached). renderConfig and renderRuleFile are pure
// functions of their arguments (their only other inputs are the operator's own constants, fixed for the life of this
// in-memory cache; they read no option or flag), so the same key is the same output. Namespaces, Services, Pods and
// referenced Secret keys reach the configuration only through the arguments (which objects are selected, each
// monitor's discovery namespaces); the key values are copied into the config Secret each reconcile, not rendered.
// Neither object identity (core's Cache hands out copies) nor (uid, resourceVersion) is the key: a resourceVersion is
// reused after an etcd restore without --bump-revision (and by a re-seeded test API server), with other content; and
// a status write, which changes the resourceVersion, is no reason to render again.
// Serializing and hashing the 500-monitor bench's inputs (~750 KiB) takes ~3 ms, against ~280 ms for rendering.
// One configuration per server, and the rule files its last reconcile used; forgotten when the server is deleted.
import { createHash } from "node:crypto";
import { serialize } from "node:v8";
import type { Prometheus } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import { type ConfigInputs, type RenderedConfig, renderConfig } from "../desired/config.ts";
import { renderRuleFile } from "../desired/rule-file.ts";
import type { RenderInput } from "../desired/yaml-output.ts";

/** The key of a pure function's arguments: sha256 of their V8 serialization; undefined when they cannot be encoded. */
export function argumentsKey(args: readonly unknown[]): string | undefined {
  try {
    return createHash("sha256").update(serialize(args)).digest("base64");
  } catch {
    return undefined; // a value V8 cannot serialize (a function, a symbol): not cached
  }
}

/** What a renderer reads of `o`: its name, namespace and spec (the spec itself, not a copy: nothing changes it). */
function renderInput<Spec>(o: RenderInput<Spec>): RenderInput<Spec> {
  const metadata: RenderInput<Spec>["metadata"] = {};
  if (o.metadata.name !== undefined) metadata.name = o.metadata.name;
  if (o.metadata.namespace !== undefined) metadata.namespace = o.metadata.namespace;
  return { metadata, spec: o.spec };
}

/** A rendered configuration no one can change: the cache hands the same one to later reconciles. */
function frozen(config: RenderedConfig): RenderedConfig {
  Object.freeze(config.rules);
  for (const a of config.assets) Object.freeze(a);
  Object.freeze(config.assets);
  return Object.freeze(config);
}

/** Each server's last rendered configuration and rule files, by "namespace/name" of the server. */
export class RenderCache {
  private readonly configs = new Map<string, { key: string; config: RenderedConfig }>();
  private readonly ruleFiles = new Map<string, Map<string, string>>();

  /**
   * renderConfig of `prometheus` and `selected`, each object passed as its RenderInput; rendered again only when one
   * of those arguments changed since the server's last call.
   */
  config(
    server: string,
    prometheus: RenderInput<Prometheus["spec"]>,
    selected: ConfigInputs,
  ): RenderedConfig {
    const args: Parameters<typeof renderConfig> = [
      renderInput(prometheus),
      {
        serviceMonitors: selected.serviceMonitors.map((m) => ({ ...m, object: renderInput(m.object) })),
        podMonitors: selected.podMonitors.map((m) => ({ ...m, object: renderInput(m.object) })),
        rules: selected.rules.map(renderInput),
      },
    ];
    const key = argumentsKey(args);
    const last = this.configs.get(server);
    if (key !== undefined && last?.key === key) return last.config;
    const config = frozen(renderConfig(...args));
    if (key === undefined) this.configs.delete(server);
    else this.configs.set(server, { key, config });
    return config;
  }

  /**
   * renderRuleFile for one reconcile of `server` (selectMonitors' size check): a file the server's previous reconcile
   * rendered from the same content is reused. Keeps the files of this reconcile only.
   */
  ruleFileRenderer(server: string): (rule: PrometheusRule) => string {
    const before = this.ruleFiles.get(server) ?? new Map<string, string>();
    const now = new Map<string, string>();
    this.ruleFiles.set(server, now);
    return (rule) => {
      const input = renderInput(rule);
      const key = argumentsKey([input]);
      if (key === undefined) return renderRuleFile(input);
      const text = now.get(key) ?? before.get(key) ?? renderRuleFile(input);
      now.set(key, text);
      return text;
    };
  }

  /** Forgets a deleted server. */
  forget(server: string): void {
    this.configs.delete(server);
    this.ruleFiles.delete(server);
  }

  /** The servers with an entry (tests: a deleted server leaves none). */
  servers(): string[] {
    return [...new Set([...this.configs.keys(), ...this.ruleFiles.keys()])].sort();
  }
}
