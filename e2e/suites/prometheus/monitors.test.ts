// A Prometheus server under the chart-installed operator, following the ServiceMonitors and PrometheusRules of the
// namespaces it selects: a new monitor's target is scraped without a pod restart (the time it takes is printed),
// a deleted one's goes; a monitor that matches nothing (Accepted, reason NoTargets) and one with an invalid regex
// (not accepted) say so in their status while the others keep being scraped; node metadata reaches the targets (the
// server reads Nodes) and a monitor naming a file of the Prometheus pods is refused on its own status; namespace
// labels scope what is taken; a rule's alert fires and resolves.
import { type Client, Namespace, Pod } from "@capstan/core";
import {
  PrometheusKind,
  type PrometheusRule,
  PrometheusRuleKind,
  type ServiceMonitor,
  ServiceMonitorKind,
} from "@capstan/prometheus-operator";
import { connect, createNamespace, type HelmRelease, type TestNamespace, waitFor } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  accepted,
  activeTargets,
  alerts,
  createSampleApp,
  installOperator,
  minutes,
  nodeName,
  printFailureReport,
  prometheus,
  prometheusSuitesEnabled,
  query,
  restricted,
  ruleNames,
  sampleServiceMonitor,
  serverIps,
  serverPods,
  waitAvailable,
} from "./fixtures/prometheus.ts";

const SCRAPE = { "capstan-e2e/scrape": "yes" };

let client: Client;
let opNs: TestNamespace;
let serverNs: TestNamespace;
let appNs: TestNamespace;
let otherNs: TestNamespace;
let op: HelmRelease | undefined;
const server = () =>
  prometheus(serverNs.name, "main", {
    serviceMonitorSelector: {},
    serviceMonitorNamespaceSelector: { matchLabels: SCRAPE },
    ruleSelector: {},
    ruleNamespaceSelector: { matchLabels: SCRAPE },
  });

/** The active targets of the sample app `app` in `namespace`, on every ready server pod. */
async function appTargets(namespace: string, app: string) {
  const ips = await serverIps(client, server());
  const perPod = await Promise.all(ips.map((ip) => activeTargets(ip)));
  return perPod.map((ts) => ts.filter((t) => t.labels.namespace === namespace && t.labels.service === app));
}

/** Waits until every server pod scrapes the app's target successfully; returns the ms it took from `since`. */
async function waitScraped(namespace: string, app: string, since: number, ms = minutes(2)): Promise<number> {
  await waitFor(
    `${namespace}/${app} scraped (health up) by every server pod`,
    async () => {
      const perPod = await appTargets(namespace, app);
      return perPod.length > 0 && perPod.every((ts) => ts.some((t) => t.health === "up")) ? true : undefined;
    },
    ms,
    500,
  );
  return Date.now() - since;
}

async function waitGone(namespace: string, app: string) {
  await waitFor(
    `${namespace}/${app} no longer a target`,
    async () => ((await appTargets(namespace, app)).every((ts) => ts.length === 0) ? true : undefined),
    minutes(2),
    1_000,
  );
}

/** The server pods' uid and restart counts: unchanged when the configuration reloads without a restart. */
async function podIdentity() {
  return (await serverPods(client, server()))
    .map(
      (p) =>
        `${p.metadata.name} ${p.metadata.uid} ${p.status?.containerStatuses?.map((c) => `${c.name}:${c.restartCount}`).join(",")}`,
    )
    .sort();
}

describe.skipIf(!prometheusSuitesEnabled)("Prometheus following ServiceMonitors and PrometheusRules", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "prom-mon-op", restricted);
    serverNs = await createNamespace(client, "prom-mon", restricted);
    appNs = await createNamespace(client, "prom-mon-apps", { ...restricted, ...SCRAPE });
    otherNs = await createNamespace(client, "prom-mon-other", restricted);
    // Cluster-wide: the server's monitors live in other namespaces.
    op = await installOperator(client, opNs.name, "");
    await Promise.all([
      createSampleApp(client, appNs.name, "app"),
      createSampleApp(client, otherNs.name, "other"),
    ]);
    await client.create(PrometheusKind, server());
    await waitAvailable(client, server(), 1);
  }, minutes(6));

  afterAll(async () => {
    await op?.uninstall();
    for (const ns of [appNs, otherNs, serverNs, opNs]) await ns?.cleanup();
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, server(), op));
  });

  it(
    "a new ServiceMonitor's target is scraped without a pod restart, and a deleted one's goes",
    async () => {
      const before = await podIdentity();
      const start = Date.now();
      await client.create(ServiceMonitorKind, sampleServiceMonitor(appNs.name, "app", "app"));
      const took = await waitScraped(appNs.name, "app", start);
      console.log(`reload latency: ServiceMonitor created -> its target scraped (health up): ${took} ms`);
      const [ip] = await serverIps(client, server());
      const series = await waitFor(
        "sample_app_info in the TSDB",
        async () => {
          const r = await query(ip!, `sample_app_info{namespace="${appNs.name}"}`);
          return r.length > 0 ? r : undefined;
        },
        60_000,
        1_000,
      );
      expect(series[0]?.metric).toMatchObject({ app: "app", namespace: appNs.name, service: "app" });
      expect(await podIdentity()).toEqual(before);
      // Accepted once the operator has seen every pod load the configuration (its next look after the reload).
      const ok = await waitFor(
        "Accepted=True on the new monitor",
        async () => {
          const c = await accepted(client, ServiceMonitorKind, appNs.name, "app", server());
          return c?.status === "True" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(ok.reason).toBe("Accepted");
      const p = await client.get(PrometheusKind, "main", serverNs.name);
      expect(p.status?.selected?.serviceMonitors).toContain(`${appNs.name}/app`);

      await client.delete(ServiceMonitorKind, "app", appNs.name);
      await waitGone(appNs.name, "app");
      expect(await podIdentity()).toEqual(before);
    },
    minutes(5),
  );

  it(
    "a monitor that matches nothing and one with an invalid regex say why; the others keep being scraped",
    async () => {
      await client.create(ServiceMonitorKind, sampleServiceMonitor(appNs.name, "app", "app"));
      await waitScraped(appNs.name, "app", Date.now());
      await client.create(
        ServiceMonitorKind,
        sampleServiceMonitor(appNs.name, "nothing", "app", {
          selector: { matchLabels: { app: "no-such-app" } },
        }),
      );
      await client.create(
        ServiceMonitorKind,
        sampleServiceMonitor(appNs.name, "bad-regex", "app", {
          endpoints: [
            {
              port: "http",
              interval: "5s",
              relabelings: [
                { sourceLabels: ["__meta_kubernetes_pod_name"], regex: "(?=lookahead)", action: "keep" },
              ],
            },
          ],
        } as Partial<ServiceMonitor["spec"]>),
      );
      // A relabeling Prometheus' own config check refuses (lowercase takes no replacement): before issue 29.2 it was
      // accepted, and the whole configuration failed to load for every team.
      await client.create(
        ServiceMonitorKind,
        sampleServiceMonitor(appNs.name, "bad-relabel", "app", {
          endpoints: [
            {
              port: "http",
              interval: "5s",
              relabelings: [
                {
                  sourceLabels: ["__meta_kubernetes_pod_name"],
                  targetLabel: "pod_lower",
                  action: "lowercase",
                  replacement: "x",
                },
              ],
            },
          ],
        } as Partial<ServiceMonitor["spec"]>),
      );
      // A monitor that matches nothing is valid and in the configuration: Accepted, with the diagnostic as reason.
      const nothing = await waitFor(
        "Accepted=True, reason NoTargets, on the monitor that matches nothing",
        async () => {
          const c = await accepted(client, ServiceMonitorKind, appNs.name, "nothing", server());
          return c?.status === "True" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(nothing.reason).toBe("NoTargets");
      expect(nothing.message).toContain("app=no-such-app");
      expect(nothing.message).toContain(appNs.name);
      const bad = await waitFor(
        "Accepted=False on the monitor with an invalid regex",
        async () => {
          const c = await accepted(client, ServiceMonitorKind, appNs.name, "bad-regex", server());
          return c?.status === "False" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(bad.reason).toBe("InvalidRegex");
      expect(bad.message).toContain("relabelings[0]");
      const badRelabel = await waitFor(
        "Accepted=False on the monitor with a lowercase relabeling that sets a replacement",
        async () => {
          const c = await accepted(client, ServiceMonitorKind, appNs.name, "bad-relabel", server());
          return c?.status === "False" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(badRelabel.message).toContain("relabelings[0]");
      expect(badRelabel.message).toMatch(/replacement/);

      // The good monitor is still scraped: a scrape after both bad ones were judged.
      const judged = Date.now();
      await waitFor(
        "a scrape of the good target after the bad monitors",
        async () => {
          const perPod = await appTargets(appNs.name, "app");
          return perPod.every((ts) =>
            ts.some(
              (t) => t.health === "up" && Date.parse(t.lastScrape) > judged && t.scrapePool.includes("/app/"),
            ),
          )
            ? true
            : undefined;
        },
        minutes(1),
        1_000,
      );
      const p = await client.get(PrometheusKind, "main", serverNs.name);
      const degraded = p.status?.conditions?.find((c) => c.type === "Degraded");
      expect(degraded?.status).toBe("False");
      for (const n of ["nothing", "bad-regex", "bad-relabel", "app"])
        await client.delete(ServiceMonitorKind, n, appNs.name);
      await waitGone(appNs.name, "app");
    },
    minutes(5),
  );

  it(
    "node metadata and the scrape settings reach the target; a monitor naming a file of the pods is refused",
    async () => {
      await client.create(
        ServiceMonitorKind,
        sampleServiceMonitor(appNs.name, "app", "app", {
          attachMetadata: { node: true },
          bodySizeLimit: "1MB",
          scrapeProtocols: ["PrometheusText0.0.4", "OpenMetricsText1.0.0"],
          endpoints: [
            {
              port: "http",
              interval: "5s",
              trackTimestampsStaleness: true,
              relabelings: [
                {
                  sourceLabels: ["__meta_kubernetes_node_label_kubernetes_io_hostname"],
                  targetLabel: "node_hostname",
                },
              ],
            },
          ],
        }),
      );
      // Another team's credentials are mounted in the pods: a monitor may not point Prometheus at them.
      await client.create(
        ServiceMonitorKind,
        sampleServiceMonitor(appNs.name, "files", "app", {
          endpoints: [
            {
              port: "http",
              interval: "5s",
              bearerTokenFile: "/etc/prometheus/assets/secret_team-a_token_token",
            },
          ],
        }),
      );
      const refused = await waitFor(
        "Accepted=False on the monitor naming a file of the pods",
        async () => {
          const c = await accepted(client, ServiceMonitorKind, appNs.name, "files", server());
          return c?.status === "False" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(refused.reason).toBe("FileAccessDenied");
      expect(refused.message).toContain("endpoints[0].bearerTokenFile");
      // The node's labels come through Kubernetes discovery only when the server may read Nodes.
      await waitFor(
        "the app's target carries its node's hostname label on every server pod",
        async () => {
          const perPod = await appTargets(appNs.name, "app");
          return perPod.length > 0 &&
            perPod.every((ts) => ts.some((t) => t.health === "up" && t.labels.node_hostname === nodeName))
            ? true
            : undefined;
        },
        minutes(2),
        1_000,
      );
      for (const n of ["app", "files"]) await client.delete(ServiceMonitorKind, n, appNs.name);
      await waitGone(appNs.name, "app");
    },
    minutes(5),
  );

  it(
    "namespace labels scope what is taken: a monitor in an unselected namespace waits until it is labelled",
    async () => {
      await client.create(ServiceMonitorKind, sampleServiceMonitor(otherNs.name, "other", "other"));
      // Not selected: no binding for this server, no target (checked over a few reload periods).
      await new Promise((r) => setTimeout(r, 20_000));
      expect(await accepted(client, ServiceMonitorKind, otherNs.name, "other", server())).toBeUndefined();
      expect((await appTargets(otherNs.name, "other")).every((ts) => ts.length === 0)).toBe(true);

      await client.patch(Namespace, otherNs.name, undefined, { metadata: { labels: SCRAPE } }, "merge");
      await waitScraped(otherNs.name, "other", Date.now());
      await client.patch(
        Namespace,
        otherNs.name,
        undefined,
        { metadata: { labels: { "capstan-e2e/scrape": null } } },
        "merge",
      );
      await waitGone(otherNs.name, "other");
      await client.delete(ServiceMonitorKind, "other", otherNs.name);
    },
    minutes(5),
  );

  it(
    "a PrometheusRule's alert fires when its target fails and resolves when it recovers; a bad rule says why",
    async () => {
      await client.create(ServiceMonitorKind, sampleServiceMonitor(appNs.name, "app", "app"));
      await waitScraped(appNs.name, "app", Date.now());
      const rule: PrometheusRule = {
        apiVersion: PrometheusRuleKind.apiVersion,
        kind: PrometheusRuleKind.kind,
        metadata: { name: "app-alerts", namespace: appNs.name },
        spec: {
          groups: [
            {
              name: "app",
              rules: [
                {
                  alert: "SampleAppDown",
                  expr: `up{namespace="${appNs.name}", service="app"} == 0`,
                  labels: { severity: "warning" },
                  annotations: { summary: "the sample app does not answer its scrapes" },
                },
              ],
            },
          ],
        },
      } as PrometheusRule;
      await client.create(PrometheusRuleKind, rule);
      await client.create(PrometheusRuleKind, {
        ...rule,
        metadata: { name: "bad-rule", namespace: appNs.name },
        spec: { groups: [{ name: "bad", rules: [{ record: "x:y", expr: "sum(rate(x[5m])" }] }] },
      } as PrometheusRule);
      // An alert whose annotation calls a template function Prometheus does not define (humanise, not humanize):
      // its rule-file load would fail for every PrometheusRule, and a restarted pod would crash-loop on it.
      await client.create(PrometheusRuleKind, {
        ...rule,
        metadata: { name: "bad-template", namespace: appNs.name },
        spec: {
          groups: [
            {
              name: "bad-template",
              rules: [
                { alert: "Typo", expr: "vector(1)", annotations: { summary: "{{ humanise $value }}" } },
              ],
            },
          ],
        },
      } as PrometheusRule);
      const badTemplate = await waitFor(
        "Accepted=False on the rule with an undefined template function",
        async () => {
          const c = await accepted(client, PrometheusRuleKind, appNs.name, "bad-template", server());
          return c?.status === "False" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(badTemplate.message).toContain('function "humanise" not defined');
      const bad = await waitFor(
        "Accepted=False on the rule with a PromQL error",
        async () => {
          const c = await accepted(client, PrometheusRuleKind, appNs.name, "bad-rule", server());
          return c?.status === "False" ? c : undefined;
        },
        minutes(1),
        1_000,
      );
      expect(bad.message).toMatch(/PromQL parse error in group "?bad"? rule 1/);
      await waitFor(
        "the good rule Accepted",
        async () =>
          (await accepted(client, PrometheusRuleKind, appNs.name, "app-alerts", server()))?.status === "True"
            ? true
            : undefined,
        minutes(1),
        1_000,
      );

      const firing = async (want: boolean) => {
        const ips = await serverIps(client, server());
        const all = await Promise.all(ips.map((ip) => alerts(ip)));
        const on = all.map((as) =>
          as.some((a) => a.labels.alertname === "SampleAppDown" && a.state === "firing"),
        );
        return on.length > 0 && on.every((x) => x === want) ? true : undefined;
      };
      // Scraping a path the app answers 404 makes up 0.
      await client.patch(
        ServiceMonitorKind,
        "app",
        appNs.name,
        { spec: { endpoints: [{ port: "http", interval: "5s", path: "/nope" }] } },
        "merge",
      );
      await waitFor("SampleAppDown firing", () => firing(true), minutes(2), 1_000);
      await client.patch(
        ServiceMonitorKind,
        "app",
        appNs.name,
        { spec: { endpoints: [{ port: "http", interval: "5s" }] } },
        "merge",
      );
      await waitFor("SampleAppDown resolved", () => firing(false), minutes(2), 1_000);

      // The server's pod goes (an eviction, a node drain) while the bad rules are still there: its successor loads
      // the configuration and the other team's rules, and keeps running (no restart of its container).
      const [old] = await serverPods(client, server());
      await client.delete(Pod, old?.metadata.name ?? "", serverNs.name);
      await waitFor(
        "a new server pod",
        async () =>
          (await serverPods(client, server())).some((p) => p.metadata.uid !== old?.metadata.uid)
            ? true
            : undefined,
        minutes(2),
        2_000,
      );
      await waitAvailable(client, server(), 1);
      await waitFor(
        "the good rule loaded by the new pod (SampleAppDown known, not firing)",
        async () => {
          const [ip] = await serverIps(client, server());
          if (ip === undefined) return undefined;
          const rules = await ruleNames(ip);
          return rules.includes("SampleAppDown") && !rules.includes("Typo") ? true : undefined;
        },
        minutes(2),
        2_000,
      );
      await new Promise((r) => setTimeout(r, 20_000));
      const [fresh] = await serverPods(client, server());
      expect(fresh?.metadata.uid).not.toBe(old?.metadata.uid);
      expect(fresh?.status?.containerStatuses?.find((c) => c.name === "prometheus")?.restartCount).toBe(0);
      for (const n of ["app-alerts", "bad-rule", "bad-template"])
        await client.delete(PrometheusRuleKind, n, appNs.name);
      await client.delete(ServiceMonitorKind, "app", appNs.name);
    },
    minutes(6),
  );
});
