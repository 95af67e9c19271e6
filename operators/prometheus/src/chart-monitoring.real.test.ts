// The three charts' dashboards and alerts (etcd, Vault, Prometheus operators) against a real Prometheus (the binary
// e2e/images/prometheus/build.sh caches beside promtool), which scrapes, as a ServiceMonitor target with the labels
// Kubernetes discovery gives (namespace, pod), a registry shaped like each operator's /metrics: core's families, the
// process metrics, the operator's own metrics class with one object observed in a troubled state. The object's
// labels survive the scrape (object_namespace stays; a `namespace` label would come back renamed
// exported_namespace), every dashboard query returns series, the alerts whose condition holds fire with their
// templates rendered and no other does, and each chart's OperatorDown fires once its target stops answering.
// The "real" project (`npm run test:real`); without the prometheus binary it fails, saying how to build it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { dashboardQueries, findHelm, helmTemplate, type K8sObject } from "@capstan/cli/chart";
import { CoreMetrics } from "@capstan/core";
import { EtcdOperatorMetrics } from "@capstan/etcd-operator";
import { eventually, freePort, killAll, type LoggedProcess, spawnLogged } from "@capstan/testing";
import { VaultOperatorMetrics } from "@capstan/vault-operator";
import { Gauge } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { prometheusBinary } from "./prometheus-binaries.ts";
import { PrometheusOperatorMetrics } from "./reconcile/metrics.ts";

const binary = prometheusBinary("prometheus");

const helm = findHelm();
const chartsDir = fileURLToPath(new URL("../../../charts/", import.meta.url));

/** Core's series for controller `c` as a running manager has them (every result initialised, one reconcile). */
function coreSeries(core: CoreMetrics, c: string): void {
  core.collectProcessMetrics();
  for (const result of ["success", "error", "requeue", "requeue_after"]) {
    core.reconcileTotal.inc({ controller: c, result }, result === "success" ? 3 : 0);
  }
  core.reconcileErrors.inc({ controller: c }, 0);
  core.terminalReconcileErrors.inc({ controller: c }, 0);
  core.reconcileTime.observe({ controller: c }, 0.02);
  core.workqueueDepth.set({ name: c, controller: c }, 0);
  core.workqueueQueueDuration.observe({ name: c, controller: c }, 0.001);
  core.workqueueWorkDuration.observe({ name: c, controller: c }, 0.02);
  core.workqueueRetries.inc({ name: c, controller: c }, 0);
  core.leaderElectionMasterStatus.set({ name: `${c}-leader` }, 1);
}

/** One chart under test: its operator-shaped registry and the alerts its troubled object must fire. */
interface ChartCase {
  chart: string;
  core: CoreMetrics;
  /** Alerts that fire while the target answers (after `trouble` ran). */
  firing: string[];
  /** Makes something worse once scraping runs (a counter that must grow), or nothing. */
  trouble: () => void;
  server?: Server;
  objects?: K8sObject[];
}

function cases(): ChartCase[] {
  const etcd = new CoreMetrics();
  coreSeries(etcd, "etcdcluster");
  const etcdOwn = new EtcdOperatorMetrics(etcd.registry);
  // One member down of three, and the quorum lost with it.
  etcdOwn.observe("apps", "main", { healthy: 1, unhealthy: 2, learner: 0 }, false, true);
  etcdOwn.countStep({ namespace: "apps", name: "main" }, "AddLearner");
  // A backup an hour ago (not stale), and one that failed since.
  etcdOwn.backupSucceeded("apps", "main", new Date(Date.now() - 3_600_000));
  etcdOwn.backupFailed("apps", "main");

  const vault = new CoreMetrics();
  coreSeries(vault, "vaultcluster");
  const vaultOwn = new VaultOperatorMetrics(vault.registry);
  // No active node, one pod sealed, and a raft peer too many.
  vaultOwn.observe("apps", "vault", { active: 0, standby: 1, sealed: 1, uninitialized: 0 }, 3);
  vaultOwn.countUnseal("apps", "vault");
  vaultOwn.countStep("apps", "vault", "JoinRaft");

  const prom = new CoreMetrics();
  coreSeries(prom, "prometheus");
  const promOwn = new PrometheusOperatorMetrics(prom.registry);
  promOwn.observe("monitoring", "main", { ServiceMonitor: 2, PodMonitor: 1, PrometheusRule: 1 });
  promOwn.observeReplicas("monitoring", "main", 2, 1);
  // What the operators must not do: label an object `namespace`.
  new Gauge({
    name: "legacy_object_gauge",
    help: "labelled the old way",
    labelNames: ["namespace", "name"],
    registers: [prom.registry],
  }).set({ namespace: "monitoring", name: "main" }, 1);

  return [
    {
      chart: "etcd-operator",
      core: etcd,
      firing: ["EtcdClusterMembersUnhealthy", "EtcdClusterQuorumLost"],
      trouble: () => {},
    },
    {
      chart: "vault-operator",
      core: vault,
      firing: ["VaultClusterNoActiveNode", "VaultClusterRaftPeersMismatch", "VaultClusterSealedPods"],
      trouble: () => {},
    },
    {
      chart: "prometheus-operator",
      core: prom,
      firing: ["PrometheusConfigReloadFailures", "PrometheusServerNotReady"],
      trouble: () => promOwn.reloads.inc({ result: "failure" }),
    },
  ];
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

describe.skipIf(helm === undefined)("the charts' dashboards and alerts on a real Prometheus", () => {
  const charts = cases();
  let prometheus: LoggedProcess | undefined;
  let api = "";
  let work = "";

  const job = (c: ChartCase) => `ops-${c.chart}-metrics`;
  const query = async (expr: string): Promise<Sample[]> => {
    const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { result: Sample[] } };
    if (body.status !== "success") throw new Error(`${expr}: ${body.error}`);
    return body.data?.result ?? [];
  };
  const firing = async (): Promise<Alert[]> => {
    const body = (await (await fetch(`${api}/api/v1/alerts`)).json()) as { data: { alerts: Alert[] } };
    return body.data.alerts.filter((a) => a.state === "firing");
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "capstan-monitoring-"));
    const scrapeConfigs: unknown[] = [];
    const ruleFiles: string[] = [];
    for (const c of charts) {
      const server = createServer((_req, res) => {
        void c.core.registry.metrics().then((text) => {
          res.writeHead(200, { "content-type": c.core.registry.contentType });
          res.end(text);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      c.server = server;
      c.objects = helmTemplate(helm!, join(chartsDir, c.chart), {
        set: ["prometheusRule.enabled=true", "prometheusRule.for=0s", "dashboard.enabled=true"],
      });
      const rule = c.objects.find((o) => o.kind === "PrometheusRule");
      if (rule === undefined) throw new Error(`${c.chart} rendered no PrometheusRule`);
      const file = join(work, `${c.chart}.rules.yaml`);
      writeFileSync(file, stringify({ groups: (rule.spec as { groups: unknown }).groups }));
      ruleFiles.push(file);
      scrapeConfigs.push({
        job_name: job(c),
        static_configs: [
          {
            targets: [`127.0.0.1:${(server.address() as AddressInfo).port}`],
            labels: { namespace: "ops-ns", pod: `ops-${c.chart}-0` },
          },
        ],
      });
    }
    writeFileSync(
      join(work, "prometheus.yml"),
      stringify({
        global: { scrape_interval: "1s", evaluation_interval: "1s" },
        rule_files: ruleFiles,
        scrape_configs: scrapeConfigs,
      }),
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    prometheus = spawnLogged(
      binary,
      [
        `--config.file=${join(work, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(work, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      join(work, "prometheus.log"),
    );
    await eventually(async () => (await query("up == 1")).length === charts.length, {
      message: `Prometheus scrapes the three registries (log: ${join(work, "prometheus.log")})`,
    });
  }, 60_000);

  afterAll(async () => {
    if (prometheus !== undefined) await killAll([prometheus]);
    for (const c of charts) {
      c.server?.closeAllConnections();
      c.server?.close();
    }
    if (work !== "") rmSync(work, { recursive: true, force: true });
  });

  it("keeps object_namespace and object_name through the scrape; a namespace label comes back renamed", async () => {
    for (const metric of [
      'capstan_etcd_cluster_quorum{object_name="main"}',
      'capstan_vault_raft_peers{object_name="vault"}',
      'capstan_prometheus_selected_monitors{kind="ServiceMonitor"}',
    ]) {
      const [sample] = await query(metric);
      expect(sample?.metric, metric).toMatchObject({ namespace: "ops-ns" });
      expect(sample?.metric.object_namespace, metric).toMatch(/^(apps|monitoring)$/);
      expect(sample?.metric.exported_namespace, metric).toBeUndefined();
    }
    const [old] = await query("legacy_object_gauge");
    expect(old?.metric).toMatchObject({
      namespace: "ops-ns",
      exported_namespace: "monitoring",
      name: "main",
    });
  });

  it.each(charts.map((c) => ({ c, chart: c.chart })))(
    "returns series for every query of the $chart dashboard",
    async ({ c }) => {
      const configMap = c.objects?.find((o) => o.kind === "ConfigMap") as
        | (K8sObject & { data: Record<string, string> })
        | undefined;
      const queries = dashboardQueries(configMap?.data[`${c.chart}.json`] ?? "{}");
      expect(queries.length).toBeGreaterThan(20);
      await eventually(
        async () => {
          const empty: string[] = [];
          for (const q of queries)
            if ((await query(q.expr)).length === 0) empty.push(`${q.where}: ${q.expr}`);
          if (empty.length > 0) throw new Error(`no series from ${empty.join("; ")}`);
        },
        { message: `every ${c.chart} dashboard query returns series`, timeoutMs: 15_000 },
      );
    },
  );

  it("fires the alerts whose condition holds, with their templates rendered, then OperatorDown", async () => {
    for (const c of charts) c.trouble();
    const want = charts.flatMap((c) => c.firing).sort();
    const alerts = await eventually(
      async () => {
        const now = await firing();
        expect(now.map((a) => a.labels.alertname).sort()).toEqual(want);
        return now;
      },
      { message: "the troubled objects' alerts fire, and no other", timeoutMs: 10_000 },
    );
    const quorum = alerts.find((a) => a.labels.alertname === "EtcdClusterQuorumLost");
    expect(quorum?.labels).toMatchObject({
      object_namespace: "apps",
      object_name: "main",
      severity: "critical",
    });
    expect(quorum?.annotations.summary).toBe("EtcdCluster apps/main has lost quorum");
    const sealed = alerts.find((a) => a.labels.alertname === "VaultClusterSealedPods");
    expect(sealed?.annotations.description).toMatch(/^1 pod\(s\) stayed sealed/);
    const notReady = alerts.find((a) => a.labels.alertname === "PrometheusServerNotReady");
    expect(notReady?.annotations.summary).toBe("Prometheus monitoring/main has pods that are not ready");

    // The operators stop answering: up turns 0 and each chart's OperatorDown fires for its pod.
    for (const c of charts) {
      c.server?.closeAllConnections();
      await new Promise<void>((resolve) => c.server?.close(() => resolve()));
    }
    await eventually(
      async () => {
        const down = (await firing()).filter((a) => a.labels.alertname?.endsWith("OperatorDown"));
        expect(down.map((a) => `${a.labels.alertname} ${a.labels.pod}`).sort()).toEqual([
          "EtcdOperatorDown ops-etcd-operator-0",
          "PrometheusOperatorDown ops-prometheus-operator-0",
          "VaultOperatorDown ops-vault-operator-0",
        ]);
      },
      { message: "each OperatorDown fires", timeoutMs: 10_000 },
    );
  });
});
