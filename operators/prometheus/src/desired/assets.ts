// Files the generated configuration points at: the Secret and ConfigMap keys a monitor endpoint reads (TLS,
// authorization, basic auth), each copied by the reconciler into one assets Secret mounted at ASSETS_DIR, and the
// rule files mounted at RULES_DIR. Names are deterministic, so the configuration only changes when a reference does.
import { createHash } from "node:crypto";
import type { ScrapeEndpointCommon, SecretKeySelector } from "../api/monitoring-common.ts";

/** Where the prometheus container finds the configuration (prometheus.yml). */
export const CONFIG_DIR = "/etc/prometheus/config";
/** The configuration file, as `--config.file` names it. */
export const CONFIG_FILE = `${CONFIG_DIR}/prometheus.yml`;
/** Where the rule files are mounted (one file per PrometheusRule). */
export const RULES_DIR = "/etc/prometheus/rules";
/** Where the assets Secret (keys copied from the monitors' Secrets and ConfigMaps) is mounted. */
export const ASSETS_DIR = "/etc/prometheus/assets";

/** One key of a Secret or ConfigMap that a monitor endpoint needs as a file. */
export interface AssetRef {
  kind: "Secret" | "ConfigMap";
  /** The monitor's namespace (references are always local to the monitor). */
  namespace: string;
  name: string;
  key: string;
  /** The field that names it, e.g. "endpoints[0].tlsConfig.ca". */
  field: string;
  /** The key in the assets Secret, and the file name under ASSETS_DIR. */
  assetKey: string;
  /** Absolute path of the file in the prometheus container. */
  path: string;
}

/**
 * A Secret/ConfigMap key name from `parts` joined with "_": namespaces and object names never contain "_", so the
 * join is unambiguous. Longer than maxLength (a key's 253), it becomes `<first part>_<sha256 prefix>`.
 */
export function assetKey(parts: string[], maxLength = 253): string {
  const joined = parts.join("_");
  if (joined.length <= maxLength && /^[-._a-zA-Z0-9]+$/.test(joined)) return joined;
  const digest = createHash("sha256").update(parts.join("\0")).digest("hex").slice(0, 32);
  return `${parts[0]}_${digest}`;
}

function ref(
  kind: AssetRef["kind"],
  namespace: string,
  sel: { name?: string; key: string },
  field: string,
): AssetRef {
  const name = sel.name ?? "";
  const key = assetKey([kind.toLowerCase(), namespace, name, sel.key]);
  return { kind, namespace, name, key: sel.key, field, assetKey: key, path: `${ASSETS_DIR}/${key}` };
}

/** The Secret and ConfigMap keys one endpoint reads, in a fixed order; `where` prefixes the field names. */
export function endpointAssets(endpoint: ScrapeEndpointCommon, namespace: string, where: string): AssetRef[] {
  const out: AssetRef[] = [];
  const secret = (sel: SecretKeySelector | undefined, field: string) => {
    if (sel?.key) out.push(ref("Secret", namespace, sel, `${where}.${field}`));
  };
  const tls = endpoint.tlsConfig;
  for (const field of ["ca", "cert"] as const) {
    const v = tls?.[field];
    if (v?.secret?.key) out.push(ref("Secret", namespace, v.secret, `${where}.tlsConfig.${field}`));
    else if (v?.configMap?.key)
      out.push(ref("ConfigMap", namespace, v.configMap, `${where}.tlsConfig.${field}`));
  }
  secret(tls?.keySecret, "tlsConfig.keySecret");
  secret(endpoint.authorization?.credentials, "authorization.credentials");
  secret(endpoint.basicAuth?.username, "basicAuth.username");
  secret(endpoint.basicAuth?.password, "basicAuth.password");
  if (endpoint.bearerTokenSecret?.name) secret(endpoint.bearerTokenSecret, "bearerTokenSecret");
  return out;
}

/** The rule file of one PrometheusRule: its key in the rules ConfigMap/Secret and file name under RULES_DIR. */
export function ruleFileName(namespace: string, name: string): string {
  return `${assetKey([namespace, name], 248)}.yaml`;
}
