// prometheus-operator's CRDs before v0.84 have no status subresource, and Helm never upgrades CRDs (issue 29 item 8).
// With the ServiceMonitor CRD replaced by such a copy on the real API server: a /status PATCH answers 404 while the
// monitor exists; the chart-installed operator reports each monitor's verdict as an Event on it instead (NoTargets
// as a Warning), says so once on the Prometheus (an Event and its Reconciled condition), and does not retry the
// status in a loop (the operator's own count of PATCHes answered 404, rest_client_requests_total on its /metrics,
// stays put across reconciles: the API server counts no request of a subresource a CRD lacks). The suite's CRD is
// restored afterwards.
import { type Client, CustomResourceDefinition, Service } from "@capstan/core";
import { crds, PrometheusKind, ServiceMonitorKind } from "@capstan/prometheus-operator";
import {
  applyCrd,
  connect,
  createNamespace,
  eventsAbout,
  type HelmRelease,
  releasePods,
  type TestNamespace,
  waitFor,
} from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scrape, scraperToken } from "../core/fixtures/metrics-scraper.ts";
import {
  createSampleApp,
  ensurePrometheusCrds,
  installOperator,
  minutes,
  printFailureReport,
  prometheus,
  prometheusSuitesEnabled,
  restricted,
  sampleServiceMonitor,
  waitAvailable,
} from "./fixtures/prometheus.ts";

let client: Client;
let opNs: TestNamespace;
let ns: TestNamespace;
let op: HelmRelease | undefined;
let metricsToken: string | undefined;
const server = () => prometheus(ns.name, "old", { serviceMonitorSelector: {} });
const SM_CRD = `${ServiceMonitorKind.plural}.${ServiceMonitorKind.group}`;

/** The suite's ServiceMonitor CRD as prometheus-operator's before v0.84 was: no status subresource. */
function withoutStatusSubresource() {
  const crd = structuredClone(crds.find((c) => c.metadata.name === SM_CRD));
  if (crd === undefined) throw new Error(`no ${SM_CRD} among the operator's CRDs`);
  for (const v of crd.spec.versions) delete v.subresources;
  return crd;
}

/**
 * PATCHes the operator made that the API server answered 404, from its rest_client_requests_total (its /metrics is
 * HTTPS behind the API server's authorization: a ServiceAccount bound to the chart's metrics-reader ClusterRole).
 */
async function operatorPatch404s(): Promise<number> {
  metricsToken ??= await scraperToken(
    client,
    opNs.name,
    "metrics-scraper",
    `${opNs.name}-prometheus-operator-metrics-reader`,
  );
  let total = 0;
  for (const pod of await releasePods(client, op!)) {
    const res = await scrape(`https://${pod.status?.podIP}:8080/metrics`, metricsToken);
    if (res.status !== 200) throw new Error(`${pod.metadata.name} /metrics: HTTP ${res.status}: ${res.body}`);
    for (const line of res.body.split("\n")) {
      if (!line.startsWith("rest_client_requests_total{")) continue;
      const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
      if (labels.includes('code="404"') && labels.includes('method="PATCH"')) {
        total += Number(line.slice(line.lastIndexOf(" ") + 1));
      }
    }
  }
  return total;
}

describe.skipIf(!prometheusSuitesEnabled)(
  "prometheus-operator's CRDs before v0.84 (no status subresource)",
  () => {
    beforeAll(async () => {
      ({ client } = connect());
      opNs = await createNamespace(client, "prom-old-op", restricted);
      ns = await createNamespace(client, "prom-old", restricted);
      op = await installOperator(client, opNs.name, ns.name);
      // The same field manager as the suite's CRDs: the subresource it no longer sets goes.
      await applyCrd(client, withoutStatusSubresource(), "capstan-e2e-prometheus");
      expect(
        (await client.get(CustomResourceDefinition, SM_CRD)).spec.versions[0]?.subresources,
      ).toBeUndefined();
      await createSampleApp(client, ns.name, "app");
      await client.create(ServiceMonitorKind, sampleServiceMonitor(ns.name, "app", "app"));
      await client.create(
        ServiceMonitorKind,
        sampleServiceMonitor(ns.name, "nothing", "app", { selector: { matchLabels: { app: "none" } } }),
      );
      // What the operator meets: the monitor is there, its /status is not (the API server serves the new CRD
      // definition within moments).
      await waitFor(
        "a /status PATCH answered 404 while the monitor exists",
        async () => {
          try {
            await client.patchStatus(ServiceMonitorKind, "nothing", ns.name, { status: {} }, "merge");
            return undefined;
          } catch (err) {
            if ((err as { code?: number }).code !== 404) throw err;
            await client.get(ServiceMonitorKind, "nothing", ns.name);
            return true;
          }
        },
        30_000,
        500,
      );
      await client.create(PrometheusKind, server());
      await waitAvailable(client, server(), 1).catch(async (err: unknown) => {
        await printFailureReport(client, server(), op);
        throw err;
      });
    }, minutes(6));

    afterAll(async () => {
      await op?.uninstall();
      for (const n of [ns, opNs]) await n?.cleanup();
      // Back to the suite's CRD, with its status subresource, for the suites after this one.
      if (client !== undefined) await ensurePrometheusCrds(client);
    }, minutes(5));

    beforeEach(({ onTestFailed }) => {
      onTestFailed(() => printFailureReport(client, server(), op));
    });

    it(
      "each monitor's verdict is an Event on it, and the Prometheus says why once",
      async () => {
        const warning = await waitFor(
          "a NoTargets Warning Event on the monitor that matches nothing",
          async () =>
            (await eventsAbout(client, ServiceMonitorKind, ns.name, "nothing")).find(
              (e) => e.reason === "NoTargets",
            ),
          minutes(2),
          2_000,
        );
        expect(warning.type).toBe("Warning");
        expect(warning.note).toContain(
          `Prometheus ${ns.name}/old: accepted (in the configuration its pods run)`,
        );
        expect(warning.note).toContain(`the ${SM_CRD} CRD has no status subresource`);
        await waitFor(
          "an Accepted Event on the monitor of the sample app",
          async () =>
            (await eventsAbout(client, ServiceMonitorKind, ns.name, "app")).find(
              (e) => e.reason === "Accepted",
            ),
          minutes(1),
          2_000,
        );
        const said = (await eventsAbout(client, PrometheusKind, ns.name, "old")).filter(
          (e) => e.reason === "MonitorStatusUnsupported",
        );
        expect(said).toHaveLength(1);
        expect(said[0]?.count).toBe(1);
        const p = await client.get(PrometheusKind, "old", ns.name);
        expect(p.status?.conditions?.find((c) => c.type === "Reconciled")?.message).toContain(
          "ServiceMonitor verdicts are reported as Events on each object, not in status.bindings",
        );
        // The monitors themselves are left as they are.
        expect((await client.get(ServiceMonitorKind, "nothing", ns.name)).status?.bindings ?? []).toEqual([]);
      },
      minutes(4),
    );

    it(
      "reconciles while the verdicts stand make no /status request and no new Event",
      async () => {
        const events = async () =>
          JSON.stringify(
            await Promise.all(
              ["app", "nothing"].map((n) => eventsAbout(client, ServiceMonitorKind, ns.name, n)),
            ),
          );
        const before = { notFound: await operatorPatch404s(), events: await events() };
        // It found the missing subresource with a real 404 (one per kind, and again at most every 30 minutes).
        expect(before.notFound).toBeGreaterThanOrEqual(1);
        // A Service's labels changing reconciles every server: three times.
        for (let i = 0; i < 3; i++) {
          await client.patch(
            Service,
            "app",
            ns.name,
            { metadata: { labels: { touched: String(i) } } },
            "merge",
          );
          await new Promise((r) => setTimeout(r, 3_000));
        }
        // Give the last reconcile a moment to finish.
        await new Promise((r) => setTimeout(r, 5_000));
        expect(await operatorPatch404s()).toBe(before.notFound);
        expect(await events()).toBe(before.events);
      },
      minutes(2),
    );
  },
);
