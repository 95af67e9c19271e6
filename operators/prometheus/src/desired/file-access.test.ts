// Files of the Prometheus pods named by monitors (issue 29 item 7): refused by default on the monitor's own status,
// except the ServiceAccount's ca.crt (any monitor) and token (monitors in the server's namespace); allowed all with
// spec.arbitraryFSAccessThroughSMs.deny: false; kube-prometheus-stack's kubelet and apiserver monitors work from the
// server's namespace and say why not from another one.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { PodMonitor } from "../api/pod-monitor.ts";
import type { Prometheus } from "../api/prometheus.ts";
import type { Endpoint, ServiceMonitor } from "../api/service-monitor.ts";
import { ASSETS_DIR } from "./assets.ts";
import { renderConfig } from "./config.ts";
import { prometheus } from "./config-fixtures.ts";
import { fileAccessError, fileFields, SERVICE_ACCOUNT_CA, SERVICE_ACCOUNT_TOKEN } from "./file-access.ts";
import { type MonitorFeedback, type ServiceLike, selectMonitors } from "./select.ts";

/** A server in namespace monitoring taking every ServiceMonitor and PodMonitor. */
function server(access?: Prometheus["spec"]["arbitraryFSAccessThroughSMs"]): Prometheus {
  return prometheus({
    serviceMonitorSelector: {},
    serviceMonitorNamespaceSelector: {},
    podMonitorSelector: {},
    podMonitorNamespaceSelector: {},
    ...(access === undefined ? {} : { arbitraryFSAccessThroughSMs: access }),
  });
}

const namespaces = [
  { metadata: { name: "evil", labels: { team: "evil" } } },
  { metadata: { name: "kps", labels: { "scrape-with-token": "yes" } } },
  { metadata: { name: "operators", labels: { "scrape-with-token": "yes" } } },
];

function monitor(namespace: string, endpoint: Partial<Endpoint>): ServiceMonitor {
  return {
    metadata: { name: "m", namespace, generation: 1 },
    spec: { selector: { matchLabels: { app: "web" } }, endpoints: [{ port: "web", ...endpoint }] },
  };
}

function judge(
  p: Prometheus,
  sms: ServiceMonitor[],
  pms: PodMonitor[] = [],
  services: ServiceLike[] = [],
): { feedback: MonitorFeedback[]; yaml: string } {
  const selection = selectMonitors(
    p,
    namespaces,
    { serviceMonitors: sms, podMonitors: pms, rules: [] },
    services,
    [],
  );
  return { feedback: selection.feedback, yaml: renderConfig(p, selection).yaml };
}

const otherTeamsToken = `${ASSETS_DIR}/secret_team-a_scrape-token_token`;

describe("a monitor naming files of the Prometheus pods", () => {
  it.each<[string, Partial<Endpoint>, string]>([
    ["another team's token, copied into the assets", { bearerTokenFile: otherTeamsToken }, "bearerTokenFile"],
    ["another team's client key", { tlsConfig: { keyFile: otherTeamsToken, certFile: "/x/c" } }, "certFile"],
    ["a CA file", { tlsConfig: { caFile: "/etc/ssl/certs/ca.pem" } }, "tlsConfig.caFile"],
    [
      "the ServiceAccount directory, walked out of",
      { tlsConfig: { caFile: `${SERVICE_ACCOUNT_CA}/../../../../../../etc/prometheus/assets/x` } },
      "tlsConfig.caFile",
    ],
    ["the ServiceAccount token from another namespace", { bearerTokenFile: SERVICE_ACCOUNT_TOKEN }, "token"],
    ["the ServiceAccount token as a CA file", { tlsConfig: { caFile: SERVICE_ACCOUNT_TOKEN } }, "caFile"],
  ])("refused by default: %s", (_name, endpoint, names) => {
    const { feedback, yaml } = judge(server(), [monitor("evil", endpoint)]);
    const f = feedback[0]!;
    expect(f).toMatchObject({ inConfig: false, reason: "FileAccessDenied" });
    expect(f.message).toContain("endpoints[0].");
    expect(f.message).toContain(names);
    expect(f.message).toContain("spec.arbitraryFSAccessThroughSMs.deny: false on Prometheus monitoring/main");
    // Left out: the file is never in the configuration.
    expect(yaml).not.toContain("serviceMonitor/evil/m");
  });

  it("says what to use instead, and why the token is only for the server's namespace", () => {
    const token = judge(server(), [monitor("evil", { bearerTokenFile: SERVICE_ACCOUNT_TOKEN })]);
    expect(token.feedback[0]!.message).toContain("only for monitors in its namespace monitoring");
    expect(token.feedback[0]!.message).toContain("use authorization.credentials");
    const key = judge(server(), [monitor("evil", { tlsConfig: { keyFile: "/k", certFile: "/c" } })]);
    expect(key.feedback[0]!.message).toMatch(/endpoints\[0\]\.tlsConfig\.certFile .*use tlsConfig\.cert /);
  });

  it("the ServiceAccount's CA certificate from any namespace, and its token from the server's namespace", () => {
    const { feedback, yaml } = judge(server(), [
      monitor("evil", { scheme: "https", tlsConfig: { caFile: SERVICE_ACCOUNT_CA } }),
      monitor("monitoring", { scheme: "https", bearerTokenFile: SERVICE_ACCOUNT_TOKEN }),
    ]);
    expect(feedback.map((f) => [f.namespace, f.inConfig])).toEqual([
      ["evil", true],
      ["monitoring", true],
    ]);
    expect(yaml).toContain(`ca_file: ${SERVICE_ACCOUNT_CA}`);
    expect(yaml).toContain(`credentials_file: ${SERVICE_ACCOUNT_TOKEN}`);
  });

  it("serviceAccountTokenNamespaceSelector names the other namespaces that may send the token, and only the token", () => {
    const trusting = server({
      serviceAccountTokenNamespaceSelector: { matchLabels: { "scrape-with-token": "yes" } },
    });
    const { feedback } = judge(trusting, [
      monitor("evil", { bearerTokenFile: SERVICE_ACCOUNT_TOKEN }),
      monitor("operators", { bearerTokenFile: SERVICE_ACCOUNT_TOKEN }),
      {
        ...monitor("operators", { bearerTokenFile: otherTeamsToken }),
        metadata: { name: "n", namespace: "operators" },
      },
    ]);
    expect(feedback.map((f) => [f.namespace, f.name, f.inConfig, f.reason === "FileAccessDenied"])).toEqual([
      ["evil", "m", false, true],
      ["operators", "m", true, false],
      ["operators", "n", false, true],
    ]);
    expect(feedback[0]!.message).toContain("serviceAccountTokenNamespaceSelector");
    // {} trusts every namespace with the token, still no other file.
    const all = judge(server({ serviceAccountTokenNamespaceSelector: {} }), [
      monitor("evil", { bearerTokenFile: SERVICE_ACCOUNT_TOKEN }),
    ]);
    expect(all.feedback[0]!.inConfig).toBe(true);
  });

  it("a malformed serviceAccountTokenNamespaceSelector is the server's problem, naming the field", () => {
    const bad = server({
      serviceAccountTokenNamespaceSelector: { matchExpressions: [{ key: "a", operator: "In", values: [] }] },
    });
    expect(() => judge(bad, [])).toThrow(
      /spec\.arbitraryFSAccessThroughSMs\.serviceAccountTokenNamespaceSelector is invalid/,
    );
  });

  it("deny: false lets a cluster admin's monitors name any file; deny: true is the default", () => {
    const allowed = judge(server({ deny: false }), [
      monitor("evil", { bearerTokenFile: "/etc/team/token", tlsConfig: { caFile: "/etc/team/ca" } }),
    ]);
    expect(allowed.feedback[0]!.inConfig).toBe(true);
    expect(allowed.yaml).toContain("credentials_file: /etc/team/token");
    expect(allowed.yaml).toContain("ca_file: /etc/team/ca");
    const denied = judge(server({ deny: true }), [monitor("evil", { bearerTokenFile: "/etc/team/token" })]);
    expect(denied.feedback[0]!.reason).toBe("FileAccessDenied");
  });

  it("a PodMonitor's file fields (kept by Capstan's CRD, absent from prometheus-operator's) are judged alike", () => {
    const pm: PodMonitor = {
      metadata: { name: "p", namespace: "evil" },
      spec: {
        selector: { matchLabels: { app: "web" } },
        podMetricsEndpoints: [{ port: "web", tlsConfig: { caFile: otherTeamsToken } as never }],
      },
    };
    const { feedback } = judge(server(), [], [pm]);
    expect(feedback[0]).toMatchObject({ kind: "PodMonitor", reason: "FileAccessDenied" });
    expect(feedback[0]!.message).toContain("podMetricsEndpoints[0].tlsConfig.caFile");
  });

  it("finds every *File field of an endpoint, nested or not, and nothing else", () => {
    const ep = {
      port: "web",
      bearerTokenFile: "/a",
      tlsConfig: { caFile: "/b", keyFile: "", serverName: "x" },
      oauth2: { clientSecretFile: "/c" },
      relabelings: [{ targetLabel: "File" }],
    };
    expect(fileFields(ep, "endpoints[0]")).toEqual([
      ["endpoints[0].bearerTokenFile", "/a"],
      ["endpoints[0].oauth2.clientSecretFile", "/c"],
      ["endpoints[0].tlsConfig.caFile", "/b"],
    ]);
    expect(fileAccessError({ port: "web" }, "endpoints[0]", server(), false)).toBeUndefined();
  });
});

describe("kube-prometheus-stack's kubelet and apiserver ServiceMonitors", () => {
  const kps = parseAllDocuments(
    readFileSync(new URL("../../testdata/kube-prometheus-stack-monitors.yaml", import.meta.url), "utf8"),
  ).map((d) => d.toJS() as ServiceMonitor);
  const services: ServiceLike[] = [
    {
      metadata: {
        name: "kubelet",
        namespace: "kube-system",
        labels: { "app.kubernetes.io/name": "kubelet", "k8s-app": "kubelet" },
      },
      spec: { ports: [{ name: "https-metrics", port: 10250 }] },
    },
    {
      metadata: {
        name: "kubernetes",
        namespace: "default",
        labels: { component: "apiserver", provider: "kubernetes" },
      },
      spec: { ports: [{ name: "https", port: 443 }] },
    },
  ];

  it("work from the server's namespace: the pods' ServiceAccount token and CA, node metadata and staleness", () => {
    const { feedback, yaml } = judge(server(), kps, [], services);
    expect(feedback.map((f) => [f.name, f.reason])).toEqual([
      ["kube-prometheus-stack-apiserver", "Accepted"],
      ["kube-prometheus-stack-kubelet", "Accepted"],
    ]);
    expect(yaml.match(new RegExp(`credentials_file: ${SERVICE_ACCOUNT_TOKEN}`, "g"))).toHaveLength(4);
    expect(yaml.match(new RegExp(`ca_file: ${SERVICE_ACCOUNT_CA}`, "g"))).toHaveLength(4);
    expect(yaml).toContain("track_timestamps_staleness: true");
    expect(yaml.match(/attach_metadata:\n\s+node: false/g)).toHaveLength(3);
    expect(yaml).toContain("server_name: kubernetes");
  });

  it("from another namespace: refused, saying the token is only for monitors in the server's namespace", () => {
    const elsewhere = kps.map((m) => ({ ...m, metadata: { ...m.metadata, namespace: "kps" } }));
    const { feedback } = judge(server(), elsewhere, [], services);
    for (const f of feedback) {
      expect(f.reason).toBe("FileAccessDenied");
      expect(f.message).toContain(
        `endpoints[0].bearerTokenFile "${SERVICE_ACCOUNT_TOKEN}": the ServiceAccount token of Prometheus monitoring/main's pods is only for monitors in its namespace monitoring and in those its spec.arbitraryFSAccessThroughSMs.serviceAccountTokenNamespaceSelector selects`,
      );
    }
    // ...and taken when a cluster admin trusts that namespace with the token (or allows any file).
    const trusting = server({
      serviceAccountTokenNamespaceSelector: { matchLabels: { "scrape-with-token": "yes" } },
    });
    expect(judge(trusting, elsewhere, [], services).feedback.map((f) => f.reason)).toEqual([
      "Accepted",
      "Accepted",
    ]);
    expect(judge(server({ deny: false }), elsewhere, [], services).feedback.map((f) => f.reason)).toEqual([
      "Accepted",
      "Accepted",
    ]);
  });
});
