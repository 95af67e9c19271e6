// A reconcile selects the server's monitors once when every Secret and ConfigMap key they read exists (the usual
// case: the 500-monitor benchmark spent ~40 ms of a steady reconcile on the second, identical selection), and a
// second time, leaving out the monitor whose key is missing, only when one is missing. Real reconciles against core's
// in-memory API server; selectMonitors is the real one, counted.
import type { KubeObject, SecretObject } from "@capstan/core";
import { FakeApiServer, reconcileOnce } from "@capstan/core/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Prometheus } from "../api/prometheus.ts";
import { PrometheusKind } from "../api/prometheus.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { ControllerState } from "./options.ts";
import { KINDS, MONITORING_NAMESPACE, quietReconciler } from "./test-fixture.ts";

const counted = vi.hoisted(() => ({ calls: 0 }));
vi.mock("../desired/select.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../desired/select.ts")>();
  return {
    ...real,
    selectMonitors: (...args: Parameters<typeof real.selectMonitors>) => {
      counted.calls++;
      return real.selectMonitors(...args);
    },
  };
});

const server: Prometheus = {
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "a", namespace: "monitoring", uid: "p-a", generation: 1 },
  spec: { ...defaultSpec, serviceMonitorSelector: { matchLabels: { server: "a" } } },
};

const monitor = (name: string, secret?: string): ServiceMonitor => ({
  apiVersion: ServiceMonitorKind.apiVersion,
  kind: ServiceMonitorKind.kind,
  metadata: { name, namespace: "monitoring", uid: `sm-${name}`, generation: 1, labels: { server: "a" } },
  spec: {
    selector: { matchLabels: { app: name } },
    endpoints: [
      secret === undefined
        ? { port: "metrics" }
        : { port: "metrics", bearerTokenSecret: { name: secret, key: "token" } },
    ],
  },
});

const token: SecretObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "token", namespace: "monitoring" },
  stringData: { token: "t" },
};

let api: FakeApiServer | undefined;
afterEach(async () => {
  await api?.stop();
  api = undefined;
});

async function reconcileWith(objects: readonly KubeObject[]) {
  api = await new FakeApiServer().start();
  api.register(...KINDS);
  api.seed(MONITORING_NAMESPACE, server, ...objects);
  const state = new ControllerState();
  const run = async () => {
    counted.calls = 0;
    const r = await reconcileOnce(quietReconciler(state), {
      server: api as FakeApiServer,
      request: { namespace: "monitoring", name: "a" },
    });
    r.expectNoError();
    return r;
  };
  return run;
}

describe("selecting a server's monitors", () => {
  it("happens once per reconcile when the monitors read no key, or only keys that exist", async () => {
    const run = await reconcileWith([monitor("plain"), monitor("authed", "token"), token]);
    await run();
    expect(counted.calls).toBe(1);
    const steady = await run();
    expect(counted.calls).toBe(1);
    steady.expectNoWrites();
  });

  it("happens again, leaving out the monitor, when a key it reads is missing", async () => {
    const run = await reconcileWith([monitor("plain"), monitor("authed", "absent")]);
    const r = await run();
    expect(counted.calls).toBe(2);
    const status = (await (api as FakeApiServer).client().get(ServiceMonitorKind, "authed", "monitoring"))
      .status;
    expect(JSON.stringify(status)).toContain("SecretNotFound");
    expect(r.requests.some((q) => q.verb === "get" && q.kind === "Secret")).toBe(false);
  });
});
