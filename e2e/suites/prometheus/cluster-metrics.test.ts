// spec.clusterMetrics (issue 29 item 10) against the real node's kubelet and the real API server, with monitors shaped
// like kube-prometheus-stack's (the pod's ServiceAccount token, HTTPS): without it, both answer 403 to the
// Prometheus pod; with it, the kubelet's /metrics and /metrics/cadvisor and the API server's /metrics are scraped
// (cAdvisor's container series present); deleting the server takes its ClusterRole and binding away. The kubelet's
// endpoints come from a selector-less Service and an EndpointSlice at the node's address, as prometheus-operator's
// kubelet controller keeps them.
import { type Client, EndpointSlice, Service } from "@capstan/core";
import {
  type ClusterRoleObject,
  PrometheusKind,
  type ServiceMonitor,
  ServiceMonitorKind,
} from "@capstan/prometheus-operator";
import {
  connect,
  createNamespace,
  deleteAndWait,
  type HelmRelease,
  type TestNamespace,
  waitFor,
} from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  activeTargets,
  installOperator,
  minutes,
  nodeName,
  printFailureReport,
  prometheus,
  prometheusSuitesEnabled,
  query,
  restricted,
  serverIps,
  waitAvailable,
} from "./fixtures/prometheus.ts";

let client: Client;
let opNs: TestNamespace;
let ns: TestNamespace;
let op: HelmRelease | undefined;
const server = () => prometheus(ns.name, "cm", { serviceMonitorSelector: {} });
const TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";
const KUBELET_LABELS = { "k8s-app": "kubelet", "app.kubernetes.io/name": "kubelet" };

/** kube-prometheus-stack's kubelet monitor, trimmed: /metrics and /metrics/cadvisor over HTTPS with the pod's token. */
function kubeletMonitor(namespace: string): ServiceMonitor {
  const endpoint = (path: string) => ({
    port: "https-metrics",
    scheme: "https",
    path,
    interval: "5s",
    bearerTokenFile: TOKEN,
    honorLabels: true,
    tlsConfig: { insecureSkipVerify: true },
  });
  return {
    apiVersion: ServiceMonitorKind.apiVersion,
    kind: ServiceMonitorKind.kind,
    metadata: { name: "kubelet", namespace },
    spec: {
      jobLabel: "k8s-app",
      selector: { matchLabels: KUBELET_LABELS },
      endpoints: [endpoint("/metrics"), endpoint("/metrics/cadvisor")],
    },
  } as ServiceMonitor;
}

/** kube-prometheus-stack's apiserver monitor: the `kubernetes` Service of `default`, HTTPS with the pod's token. */
function apiServerMonitor(namespace: string): ServiceMonitor {
  return {
    apiVersion: ServiceMonitorKind.apiVersion,
    kind: ServiceMonitorKind.kind,
    metadata: { name: "apiserver", namespace },
    spec: {
      jobLabel: "component",
      namespaceSelector: { matchNames: ["default"] },
      selector: { matchLabels: { component: "apiserver", provider: "kubernetes" } },
      endpoints: [
        {
          port: "https",
          scheme: "https",
          interval: "5s",
          bearerTokenFile: TOKEN,
          tlsConfig: { insecureSkipVerify: true },
        },
      ],
    },
  } as ServiceMonitor;
}

/** The server's targets of `job` and their health and last error, on its (one) pod. */
async function targets(job: string) {
  const [ip] = await serverIps(client, server());
  if (ip === undefined) return [];
  return (await activeTargets(ip))
    .filter((t) => t.labels.job === job)
    .map((t) => ({ path: t.labels.metrics_path ?? t.scrapePool, health: t.health, lastError: t.lastError }));
}

describe.skipIf(!prometheusSuitesEnabled)("spec.clusterMetrics: kubelet and API server metrics", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "prom-cm-op", restricted);
    ns = await createNamespace(client, "prom-cm", restricted);
    // Cluster-wide: the API server monitor's discovery is granted in namespace default.
    op = await installOperator(client, opNs.name, "");
    // The kubelet's endpoints, as prometheus-operator's kubelet controller keeps them: the node's InternalIP.
    const node = (await client.raw(`/api/v1/nodes/${nodeName}`)) as {
      status?: { addresses?: { type: string; address: string }[] };
    };
    const ip = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
    expect(ip, `node ${nodeName}'s InternalIP`).toBeDefined();
    await client.create(Service, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kubelet", namespace: ns.name, labels: KUBELET_LABELS },
      spec: { clusterIP: "None", ports: [{ name: "https-metrics", port: 10250, targetPort: 10250 }] },
    });
    await client.create(EndpointSlice, {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "kubelet-nodes",
        namespace: ns.name,
        labels: { ...KUBELET_LABELS, "kubernetes.io/service-name": "kubelet" },
      },
      addressType: "IPv4",
      endpoints: [
        {
          addresses: [ip!],
          nodeName,
          targetRef: { kind: "Node", name: nodeName },
          conditions: { ready: true },
        },
      ],
      ports: [{ name: "https-metrics", port: 10250, protocol: "TCP" }],
    });
    await client.create(ServiceMonitorKind, kubeletMonitor(ns.name));
    await client.create(ServiceMonitorKind, apiServerMonitor(ns.name));
    await client.create(PrometheusKind, server());
    await waitAvailable(client, server(), 1).catch(async (err: unknown) => {
      await printFailureReport(client, server(), op);
      throw err;
    });
  }, minutes(6));

  afterAll(async () => {
    // While the operator runs: the server's finalizer (its RBAC in default, cluster-wide) is removed with them.
    if (ns !== undefined) {
      await deleteAndWait(client, PrometheusKind, server(), minutes(2)).catch((err: unknown) => {
        console.log(`deleting the Prometheus: ${String(err)}`);
      });
    }
    await op?.uninstall();
    for (const n of [ns, opNs]) await n?.cleanup();
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, server(), op));
  });

  it(
    "without it the kubelet and the API server refuse the pod (403); with it both are scraped",
    async () => {
      const forbidden = (job: string, n: number) =>
        waitFor(
          `${n} ${job} target(s) scraped and refused with 403`,
          async () => {
            const ts = await targets(job);
            return ts.length === n && ts.every((t) => t.health === "down" && t.lastError.includes("403"))
              ? ts
              : undefined;
          },
          minutes(2),
          2_000,
        );
      await forbidden("kubelet", 2);
      await forbidden("apiserver", 1);

      await client.patch(
        PrometheusKind,
        "cm",
        ns.name,
        { spec: { clusterMetrics: { kubelet: true, apiServer: true } } },
        "merge",
      );
      for (const [job, n] of [
        ["kubelet", 2],
        ["apiserver", 1],
      ] as const) {
        await waitFor(
          `${n} ${job} target(s) up`,
          async () => {
            const ts = await targets(job);
            return ts.length === n && ts.every((t) => t.health === "up") ? ts : undefined;
          },
          minutes(2),
          2_000,
        );
      }
      // cAdvisor's series, from /metrics/cadvisor, and the API server's own.
      const [ip] = await serverIps(client, server());
      expect((await query(ip!, `count(container_cpu_usage_seconds_total{job="kubelet"})`)).length).toBe(1);
      expect((await query(ip!, `count(apiserver_request_total{job="apiserver"})`)).length).toBe(1);
    },
    minutes(6),
  );

  it(
    "deleting the server takes its cluster-metrics ClusterRole and binding away",
    async () => {
      const name = `prometheus-${ns.name}-cm-cluster-metrics`;
      const role = (await client.raw(
        `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`,
      )) as ClusterRoleObject;
      expect(JSON.stringify(role.rules)).not.toContain("nodes/proxy");
      await deleteAndWait(client, PrometheusKind, server(), minutes(2));
      await waitFor(
        "the ClusterRole gone",
        async () => {
          try {
            await client.raw(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`);
            return undefined;
          } catch (err) {
            if ((err as { code?: number }).code === 404) return true;
            throw err;
          }
        },
        minutes(1),
        1_000,
      );
    },
    minutes(3),
  );
});
