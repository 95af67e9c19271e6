// Out of the box, a Prometheus scrapes the other Capstan operators: their charts' ServiceMonitors (secure metrics:
// the Prometheus pods' token, bound to each chart's metrics-reader ClusterRole) give `up == 1` and the
// controller-runtime metrics of each; a PodMonitor on the etcd members' metrics port gives etcd_server_has_leader
// for every member; the three charts' PrometheusRules load and evaluate without error, one of their alerts
// (PrometheusServerNotReady) fires for a server whose pod cannot be scheduled and resolves when it goes, and every query of the three
// charts' Grafana dashboards returns series (with an EtcdCluster, a VaultCluster and this Prometheus to report on).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dashboardQueries } from "@capstan/cli/chart";
import { type Client, PersistentVolumeClaim } from "@capstan/core";
import { EtcdBackupKind, EtcdClusterKind } from "@capstan/etcd-operator";
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
  TEST_CHART_RESOURCES,
  type TestNamespace,
  waitFor,
} from "@capstan/testing";
import {
  vaultClusterCrd,
  vaultRecoveryCrd,
  vaultSnapshotCrd,
  vaultSnapshotScheduleCrd,
} from "@capstan/vault-operator";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bindClusterRole } from "../core/fixtures/metrics-scraper.ts";
import { waitAvailable as etcdAvailable, etcdCluster, memberPods } from "../etcd/fixtures/etcd-cluster.ts";
import { ensureEtcdCrd, operatorImage as etcdOperatorImage } from "../etcd/fixtures/operator-release.ts";
import {
  operatorImage as vaultOperatorImage,
  reloaderImageValues as vaultReloader,
} from "../vault/fixtures/operator-release.ts";
import { VaultClusterKind } from "../vault/fixtures/vault-api.ts";
import { waitAvailable as vaultAvailable, vaultCluster } from "../vault/fixtures/vault-cluster.ts";
import {
  accepted,
  alerts,
  ensurePrometheusCrds,
  minutes,
  nodeName,
  printFailureReport,
  promApi,
  prometheus,
  chartDir as prometheusChart,
  prometheusSuitesEnabled,
  operatorImage as promOperatorImage,
  reloaderImageValues as promReloader,
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
    // The charts' ServiceMonitors send the pods' ServiceAccount token (bearerTokenFile) from their own namespaces.
    arbitraryFSAccessThroughSMs: { serviceAccountTokenNamespaceSelector: { matchLabels: SCRAPE } },
  });

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
    promOpNs = await createNamespace(client, "prom-ops-op", { ...restricted, ...SCRAPE });
    serverNs = await createNamespace(client, "prom-ops", restricted);
    etcdOpNs = await createNamespace(client, "prom-ops-etcd-op", { ...restricted, ...SCRAPE });
    etcdNs = await createNamespace(client, "prom-ops-etcd", { ...restricted, ...SCRAPE });
    vaultOpNs = await createNamespace(client, "prom-ops-vault-op", { ...restricted, ...SCRAPE });
    // The monitoring.coreos.com CRDs first: the etcd and Vault charts' ServiceMonitors and rules need them.
    await ensurePrometheusCrds(client);
    await ensureEtcdCrd(client);
    await applyCrd(client, vaultClusterCrd(), "capstan-e2e-vault");
    // The Vault operator watches VaultRecoveries too: without their CRD its cache never syncs.
    await applyCrd(client, vaultRecoveryCrd(), "capstan-e2e-vault");
    // The operator caches VaultSnapshots and VaultSnapshotSchedules too: without their CRDs its caches never sync.
    await applyCrd(client, vaultSnapshotCrd(), "capstan-e2e-vault");
    await applyCrd(client, vaultSnapshotScheduleCrd(), "capstan-e2e-vault");
    const common = {
      "crds.enabled": false,
      "serviceMonitor.enabled": true,
      "serviceMonitor.interval": "5s",
      "prometheusRule.enabled": true,
      logLevel: "debug",
      ...TEST_CHART_RESOURCES,
    };
    const pin = { "nodeSelector.kubernetes\\.io/hostname": nodeName };
    releases.push(
      await installChart(chart("etcd-operator"), "etcd-operator", etcdOpNs.name, {
        set: {
          ...common,
          ...etcdOperatorImage,
          watchNamespace: etcdNs.name,
        },
        setString: pin,
      }),
    );
    releases.push(
      await installChart(chart("vault-operator"), "vault-operator", vaultOpNs.name, {
        set: {
          ...common,
          ...vaultOperatorImage,
          watchNamespace: vaultOpNs.name,
        },
        setString: { ...pin, ...vaultReloader },
      }),
    );
    // Cluster-wide (its server's monitors are in other namespaces), with its own ServiceMonitor and alerts.
    promOp = await installChart(prometheusChart, "prometheus-operator", promOpNs.name, {
      set: {
        ...common,
        ...promOperatorImage,
        watchNamespace: "",
        // The shipped PrometheusServerNotReady alert fires as soon as it holds (a test makes it fire and resolve).
        "prometheusRule.for": "0s",
      },
      setString: { ...pin, ...promReloader },
    });
    releases.push(promOp);
    // Secure metrics: the server's ServiceAccount may read each operator's /metrics.
    for (const op of releases) {
      const role = `${op.namespace}-${op.release}-metrics-reader`;
      await bindClusterRole(
        client,
        serverNs.name,
        serviceAccountName(server()),
        role,
        `${serverNs.name}-${role}`,
      );
    }
    await client.create(EtcdClusterKind, etcdCluster(etcdNs.name, "etcd"));
    await client.create(VaultClusterKind, vaultCluster(vaultOpNs.name, "vault", { replicas: 1 }));
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
    try {
      await waitAvailable(client, server(), 1);
      await etcdAvailable(client, etcdNs.name, "etcd", 3, minutes(5));
      // One backup to a claim, so the etcd dashboard's Backups row has series.
      await client.create(PersistentVolumeClaim, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "backups", namespace: etcdNs.name },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      });
      await client.create(EtcdBackupKind, {
        apiVersion: EtcdBackupKind.apiVersion,
        kind: EtcdBackupKind.kind,
        metadata: { name: "once", namespace: etcdNs.name },
        spec: { clusterName: "etcd", destination: { pvc: { claimName: "backups", directory: "etcd" } } },
      });
      await vaultAvailable(client, vaultOpNs.name, "vault", 1, minutes(5));
      await waitFor(
        "EtcdBackup once Succeeded",
        async () => {
          const b = await client.get(EtcdBackupKind, "once", etcdNs.name);
          if (b.status?.phase === "Failed")
            throw new Error(`EtcdBackup once failed: ${JSON.stringify(b.status.conditions)}`);
          return b.status?.phase === "Succeeded" ? b : undefined;
        },
        minutes(3),
        2_000,
      );
    } catch (err) {
      // onTestFailed does not cover beforeAll: report here, then fail the suite.
      await printFailureReport(client, server(), promOp);
      throw err;
    }
  }, minutes(12));

  afterAll(async () => {
    await client.delete(EtcdClusterKind, "etcd", etcdNs.name).catch(() => {});
    await client.delete(VaultClusterKind, "vault", vaultOpNs.name).catch(() => {});
    for (const op of releases) await op.uninstall();
    for (const ns of [etcdNs, etcdOpNs, vaultOpNs, serverNs, promOpNs]) await ns?.cleanup();
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, server(), promOp));
  });

  it("up == 1 for each operator's ServiceMonitor, with its controller-runtime metrics", async () => {
    for (const [ns, controllers, job] of [
      [etcdOpNs.name, ["etcdcluster", "etcdbackup", "etcdbackupschedule"], "etcd-operator-metrics"],
      [vaultOpNs.name, ["vaultcluster", "vaultsnapshot", "vaultsnapshotschedule"], "vault-operator-metrics"],
      [promOpNs.name, ["prometheus"], "prometheus-operator-metrics"],
    ] as const) {
      const up = await series(`up{namespace="${ns}", job="${job}"} == 1`);
      expect(up.map((s) => s.metric.job)).toEqual([job]);
      const reconciles = await series(`controller_runtime_reconcile_total{namespace="${ns}", job="${job}"}`);
      expect(new Set(reconciles.map((s) => s.metric.controller))).toEqual(new Set(controllers));
    }
  });

  it("a PodMonitor on the etcd members' metrics port: etcd_server_has_leader for every member", async () => {
    const members = (await memberPods(client, etcdNs.name, "etcd")).map((p) => p.metadata.name).sort();
    expect(members).toHaveLength(3);
    const leader = await series(`etcd_server_has_leader{namespace="${etcdNs.name}"} == 1`, 3);
    expect(leader.map((s) => s.metric.pod).sort()).toEqual(members);
    await waitFor(
      "Accepted=True on the etcd PodMonitor",
      async () =>
        (await accepted(client, PodMonitorKind, etcdNs.name, "etcd-members", server()))?.status === "True"
          ? true
          : undefined,
      minutes(1),
      1_000,
    );
  });

  it("the charts' alert rules load and evaluate without error", async () => {
    interface RuleState {
      name: string;
      health: string;
      lastError?: string;
      lastEvaluation: string;
    }
    const groups = await waitFor(
      "the three charts' rule groups evaluated",
      async () => {
        const [ip] = await serverIps(client, server());
        const data = await promApi<{ groups: { name: string; file: string; rules: RuleState[] }[] }>(
          ip!,
          "/api/v1/rules",
        );
        const ours = data.groups.filter((g) => /-operator$/.test(g.name));
        const evaluated = ours.every((g) => g.rules.every((r) => !r.lastEvaluation.startsWith("0001")));
        return ours.length === 3 && evaluated ? ours : undefined;
      },
      minutes(3),
      2_000,
    );
    const problems = groups.flatMap((g) =>
      g.rules
        .filter((r) => r.health !== "ok")
        .map((r) => `${g.name} ${r.name}: ${r.health} ${r.lastError ?? ""}`),
    );
    expect(problems).toEqual([]);
    expect(groups.map((g) => g.name).sort()).toEqual([
      "etcd-operator",
      "prometheus-operator",
      "vault-operator",
    ]);
  });

  it(
    "every query of the three charts' dashboards returns series",
    async () => {
      const queries = ["etcd-operator", "vault-operator", "prometheus-operator"].flatMap((name) =>
        dashboardQueries(readFileSync(`${chart(name)}/dashboards/${name}.json`, "utf8")).map((q) => ({
          ...q,
          where: `${name} ${q.where}`,
        })),
      );
      expect(queries.length).toBeGreaterThan(20);
      // Rates need two samples in their window: wait for the last ones, then report every empty query at once.
      let empty: string[] = [];
      await waitFor(
        "series for every dashboard query",
        async () => {
          const [ip] = await serverIps(client, server());
          empty = [];
          for (const q of queries) {
            if ((await query(ip!, q.expr)).length === 0) empty.push(`${q.where}: ${q.expr}`);
          }
          return empty.length === 0 ? true : undefined;
        },
        minutes(3),
        5_000,
      ).catch(() => undefined);
      expect(empty).toEqual([]);
    },
    minutes(5),
  );

  it("a shipped alert fires and resolves: PrometheusServerNotReady for a server whose pod cannot be scheduled, which says why", async () => {
    const stuck = prometheus(serverNs.name, "stuck", {
      storage: { ephemeral: true },
      podTemplate: { nodeSelector: { "kubernetes.io/hostname": "no-such-node" } },
    });
    await client.create(PrometheusKind, stuck);
    const firing = async (want: boolean) => {
      const [ip] = await serverIps(client, server());
      const all = await alerts(ip!);
      const on = all.some(
        (a) =>
          a.labels.alertname === "PrometheusServerNotReady" &&
          a.labels.object_name === "stuck" &&
          a.labels.object_namespace === serverNs.name &&
          a.state === "firing",
      );
      return on === want ? true : undefined;
    };
    await waitFor(
      "PrometheusServerNotReady firing for the stuck server",
      () => firing(true),
      minutes(3),
      2_000,
    );
    // The server itself says why: Degraded, naming the pod.
    const degraded = await waitFor(
      "Degraded PodUnschedulable on the stuck server",
      async () => {
        const got = await client.get(PrometheusKind, "stuck", serverNs.name);
        const c = got.status?.conditions?.find((x) => x.type === "Degraded");
        return c?.status === "True" && c.reason === "PodUnschedulable" ? c : undefined;
      },
      minutes(1),
      2_000,
    );
    expect(degraded.message).toContain("pod prometheus-stuck-0 cannot be scheduled");
    await client.delete(PrometheusKind, "stuck", serverNs.name);
    await waitFor("PrometheusServerNotReady resolved", () => firing(false), minutes(3), 2_000);
  });
});
