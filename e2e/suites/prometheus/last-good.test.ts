// A configuration Prometheus refuses never becomes the one a new pod loads (issue 29, item 5). The refusal has to
// slip past the operator's checks, which judge each rule with the rules of spec.version: the server says 3.1.0, and
// its image (capstan.local/prometheus-as-3-1:v3.1.0) is the local Prometheus 3.16 build tagged under that name on
// the node, as a mislabelled or patched build would be. Prometheus 3.1 takes braces in a recording rule's name, so
// the operator writes `record: job:up{bad}`; the 3.16 binary refuses it. Then: the pod keeps serving the last good
// configuration, the Prometheus says Degraded ConfigRefused with Prometheus's own words, a deleted pod comes back on
// the last-good generation (without the scheme it would crash-loop on the refused one), and the fix is loaded and
// recorded as last-good.
import { dirname, join } from "node:path";
import { type Client, Pod, Secret } from "@capstan/core";
import {
  GENERATION_ANNOTATION,
  lastGoodName,
  PrometheusKind,
  type PrometheusRule,
  PrometheusRuleKind,
  serverName,
} from "@capstan/prometheus-operator";
import {
  connect,
  createNamespace,
  type HelmRelease,
  runCommand,
  type TestNamespace,
  waitFor,
} from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  installOperator,
  minutes,
  printFailureReport,
  prometheus,
  prometheusSuitesEnabled,
  restricted,
  ruleNames,
  serverIps,
  serverPods,
  waitAvailable,
} from "./fixtures/prometheus.ts";

/** The Prometheus image the local node has (e2e/images/prometheus/build.sh). */
const builtImage = process.env.CAPSTAN_PROMETHEUS_IMAGE ?? "quay.io/prometheus/prometheus:v3.16.0";
const repository = "capstan.local/prometheus-as-3-1";

let client: Client;
let opNs: TestNamespace;
let ns: TestNamespace;
let op: HelmRelease | undefined;
const server = () =>
  prometheus(ns.name, "lg", { version: "3.1.0", repository, ruleSelector: {}, storage: { ephemeral: true } });

const rule = (record: string): PrometheusRule =>
  ({
    apiVersion: PrometheusRuleKind.apiVersion,
    kind: PrometheusRuleKind.kind,
    metadata: { name: "recordings", namespace: ns.name },
    spec: { groups: [{ name: "recordings", rules: [{ record, expr: "sum(up)" }] }] },
  }) as PrometheusRule;

/** The recording rules the server's pod has loaded. */
async function loadedRules(): Promise<string[]> {
  const [ip] = await serverIps(client, server());
  if (ip === undefined) throw new Error("no ready server pod");
  return ruleNames(ip);
}

const generationOf = async (name: string) =>
  (await client.get(Secret, name, ns.name).catch(() => undefined))?.metadata.annotations?.[
    GENERATION_ANNOTATION
  ];

/** Waits until the config Secret's generation is the last-good one (every pod accepted it); returns it. */
async function waitLastGood(what: string): Promise<string> {
  return waitFor(
    what,
    async () => {
      const candidate = await generationOf(serverName(server()));
      const lastGood = await generationOf(lastGoodName(server()));
      if (candidate !== undefined && candidate === lastGood) return candidate;
      throw new Error(`candidate ${candidate}, last-good ${lastGood}`);
    },
    minutes(3),
    2_000,
  );
}

const degraded = async () =>
  (await client.get(PrometheusKind, "lg", ns.name)).status?.conditions?.find((c) => c.type === "Degraded");

describe.skipIf(!prometheusSuitesEnabled)("a configuration Prometheus refuses", () => {
  beforeAll(async () => {
    ({ client } = connect());
    // The 3.16 build under a 3.1.0 name, on the node (the local cluster's containerd; no registry).
    const nodeSh = join(
      dirname(process.env.CAPSTAN_CLUSTER_SCRIPT ?? "../cluster/local/cluster.sh"),
      "node.sh",
    );
    await runCommand(".", "bash", [
      nodeSh,
      "ctr",
      "-n",
      "k8s.io",
      "images",
      "tag",
      "--force",
      builtImage,
      `${repository}:v3.1.0`,
    ]);
    opNs = await createNamespace(client, "prom-lg-op", restricted);
    ns = await createNamespace(client, "prom-lg", restricted);
    op = await installOperator(client, opNs.name, ns.name);
  }, minutes(5));

  afterAll(async () => {
    await op?.uninstall();
    for (const n of [ns, opNs]) await n?.cleanup();
  }, minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, server(), op));
  });

  it(
    "keeps the pods on the last good configuration, says why, restarts from it, and takes the fix",
    async () => {
      await client.create(PrometheusRuleKind, rule("job:up:sum"));
      await client.create(PrometheusKind, server());
      await waitAvailable(client, server(), 1);
      const good = await waitLastGood("the first generation recorded as last-good");
      await waitFor(
        "the good rule loaded",
        async () => ((await loadedRules()).includes("job:up:sum") ? true : undefined),
        minutes(2),
        2_000,
      );

      // The refused generation: the operator (judging for 3.1) writes it; Prometheus 3.16 refuses it.
      const current = await client.get(PrometheusRuleKind, "recordings", ns.name);
      await client.update(PrometheusRuleKind, { ...current, spec: rule("job:up{bad}").spec });
      const refused = await waitFor(
        "Degraded ConfigRefused",
        async () => {
          const d = await degraded();
          if (d?.reason === "ConfigRefused") return d;
          throw new Error(`Degraded ${d?.status} ${d?.reason}: ${d?.message}`);
        },
        minutes(3),
        2_000,
      );
      expect(refused.status).toBe("True");
      // Prometheus's own words, from its log: which rule and why.
      expect(refused.message).toMatch(
        /refused configuration generation [0-9a-f]{16}: failed to reload config/,
      );
      expect(refused.message).toContain("braces present in the recording rule name");
      expect(refused.message).toContain(`it keeps running generation ${good}`);
      expect(await loadedRules()).toEqual(["job:up:sum"]);
      expect(await generationOf(lastGoodName(server()))).toBe(good);

      // The pod goes (an eviction, an upgrade, a node drain): its successor starts from the last-good generation,
      // not the refused candidate, and serves.
      const [pod] = await serverPods(client, server());
      await client.delete(Pod, pod?.metadata.name ?? "", ns.name);
      await waitFor(
        "a new pod serving",
        async () => {
          const pods = await serverPods(client, server());
          return pods.some((p) => p.metadata.uid !== pod?.metadata.uid) ? true : undefined;
        },
        minutes(2),
        2_000,
      );
      await waitAvailable(client, server(), 1);
      const [fresh] = await serverPods(client, server());
      expect(fresh?.metadata.uid).not.toBe(pod?.metadata.uid);
      expect(await loadedRules()).toEqual(["job:up:sum"]);
      // It never crash-looped on the refused configuration.
      expect(fresh?.status?.containerStatuses?.find((c) => c.name === "prometheus")?.restartCount).toBe(0);
      // Its reloader tries the candidate too, and Prometheus refuses it again: still Degraded.
      await waitFor(
        "the new pod refuses the candidate too",
        async () => ((await degraded())?.reason === "ConfigRefused" ? true : undefined),
        minutes(2),
        2_000,
      );
      expect(await loadedRules()).toEqual(["job:up:sum"]);

      // The fix: loaded, recorded as last-good, Degraded clears.
      const now = await client.get(PrometheusRuleKind, "recordings", ns.name);
      await client.update(PrometheusRuleKind, { ...now, spec: rule("job:up:total").spec });
      const fixed = await waitLastGood("the fix recorded as last-good");
      expect(fixed).not.toBe(good);
      await waitFor(
        "the fix loaded",
        async () => ((await loadedRules()).includes("job:up:total") ? true : undefined),
        minutes(2),
        2_000,
      );
      await waitFor(
        "Degraded cleared",
        async () => ((await degraded())?.status === "False" ? true : undefined),
        minutes(2),
        2_000,
      );
    },
    minutes(12),
  );
});
