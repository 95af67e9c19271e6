// Tests of the Helm release helpers: the value arguments, install/upgrade/uninstall as helm sees them (a script
// standing in for helm records its arguments), and the Events about an object read from a fake API server.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigMap, KubeEvent } from "@capstan/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartValueArgs, eventsAbout, FakeApiServer, installChart } from "./index.ts";

describe("chartValueArgs", () => {
  it("passes --set values, then --set-string ones", () => {
    expect(chartValueArgs({ set: { replicas: 2, "a.b": true }, setString: { "x\\.y": "007" } })).toEqual([
      "--set",
      "replicas=2",
      "--set",
      "a.b=true",
      "--set-string",
      "x\\.y=007",
    ]);
    expect(chartValueArgs({})).toEqual([]);
  });
});

describe("installChart", () => {
  let dir = "";
  const saved = { helm: process.env.CAPSTAN_HELM, kubeconfig: process.env.KUBECONFIG };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "capstan-helm-"));
    const script = join(dir, "helm");
    writeFileSync(
      script,
      `#!/bin/sh\necho "$*" >> "${join(dir, "calls")}"\n${'[ "$3" = uninstall ] && exit 1\n'}exit 0\n`,
    );
    chmodSync(script, 0o755);
    process.env.CAPSTAN_HELM = script;
    process.env.KUBECONFIG = "/k/config";
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [k, v] of [
      ["CAPSTAN_HELM", saved.helm],
      ["KUBECONFIG", saved.kubeconfig],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it("installs and waits, upgrades reusing values, and uninstalls without throwing", async () => {
    const rel = await installChart("/charts/op", "op", "ns1", { set: { replicas: 1 } });
    await rel.upgrade({ set: { replicas: 2 } });
    await rel.uninstall(); // the script fails uninstall: logged, not thrown
    expect(readFileSync(join(dir, "calls"), "utf8").trim().split("\n")).toEqual([
      "--kubeconfig /k/config install op /charts/op --namespace ns1 --wait --timeout 180s --set replicas=1",
      "--kubeconfig /k/config upgrade op /charts/op --namespace ns1 --reuse-values --wait --timeout 180s --set replicas=2",
      "--kubeconfig /k/config uninstall op --namespace ns1 --wait --timeout 120s",
    ]);
  });
});

describe("eventsAbout", () => {
  it("lists the Events regarding one object, oldest first, with their series count", async () => {
    const event = (name: string, regarding: string, time: string, extra: object = {}) => ({
      apiVersion: KubeEvent.apiVersion,
      kind: KubeEvent.kind,
      metadata: { name, namespace: "ns" },
      eventTime: time,
      reason: `R-${name}`,
      note: `about ${regarding}`,
      type: "Normal",
      action: "Test",
      reportingController: "t",
      reportingInstance: "t",
      regarding: { kind: "ConfigMap", name: regarding, namespace: "ns" },
      ...extra,
    });
    const server = await new FakeApiServer({
      objects: [
        event("b", "cm", "2026-01-01T00:00:02.000000Z", {
          series: { count: 3, lastObservedTime: "2026-01-01T00:00:09.000000Z" },
        }),
        event("a", "cm", "2026-01-01T00:00:01.000000Z"),
        event("c", "other", "2026-01-01T00:00:00.000000Z"),
      ],
    }).start();
    try {
      const events = await eventsAbout(server.client(), ConfigMap, "ns", "cm");
      expect(events.map((e) => [e.reason, e.count])).toEqual([
        ["R-a", 1],
        ["R-b", 3],
      ]);
    } finally {
      await server.stop();
    }
  });
});
