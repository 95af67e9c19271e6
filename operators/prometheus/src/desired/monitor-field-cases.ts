// Every field a ServiceMonitor or PodMonitor may carry (Capstan's CRD schema, and prometheus-operator's CRDs, which
// clusters often have instead: testdata/prometheus-operator-monitor-fields.json) and what the operator does with it:
// it reaches the generated scrape job, or the monitor is refused naming it, or (a few, each with the reason) it
// changes nothing Prometheus would do differently. monitor-fields.test.ts sets each row's sample on a minimal monitor
// and checks the claim, and fails on a field no row covers, so no accepted field is silently dropped again;
// promtool.real.test.ts loads every rendering row's configuration into the real promtool. Test support only.
import type { PodMonitor } from "../api/pod-monitor.ts";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import { prometheus } from "./config-fixtures.ts";
import type { FeedbackReason } from "./select.ts";

/** The two monitor kinds. */
export type MonitorKindName = "ServiceMonitor" | "PodMonitor";

/** What happens to a field. */
export type FieldOutcome =
  /** The scrape job holds this (a substring, or a pattern), which the job without the field does not. */
  | { renders: string | RegExp }
  /** The scrape job without the field holds this, and with it does not. */
  | { omits: string }
  /** The monitor is refused with this reason, and a message naming the field. */
  | { refused: FeedbackReason }
  /** Nothing changes in what Prometheus does; why (the documentation says it too). */
  | { inert: string };

/** One row: a field, a value for it, and what it does. */
export interface FieldCase {
  /**
   * Path under spec; `endpoint.` stands for `endpoints[]` of a ServiceMonitor and `podMetricsEndpoints[]` of a
   * PodMonitor. A row covers the fields under it too.
   */
  field: string;
  /** The kinds that have it (default both). */
  kinds?: readonly MonitorKindName[];
  sample: unknown;
  outcome: FieldOutcome;
  /** Other fields to set with it (same path form), when it means nothing alone. */
  with?: Record<string, unknown>;
  /** Fields of the minimal endpoint to remove first (`port` wins over targetPort and portNumber). */
  without?: readonly string[];
  /** Settings of the server (default: Prometheus 3.16.0 taking every monitor). */
  server?: Partial<PrometheusSpec>;
}

const SM_ONLY: readonly MonitorKindName[] = ["ServiceMonitor"];
const PM_ONLY: readonly MonitorKindName[] = ["PodMonitor"];
const secret = (name: string, key: string) => ({ name, key });
const ALLOW_FILES: Partial<PrometheusSpec> = { arbitraryFSAccessThroughSMs: { deny: false } };
const OPTIONAL =
  "treated as required: a missing Secret or ConfigMap key refuses the monitor (SecretNotFound) instead of leaving the setting out; with the key present it changes nothing";

/** The table (monitors live in namespace app, the server in monitoring). */
export const FIELD_CASES: readonly FieldCase[] = [
  // ---- spec: which targets, and how they are labelled ----
  {
    field: "selector",
    sample: { matchLabels: { tier: "x" } },
    outcome: { renders: /_label_tier\n\s+- \S+_labelpresent_tier/ },
  },
  { field: "namespaceSelector", sample: { matchNames: ["other"] }, outcome: { renders: "- other" } },
  {
    field: "jobLabel",
    sample: "app.kubernetes.io/name",
    outcome: { renders: /_label_app_kubernetes_io_name\n\s+target_label: job/ },
  },
  { field: "targetLabels", kinds: SM_ONLY, sample: ["tier"], outcome: { renders: "target_label: tier" } },
  { field: "podTargetLabels", sample: ["tier"], outcome: { renders: "target_label: tier" } },
  {
    field: "attachMetadata",
    sample: { node: true },
    outcome: { renders: /attach_metadata:\n\s+node: true/ },
  },
  {
    field: "selectorMechanism",
    sample: "RoleSelector",
    outcome: {
      inert:
        "how discovery filters the targets: Capstan keeps the selected ones with relabelings (RelabelConfig) either way, and both find the same targets with the same labels",
    },
  },
  {
    field: "serviceDiscoveryRole",
    kinds: SM_ONLY,
    sample: "Endpoints",
    outcome: {
      inert:
        "Capstan discovers from EndpointSlices either way; Kubernetes keeps EndpointSlices for every Service (mirroring hand-written Endpoints), so both roles find the same targets with the same labels",
    },
  },
  { field: "scrapeClass", sample: "strict", outcome: { refused: "UnsupportedField" } },
  // ---- spec: limits and scrape settings ----
  { field: "sampleLimit", sample: 5000, outcome: { renders: "sample_limit: 5000" } },
  { field: "targetLimit", sample: 10, outcome: { renders: "target_limit: 10" } },
  { field: "labelLimit", sample: 30, outcome: { renders: "label_limit: 30" } },
  { field: "labelNameLengthLimit", sample: 100, outcome: { renders: "label_name_length_limit: 100" } },
  { field: "labelValueLengthLimit", sample: 200, outcome: { renders: "label_value_length_limit: 200" } },
  { field: "keepDroppedTargets", sample: 5, outcome: { renders: "keep_dropped_targets: 5" } },
  { field: "bodySizeLimit", sample: "10MB", outcome: { renders: "body_size_limit: 10MB" } },
  {
    field: "scrapeProtocols",
    sample: ["PrometheusProto", "OpenMetricsText1.0.0"],
    outcome: { renders: /scrape_protocols:\n\s+- PrometheusProto\n\s+- OpenMetricsText1\.0\.0/ },
  },
  {
    field: "fallbackScrapeProtocol",
    sample: "PrometheusText0.0.4",
    outcome: { renders: "fallback_scrape_protocol: PrometheusText0.0.4" },
  },
  {
    field: "scrapeClassicHistograms",
    sample: true,
    outcome: { renders: "always_scrape_classic_histograms: true" },
  },
  { field: "scrapeNativeHistograms", sample: true, outcome: { renders: "scrape_native_histograms: true" } },
  {
    field: "nativeHistogramBucketLimit",
    sample: 160,
    outcome: { renders: "native_histogram_bucket_limit: 160" },
  },
  {
    field: "nativeHistogramMinBucketFactor",
    sample: "1100m",
    outcome: { renders: "native_histogram_min_bucket_factor: 1.1\n" },
  },
  {
    field: "convertClassicHistogramsToNHCB",
    sample: true,
    outcome: { renders: "convert_classic_histograms_to_nhcb: true" },
  },
  // ---- endpoints: where and how often ----
  { field: "endpoint.port", sample: "metrics", outcome: { renders: "regex: metrics" } },
  {
    field: "endpoint.targetPort",
    sample: 9100,
    without: ["port"],
    outcome: { renders: /__meta_kubernetes_pod_container_port_number\n\s+regex: "9100"/ },
  },
  {
    field: "endpoint.portNumber",
    kinds: PM_ONLY,
    sample: 9100,
    without: ["port"],
    outcome: { renders: /__meta_kubernetes_pod_container_port_number\n\s+regex: "9100"/ },
  },
  {
    field: "endpoint.path",
    sample: "/internal/metrics",
    outcome: { renders: "metrics_path: /internal/metrics" },
  },
  { field: "endpoint.scheme", sample: "HTTPS", outcome: { renders: "scheme: https" } },
  {
    field: "endpoint.params",
    sample: { format: ["prometheus"] },
    outcome: { renders: /params:\n\s+format:\n\s+- prometheus/ },
  },
  { field: "endpoint.interval", sample: "15s", outcome: { renders: "scrape_interval: 15s" } },
  { field: "endpoint.scrapeTimeout", sample: "5s", outcome: { renders: "scrape_timeout: 5s" } },
  { field: "endpoint.honorLabels", sample: true, outcome: { renders: "honor_labels: true" } },
  { field: "endpoint.honorTimestamps", sample: false, outcome: { renders: "honor_timestamps: false" } },
  {
    field: "endpoint.trackTimestampsStaleness",
    sample: true,
    outcome: { renders: "track_timestamps_staleness: true" },
  },
  { field: "endpoint.filterRunning", sample: false, outcome: { omits: "(Failed|Succeeded)" } },
  {
    field: "endpoint.relabelings",
    sample: [{ targetLabel: "team", replacement: "a" }],
    outcome: { renders: "target_label: team" },
  },
  {
    field: "endpoint.metricRelabelings",
    sample: [{ sourceLabels: ["__name__"], regex: "go_.*", action: "drop" }],
    outcome: { renders: /metric_relabel_configs:\n\s+- source_labels:\n\s+- __name__\n\s+regex: go_\.\*/ },
  },
  { field: "endpoint.followRedirects", sample: false, outcome: { renders: "follow_redirects: false" } },
  { field: "endpoint.enableHttp2", sample: false, outcome: { renders: "enable_http2: false" } },
  // ---- endpoints: TLS and credentials ----
  {
    field: "endpoint.tlsConfig.ca",
    sample: { configMap: secret("ca", "ca.crt") },
    outcome: { renders: "ca_file: /etc/prometheus/assets/configmap_app_ca_ca.crt" },
  },
  {
    field: "endpoint.tlsConfig.cert",
    sample: { secret: secret("client", "tls.crt") },
    with: { "endpoint.tlsConfig.keySecret": secret("client", "tls.key") },
    outcome: { renders: "cert_file: /etc/prometheus/assets/secret_app_client_tls.crt" },
  },
  {
    field: "endpoint.tlsConfig.keySecret",
    sample: secret("client", "tls.key"),
    with: { "endpoint.tlsConfig.cert": { secret: secret("client", "tls.crt") } },
    outcome: { renders: "key_file: /etc/prometheus/assets/secret_app_client_tls.key" },
  },
  {
    field: "endpoint.tlsConfig.serverName",
    sample: "api.app.svc",
    outcome: { renders: "server_name: api.app.svc" },
  },
  {
    field: "endpoint.tlsConfig.insecureSkipVerify",
    sample: true,
    outcome: { renders: "insecure_skip_verify: true" },
  },
  { field: "endpoint.tlsConfig.minVersion", sample: "TLS12", outcome: { renders: "min_version: TLS12" } },
  { field: "endpoint.tlsConfig.maxVersion", sample: "TLS13", outcome: { renders: "max_version: TLS13" } },
  {
    field: "endpoint.tlsConfig.caFile",
    kinds: SM_ONLY,
    sample: "/etc/prometheus/team/ca.crt",
    server: ALLOW_FILES,
    outcome: { renders: "ca_file: /etc/prometheus/team/ca.crt" },
  },
  {
    field: "endpoint.tlsConfig.certFile",
    kinds: SM_ONLY,
    sample: "/etc/prometheus/team/tls.crt",
    with: { "endpoint.tlsConfig.keyFile": "/etc/prometheus/team/tls.key" },
    server: ALLOW_FILES,
    outcome: { renders: "cert_file: /etc/prometheus/team/tls.crt" },
  },
  {
    field: "endpoint.tlsConfig.keyFile",
    kinds: SM_ONLY,
    sample: "/etc/prometheus/team/tls.key",
    with: { "endpoint.tlsConfig.certFile": "/etc/prometheus/team/tls.crt" },
    server: ALLOW_FILES,
    outcome: { renders: "key_file: /etc/prometheus/team/tls.key" },
  },
  {
    field: "endpoint.bearerTokenFile",
    kinds: SM_ONLY,
    sample: "/etc/prometheus/team/token",
    server: ALLOW_FILES,
    outcome: { renders: "credentials_file: /etc/prometheus/team/token" },
  },
  {
    field: "endpoint.authorization",
    sample: { type: "Token", credentials: secret("scrape", "token") },
    outcome: {
      renders: /type: Token\n\s+credentials_file: \/etc\/prometheus\/assets\/secret_app_scrape_token/,
    },
  },
  {
    field: "endpoint.basicAuth",
    sample: { username: secret("basic", "user"), password: secret("basic", "pass") },
    outcome: {
      renders: /username_file: \/etc\/prometheus\/assets\/secret_app_basic_user\n\s+password_file: /,
    },
  },
  {
    field: "endpoint.bearerTokenSecret",
    sample: secret("scrape", "token"),
    outcome: {
      renders: /type: Bearer\n\s+credentials_file: \/etc\/prometheus\/assets\/secret_app_scrape_token/,
    },
  },
  ...[
    "endpoint.tlsConfig.ca.secret.optional",
    "endpoint.tlsConfig.ca.configMap.optional",
    "endpoint.tlsConfig.cert.secret.optional",
    "endpoint.tlsConfig.cert.configMap.optional",
    "endpoint.tlsConfig.keySecret.optional",
    "endpoint.authorization.credentials.optional",
    "endpoint.basicAuth.username.optional",
    "endpoint.basicAuth.password.optional",
    "endpoint.bearerTokenSecret.optional",
  ].map((field): FieldCase => {
    // The selector it belongs to, complete (a client certificate with its key), so that the setting is in the job
    // with and without the flag.
    const selector = field.slice(0, -".optional".length);
    const pair = selector.includes(".cert.")
      ? { "endpoint.tlsConfig.keySecret": secret("s", "key") }
      : selector.endsWith(".keySecret")
        ? { "endpoint.tlsConfig.cert": { secret: secret("s", "crt") } }
        : {};
    return {
      field,
      sample: true,
      with: { [selector]: secret("s", "k"), ...pair },
      outcome: { inert: OPTIONAL },
    };
  }),
  // ---- endpoints: what the operator cannot honour ----
  {
    field: "endpoint.oauth2",
    sample: { clientId: { secret: secret("o", "id") } },
    outcome: { refused: "UnsupportedField" },
  },
  { field: "endpoint.proxyUrl", sample: "http://proxy:3128", outcome: { refused: "UnsupportedField" } },
  { field: "endpoint.noProxy", sample: "10.0.0.0/8", outcome: { refused: "UnsupportedField" } },
  { field: "endpoint.proxyFromEnvironment", sample: true, outcome: { refused: "UnsupportedField" } },
  {
    field: "endpoint.proxyConnectHeader",
    sample: { "X-A": [secret("p", "h")] },
    outcome: { refused: "UnsupportedField" },
  },
];

/** The endpoint list of each kind: the table's `endpoint.` stands for its first item. */
export const ENDPOINT_LISTS: Readonly<Record<MonitorKindName, string>> = {
  ServiceMonitor: "endpoints",
  PodMonitor: "podMetricsEndpoints",
};

/** The server a row is judged by: Prometheus 3.16.0 in namespace monitoring taking every monitor, with row.server. */
export function fieldCaseServer(row: Pick<FieldCase, "server">): Prometheus {
  return prometheus({
    serviceMonitorSelector: {},
    serviceMonitorNamespaceSelector: {},
    podMonitorSelector: {},
    podMonitorNamespaceSelector: {},
    ...row.server,
  });
}

/** Sets `value` at `field` (the table's form) of the monitor `spec`, creating objects on the way. */
function setField(kind: MonitorKindName, spec: Record<string, unknown>, field: string, value: unknown): void {
  const parts = field.split(".");
  let node: Record<string, unknown> = spec;
  if (parts[0] === "endpoint") {
    node = (spec[ENDPOINT_LISTS[kind]] as Record<string, unknown>[])[0] as Record<string, unknown>;
    parts.shift();
  }
  for (const part of parts.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1) ?? ""] = value;
}

/**
 * The minimal monitor of `kind` in namespace app (selector app=web, one endpoint on port web) with the row's other
 * fields, and its sample when `withSample`.
 */
export function fieldCaseMonitor(
  kind: MonitorKindName,
  row: FieldCase,
  withSample: boolean,
): ServiceMonitor | PodMonitor {
  const endpoint: Record<string, unknown> = { port: "web" };
  for (const f of row.without ?? []) delete endpoint[f];
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: "web" } },
    [ENDPOINT_LISTS[kind]]: [endpoint],
  };
  for (const [f, v] of Object.entries(row.with ?? {})) setField(kind, spec, f, structuredClone(v));
  if (withSample) setField(kind, spec, row.field, structuredClone(row.sample));
  return { metadata: { name: "m", namespace: "app", generation: 1 }, spec } as ServiceMonitor;
}
