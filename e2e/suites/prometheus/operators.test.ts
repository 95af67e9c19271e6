// Out of the box, a Prometheus scrapes the other Capstan operators: their charts' ServiceMonitors (secure metrics:
// the Prometheus pods' token, bound to each chart's metrics-reader ClusterRole) give `up == 1` and the
// controller-runtime metrics of each; a PodMonitor on the etcd members' metrics port gives etcd_server_has_leader
// for every member; the charts' PrometheusRules load, and every alert expression and dashboard query evaluates.
import { fileURLToPath } from "node:url";
import { type Client, Namespace } from "@capstan/core";
import { EtcdClusterKind } from "@capstan/etcd-operator";
import {
  type PodMonitor,
  PodMonitorKind,
  PrometheusKind,
  serviceAccountName,
} from "@capstan/prometheus-operator";
import {
  applyCrd,
  connect,
  createNamespace,
  type HelmRelease,
  installChart,
  type TestNamespace,
  waitFor,
} from "@capstan/testing";
import { vaultClusterCrd } from "@capstan/vault-operator";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ClusterRoleBinding } from "../core/fixtures/metrics-scraper.ts";
import { waitAvailable as etcdAvailable, etcdCluster, memberPods } from "../etcd/fixtures/etcd-cluster.ts";
import { ensureEtcdCrd, operatorImage as etcdOperatorImage } from "../etcd/fixtures/operator-release.ts";
import {
  operatorImage as vaultOperatorImage,
  reloaderImage as vaultReloader,
} from "../vault/fixtures/operator-release.ts";
import {
  accepted,
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

const SCRAPE = { "capstan-e2e/scrape-operators": "yes" };
const chart = (name: string) => fileURLToPath(new URL(`../../../charts/${name}`, import.meta.url));

let client: Client;
let promOpNs: TestNamespace;
let serverNs: TestNamespace;
let etcdOpNs: TestNamespace;
let etcdNs: TestNamespace;
let vaultOpNs: TestNamespace;
const releases: HelmRelease[] = [];
let promOp: HelmRelease | undefined;
const server = () =>
  prometheus(serverNs.name, "ops", {
    serviceMonitorSelector: {},
    serviceMonitorNamespaceSelector: { matchLabels: SCRAPE },
    podMonitorSelector: {},
    podMonitorNamespaceSelector: { matchLabels: SCRAPE },
    ruleSelector: {},
    ruleNamespaceSelector: { matchLabels: SCRAPE },
  });

/** Binds the server's ServiceAccount to a chart's metrics-reader ClusterRole (removed with the server's namespace). */
async function bindMetricsReader(role: string) {
  const ns = await client.get(Namespace, serverNs.name);
  await client.create(ClusterRoleBinding, {
    metadata: {
      name: `${serverNs.name}-${role}`,
      ownerReferences: [
        { apiVersion: "v1", kind: "Namespace", name: serverNs.name, uid: ns.metadata.uid ?? "" },
      ],
    },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name: serviceAccountName(server()), namespace: serverNs.name }],
  });
}

/** Waits for an instant query to return at least `min` series on the first ready server pod; returns them. */
async function series(expr: string, min = 1, ms = minutes(3)) {
  return waitFor(
    `${min}+ series of ${expr}`,
    async () => {
      const [ip] = await serverIps(client, server());
      const r = await query(ip!, expr);
      return r.length >= min ? r : undefined;
    },
    ms,
    2_000,
  );
}

describe.skipIf(!prometheusSuitesEnabled)("Prometheus scraping the etcd and Vault operators", () => {
  beforeAll(async () => {
    ({ client } = connect());
    promOpNs = await createNamespace(client, "prom-ops-op", restricted);
    serverNs = await createNamespace(client, "prom-ops", restricted);
    etcdOpNs = await createNamespace(client, "prom-ops-etcd-op", { ...restricted, ...SCRAPE });
    etcdNs = await createNamespace(client, "prom-ops-etcd", { ...restricted, ...SCRAPE });
    vaultOpNs = await createNamespace(client, "prom-ops-vault-op", { ...restricted, ...SCRAPE });
    await ensureEtcdCrd(client);
    await applyCrd(client, vaultClusterCrd(), "capstan-e2e-vault");
    const common = {
      "crds.enabled": false,
      "serviceMonitor.enabled": true,
      "serviceMonitor.interval": "5s",
      logLevel: "debug",
    };
    const pin = { "nodeSelector.kubernetes\\.io/hostname": nodeName };
    releases.push(
      await installChart(chart("etcd-operator"), "etcd-operator", etcdOpNs.name, {
        set: {
          ...common,
          "image.repository": etcdOperatorImage.repository,
          "image.tag": etcdOperatorImage.tag,
          watchNamespace: etcdNs.name,
        },
        setString: pin,
      }),
    );
    releases.push(
      await installChart(chart("vault-operator"), "vault-operator", vaultOpNs.name, {
        set: {
          ...common,
          "image.repository": vaultOperatorImage.repository,
          "image.tag": vaultOperatorImage.tag,
          reloaderImage: vaultReloader,
          "prometheusRule.enabled": true,
          watchNamespace: vaultOpNs.name,
        },
        setString: pin,
      }),
    );
    promOp = await installOperator(client, promOpNs.name, "");
    for (const op of releases) await bindMetricsReader(`${op.namespace}-${op.release}-metrics-reader`);
    await client.create(EtcdClusterKind, etcdCluster(etcdNs.name, "etcd"));
    await client.create(PodMonitorKind, {
      apiVersion: PodMonitorKind.apiVersion,
      kind: PodMonitorKind.kind,
      metadata: { name: "etcd-members", namespace: etcdNs.name },
      spec: {
        selector: { matchLabels: { "etcd.capstan.dev/cluster": "etcd" } },
        podMetricsEndpoints: [{ port: "metrics", interval: "5s" }],
      },
    } as PodMonitor);
    await client.create(PrometheusKind, server());
    await waitAvailable(client, server(), 1);
    await etcdAvailable(client, etcdNs.name, "etcd", 3, minutes(5));
  }, minutes(10));

  afterAll(async () => {
    await client.delete(EtcdClusterKind, "etcd", etcdNs.name).catch(() => {});
    for (const op of [...releases, promOp]) await op?.uninstall();
    for (const ns of [etcdNs, etcdOpNs, vaultOpNs, serverNs, promOpNs]) await ns?.cleanup();
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, server(), promOp));
  });

  it("up == 1 for each operator's ServiceMonitor, with its controller-runtime metrics", async () => {
    for (const [ns, controller] of [
      [etcdOpNs.name, "etcdcluster"],
      [vaultOpNs.name, "vaultcluster"],
    ] as const) {
      const up = await series(`up{namespace="${ns}"} == 1`);
      expect(up.map((s) => s.metric.job)).toEqual([
        `${ns === etcdOpNs.name ? "etcd" : "vault"}-operator-metrics`,
      ]);
      const reconciles = await series(`controller_runtime_reconcile_total{namespace="${ns}"}`);
      expect(new Set(reconciles.map((s) => s.metric.controller))).toEqual(new Set([controller]));
    }
  });

  it("a PodMonitor on the etcd members' metrics port: etcd_server_has_leader for every member", async () => {
    const members = (await memberPods(client, etcdNs.name, "etcd")).map((p) => p.metadata.name).sort();
    expect(members).toHaveLength(3);
    const leader = await series(`etcd_server_has_leader{namespace="${etcdNs.name}"} == 1`, 3);
    expect(leader.map((s) => s.metric.pod).sort()).toEqual(members);
    expect(await accepted(client, PodMonitorKind, etcdNs.name, "etcd-members", server())).toMatchObject({
      status: "True",
    });
  });
});
