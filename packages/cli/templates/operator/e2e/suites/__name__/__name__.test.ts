// The __name__ operator end to end: installed by its chart from its image on the real node, it keeps the
// ConfigMap of its sample __Kind__ (operators/__name__/samples/__kind__.yaml) and reports it in status, and follows
// a change of the spec. `bash e2e/run.sh suites/__name__/__name__.test.ts` builds and imports the image
// (e2e/images/__name__-operator/build.sh) and runs it; skipped unless the cluster has a real node and Helm.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ConfigMap } from "@capstan/core";
import {
  applyCrd,
  connect,
  createNamespace,
  eventually,
  type HelmRelease,
  installChart,
  realNodeSuitesEnabled,
  releaseLogs,
  type TestNamespace,
  testNodeName,
} from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type __Kind__, __Kind__Kind, __kind__Crd } from "../../../operators/__name__/src/api/__kind__.ts";

const chart = fileURLToPath(new URL("../../../charts/__name__-operator", import.meta.url));
const sample = parse(
  readFileSync(new URL("../../../operators/__name__/samples/__kind__.yaml", import.meta.url), "utf8"),
) as __Kind__;

if (!realNodeSuitesEnabled) {
  console.warn(
    "suites/__name__ skipped: it runs the operator's image on a real node with Helm (CAPSTAN_REAL_NODE=1 and " +
      "CAPSTAN_HELM, set by e2e/run.sh on the local cluster with its real node; not on CAPSTAN_NODE=kwok)",
  );
}

describe.skipIf(!realNodeSuitesEnabled)("__Kind__ end to end", () => {
  const { client } = connect();
  let ns: TestNamespace;
  let op: HelmRelease | undefined;

  beforeAll(async () => {
    ns = await createNamespace(client, "__name__");
    // The CRD is cluster-wide and kept on uninstall: applied here, so every run's release (in its own namespace)
    // installs with crds.enabled=false instead of failing to adopt the CRD an earlier release made.
    await applyCrd(client, __kind__Crd(), "capstan-e2e-__name__");
    op = await installChart(chart, "__name__-operator", ns.name, {
      set: { watchNamespace: ns.name, "crds.enabled": false },
      setString: { "nodeSelector.kubernetes\\.io/hostname": testNodeName },
    });
  }, 300_000);

  afterAll(async () => {
    await op?.uninstall();
    await ns?.cleanup();
  }, 120_000);

  /** The ConfigMap holds `data` and the __Kind__'s status reports it for its current generation. */
  async function expectReconciled(data: Record<string, string>): Promise<void> {
    await eventually(
      async () => {
        expect((await client.get(ConfigMap, "demo-__kind__", ns.name)).data).toEqual(data);
        const obj = await client.get(__Kind__Kind, "demo", ns.name);
        const generation = obj.metadata.generation;
        expect(obj.status?.observedGeneration).toBe(generation);
        expect(obj.status?.configMap).toBe("demo-__kind__");
        const available = obj.status?.conditions?.find((c) => c.type === "Available");
        expect(available).toMatchObject({ status: "True", observedGeneration: generation });
      },
      {
        timeoutMs: 60_000,
        message: `the ConfigMap demo-__kind__ holds ${JSON.stringify(data)} and the __Kind__ is Available for its generation`,
      },
    ).catch(async (err: unknown) => {
      const logs = op === undefined ? "" : await releaseLogs(client, op);
      throw new Error(`${String(err)}\noperator logs:\n${logs}`);
    });
  }

  it("keeps the ConfigMap of the sample __Kind__ and reports it Available", async () => {
    await client.create(__Kind__Kind, { ...sample, metadata: { ...sample.metadata, namespace: ns.name } });
    await expectReconciled(sample.spec.data);
  });

  it("follows a change of spec.data", async () => {
    const data = { greeting: "bonjour" };
    await client.patch(
      __Kind__Kind,
      "demo",
      ns.name,
      [{ op: "replace", path: "/spec/data", value: data }],
      "json",
    );
    await expectReconciled(data);
  });
});
