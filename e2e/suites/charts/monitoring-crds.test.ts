// Each chart installs with one `helm install` and its monitoring values (serviceMonitor.enabled,
// prometheusRule.enabled) on a cluster that has none of the monitoring.coreos.com CRDs, and on one that has
// prometheus-operator's own (an older and a newer release, from the Go module proxy). Helm maps every object of a
// release before it creates any, so a chart whose ServiceMonitor needs a CRD the same release creates cannot install
// (issue 25). The shared e2e cluster has had those CRDs since its first Prometheus suite, so each case starts a
// control plane of its own (cluster.sh with its own state directory and ports, a kwok node: no containers needed). Skipped where the local cluster's binaries are not built (the kind path).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type Client,
  CustomResourceDefinition,
  type CustomResourceDefinitionObject,
  isNotFound,
  type Kind,
} from "@capstan/core";
import { PrometheusRuleKind, ServiceMonitorKind } from "@capstan/prometheus-operator";
import { capstanCacheDir, connect, eventually, freePort, helm } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const exec = promisify(execFile);
const charts = fileURLToPath(new URL("../../../charts/", import.meta.url));
const clusterScript = fileURLToPath(new URL("../../cluster/local/cluster.sh", import.meta.url));
const MONITORING = {
  servicemonitors: "ServiceMonitor",
  podmonitors: "PodMonitor",
  prometheusrules: "PrometheusRule",
} as const;
const monitoringCrds = Object.keys(MONITORING).map((plural) => `${plural}.monitoring.coreos.com`);
/** prometheus-operator releases whose CRDs the charts must live beside: one from 2022, one from 2025. */
const PROMETHEUS_OPERATOR_VERSIONS = ["v0.60.0", "v0.85.0"];
/** The charts, each with its monitoring values, in the order start.sh installs them. */
const releases = ["prometheus-operator", "etcd-operator", "vault-operator"];
const monitoringValues = ["--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true"];

const cache = capstanCacheDir();
const versions = readFileSync(
  fileURLToPath(new URL("../../cluster/local/versions.env", import.meta.url)),
  "utf8",
);
const kubernetes = /^KUBERNETES_VERSION=(\S+)$/m.exec(versions)?.[1] ?? "";
const built = existsSync(join(cache, `kubernetes-${kubernetes}`, "bin", "kube-apiserver"));
if (!built) {
  console.warn(
    `suites/charts skipped: it starts a control plane of its own from the local cluster's binaries (${cache}/kubernetes-${kubernetes}); build them with e2e/cluster/local/build.sh all`,
  );
}

let state = "";
let kubeconfig = "";
let client: Client;
const env = () => ({ ...process.env, CAPSTAN_CLUSTER_DIR: state });

/** Stops the control plane this suite started, if any, and removes its state. */
async function stopControlPlane(): Promise<void> {
  if (state === "") return;
  await exec("bash", [clusterScript, "down"], { env: env() }).catch(() => undefined);
  rmSync(state, { recursive: true, force: true });
  state = "";
}

/**
 * A new control plane for each case (deleting CRDs right after they were made can stall for minutes in the API
 * server's "storage is (re)initializing", so no case cleans up after another): cluster.sh up with its own state
 * directory and free ports, and a kwok node.
 */
async function freshControlPlane(): Promise<void> {
  await stopControlPlane();
  state = mkdtempSync(join(tmpdir(), "capstan-charts-cluster-"));
  const [api, etcd, kcm, scheduler, kwok] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const { stdout } = await exec("bash", [clusterScript, "up"], {
    env: {
      ...env(),
      CAPSTAN_NODE: "kwok",
      CAPSTAN_API_PORT: String(api),
      CAPSTAN_ETCD_PORT: String(etcd), // and the next port, etcd's peer port
      CAPSTAN_KCM_PORT: String(kcm),
      CAPSTAN_SCHEDULER_PORT: String(scheduler),
      CAPSTAN_KWOK_PORT: String(kwok),
    },
    maxBuffer: 16 << 20,
  });
  kubeconfig = stdout.trim().split("\n").at(-1) ?? "";
  client = connect(kubeconfig).client;
}

afterAll(stopControlPlane, 120_000);

/** `helm install` (or upgrade) of charts/<release> as release <release> in its own namespace; helm's output. */
const install = (release: string, verb: "install" | "upgrade" = "install") =>
  helm(
    [verb, release, join(charts, release), "--namespace", release, "--create-namespace", ...monitoringValues],
    kubeconfig,
  );

/** The names of the chart's ServiceMonitors and PrometheusRules; none where the API is absent. */
async function monitoringObjects(
  release: string,
): Promise<{ serviceMonitors: string[]; prometheusRules: string[] }> {
  const names = async (kind: Kind) => {
    try {
      return (await client.list(kind, { namespace: release })).items.map((o) => o.metadata.name ?? "");
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  };
  return {
    serviceMonitors: await names(ServiceMonitorKind),
    prometheusRules: await names(PrometheusRuleKind),
  };
}
const none = { serviceMonitors: [], prometheusRules: [] };
const own = (release: string) => ({ serviceMonitors: [release], prometheusRules: [release] });

const crdNamed = async (name: string): Promise<CustomResourceDefinitionObject | undefined> =>
  await client.get(CustomResourceDefinition, name).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });

describe.skipIf(!built)("on a cluster without the monitoring.coreos.com CRDs", () => {
  beforeAll(freshControlPlane, 300_000);

  it("the etcd and Vault charts install, skip their ServiceMonitor and PrometheusRule, and say so", async () => {
    for (const release of ["etcd-operator", "vault-operator"]) {
      const out = await install(release);
      expect(await monitoringObjects(release)).toEqual(none);
      expect(out, `${release}'s NOTES`).toMatch(
        /serviceMonitor\.enabled[^\n]*\n?[^\n]*monitoring\.coreos\.com\/v1/,
      );
      expect(out, `${release}'s NOTES`).toMatch(
        /prometheusRule\.enabled[^\n]*\n?[^\n]*monitoring\.coreos\.com\/v1/,
      );
    }
    for (const name of monitoringCrds) expect(await crdNamed(name), name).toBeUndefined();
  });

  it("the Prometheus chart installs the CRDs first, then its own ServiceMonitor and PrometheusRule", async () => {
    await install("prometheus-operator");
    for (const name of monitoringCrds) expect(await crdNamed(name), name).toBeDefined();
    expect(await monitoringObjects("prometheus-operator")).toEqual(own("prometheus-operator"));
  });

  it("an upgrade of the other charts with the same values then adds theirs", async () => {
    for (const release of ["etcd-operator", "vault-operator"]) {
      await install(release, "upgrade");
      expect(await monitoringObjects(release)).toEqual(own(release));
    }
  });
});

/** prometheus-operator's CRD files of `version` (its module's example/prometheus-operator-crd/), from the Go proxy. */
async function prometheusOperatorCrds(version: string): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), "capstan-promop-"));
  try {
    const { stdout } = await exec(
      "go",
      ["mod", "download", "-json", `github.com/prometheus-operator/prometheus-operator@${version}`],
      { cwd: work, env: { ...process.env, GOFLAGS: "-mod=mod" }, maxBuffer: 16 << 20 },
    );
    const dir = join((JSON.parse(stdout) as { Dir: string }).Dir, "example/prometheus-operator-crd");
    const files = readdirSync(dir).filter((f) =>
      Object.keys(MONITORING).some((p) => f.endsWith(`_${p}.yaml`)),
    );
    expect(files).toHaveLength(3);
    return files.map((f) => join(dir, f));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe.skipIf(!built).each(PROMETHEUS_OPERATOR_VERSIONS)(
  "beside prometheus-operator %s's CRDs",
  (version) => {
    const before = new Map<string, string | undefined>();
    beforeAll(async () => {
      await freshControlPlane();
      for (const file of await prometheusOperatorCrds(version)) {
        const crd = parse(readFileSync(file, "utf8")) as CustomResourceDefinitionObject;
        await client.apply(CustomResourceDefinition, crd, {
          fieldManager: "prometheus-operator-crds",
          force: true,
        });
      }
      for (const name of monitoringCrds) {
        const crd = await eventually(async () => {
          const c = await crdNamed(name);
          return (
            c?.status?.conditions?.some((x) => x.type === "Established" && x.status === "True") === true && c
          );
        });
        before.set(name, crd.metadata.resourceVersion);
      }
    }, 300_000);

    it("every chart installs with its ServiceMonitor and PrometheusRule, and prometheus-operator's CRDs are left as they are", async () => {
      for (const release of releases) {
        await install(release);
        expect(await monitoringObjects(release)).toEqual(own(release));
      }
      for (const name of monitoringCrds) {
        const crd = await crdNamed(name);
        expect(crd?.metadata.resourceVersion, `${name} unchanged`).toBe(before.get(name));
        expect(crd?.metadata.annotations?.["controller-gen.kubebuilder.io/version"], name).toBeDefined();
      }
    });
  },
);
