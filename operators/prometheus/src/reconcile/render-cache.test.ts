// A steady reconcile renders nothing again (renderConfig and renderRuleFile, the real ones, counted), and a change to
// any input of the configuration renders it again, to exactly what a reconcile that remembers nothing writes (a fresh
// ControllerState over the same API server). Each change is one kind of input: the server's spec and version, a
// ServiceMonitor's, PodMonitor's and PrometheusRule's spec, a monitor's namespaces, a namespace's labels, a referenced
// Secret key's value, a Service and a Pod, a monitor deleted. Real reconciles against core's in-memory API server.
import { gunzipSync } from "node:zlib";
import {
  type Kind,
  type KubeObject,
  Namespace,
  Pod,
  type PodObject,
  Secret,
  type SecretObject,
  Service,
  type ServiceObject,
} from "@capstan/core";
import { FakeApiServer, reconcileOnce } from "@capstan/core/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type PodMonitor, PodMonitorKind } from "../api/pod-monitor.ts";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { type PrometheusRule, PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { type ServiceMonitor, ServiceMonitorKind } from "../api/service-monitor.ts";
import { renderConfig } from "../desired/config.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { CONFIG_KEY } from "../desired/reloader.ts";
import { selectMonitors } from "../desired/select.ts";
import { ControllerState } from "./options.ts";
import { argumentsKey } from "./render-cache.ts";
import { KINDS, MONITORING_NAMESPACE, quietReconciler } from "./test-fixture.ts";

const counted = vi.hoisted(() => ({ configs: 0, ruleFiles: 0 }));
vi.mock("../desired/config.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../desired/config.ts")>();
  return {
    ...real,
    renderConfig: (...args: Parameters<typeof real.renderConfig>) => {
      counted.configs++;
      return real.renderConfig(...args);
    },
  };
});
vi.mock("../desired/rule-file.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../desired/rule-file.ts")>();
  return {
    ...real,
    renderRuleFile: (...args: Parameters<typeof real.renderRuleFile>) => {
      counted.ruleFiles++;
      return real.renderRuleFile(...args);
    },
  };
});

const chosen = { matchLabels: { server: "a" } };
const server: Prometheus = {
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "a", namespace: "monitoring", uid: "p-a", generation: 1 },
  spec: {
    ...defaultSpec,
    version: "3.7.0",
    enableFeatures: ["native-histograms"],
    serviceMonitorSelector: chosen,
    serviceMonitorNamespaceSelector: { matchLabels: { monitoring: "on" } },
    podMonitorSelector: chosen,
    podMonitorNamespaceSelector: { matchLabels: { monitoring: "on" } },
    ruleSelector: chosen,
    ruleNamespaceSelector: { matchLabels: { monitoring: "on" } },
  },
};
const namespace = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } },
});
const serviceMonitor = (name: string, ns: string): ServiceMonitor => ({
  apiVersion: ServiceMonitorKind.apiVersion,
  kind: ServiceMonitorKind.kind,
  metadata: { name, namespace: ns, labels: { server: "a" } },
  spec: {
    selector: { matchLabels: { app: name } },
    scrapeNativeHistograms: true,
    endpoints: [{ port: "metrics", bearerTokenSecret: { name: "token", key: "token" } }],
  },
});
const podMonitor: PodMonitor = {
  apiVersion: PodMonitorKind.apiVersion,
  kind: PodMonitorKind.kind,
  metadata: { name: "workers", namespace: "team", labels: { server: "a" } },
  spec: { selector: { matchLabels: { app: "worker" } }, podMetricsEndpoints: [{ port: "http" }] },
};
const rule: PrometheusRule = {
  apiVersion: PrometheusRuleKind.apiVersion,
  kind: PrometheusRuleKind.kind,
  metadata: { name: "alerts", namespace: "team", labels: { server: "a" } },
  spec: { groups: [{ name: "web", rules: [{ alert: "WebDown", expr: "up == 0", for: "5m" }] }] },
};
const token: SecretObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "token", namespace: "team" },
  data: { token: Buffer.from("first").toString("base64") },
};
const service: ServiceObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "team", labels: { app: "web" } },
  spec: { ports: [{ name: "metrics", port: 8080 }] },
};
const pod: PodObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "worker-0", namespace: "team", labels: { app: "worker" } },
  spec: { containers: [{ name: "w", image: "w", ports: [{ name: "http", containerPort: 8080 }] }] },
};

let api: FakeApiServer;
let state: ControllerState;
beforeEach(async () => {
  api = await new FakeApiServer().start();
  api.register(...KINDS);
  api.seed(
    MONITORING_NAMESPACE,
    namespace("team", { monitoring: "on" }),
    namespace("other", {}),
    server,
    serviceMonitor("web", "team"),
    serviceMonitor("late", "other"),
    podMonitor,
    rule,
    token,
    { ...token, metadata: { name: "token", namespace: "other" } },
    service,
    pod,
  );
  state = new ControllerState();
});
afterEach(async () => {
  await api.stop();
});

/** One reconcile of server a keeping `remembering`; the renderers' calls counted from zero. */
async function reconcile(remembering: ControllerState) {
  counted.configs = 0;
  counted.ruleFiles = 0;
  const run = await reconcileOnce(quietReconciler(remembering), {
    server: api,
    request: { namespace: "monitoring", name: "a" },
  });
  run.expectNoError();
  return run;
}

/** What the server's pods load: the config Secret (prometheus.yml unzipped) and the rule shards. */
function output() {
  const secrets = api.list(Secret, "monitoring").filter((s) => s.metadata.name?.startsWith("prometheus-a"));
  const config = secrets.find((s) => s.metadata.name === "prometheus-a");
  const { [CONFIG_KEY]: gz, ...rest } = config?.data ?? {};
  return {
    yaml: gunzipSync(Buffer.from(gz ?? "", "base64")).toString("utf8"),
    data: rest,
    annotations: config?.metadata.annotations,
    shards: secrets
      .filter((s) => /-rules-\d+$/.test(s.metadata.name ?? ""))
      .map((s) => [s.metadata.name, s.data]),
  };
}

/** Puts a changed copy of an object, as another client would. */
function change<T extends KubeObject>(kind: Kind<T>, name: string, ns: string, edit: (o: T) => void) {
  const o = api.get(kind, name, ns);
  if (o === undefined) throw new Error(`no ${kind.kind} ${ns}/${name}`);
  edit(o);
  api.put(kind, o);
}

/**
 * After a change: the cached reconcile's output equals an uncached one's (a fresh state renders, and writes nothing
 * new), and its prometheus.yml is renderConfig's of the server and the selection as the API server holds them.
 */
async function expectAsUncached() {
  const cached = output();
  const fresh = await reconcile(new ControllerState());
  expect(counted.configs).toBe(1);
  expect(fresh.writesOf(Secret)).toEqual([]);
  expect(output()).toEqual(cached);
  const p = api.get(PrometheusKind, "a", "monitoring") as Prometheus;
  const monitors = {
    serviceMonitors: api.list(ServiceMonitorKind),
    podMonitors: api.list(PodMonitorKind),
    rules: api.list(PrometheusRuleKind),
  };
  const selection = selectMonitors(p, api.list(Namespace), monitors, api.list(Service), api.list(Pod));
  expect(cached.yaml).toEqual(renderConfig(p, selection).yaml);
  return cached;
}

describe("a warm reconcile", () => {
  it("renders neither the configuration nor a rule file again when nothing changed", async () => {
    await reconcile(state);
    expect(counted.configs).toBe(1);
    expect(counted.ruleFiles).toBeGreaterThan(0);
    const before = output();
    expect(before.yaml).toContain("serviceMonitor/team/web/0");
    expect(before.yaml).toContain("podMonitor/team/workers/0");
    expect(before.shards).toHaveLength(1);
    const steady = await reconcile(state);
    expect(counted.configs).toBe(0);
    expect(counted.ruleFiles).toBe(0);
    steady.expectNoWrites();
    expect(output()).toEqual(before);
  });
});

describe("a change to an input renders again, as an uncached reconcile does", () => {
  const cases: [string, () => void, number][] = [
    [
      "the server's spec",
      () =>
        change(PrometheusKind, "a", "monitoring", (p) => {
          p.spec.externalLabels = { cluster: "east" };
        }),
      1,
    ],
    [
      "the server's Prometheus version",
      () =>
        change(PrometheusKind, "a", "monitoring", (p) => {
          p.spec.version = "3.8.0";
        }),
      1,
    ],
    [
      "a ServiceMonitor's spec",
      () =>
        change(ServiceMonitorKind, "web", "team", (m) => {
          (m.spec.endpoints ?? [])[0] = { port: "metrics", interval: "15s" };
        }),
      1,
    ],
    [
      "a ServiceMonitor's namespaces",
      () =>
        change(ServiceMonitorKind, "web", "team", (m) => {
          m.spec.namespaceSelector = { matchNames: ["team", "other"] };
        }),
      1,
    ],
    [
      "a PodMonitor's spec",
      () =>
        change(PodMonitorKind, "workers", "team", (m) => {
          (m.spec.podMetricsEndpoints ?? [])[0] = { port: "http", path: "/stats" };
        }),
      1,
    ],
    [
      "a PrometheusRule's spec",
      () =>
        change(PrometheusRuleKind, "alerts", "team", (r) => {
          const first = r.spec.groups?.[0]?.rules?.[0];
          if (first) first.expr = "up{job='web'} == 0";
        }),
      1,
    ],
    [
      "a PrometheusRule grown past what one Secret holds (the size check's rule file)",
      () =>
        change(PrometheusRuleKind, "alerts", "team", (r) => {
          const first = r.spec.groups?.[0]?.rules?.[0];
          if (first) first.annotations = { runbook: "x".repeat(1024 * 1024) };
        }),
      1,
    ],
    [
      "a namespace's labels (a monitor in it now selected)",
      () =>
        change(Namespace, "other", "", (ns) => {
          ns.metadata.labels = { ...ns.metadata.labels, monitoring: "on" };
        }),
      1,
    ],
    ["a monitor deleted", () => api.remove(PodMonitorKind, "team", "workers"), 1],
  ];
  for (const [input, edit, renders] of cases) {
    it(input, async () => {
      await reconcile(state);
      const before = output();
      edit();
      await reconcile(state);
      expect(counted.configs).toBe(renders);
      await reconcile(state); // settles what follows from the change (a rule shard no longer needed goes)
      const after = await expectAsUncached();
      expect(after.yaml + JSON.stringify(after.shards)).not.toEqual(
        before.yaml + JSON.stringify(before.shards),
      );
    });
  }

  it("a referenced Secret key's value: the config Secret carries the new value (the configuration itself is the same)", async () => {
    await reconcile(state);
    const before = output();
    change(Secret, "token", "team", (s) => {
      s.data = { token: Buffer.from("second").toString("base64") };
    });
    await reconcile(state);
    const after = await expectAsUncached();
    expect(after.yaml).toEqual(before.yaml);
    expect(after.data).not.toEqual(before.data);
    expect(Object.values(after.data)).toContain(Buffer.from("second").toString("base64"));
  });

  for (const [what, edit] of [
    [
      "a Service (read only for the monitors' feedback)",
      () =>
        change(Service, "web", "team", (s) => {
          s.spec = { ports: [{ name: "other", port: 9090 }] };
        }),
    ],
    [
      "a Pod (read only for the monitors' feedback)",
      () =>
        change(Pod, "worker-0", "team", (p) => {
          p.metadata.labels = { app: "gone" };
        }),
    ],
  ] as const) {
    it(`${what}: nothing rendered again, the output as uncached`, async () => {
      await reconcile(state);
      const before = output();
      edit();
      await reconcile(state);
      expect(counted.configs).toBe(0);
      expect(await expectAsUncached()).toEqual(before);
    });
  }
});

describe("the cache", () => {
  it("forgets a deleted server", async () => {
    await reconcile(state);
    expect(state.rendered.servers()).toEqual(["monitoring/a"]);
    api.remove(PrometheusKind, "monitoring", "a");
    await reconcile(state);
    expect(state.rendered.servers()).toEqual([]);
  });

  it("keys on every value: undefined is not absent, -0 is not 0; what V8 cannot serialize is not cached", () => {
    expect(argumentsKey([{ a: undefined }])).not.toEqual(argumentsKey([{}]));
    expect(argumentsKey([{ a: -0 }])).not.toEqual(argumentsKey([{ a: 0 }]));
    expect(argumentsKey([{ a: "1" }])).not.toEqual(argumentsKey([{ a: 1 }]));
    expect(argumentsKey([{ a: [1, 2] }])).toEqual(argumentsKey([{ a: [1, 2] }]));
    expect(argumentsKey([{ f: () => 1 }])).toBeUndefined();
  });
});
