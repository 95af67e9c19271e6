// Example: a manager's /metrics served securely (the default): HTTPS, and each request authenticated
// (TokenReview) and authorized (SubjectAccessReview, get on /metrics) by the API server. It makes a
// ServiceAccount, binds it to a metrics-reader ClusterRole, requests a token for it, and scrapes itself
// without a token (401) and with it (200); then it removes what it made.
//   node packages/core/examples/secure-metrics.ts [namespace]
import { request } from "node:https";
import { Client, defineKind, type KubeObject, Manager, ServiceAccount, silentLogger } from "@capstan/core";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";

const namespace = process.argv[2] ?? "default";
const ClusterRole = defineKind({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
});
const ClusterRoleBinding = defineKind({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRoleBinding",
  plural: "clusterrolebindings",
  namespaced: false,
});
const name = "capstan-example-metrics-reader";

/** GET over HTTPS, accepting the manager's self-signed certificate. */
function scrape(url: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    request(url, { rejectUnauthorized: false, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    })
      .on("error", reject)
      .end();
  });
}

const client = new Client();
// Your kubeconfig's user creates the reviews here; an operator's ServiceAccount needs create on
// tokenreviews and subjectaccessreviews.
const mgr = new Manager({
  name: "metrics-example",
  client,
  logger: silentLogger,
  metricsPort: 0,
  healthPort: 0,
});
const stop = new AbortController();
const running = mgr.start(stop.signal);
try {
  await client.create(ServiceAccount, { metadata: { name, namespace } });
  await client.create(ClusterRole, {
    metadata: { name },
    rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
  } as KubeObject);
  await client.create(ClusterRoleBinding, {
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name, namespace }],
  } as KubeObject);
  // A TokenRequest through client-node (core's client has no subresource create); same kubeconfig.
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const tokenRequest = await kubeConfig.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  while (mgr.boundPorts().metrics === undefined) await new Promise((r) => setTimeout(r, 50));
  const url = `https://127.0.0.1:${mgr.boundPorts().metrics}/metrics`;
  console.log(`${url} without a token: HTTP ${await scrape(url)}`);
  console.log(`${url} as ${namespace}/${name}: HTTP ${await scrape(url, tokenRequest.status?.token)}`);
} finally {
  for (const [kind, ns] of [
    [ClusterRoleBinding, undefined],
    [ClusterRole, undefined],
    [ServiceAccount, namespace],
  ] as const) {
    await client.delete(kind, name, ns).catch(() => {});
  }
  stop.abort();
  await running;
}
