// The Prometheus server's own life under the chart-installed operator: invalid specs refused by the API server
// with their message; the chart leaves monitoring.coreos.com CRDs it did not make alone; data on the claim
// survives a pod's deletion; replicas 1 -> 2 both scrape; deleting the Prometheus removes what it owned (its
// claims are kept: never delete data).
import {
  type Client,
  isNotFound,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from "@capstan/core";
import { MANAGED_BY, PrometheusKind, ServiceMonitorKind, serverName } from "@capstan/prometheus-operator";
import {
  connect,
  createNamespace,
  type HelmRelease,
  helm,
  type TestNamespace,
  waitFor,
} from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  activeTargets,
  chartDir,
  createSampleApp,
  installOperator,
  minutes,
  printFailureReport,
  prometheus,
  prometheusSuitesEnabled,
  query,
  restricted,
  sampleServiceMonitor,
  serverIps,
  serverPods,
  waitAvailable,
} from "./fixtures/prometheus.ts";

let client: Client;
let opNs: TestNamespace;
let ns: TestNamespace;
let op: HelmRelease | undefined;
const server = () => prometheus(ns.name, "srv", { serviceMonitorSelector: {} });

describe.skipIf(!prometheusSuitesEnabled)("a Prometheus server's life", () => {
  beforeAll(async () => {
    ({ client } = connect());
    opNs = await createNamespace(client, "prom-srv-op", restricted);
    ns = await createNamespace(client, "prom-srv", restricted);
    op = await installOperator(client, opNs.name, ns.name);
    await createSampleApp(client, ns.name, "app");
    await client.create(ServiceMonitorKind, sampleServiceMonitor(ns.name, "app", "app"));
  }, minutes(5));

  afterAll(async () => {
    await op?.uninstall();
    for (const n of [ns, opNs]) await n?.cleanup();
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, server(), op));
  });

  it("refuses invalid specs with the rule's message", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ version: "v3.16.0" }, /version must be a Prometheus release from 3\.0\.0 on/],
      [
        { externalLabels: { prometheus: "x" } },
        /externalLabels: prometheus and prometheus_replica are set by the operator/,
      ],
      [{ scrapeInterval: "5s", scrapeTimeout: "10s" }, /scrapeTimeout/],
      [{ storage: { ephemeral: true, size: "1Gi" } }, /ephemeral/],
      [{ replicas: -1 }, /replicas/],
      [
        { enableFeatures: ["otlp-deltatocumulative", "otlp-native-delta-ingestion"] },
        /otlp-deltatocumulative and otlp-native-delta-ingestion cannot be enabled together/,
      ],
      [{ enableFeatures: ["a,b"] }, /enableFeatures/],
      [{ enableFeatures: ["x", "x"] }, /enableFeatures/],
    ];
    for (const [spec, message] of cases) {
      const bad = prometheus(ns.name, "bad", spec as never);
      await expect(client.create(PrometheusKind, bad), JSON.stringify(spec)).rejects.toThrow(message);
    }
  });

  it("the chart's release holds only its own Prometheus CRD (helm install --dry-run=server)", async () => {
    // The suite applied all four CRDs without Helm. The monitoring.coreos.com ones are in the chart's crds/, which
    // helm install creates only where absent and never makes part of the release: a release renders only its own
    // Prometheus CRD, so it never takes over (or changes) CRDs that prometheus-operator or another chart installed.
    const out = await helm([
      "install",
      "crd-probe",
      chartDir,
      "--namespace",
      opNs.name,
      "--dry-run=server",
      // The suite's Prometheus CRD has no Helm ownership: let the dry run adopt it, as a first install over a
      // hand-applied CRD would; the monitoring ones must not be rendered at all.
      "--take-ownership",
      "--set",
      "crds.enabled=true",
    ]);
    const manifest = out.slice(out.indexOf("MANIFEST:"));
    const crds = parseAllDocuments(manifest.replace(/^MANIFEST:\n/, "").split("\nNOTES:")[0] ?? "")
      .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } } | null)
      .filter((o) => o?.kind === "CustomResourceDefinition")
      .map((o) => o?.metadata?.name);
    expect(crds).toEqual(["prometheuses.monitoring.capstan.dev"]);
  });

  it(
    "keeps its data on the claim when a pod is deleted, and scales 1 -> 2 with both pods scraping",
    async () => {
      await client.create(PrometheusKind, server());
      await waitAvailable(client, server(), 1);
      const [ip] = await serverIps(client, server());
      const before = await waitFor(
        "a few samples of sample_app_scrapes_total",
        async () => {
          const r = await query(ip!, `sample_app_scrapes_total{namespace="${ns.name}"}`);
          return r.length > 0 && Number(r[0]?.value[1]) >= 3 ? r[0] : undefined;
        },
        minutes(2),
        1_000,
      );
      const at = before!.value[0];
      const claimsBefore = (await client.list(PersistentVolumeClaim, { namespace: ns.name })).items.map(
        (c) => `${c.metadata.name} ${c.metadata.uid}`,
      );
      const [pod] = await serverPods(client, server());
      await client.delete(Pod, pod!.metadata.name ?? "", ns.name);
      await waitFor(
        "a new pod",
        async () => {
          const pods = await serverPods(client, server());
          return pods.some((p) => p.metadata.uid !== pod!.metadata.uid) ? true : undefined;
        },
        minutes(2),
        1_000,
      );
      await waitAvailable(client, server(), 1);
      const [newIp] = await serverIps(client, server());
      // The sample taken before the deletion, read back from the new pod at its original time.
      const after = await waitFor(
        "the old sample on the new pod",
        async () => {
          const r = await query(newIp!, `sample_app_scrapes_total{namespace="${ns.name}"}`, at);
          return r[0];
        },
        minutes(1),
        2_000,
      );
      expect(after.value[1]).toBe(before!.value[1]);
      const claimsAfter = (await client.list(PersistentVolumeClaim, { namespace: ns.name })).items.map(
        (c) => `${c.metadata.name} ${c.metadata.uid}`,
      );
      expect(claimsAfter).toEqual(claimsBefore);

      await client.patch(PrometheusKind, "srv", ns.name, { spec: { replicas: 2 } }, "merge");
      await waitAvailable(client, server(), 2);
      const ips = await serverIps(client, server());
      expect(ips).toHaveLength(2);
      await waitFor(
        "the sample app scraped by both pods",
        async () => {
          const perPod = await Promise.all(ips.map((i) => activeTargets(i)));
          return perPod.every((ts) => ts.some((t) => t.labels.service === "app" && t.health === "up"))
            ? true
            : undefined;
        },
        minutes(2),
        1_000,
      );
      const pdb = await client.get(PodDisruptionBudget, serverName(server()), ns.name);
      expect(pdb.spec?.maxUnavailable ?? pdb.spec?.minAvailable).toBeDefined();
    },
    minutes(8),
  );

  it(
    "deleting the Prometheus removes what it owned and keeps the data claims",
    async () => {
      const name = serverName(server());
      const owned = [
        [StatefulSet, name],
        [Service, name],
        [Service, `${name}-operated`],
        [Secret, name],
        [ServiceAccount, name],
        [PodDisruptionBudget, name],
        [Role, name],
        [RoleBinding, name],
      ] as const;
      /** Whether the object exists (NotFound: no; any other error fails the test). */
      const has = (kind: (typeof owned)[number][0], n: string) =>
        client.get(kind as typeof Service, n, ns.name).then(
          () => true,
          (err: unknown) => {
            if (isNotFound(err)) return false;
            throw err;
          },
        );
      // Everything is there before the deletion, so the check below cannot pass on a wrong name.
      for (const [kind, n] of owned) expect(await has(kind, n), `${kind.kind} ${n}`).toBe(true);
      await client.delete(PrometheusKind, "srv", ns.name);
      await waitFor(
        "the server's objects gone",
        async () => {
          const left: string[] = [];
          for (const [kind, n] of owned) if (await has(kind, n)) left.push(`${kind.kind} ${n}`);
          const roles = await client.list(Role, {
            namespace: ns.name,
            labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}`,
          });
          const bindings = await client.list(RoleBinding, {
            namespace: ns.name,
            labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}`,
          });
          for (const r of [...roles.items, ...bindings.items]) left.push(`RBAC ${r.metadata.name}`);
          const pods = await serverPods(client, server());
          for (const p of pods) left.push(`Pod ${p.metadata.name}`);
          return left.length === 0 ? true : undefined;
        },
        minutes(2),
        2_000,
      );
      const claims = (await client.list(PersistentVolumeClaim, { namespace: ns.name })).items;
      expect(claims.map((c) => c.metadata.name)).toEqual([`data-${name}-0`, `data-${name}-1`]);
    },
    minutes(4),
  );
});
