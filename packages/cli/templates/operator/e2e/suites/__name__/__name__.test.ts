// The __name__ operator end to end: installed by its chart from its image on the real node, it keeps the
// ConfigMap of a __Kind__ and reports it in status. Build and import the image first:
//   bash e2e/images/__name__-operator/build.sh ~/.cache/capstan/images && bash e2e/cluster/local/node.sh import <tarball>
// then: bash e2e/run.sh suites/__name__/__name__.test.ts
import { fileURLToPath } from "node:url";
import { ConfigMap, defineKind, type KubeObject } from "@capstan/core";
import {
  connect,
  createNamespace,
  eventually,
  type HelmRelease,
  installChart,
  realNodeSuitesEnabled,
  type TestNamespace,
  testNodeName,
} from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const chart = fileURLToPath(new URL("../../../charts/__name__-operator", import.meta.url));
interface __Kind__ extends KubeObject {
  spec: { data: Record<string, string> };
  status?: { configMap?: string; conditions?: { type: string; status: string }[] };
}
const __Kind__Kind = defineKind<__Kind__>({
  group: "__group__",
  version: "v1alpha1",
  kind: "__Kind__",
  plural: "__kinds__",
  namespaced: true,
});

describe.skipIf(!realNodeSuitesEnabled)("__Kind__ end to end", () => {
  const { client } = connect();
  let ns: TestNamespace;
  let op: HelmRelease | undefined;

  beforeAll(async () => {
    ns = await createNamespace(client, "__name__");
    op = await installChart(chart, "__name__-operator", ns.name, {
      set: { watchNamespace: ns.name, "image.tag": "0.1.0" },
      setString: { "nodeSelector.kubernetes\\.io/hostname": testNodeName },
    });
  }, 300_000);

  afterAll(async () => {
    await op?.uninstall();
    await ns?.cleanup();
  }, 120_000);

  it("keeps the ConfigMap of a __Kind__ and reports it Available", async () => {
    await client.create(__Kind__Kind, {
      apiVersion: "__group__/v1alpha1",
      kind: "__Kind__",
      metadata: { name: "demo", namespace: ns.name },
      spec: { data: { greeting: "hello" } },
    });
    await eventually(
      async () => {
        expect((await client.get(ConfigMap, "demo-__kind__", ns.name)).data).toEqual({ greeting: "hello" });
        const obj = await client.get(__Kind__Kind, "demo", ns.name);
        expect(obj.status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
      },
      {
        timeoutMs: 60_000,
        message: "the ConfigMap demo-__kind__ holds spec.data and the __Kind__ is Available",
      },
    );
  });
});
