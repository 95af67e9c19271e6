// Which files of the Prometheus pods a monitor may name (issue 29 item 7). A `*File` field of a monitor endpoint
// (bearerTokenFile, tlsConfig.caFile, certFile, keyFile) makes Prometheus read that path in its own container, where
// every monitor's Secret keys are mounted (ASSETS_DIR) along with the pods' ServiceAccount token: a monitor in
// namespace `evil` naming another team's token file would have Prometheus send it to evil's target. So the server
// refuses such a monitor on its own status unless a cluster admin allows it (spec.arbitraryFSAccessThroughSMs.deny:
// false, prometheus-operator's field; its default allows, ours denies). Two well-known files stay allowed:
// - the ServiceAccount's ca.crt, for any monitor: the cluster's CA certificate, public (every pod has it), and a
//   CA file only decides which servers Prometheus trusts;
// - the ServiceAccount's token, for monitors in the server's own namespace: whoever can create pods there can
//   mount that token already, while a monitor elsewhere could send the server's identity (its discovery RBAC, its
//   kubelet and API server metrics access) to a target of its own (prometheus-operator's documented attack); other
//   namespaces a cluster admin trusts are named by spec.arbitraryFSAccessThroughSMs.serviceAccountTokenNamespaceSelector
//   (Capstan's operator charts' ServiceMonitors scrape with that token from their own namespaces).
// kube-prometheus-stack's kubelet and apiserver ServiceMonitors use exactly these two files, from the release
// namespace. Paths are compared as written: `..` or another spelling of the same file is refused. Pure.
import type { Prometheus } from "../api/prometheus.ts";

/** Where the kubelet mounts the pod's ServiceAccount token, CA certificate and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** The ServiceAccount's CA certificate (the cluster's CA): any monitor may name it. */
export const SERVICE_ACCOUNT_CA = `${SERVICE_ACCOUNT_DIR}/ca.crt`;
/** The ServiceAccount's token: monitors in the server's own namespace may name it. */
export const SERVICE_ACCOUNT_TOKEN = `${SERVICE_ACCOUNT_DIR}/token`;

/** Whether the server lets monitors name any file of its pods (spec.arbitraryFSAccessThroughSMs.deny: false). */
export function allowsAnyFile(p: Prometheus): boolean {
  return p.spec.arbitraryFSAccessThroughSMs?.deny === false;
}

/** Every `*File` field set in `value` (an endpoint), as [path under `at`, value], depth first, in key order. */
export function fileFields(value: unknown, at: string): [field: string, path: unknown][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : 1,
  )) {
    if (k.endsWith("File") && v !== undefined && v !== "") out.push([`${at}.${k}`, v]);
    else out.push(...fileFields(v, `${at}.${k}`));
  }
  return out;
}

/**
 * Why the server `p` refuses the files an endpoint names (`at`, e.g. "endpoints[0]"), for a monitor whose namespace
 * may (`mayUseToken`: the server's own, or one serviceAccountTokenNamespaceSelector picks) or may not send the pods'
 * ServiceAccount token: the first refused field with what to do instead, or undefined.
 */
export function fileAccessError(
  endpoint: unknown,
  at: string,
  p: Prometheus,
  mayUseToken: boolean,
): string | undefined {
  if (allowsAnyFile(p)) return undefined;
  const home = p.metadata.namespace ?? "";
  const server = `Prometheus ${home}/${p.metadata.name ?? ""}`;
  for (const [field, path] of fileFields(endpoint, at)) {
    if (path === SERVICE_ACCOUNT_CA && field.endsWith(".caFile")) continue;
    if (path === SERVICE_ACCOUNT_TOKEN && field.endsWith(".bearerTokenFile") && mayUseToken) continue;
    const instead = field.endsWith(".bearerTokenFile")
      ? "authorization.credentials (a Secret in the monitor's namespace)"
      : field.endsWith(".caFile")
        ? "tlsConfig.ca (a Secret or ConfigMap in the monitor's namespace)"
        : field.endsWith(".certFile")
          ? "tlsConfig.cert (a Secret or ConfigMap in the monitor's namespace)"
          : field.endsWith(".keyFile")
            ? "tlsConfig.keySecret (a Secret in the monitor's namespace)"
            : "a Secret in the monitor's namespace";
    const why =
      path === SERVICE_ACCOUNT_TOKEN && field.endsWith(".bearerTokenFile")
        ? `the ServiceAccount token of ${server}'s pods is only for monitors in its namespace ${home} and in those its spec.arbitraryFSAccessThroughSMs.serviceAccountTokenNamespaceSelector selects (a monitor elsewhere could send the server's identity to its own target)`
        : `a monitor may not name files of ${server}'s pods, where other namespaces' credentials are mounted (only ${SERVICE_ACCOUNT_CA}, and ${SERVICE_ACCOUNT_TOKEN} from the namespaces allowed to)`;
    return `${field} ${JSON.stringify(path)}: ${why}; use ${instead}, or a cluster admin sets spec.arbitraryFSAccessThroughSMs.deny: false on ${server}`;
  }
  return undefined;
}
