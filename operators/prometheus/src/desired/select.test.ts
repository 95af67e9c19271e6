// Table tests of selectMonitors: which objects a server chooses, and every feedback reason with its message.
import { describe, expect, it } from "vitest";
import type { PodMonitor, PodMonitorSpec } from "../api/pod-monitor.ts";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import type { PrometheusRule, RuleGroup } from "../api/prometheus-rule.ts";
import type { Endpoint, ServiceMonitor, ServiceMonitorSpec } from "../api/service-monitor.ts";
import { defaultSpec } from "./config-fixtures.ts";
import {
  type FeedbackReason,
  IN_CONFIG_REASONS,
  type MonitorObjects,
  type NamespaceLike,
  type PodLike,
  type ServiceLike,
  selectMonitors,
} from "./select.ts";

/** Spec fields to change; undefined removes a field. */
type SpecPatch = { [K in keyof PrometheusSpec]?: PrometheusSpec[K] | undefined };

function prometheus(patch: SpecPatch = {}): Prometheus {
  const spec = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const removed = Object.keys(patch).filter((k) => patch[k as keyof PrometheusSpec] === undefined);
  const p: Prometheus = {
    metadata: { name: "main", namespace: "monitoring" },
    spec: {
      ...defaultSpec,
      serviceMonitorSelector: {},
      serviceMonitorNamespaceSelector: {},
      podMonitorSelector: {},
      podMonitorNamespaceSelector: {},
      ruleSelector: {},
      ruleNamespaceSelector: {},
      ...spec,
    },
  };
  for (const k of removed) delete (p.spec as unknown as Record<string, unknown>)[k];
  return p;
}

const namespaces: NamespaceLike[] = [
  { metadata: { name: "monitoring", labels: { team: "obs" } } },
  { metadata: { name: "app", labels: { team: "web", monitored: "yes" } } },
  { metadata: { name: "other", labels: { team: "web" } } },
];

const services: ServiceLike[] = [
  {
    metadata: { name: "web", namespace: "app", labels: { app: "web" } },
    spec: {
      ports: [
        { name: "http", port: 80, targetPort: 8080 },
        { name: "metrics", port: 9090, targetPort: "metrics" },
      ],
    },
  },
  {
    metadata: { name: "web", namespace: "other", labels: { app: "web" } },
    spec: { ports: [{ name: "http", port: 80 }] },
  },
];

const pods: PodLike[] = [
  {
    metadata: { name: "web-0", namespace: "app", labels: { app: "web" } },
    spec: { containers: [{ ports: [{ name: "metrics", containerPort: 9100 }] }] },
  },
];

function sm(spec: Partial<ServiceMonitorSpec>, name = "web", namespace = "app", labels = {}): ServiceMonitor {
  return {
    metadata: { name, namespace, labels, generation: 3 },
    spec: { selector: { matchLabels: { app: "web" } }, endpoints: [{ port: "metrics" }], ...spec },
  };
}
function ep(e: Endpoint): Partial<ServiceMonitorSpec> {
  return { endpoints: [e] };
}
function pm(spec: Partial<PodMonitorSpec>, name = "web-pods", namespace = "app"): PodMonitor {
  return {
    metadata: { name, namespace, labels: {} },
    spec: { selector: { matchLabels: { app: "web" } }, podMetricsEndpoints: [{ port: "metrics" }], ...spec },
  };
}
function rule(groups: RuleGroup[], name = "alerts", namespace = "app"): PrometheusRule {
  return { metadata: { name, namespace, labels: {} }, spec: { groups } };
}
const objects = (o: Partial<MonitorObjects>): MonitorObjects => ({
  serviceMonitors: [],
  podMonitors: [],
  rules: [],
  ...o,
});

const secret = (name: string, key: string) => ({ name, key });

describe("ServiceMonitor feedback", () => {
  it.each<[string, ServiceMonitor, FeedbackReason, string]>([
    ["accepted", sm({}), "Accepted", "1 Service match: web"],
    [
      "accepted in several namespaces",
      sm({ namespaceSelector: { matchNames: ["other", "app"] }, endpoints: [{ port: "http" }] }),
      "Accepted",
      "2 Services match: app/web, other/web",
    ],
    [
      "no Service matches",
      sm({ selector: { matchLabels: { app: "foo" } }, namespaceSelector: { matchNames: ["a", "b"] } }),
      "NoTargets",
      "no Service in namespaces [a b] matches app=foo",
    ],
    [
      "no Service matches anywhere",
      sm({ selector: { matchLabels: { app: "foo" } }, namespaceSelector: { any: true } }),
      "NoTargets",
      "no Service in any namespace matches app=foo",
    ],
    [
      "port not on the Service",
      sm(ep({ port: "grpc" })),
      "PortNotFound",
      "endpoints[0]: port grpc not found on Service web",
    ],
    [
      "targetPort not on the Service",
      sm({ ...ep({ targetPort: 9999 }), namespaceSelector: { matchNames: ["other"] } }),
      "PortNotFound",
      "endpoints[0]: targetPort 9999 not found on Service web",
    ],
    ["targetPort by number", sm(ep({ targetPort: 8080 })), "Accepted", "1 Service match"],
    ["targetPort by name", sm(ep({ targetPort: "metrics" })), "Accepted", "1 Service match"],
    [
      "targetPort by name behind numeric Service targetPorts (only the Pods tell)",
      sm({ ...ep({ targetPort: "admin" }), namespaceSelector: { matchNames: ["other"] } }),
      "Accepted",
      "1 Service match",
    ],
    [
      "targetPort by number behind a named Service targetPort (only the Pods tell)",
      sm(ep({ targetPort: 9100 })),
      "Accepted",
      "1 Service match",
    ],
    [
      "invalid selector",
      sm({ selector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] } }),
      "InvalidSelector",
      'spec.selector is invalid: label selector: operator In on "app" needs at least one value',
    ],
    ["no endpoints", sm({ endpoints: [] }), "NoEndpoints", "spec.endpoints is empty: nothing to scrape"],
    [
      "lookahead (JavaScript takes it, RE2 does not)",
      sm(
        ep({
          port: "metrics",
          relabelings: [{ action: "keep" }, { sourceLabels: ["a"], regex: "foo(?=bar)" }],
        }),
      ),
      "InvalidRegex",
      "invalid regex in endpoints[0].relabelings[1]: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
    ],
    [
      "backreference",
      sm(
        ep({
          port: "metrics",
          metricRelabelings: [{ sourceLabels: ["a"], regex: "(a)\\1", action: "drop" }],
        }),
      ),
      "InvalidRegex",
      "invalid regex in endpoints[0].metricRelabelings[0]: error parsing regexp: invalid escape sequence: `\\1`",
    ],
    [
      "unbalanced regex",
      sm(ep({ port: "metrics", relabelings: [{ regex: "(abc", targetLabel: "x" }] })),
      "InvalidRegex",
      "invalid regex in endpoints[0].relabelings[0]: error parsing regexp: missing closing ): `(abc`",
    ],
    [
      "replace without targetLabel",
      sm(ep({ port: "metrics", relabelings: [{ sourceLabels: ["a"], action: "replace" }] })),
      "InvalidRelabeling",
      "endpoints[0].relabelings[0]: relabel configuration for replace action requires 'target_label' value (set targetLabel)",
    ],
    [
      "hashmod without modulus",
      sm(
        ep({ port: "metrics", relabelings: [{ sourceLabels: ["a"], targetLabel: "t", action: "HashMod" }] }),
      ),
      "InvalidRelabeling",
      "endpoints[0].relabelings[0]: relabel configuration for hashmod requires non-zero modulus",
    ],
    [
      "labeldrop with sourceLabels",
      sm(ep({ port: "metrics", relabelings: [{ sourceLabels: ["a"], regex: "x", action: "labeldrop" }] })),
      "InvalidRelabeling",
      "endpoints[0].relabelings[0]: labeldrop action requires only 'regex', and no other fields (sourceLabels)",
    ],
    [
      "keepequal with regex",
      sm(
        ep({
          port: "metrics",
          relabelings: [{ sourceLabels: ["a"], targetLabel: "b", regex: "x", action: "keepequal" }],
        }),
      ),
      "InvalidRelabeling",
      "endpoints[0].relabelings[0]: keepequal action requires only 'source_labels' and `target_label`, and no other fields (regex)",
    ],
    [
      "unknown action",
      sm(ep({ port: "metrics", relabelings: [{ action: "rename" }] })),
      "InvalidRelabeling",
      'endpoints[0].relabelings[0]: unknown relabel action "rename"',
    ],
    [
      "bad interval",
      sm(ep({ port: "metrics", interval: "1.5m" })),
      "InvalidDuration",
      'endpoints[0].interval "1.5m" is not a Prometheus duration (e.g. 30s, 1m)',
    ],
    [
      "interval past the longest duration Prometheus reads (model.ParseDuration: duration out of range)",
      sm(ep({ port: "metrics", interval: "293y" })),
      "InvalidDuration",
      'endpoints[0].interval "293y" is not a Prometheus duration (e.g. 30s, 1m)',
    ],
    [
      "zero interval",
      sm(ep({ port: "metrics", interval: "0" })),
      "InvalidDuration",
      "endpoints[0].interval must be longer than 0",
    ],
    [
      "timeout longer than the endpoint's interval",
      sm(ep({ port: "metrics", interval: "10s", scrapeTimeout: "20s" })),
      "InvalidScrapeTimeout",
      "endpoints[0].scrapeTimeout 20s is longer than the scrape interval 10s (endpoints[0].interval)",
    ],
    [
      "timeout longer than the server's interval",
      sm(ep({ port: "metrics", scrapeTimeout: "1m" })),
      "InvalidScrapeTimeout",
      "endpoints[0].scrapeTimeout 1m is longer than the scrape interval 30s (the server's scrapeInterval)",
    ],
    [
      "authorization type Basic",
      sm(ep({ port: "metrics", authorization: { type: "basic", credentials: secret("s", "k") } })),
      "InvalidAuthorization",
      "endpoints[0].authorization.type Basic is refused by Prometheus: use basicAuth",
    ],
    [
      "two kinds of authentication",
      sm(
        ep({
          port: "metrics",
          authorization: { credentials: secret("s", "k") },
          bearerTokenSecret: secret("t", "k"),
        }),
      ),
      "InvalidAuthorization",
      "endpoints[0]: set at most one of authorization, bearerTokenSecret",
    ],
    [
      "CA from a Secret and a ConfigMap",
      sm(
        ep({
          port: "metrics",
          tlsConfig: { ca: { secret: secret("s", "ca"), configMap: secret("c", "ca") } },
        }),
      ),
      "InvalidTLS",
      "endpoints[0].tlsConfig.ca: set secret or configMap, not both",
    ],
    [
      "client certificate without its key",
      sm(ep({ port: "metrics", tlsConfig: { cert: { secret: secret("s", "tls.crt") } } })),
      "InvalidTLS",
      "endpoints[0].tlsConfig: a client certificate needs its key",
    ],
    [
      "oauth2",
      sm({ endpoints: [{ port: "metrics" }, { port: "metrics", oauth2: {} } as Endpoint] }),
      "UnsupportedField",
      "endpoints[1].oauth2 is not supported by Capstan's Prometheus operator",
    ],
    ["scrape class", sm({ scrapeClass: "istio" }), "UnsupportedField", "spec.scrapeClass is not supported"],
    [
      "Secret reference without a name",
      sm(
        ep({
          port: "metrics",
          bearerTokenSecret: { name: "t", key: "k" },
          tlsConfig: { ca: { secret: { key: "ca" } as never } },
        }),
      ),
      "SecretNotFound",
      "endpoints[0].tlsConfig.ca: the Secret name is empty",
    ],
  ])("%s", (_name, monitor, reason, message) => {
    const got = selectMonitors(
      prometheus(),
      namespaces,
      objects({ serviceMonitors: [monitor] }),
      services,
      pods,
    );
    expect(got.feedback).toHaveLength(1);
    const f = got.feedback[0]!;
    expect(f).toMatchObject({
      kind: "ServiceMonitor",
      namespace: "app",
      name: monitor.metadata.name,
      reason,
    });
    expect(f.message).toContain(message);
    expect(f.inConfig).toBe(IN_CONFIG_REASONS.includes(reason));
    expect(got.serviceMonitors.map((s) => s.object)).toEqual(f.inConfig ? [monitor] : []);
  });

  it("records the generation judged", () => {
    const got = selectMonitors(
      prometheus(),
      namespaces,
      objects({ serviceMonitors: [sm({})] }),
      services,
      pods,
    );
    expect(got.feedback[0]!.generation).toBe(3);
  });
});

describe("Secret references (keyExists)", () => {
  const monitor = sm(
    ep({
      port: "metrics",
      authorization: { credentials: secret("token", "t") },
      tlsConfig: { ca: { configMap: secret("ca", "ca.crt") } },
    }),
  );
  it.each<[string, string[], FeedbackReason, string]>([
    ["all present", ["Secret/token/t", "ConfigMap/ca/ca.crt"], "Accepted", "1 Service match"],
    [
      "a Secret key missing",
      ["ConfigMap/ca/ca.crt"],
      "SecretNotFound",
      'Secret app/token has no key "t" (endpoints[0].authorization.credentials), or does not exist',
    ],
    [
      "a ConfigMap missing",
      ["Secret/token/t"],
      "SecretNotFound",
      'ConfigMap app/ca has no key "ca.crt" (endpoints[0].tlsConfig.ca)',
    ],
  ])("%s", (_name, present, reason, message) => {
    const got = selectMonitors(
      prometheus(),
      namespaces,
      objects({ serviceMonitors: [monitor] }),
      services,
      pods,
      {
        keyExists: (r) => r.namespace === "app" && present.includes(`${r.kind}/${r.name}/${r.key}`),
      },
    );
    expect(got.feedback[0]).toMatchObject({ reason });
    expect(got.feedback[0]!.message).toContain(message);
  });
});

describe("PodMonitor feedback", () => {
  it.each<[string, PodMonitor, FeedbackReason, string]>([
    ["accepted by port name", pm({}), "Accepted", "1 Pod match in namespaces [app]"],
    [
      "accepted by port number",
      pm({ podMetricsEndpoints: [{ portNumber: 9100 }] }),
      "Accepted",
      "1 Pod match",
    ],
    [
      "no Pod matches",
      pm({ selector: { matchLabels: { app: "foo" } } }),
      "NoTargets",
      "no Pod in namespaces [app] matches app=foo",
    ],
    [
      "port not on the Pods",
      pm({ podMetricsEndpoints: [{ port: "http" }] }),
      "PortNotFound",
      "podMetricsEndpoints[0]: port http not found on any of the 1 matching Pod in namespaces [app]",
    ],
    [
      "port number not on the Pods",
      pm({ podMetricsEndpoints: [{ portNumber: 1234 }] }),
      "PortNotFound",
      "port number 1234 not found",
    ],
    ["no endpoints", pm({ podMetricsEndpoints: [] }), "NoEndpoints", "spec.podMetricsEndpoints is empty"],
    [
      "invalid regex",
      pm({
        podMetricsEndpoints: [{ port: "metrics", relabelings: [{ regex: "a{2,1}", targetLabel: "x" }] }],
      }),
      "InvalidRegex",
      "invalid regex in podMetricsEndpoints[0].relabelings[0]: error parsing regexp: invalid repeat count",
    ],
  ])("%s", (_name, monitor, reason, message) => {
    const got = selectMonitors(prometheus(), namespaces, objects({ podMonitors: [monitor] }), services, pods);
    expect(got.feedback[0]).toMatchObject({ kind: "PodMonitor", reason });
    expect(got.feedback[0]!.message).toContain(message);
    expect(got.podMonitors.length).toBe(IN_CONFIG_REASONS.includes(reason) ? 1 : 0);
  });
});

describe("PrometheusRule feedback", () => {
  const alert = {
    alert: "Down",
    expr: "up == 0",
    for: "5m",
    annotations: { summary: "{{ $labels.job }} down" },
  };
  it.each<[string, RuleGroup[], FeedbackReason, string]>([
    [
      "accepted",
      [{ name: "g", rules: [alert, { record: "job:up:sum", expr: "sum by (job) (up)" }] }],
      "Accepted",
      "1 group(s), 2 rule(s)",
    ],
    ["no groups", [], "Accepted", "0 group(s)"],
    [
      "a rule file over 960 KiB (no Secret could hold it)",
      [{ name: "g", rules: [{ ...alert, annotations: { runbook: "x".repeat(1024 * 1024) } }] }],
      "RuleFileTooLarge",
      "the rule file of this PrometheusRule is 1048",
    ],
    [
      "unbalanced bracket",
      [{ name: "g", rules: [alert, { alert: "X", expr: "sum(rate(x[5m])" }] }],
      "InvalidRules",
      'PromQL parse error in group "g" rule 2 (alert X): unexpected end of input at 1:16',
    ],
    [
      "mismatched bracket",
      [{ name: "g", rules: [{ record: "r", expr: "rate(x[5m)]" }] }],
      "InvalidRules",
      'PromQL parse error in group "g" rule 1 (record r): unexpected ")" at 1:10',
    ],
    [
      "unterminated string",
      [{ name: "g", rules: [{ alert: "A", expr: 'up{job="x}' }] }],
      "InvalidRules",
      'PromQL parse error in group "g" rule 1 (alert A): unterminated quoted string at 1:8',
    ],
    [
      "empty expr",
      [{ name: "g", rules: [{ alert: "A", expr: " " }] }],
      "InvalidRules",
      "rule 1 (alert A): expr is empty",
    ],
    [
      "both alert and record",
      [{ name: "g", rules: [{ alert: "A", record: "r", expr: "up" }] }],
      "InvalidRules",
      "set exactly one of alert and record",
    ],
    [
      "for on a recording rule",
      [{ name: "g", rules: [{ record: "r", expr: "up", for: "5m" }] }],
      "InvalidRules",
      "a recording rule takes no for",
    ],
    [
      "bad for",
      [{ name: "g", rules: [{ alert: "A", expr: "up", for: "5 minutes" }] }],
      "InvalidRules",
      'for "5 minutes" is not a Prometheus duration',
    ],
    [
      "broken template",
      [{ name: "g", rules: [{ alert: "A", expr: "up", annotations: { summary: "{{ $value " } }] }],
      "InvalidRules",
      "template annotations.summary: unclosed action at line 1 (Prometheus 3.16.0)",
    ],
    [
      "bad group interval",
      [{ name: "g", interval: "0", rules: [] }],
      "InvalidRules",
      'group "g": interval "0" is not a positive',
    ],
    ["duplicate group", [{ name: "g" }, { name: "g" }], "InvalidRules", 'group "g" appears twice'],
    [
      "braces inside a template string are text",
      [{ name: "g", rules: [{ alert: "A", expr: "up", annotations: { x: '{{ "{{" }} and {{ `}}` }}' } }] }],
      "Accepted",
      "1 group(s), 1 rule(s)",
    ],
    [
      "nested action",
      [{ name: "g", rules: [{ alert: "A", expr: "up", labels: { x: "{{ {{ $value }}" } }] }],
      "InvalidRules",
      'template labels.x: unexpected "{" in command at line 1',
    ],
    [
      "bad query_offset",
      [{ name: "g", query_offset: "1 m", rules: [] }],
      "InvalidRules",
      'group "g": query_offset "1 m" is not a Prometheus duration',
    ],
  ])("%s", (_name, groups, reason, message) => {
    const got = selectMonitors(prometheus(), namespaces, objects({ rules: [rule(groups)] }), services, pods);
    expect(got.feedback[0]).toMatchObject({ kind: "PrometheusRule", reason });
    expect(got.feedback[0]!.message).toContain(message);
    expect(got.rules.length).toBe(reason === "Accepted" ? 1 : 0);
  });

  it("strings and comments do not count as brackets", () => {
    const groups = [
      { name: "g", rules: [{ alert: "A", expr: 'up{job=")"} # (unbalanced in a comment\n> 0' }] },
    ];
    const got = selectMonitors(prometheus(), namespaces, objects({ rules: [rule(groups)] }), services, pods);
    expect(got.feedback[0]!.reason).toBe("Accepted");
  });
});

describe("which objects a server chooses", () => {
  const all = objects({
    serviceMonitors: [
      sm({}, "b", "app", { team: "a" }),
      sm({}, "a", "other", { team: "b" }),
      sm({}, "c", "monitoring"),
    ],
    podMonitors: [pm({}, "p", "app")],
    rules: [rule([], "r", "monitoring")],
  });
  const chosen = (spec: SpecPatch) => {
    const got = selectMonitors(prometheus(spec), namespaces, all, services, pods);
    return got.feedback.map((f) => `${f.kind}:${f.namespace}/${f.name}`);
  };

  it.each<[string, SpecPatch, string[]]>([
    [
      "{} selectors in every namespace: all, sorted by kind then namespace/name",
      {},
      [
        "ServiceMonitor:app/b",
        "ServiceMonitor:monitoring/c",
        "ServiceMonitor:other/a",
        "PodMonitor:app/p",
        "PrometheusRule:monitoring/r",
      ],
    ],
    [
      "absent object selectors choose nothing",
      { serviceMonitorSelector: undefined, podMonitorSelector: undefined, ruleSelector: undefined },
      [],
    ],
    [
      "absent namespace selectors: the server's namespace only",
      {
        serviceMonitorNamespaceSelector: undefined,
        podMonitorNamespaceSelector: undefined,
        ruleNamespaceSelector: undefined,
      },
      ["ServiceMonitor:monitoring/c", "PrometheusRule:monitoring/r"],
    ],
    [
      "object labels",
      { serviceMonitorSelector: { matchLabels: { team: "a" } } },
      ["ServiceMonitor:app/b", "PodMonitor:app/p", "PrometheusRule:monitoring/r"],
    ],
    [
      "namespace labels",
      {
        serviceMonitorNamespaceSelector: { matchLabels: { team: "web" } },
        podMonitorNamespaceSelector: { matchLabels: { monitored: "yes" } },
      },
      ["ServiceMonitor:app/b", "ServiceMonitor:other/a", "PodMonitor:app/p", "PrometheusRule:monitoring/r"],
    ],
  ])("%s", (_name, spec, want) => {
    expect(chosen(spec)).toEqual(want);
  });

  it("a malformed server selector throws, naming the field", () => {
    expect(() =>
      chosen({ ruleSelector: { matchExpressions: [{ key: "x", operator: "Exists", values: ["y"] }] } }),
    ).toThrow(
      'Prometheus monitoring/main: spec.ruleSelector is invalid: label selector: operator Exists on "x" takes no values',
    );
  });

  it("one bad monitor leaves the others in the configuration", () => {
    const bad = sm(ep({ port: "metrics", relabelings: [{ regex: "(?<!x)y" }] }), "bad");
    const got = selectMonitors(
      prometheus(),
      namespaces,
      objects({ serviceMonitors: [sm({}, "z"), bad, sm({}, "a")] }),
      services,
      pods,
    );
    expect(got.serviceMonitors.map((s) => s.object.metadata.name)).toEqual(["a", "z"]);
    expect(got.feedback.map((f) => [f.name, f.reason])).toEqual([
      ["a", "Accepted"],
      ["bad", "InvalidRegex"],
      ["z", "Accepted"],
    ]);
  });

  it("gives each monitor the namespaces it may look in", () => {
    const got = selectMonitors(
      prometheus(),
      namespaces,
      objects({
        serviceMonitors: [
          sm({ namespaceSelector: { any: true, matchNames: ["x"] } }, "any"),
          sm(
            { namespaceSelector: { matchNames: ["other", "app", "other"] }, endpoints: [{ port: "http" }] },
            "list",
          ),
          sm({}, "own"),
        ],
      }),
      services,
      pods,
    );
    expect(got.serviceMonitors.map((s) => [s.object.metadata.name, s.namespaces])).toEqual([
      ["any", undefined],
      ["list", ["app", "other"]],
      ["own", ["app"]],
    ]);
  });
});
