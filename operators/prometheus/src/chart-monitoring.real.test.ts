// The chart's dashboard and alerts against a real Prometheus (the binary e2e/images/prometheus/build.sh caches beside
// promtool) scraping, as a ServiceMonitor target with the target labels Kubernetes discovery gives (namespace, pod),
// a registry shaped like the operator's /metrics (core's families, process metrics, the operator's own): the
// object's labels survive the scrape (object_namespace stays; a `namespace` label would come back renamed
// exported_namespace), every dashboard query returns series, and the alerts fire with their templates rendered
// when their condition holds, including PrometheusOperatorDown once the target stops answering.
// The "real" project (`npm run test:real`); without the prometheus binary it fails, saying how to build it.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { dashboardQueries, findHelm, helmTemplate, type K8sObject } from "@capstan/cli/chart";
import { CoreMetrics } from "@capstan/core";
import {
  capstanCacheDir,
  eventually,
  freePort,
  killAll,
  type LoggedProcess,
  spawnLogged,
} from "@capstan/testing";
import { Gauge } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { PrometheusOperatorMetrics } from "./reconcile/metrics.ts";

function findPrometheus(): string | undefined {
  const cache = capstanCacheDir();
  if (!existsSync(cache)) return undefined;
  return readdirSync(cache)
    .filter((d) => d.startsWith("prometheus-v"))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    .map((d) => join(cache, d, "bin", "prometheus"))
    .filter((p) => existsSync(p))
    .at(-1);
}

const binary = findPrometheus();
if (binary === undefined) {
  throw new Error(
    "no prometheus binary: build it with `bash e2e/images/build-all.sh prometheus` (cached by version)",
  );
}

const helm = findHelm();
const chartDir = fileURLToPath(new URL("../../../charts/prometheus-operator/", import.meta.url));
/** The scrape job prometheus-operator (and ours) gives the chart's ServiceMonitor: the metrics Service's name. */
const JOB = "ops-prometheus-operator-metrics";

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(helm === undefined)("the chart's dashboard and alerts on a real Prometheus", () => {
  const core = new CoreMetrics();
  const own = new PrometheusOperatorMetrics(core.registry);
  // What the operator must not do: label an object `namespace`.
  const legacy = new Gauge({
    name: "legacy_object_gauge",
    help: "labelled the old way",
    labelNames: ["namespace", "name"],
    registers: [core.registry],
  });
  let target: Server;
  let prometheus: LoggedProcess;
  let api = "";
  let work = "";
  let objects: K8sObject[] = [];

  const query = async (expr: string): Promise<Sample[]> => {
    const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { result: Sample[] } };
    if (body.status !== "success") throw new Error(`${expr}: ${body.error}`);
    return body.data?.result ?? [];
  };

  beforeAll(async () => {
    core.collectProcessMetrics();
    const c = "prometheus";
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
    core.leaderElectionMasterStatus.set({ name: "ops-prometheus-operator-leader" }, 1);
    own.observe("monitoring", "main", { ServiceMonitor: 2, PodMonitor: 1, PrometheusRule: 1 });
    own.observeReplicas("monitoring", "main", 2, 1);
    legacy.set({ namespace: "monitoring", name: "main" }, 1);

    target = createServer((_req, res) => {
      void core.registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": core.registry.contentType });
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const targetPort = (target.address() as AddressInfo).port;

    objects = helmTemplate(helm!, chartDir, {
      set: ["prometheusRule.enabled=true", "prometheusRule.for=0s", "dashboard.enabled=true"],
    });
    const rule = objects.find((o) => o.kind === "PrometheusRule");
    if (rule === undefined) throw new Error("the chart rendered no PrometheusRule");
    work = mkdtempSync(join(tmpdir(), "capstan-monitoring-"));
    writeFileSync(join(work, "rules.yaml"), stringify({ groups: (rule.spec as { groups: unknown }).groups }));
    writeFileSync(
      join(work, "prometheus.yml"),
      stringify({
        global: { scrape_interval: "1s", evaluation_interval: "1s" },
        rule_files: [join(work, "rules.yaml")],
        scrape_configs: [
          {
            job_name: JOB,
            static_configs: [
              {
                targets: [`127.0.0.1:${targetPort}`],
                labels: { namespace: "ops-ns", pod: "ops-prometheus-operator-0" },
              },
            ],
          },
        ],
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
    await eventually(async () => (await query(`up{job="${JOB}"} == 1`)).length === 1, {
      message: `Prometheus scrapes the operator registry (log: ${join(work, "prometheus.log")})`,
    });
  }, 60_000);

  afterAll(async () => {
    if (prometheus !== undefined) await killAll([prometheus]);
    target?.closeAllConnections();
    target?.close();
    if (work !== "") rmSync(work, { recursive: true, force: true });
  });

  it("keeps object_namespace and object_name through the scrape; a namespace label comes back renamed", async () => {
    const [selected] = await query('capstan_prometheus_selected_monitors{kind="ServiceMonitor"}');
    expect(selected?.metric).toMatchObject({
      object_namespace: "monitoring",
      object_name: "main",
      namespace: "ops-ns",
      job: JOB,
    });
    expect(selected?.metric.exported_namespace).toBeUndefined();
    const [old] = await query("legacy_object_gauge");
    expect(old?.metric).toMatchObject({
      namespace: "ops-ns",
      exported_namespace: "monitoring",
      name: "main",
    });
  });

  it("returns series for every dashboard query", async () => {
    const configMap = objects.find((o) => o.kind === "ConfigMap") as K8sObject & {
      data: Record<string, string>;
    };
    const queries = dashboardQueries(configMap.data["prometheus-operator.json"] ?? "{}");
    expect(queries.length).toBeGreaterThan(20);
    await eventually(
      async () => {
        const empty: string[] = [];
        for (const q of queries) if ((await query(q.expr)).length === 0) empty.push(`${q.where}: ${q.expr}`);
        if (empty.length > 0) throw new Error(`no series from ${empty.join("; ")}`);
      },
      { message: "every dashboard query returns series", timeoutMs: 15_000 },
    );
  });

  it("fires the alerts whose condition holds, with their templates rendered", async () => {
    own.reloads.inc({ result: "failure" });
    const firing = async () => {
      const res = await fetch(`${api}/api/v1/alerts`);
      const body = (await res.json()) as {
        data: {
          alerts: { labels: Record<string, string>; annotations: Record<string, string>; state: string }[];
        };
      };
      return body.data.alerts.filter((a) => a.state === "firing");
    };
    const alerts = await eventually(
      async () => {
        const now = await firing();
        const names = now.map((a) => a.labels.alertname).sort();
        expect(names).toEqual(["PrometheusConfigReloadFailures", "PrometheusServerNotReady"]);
        return now;
      },
      { message: "the reload-failure and not-ready alerts fire", timeoutMs: 8_000 },
    );
    const notReady = alerts.find((a) => a.labels.alertname === "PrometheusServerNotReady");
    expect(notReady?.labels).toMatchObject({
      object_namespace: "monitoring",
      object_name: "main",
      severity: "warning",
    });
    expect(notReady?.annotations.summary).toBe("Prometheus monitoring/main has pods that are not ready");

    // The operator stops answering: up turns 0 and PrometheusOperatorDown fires for its pod.
    target.closeAllConnections();
    await new Promise<void>((resolve) => target.close(() => resolve()));
    await eventually(
      async () => {
        const down = (await firing()).find((a) => a.labels.alertname === "PrometheusOperatorDown");
        expect(down?.labels).toMatchObject({ pod: "ops-prometheus-operator-0", severity: "critical" });
      },
      { message: "PrometheusOperatorDown fires", timeoutMs: 8_000 },
    );
  });
});
