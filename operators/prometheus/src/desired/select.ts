// Which ServiceMonitors, PodMonitors and PrometheusRules a Prometheus server takes, and the feedback each one gets
// (its Accepted condition in status.bindings[]). Pure: the reconciler passes what its cache holds. A monitor that
// Prometheus would refuse is left out of the configuration and reported, so one bad monitor never breaks the
// others; a valid monitor that finds nothing to scrape stays in (its targets appear as soon as discovery sees them):
// it is Accepted, with the diagnostic (NoTargets, PortNotFound) as its reason.
import { type LabelMatcher, type LabelSelector, labelSelector } from "@capstan/core";
import type { NamespaceSelector, ScrapeEndpointCommon } from "../api/monitoring-common.ts";
import type { PodMetricsEndpoint, PodMonitor } from "../api/pod-monitor.ts";
import { DEFAULT_PROMETHEUS_VERSION, type Prometheus } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import type { Endpoint, ServiceMonitor } from "../api/service-monitor.ts";
import { type AssetRef, endpointAssets } from "./assets.ts";
import { enabledFeatures } from "./feature-flags.ts";
import { fileAccessError } from "./file-access.ts";
import { parsePrometheusDuration } from "./prometheus-duration.ts";
import { renderRuleFile } from "./rule-file.ts";
import { MAX_RULE_FILE_BYTES, ruleFileBytes } from "./rule-shards.ts";
import { scrapeSettingsProblem } from "./scrape-settings.ts";
import { relabelError, ruleGroupError } from "./validate.ts";

/** The parts of a Namespace selection reads. */
export interface NamespaceLike {
  metadata: { name?: string; labels?: Record<string, string> };
}

/** The parts of a Service selection reads. */
export interface ServiceLike {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: { ports?: { name?: string; port: number; targetPort?: string | number }[] };
}

/** The parts of a Pod selection reads. */
export interface PodLike {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: { containers: { ports?: { name?: string; containerPort: number }[] }[] };
}

/** Every ServiceMonitor, PodMonitor and PrometheusRule the reconciler can see (any namespace). */
export interface MonitorObjects {
  serviceMonitors: readonly ServiceMonitor[];
  podMonitors: readonly PodMonitor[];
  rules: readonly PrometheusRule[];
}

/** A monitor in the configuration, with the namespaces its discovery looks in. */
export interface SelectedMonitor<T> {
  object: T;
  /** Sorted namespace names; undefined: every namespace (namespaceSelector.any). */
  namespaces?: string[];
}

/** What goes into a server's configuration (renderConfig's input); each list sorted by namespace/name. */
export interface SelectedMonitors {
  serviceMonitors: SelectedMonitor<ServiceMonitor>[];
  podMonitors: SelectedMonitor<PodMonitor>[];
  rules: PrometheusRule[];
}

/**
 * Why a monitor is (not) accepted; the Accepted condition's reason. Accepted, NoTargets and PortNotFound objects are in
 * the configuration (Accepted means "in the configuration", as prometheus-operator and the CRD define it): the last
 * two are diagnostics, not refusals. Every other reason leaves the object out.
 */
export type FeedbackReason =
  | "Accepted"
  /** Valid and in the configuration (Accepted), but no Service or Pod in its namespaces matches its selector. */
  | "NoTargets"
  /** Valid and in the configuration (Accepted), but no matching Service or Pod has the endpoint's port. */
  | "PortNotFound"
  | "InvalidSelector"
  | "NoEndpoints"
  | "InvalidRegex"
  | "InvalidRelabeling"
  | "InvalidDuration"
  | "InvalidScrapeTimeout"
  | "InvalidAuthorization"
  | "InvalidTLS"
  | "UnsupportedField"
  /** A scrape setting with a value Prometheus refuses (bodySizeLimit, scrapeProtocols...). */
  | "InvalidField"
  /** A `*File` field naming a file of the Prometheus pods the server does not allow (file-access.ts). */
  | "FileAccessDenied"
  | "SecretNotFound"
  | "InvalidRules"
  | "RuleFileTooLarge";

/** Reasons whose monitor is valid and in the configuration: Accepted, with a diagnostic for the last two. */
export const IN_CONFIG_REASONS: readonly FeedbackReason[] = ["Accepted", "NoTargets", "PortNotFound"];

/** The feedback for one selected object: what the reconciler writes as its binding's Accepted condition. */
export interface MonitorFeedback {
  kind: "ServiceMonitor" | "PodMonitor" | "PrometheusRule";
  namespace: string;
  name: string;
  /** metadata.generation of the object judged (the condition's observedGeneration). */
  generation?: number;
  /**
   * Whether the object is in the configuration (Accepted, as prometheus-operator means it: valid, even when it finds
   * nothing to scrape yet). Its binding says Accepted=True once the pods run a configuration holding it (bindings.ts).
   */
  inConfig: boolean;
  reason: FeedbackReason;
  /** What is wrong and where, e.g. "no Service in namespaces [a b] matches app=foo". */
  message: string;
}

/** selectMonitors' answer: the configuration's input, and feedback for every object the server selects. */
export interface Selection extends SelectedMonitors {
  /** Sorted by kind (ServiceMonitor, PodMonitor, PrometheusRule), namespace, name. */
  feedback: MonitorFeedback[];
}

/** A Secret or ConfigMap key reference, as `keyExists` is asked about it. */
export type KeyRef = Pick<AssetRef, "kind" | "namespace" | "name" | "key">;

export interface SelectOptions {
  /**
   * Whether a Secret or ConfigMap key a monitor references exists. Without it references are not checked; with it
   * a monitor whose key is missing is left out (reason SecretNotFound): Prometheus would fail to load its scrape
   * pool.
   */
  keyExists?: (ref: KeyRef) => boolean;
  /**
   * Renders a PrometheusRule's rule file for the size check (default renderRuleFile; the reconciler passes one that
   * reuses what it rendered for the same object before).
   */
  ruleFile?: (rule: PrometheusRule) => string;
}

/** Endpoint fields of prometheus-operator's API this operator cannot honour: a monitor setting one is refused. */
export const UNSUPPORTED_ENDPOINT_FIELDS: readonly string[] = [
  "oauth2",
  "proxyUrl",
  "noProxy",
  "proxyFromEnvironment",
  "proxyConnectHeader",
];
/** Spec fields of prometheus-operator's API this operator cannot honour. */
export const UNSUPPORTED_SPEC_FIELDS: readonly string[] = ["scrapeClass"];

class Refusal extends Error {
  readonly reason: FeedbackReason;
  constructor(reason: FeedbackReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

const keyOfObject = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
const byKey = <T extends { metadata: { namespace?: string; name?: string } }>(a: T, b: T) =>
  keyOfObject(a) < keyOfObject(b) ? -1 : keyOfObject(a) > keyOfObject(b) ? 1 : 0;

/**
 * Chooses what the Prometheus server `prometheus` loads from `monitors`, and judges each chosen object.
 *
 * - An object is chosen when its labels match the server's `<kind>Selector` (absent: none are chosen; `{}`: all)
 *   and its namespace's labels match `<kind>NamespaceSelector` (absent: the server's namespace only; `{}`: all).
 * - A chosen monitor Prometheus would refuse (bad regex, relabeling, duration, auth, TLS, missing Secret key,
 *   unsupported field, a scrape setting the server's release refuses or would not honour, a file of the pods the
 *   server does not allow) is left out with its reason; a valid one whose selector or port finds nothing in
 *   `services`/`pods` stays in, reported NoTargets or PortNotFound.
 * - A chosen PrometheusRule with a rule Prometheus would refuse is left out (InvalidRules), judged by the rules of
 *   the Prometheus version the server runs (spec.version) with its feature flags (spec.enableFeatures), and one
 *   whose rule file no Secret could hold (RuleFileTooLarge).
 *
 * Throws an Error naming the field when one of the server's own selectors is malformed (the reconciler reports it
 * as Degraded).
 */
export function selectMonitors(
  prometheus: Prometheus,
  namespaces: readonly NamespaceLike[],
  monitors: MonitorObjects,
  services: readonly ServiceLike[],
  pods: readonly PodLike[],
  options: SelectOptions = {},
): Selection {
  const spec = prometheus.spec;
  const home = prometheus.metadata.namespace ?? "";
  const nsLabels = new Map(namespaces.map((n) => [n.metadata.name ?? "", n.metadata.labels ?? {}]));
  const chooser = (field: string, sel: LabelSelector | undefined, nsField: string, nsSel?: LabelSelector) => {
    const objects = serverMatcher(prometheus, field, sel);
    const spaces = nsSel === undefined ? undefined : serverMatcher(prometheus, nsField, nsSel);
    return (o: { metadata: { namespace?: string; labels?: Record<string, string> } }) => {
      if (objects === undefined || !objects.matches(o.metadata.labels)) return false;
      const ns = o.metadata.namespace ?? "";
      return spaces === undefined ? ns === home : spaces.matches(nsLabels.get(ns) ?? {});
    };
  };
  const smChosen = chooser(
    "serviceMonitorSelector",
    spec.serviceMonitorSelector,
    "serviceMonitorNamespaceSelector",
    spec.serviceMonitorNamespaceSelector,
  );
  const pmChosen = chooser(
    "podMonitorSelector",
    spec.podMonitorSelector,
    "podMonitorNamespaceSelector",
    spec.podMonitorNamespaceSelector,
  );
  const ruleChosen = chooser(
    "ruleSelector",
    spec.ruleSelector,
    "ruleNamespaceSelector",
    spec.ruleNamespaceSelector,
  );

  const tokenField = "arbitraryFSAccessThroughSMs.serviceAccountTokenNamespaceSelector";
  const tokenSpaces = serverMatcher(
    prometheus,
    tokenField,
    spec.arbitraryFSAccessThroughSMs?.serviceAccountTokenNamespaceSelector,
  );
  const mayUseToken = (ns: string) => ns === home || tokenSpaces?.matches(nsLabels.get(ns) ?? {}) === true;

  const out: Selection = { serviceMonitors: [], podMonitors: [], rules: [], feedback: [] };
  const ctx: Context = { prometheus, services, pods, options, mayUseToken };

  for (const sm of [...monitors.serviceMonitors].filter(smChosen).sort(byKey)) {
    const verdict = judge(() => judgeServiceMonitor(sm, ctx));
    out.feedback.push(feedback("ServiceMonitor", sm, verdict));
    if (verdict.inConfig) out.serviceMonitors.push({ object: sm, ...scope(sm.spec.namespaceSelector, sm) });
  }
  for (const pm of [...monitors.podMonitors].filter(pmChosen).sort(byKey)) {
    const verdict = judge(() => judgePodMonitor(pm, ctx));
    out.feedback.push(feedback("PodMonitor", pm, verdict));
    if (verdict.inConfig) out.podMonitors.push({ object: pm, ...scope(pm.spec.namespaceSelector, pm) });
  }
  for (const rule of [...monitors.rules].filter(ruleChosen).sort(byKey)) {
    const verdict = judge(() =>
      judgeRule(
        rule,
        spec.version ?? DEFAULT_PROMETHEUS_VERSION,
        enabledFeatures(spec),
        options.ruleFile ?? renderRuleFile,
      ),
    );
    out.feedback.push(feedback("PrometheusRule", rule, verdict));
    if (verdict.inConfig) out.rules.push(rule);
  }
  return out;
}

interface Context {
  prometheus: Prometheus;
  services: readonly ServiceLike[];
  pods: readonly PodLike[];
  options: SelectOptions;
  /** Whether monitors in a namespace may send the pods' ServiceAccount token (file-access.ts). */
  mayUseToken: (namespace: string) => boolean;
}

interface Verdict {
  reason: FeedbackReason;
  message: string;
  inConfig: boolean;
}

function judge(f: () => Omit<Verdict, "inConfig">): Verdict {
  try {
    const v = f();
    return { ...v, inConfig: true };
  } catch (err) {
    if (err instanceof Refusal) return { reason: err.reason, message: err.message, inConfig: false };
    throw err;
  }
}

function feedback(
  kind: MonitorFeedback["kind"],
  o: { metadata: { namespace?: string; name?: string; generation?: number } },
  v: Verdict,
): MonitorFeedback {
  return {
    kind,
    namespace: o.metadata.namespace ?? "",
    name: o.metadata.name ?? "",
    ...(o.metadata.generation === undefined ? {} : { generation: o.metadata.generation }),
    inConfig: v.inConfig,
    reason: v.reason,
    message: v.message,
  };
}

function serverMatcher(
  p: Prometheus,
  field: string,
  sel: LabelSelector | undefined,
): LabelMatcher | undefined {
  if (sel === undefined) return undefined;
  try {
    return labelSelector(sel);
  } catch (err) {
    throw new Error(
      `Prometheus ${p.metadata.namespace}/${p.metadata.name}: spec.${field} is invalid: ${(err as Error).message}`,
    );
  }
}

/** The namespaces a monitor's discovery looks in: undefined for any, else sorted names (default: its own). */
function scope(
  sel: NamespaceSelector | undefined,
  o: { metadata: { namespace?: string } },
): { namespaces?: string[] } {
  if (sel?.any === true) return {};
  const names = sel?.matchNames?.length ? sel.matchNames : [o.metadata.namespace ?? ""];
  return { namespaces: [...new Set(names)].sort() };
}

function inScope(namespaces: string[] | undefined, ns: string | undefined): boolean {
  return namespaces === undefined || namespaces.includes(ns ?? "");
}

function where(namespaces: string[] | undefined): string {
  return namespaces === undefined ? "any namespace" : `namespaces [${namespaces.join(" ")}]`;
}

function monitorMatcher(sel: LabelSelector | undefined): LabelMatcher {
  if (sel === undefined) throw new Refusal("InvalidSelector", "spec.selector is missing");
  try {
    return labelSelector(sel);
  } catch (err) {
    throw new Refusal("InvalidSelector", `spec.selector is invalid: ${(err as Error).message}`);
  }
}

function matcherText(m: LabelMatcher): string {
  return m.text === "" ? "{} (everything)" : m.text;
}

/** The checks every endpoint gets: unsupported fields, relabelings, durations, authorization, TLS, Secret keys. */
function checkEndpoint(
  ep: ScrapeEndpointCommon & Record<string, unknown>,
  at: string,
  namespace: string,
  ctx: Context,
): void {
  for (const field of UNSUPPORTED_ENDPOINT_FIELDS) {
    if (ep[field] !== undefined) {
      throw new Refusal(
        "UnsupportedField",
        `${at}.${field} is not supported by Capstan's Prometheus operator; remove it or scrape this target another way`,
      );
    }
  }
  const files = fileAccessError(ep, at, ctx.prometheus, ctx.mayUseToken(namespace));
  if (files !== undefined) throw new Refusal("FileAccessDenied", files);
  if (ep.trackTimestampsStaleness !== undefined && typeof ep.trackTimestampsStaleness !== "boolean") {
    throw new Refusal(
      "InvalidField",
      `${at}.trackTimestampsStaleness ${JSON.stringify(ep.trackTimestampsStaleness)} is not true or false`,
    );
  }
  for (const list of ["relabelings", "metricRelabelings"] as const) {
    for (const [i, rc] of (ep[list] ?? []).entries()) {
      const err = relabelError(rc, `${at}.${list}[${i}]`);
      if (err !== undefined) {
        throw new Refusal(err.startsWith("invalid regex") ? "InvalidRegex" : "InvalidRelabeling", err);
      }
    }
  }
  const durations: [string, string | undefined][] = [
    ["interval", ep.interval],
    ["scrapeTimeout", ep.scrapeTimeout],
  ];
  for (const [field, value] of durations) {
    if (value !== undefined && parsePrometheusDuration(value) === undefined) {
      throw new Refusal(
        "InvalidDuration",
        `${at}.${field} "${value}" is not a Prometheus duration (e.g. 30s, 1m)`,
      );
    }
  }
  if (ep.interval !== undefined && parsePrometheusDuration(ep.interval) === 0) {
    throw new Refusal("InvalidDuration", `${at}.interval must be longer than 0`);
  }
  if (ep.scrapeTimeout !== undefined) {
    const interval = ep.interval ?? ctx.prometheus.spec.scrapeInterval;
    const source = ep.interval !== undefined ? `${at}.interval` : "the server's scrapeInterval";
    if ((parsePrometheusDuration(ep.scrapeTimeout) ?? 0) > (parsePrometheusDuration(interval) ?? Infinity)) {
      throw new Refusal(
        "InvalidScrapeTimeout",
        `${at}.scrapeTimeout ${ep.scrapeTimeout} is longer than the scrape interval ${interval} (${source})`,
      );
    }
  }
  const type = ep.authorization?.type?.trim().toLowerCase();
  if (type === "basic") {
    throw new Refusal(
      "InvalidAuthorization",
      `${at}.authorization.type Basic is refused by Prometheus: use basicAuth`,
    );
  }
  const auths = [
    ["authorization", ep.authorization !== undefined],
    ["basicAuth", ep.basicAuth !== undefined],
    ["bearerTokenSecret", ep.bearerTokenSecret?.name !== undefined && ep.bearerTokenSecret.name !== ""],
    ["bearerTokenFile", typeof ep.bearerTokenFile === "string" && ep.bearerTokenFile !== ""],
  ]
    .filter(([, set]) => set)
    .map(([name]) => name);
  if (auths.length > 1) {
    throw new Refusal("InvalidAuthorization", `${at}: set at most one of ${auths.join(", ")}`);
  }
  const tls = ep.tlsConfig as (ScrapeEndpointCommon["tlsConfig"] & Record<string, unknown>) | undefined;
  for (const field of ["ca", "cert"] as const) {
    if (tls?.[field]?.secret !== undefined && tls[field]?.configMap !== undefined) {
      throw new Refusal("InvalidTLS", `${at}.tlsConfig.${field}: set secret or configMap, not both`);
    }
  }
  const hasCert = tls?.cert?.secret !== undefined || tls?.cert?.configMap !== undefined || !!tls?.certFile;
  const hasKey = tls?.keySecret !== undefined || !!tls?.keyFile;
  if (hasCert !== hasKey) {
    throw new Refusal(
      "InvalidTLS",
      `${at}.tlsConfig: a client certificate needs its key and a key its certificate (set both cert and keySecret, or neither)`,
    );
  }
  const assets = endpointAssets(ep, namespace, at);
  for (const a of assets) {
    if (a.name === "") throw new Refusal("SecretNotFound", `${a.field}: the ${a.kind} name is empty`);
  }
  const keyExists = ctx.options.keyExists;
  if (keyExists !== undefined) {
    for (const a of assets) {
      if (!keyExists(a)) {
        throw new Refusal(
          "SecretNotFound",
          `${a.kind} ${namespace}/${a.name} has no key ${JSON.stringify(a.key)} (${a.field}), or does not exist`,
        );
      }
    }
  }
}

function checkSpecFields(spec: Record<string, unknown>, ctx: Context): void {
  for (const field of UNSUPPORTED_SPEC_FIELDS) {
    if (spec[field] !== undefined) {
      throw new Refusal(
        "UnsupportedField",
        `spec.${field} is not supported by Capstan's Prometheus operator`,
      );
    }
  }
  const problem = scrapeSettingsProblem(spec, ctx.prometheus);
  if (problem !== undefined) throw new Refusal(problem.reason, problem.message);
}

function judgeServiceMonitor(sm: ServiceMonitor, ctx: Context): Omit<Verdict, "inConfig"> {
  const spec = sm.spec;
  const ns = sm.metadata.namespace ?? "";
  checkSpecFields(spec, ctx);
  const matcher = monitorMatcher(spec.selector);
  const endpoints: Endpoint[] = spec.endpoints ?? [];
  if (endpoints.length === 0) throw new Refusal("NoEndpoints", "spec.endpoints is empty: nothing to scrape");
  endpoints.forEach((ep, i) => {
    checkEndpoint(ep as Endpoint & Record<string, unknown>, `endpoints[${i}]`, ns, ctx);
  });

  const { namespaces } = scope(spec.namespaceSelector, sm);
  const matching = ctx.services
    .filter((s) => inScope(namespaces, s.metadata.namespace) && matcher.matches(s.metadata.labels))
    .sort(byKey);
  if (matching.length === 0) {
    return {
      reason: "NoTargets",
      message: `no Service in ${where(namespaces)} matches ${matcherText(matcher)}`,
    };
  }
  const names = matching.map((s) => (namespaces?.length === 1 ? s.metadata.name : keyOfObject(s))).join(", ");
  for (const [i, ep] of endpoints.entries()) {
    const has = (s: ServiceLike) =>
      ep.port !== undefined && ep.port !== ""
        ? (s.spec?.ports ?? []).some((p) => p.name === ep.port)
        : ep.targetPort !== undefined
          ? (s.spec?.ports ?? []).some((p) => couldBeTargetPort(p, ep.targetPort as string | number))
          : true;
    if (!matching.some(has)) {
      const port =
        ep.port !== undefined && ep.port !== "" ? `port ${ep.port}` : `targetPort ${ep.targetPort}`;
      return {
        reason: "PortNotFound",
        message: `endpoints[${i}]: ${port} not found on Service${matching.length > 1 ? "s" : ""} ${names}`,
      };
    }
  }
  return {
    reason: "Accepted",
    message: `${matching.length} Service${matching.length > 1 ? "s" : ""} match: ${names}`,
  };
}

/**
 * Whether the Service port `p` may lead to the container port `target`: a target port of the other form (a name
 * where a number is asked, or the reverse) could be it, which only the Pods tell; so that counts as yes.
 */
function couldBeTargetPort(
  p: { port: number; targetPort?: string | number },
  target: string | number,
): boolean {
  const t = p.targetPort ?? p.port;
  return typeof t !== typeof target || t === target;
}

function judgePodMonitor(pm: PodMonitor, ctx: Context): Omit<Verdict, "inConfig"> {
  const spec = pm.spec;
  const ns = pm.metadata.namespace ?? "";
  checkSpecFields(spec, ctx);
  const matcher = monitorMatcher(spec.selector);
  const endpoints: PodMetricsEndpoint[] = spec.podMetricsEndpoints ?? [];
  if (endpoints.length === 0) {
    throw new Refusal("NoEndpoints", "spec.podMetricsEndpoints is empty: nothing to scrape");
  }
  endpoints.forEach((ep, i) => {
    checkEndpoint(ep as PodMetricsEndpoint & Record<string, unknown>, `podMetricsEndpoints[${i}]`, ns, ctx);
  });

  const { namespaces } = scope(spec.namespaceSelector, pm);
  const matching = ctx.pods.filter(
    (p) => inScope(namespaces, p.metadata.namespace) && matcher.matches(p.metadata.labels),
  );
  if (matching.length === 0) {
    return { reason: "NoTargets", message: `no Pod in ${where(namespaces)} matches ${matcherText(matcher)}` };
  }
  for (const [i, ep] of endpoints.entries()) {
    const byName = ep.port || (typeof ep.targetPort === "string" ? ep.targetPort : undefined);
    const byNumber = ep.portNumber ?? (typeof ep.targetPort === "number" ? ep.targetPort : undefined);
    if (byName === undefined && byNumber === undefined) continue;
    const has = (p: PodLike) =>
      (p.spec?.containers ?? []).some((c) =>
        (c.ports ?? []).some((cp) =>
          byName !== undefined ? cp.name === byName : cp.containerPort === byNumber,
        ),
      );
    if (!matching.some(has)) {
      const port = byName !== undefined ? `port ${byName}` : `port number ${byNumber}`;
      return {
        reason: "PortNotFound",
        message: `podMetricsEndpoints[${i}]: ${port} not found on any of the ${matching.length} matching Pod${matching.length > 1 ? "s" : ""} in ${where(namespaces)}`,
      };
    }
  }
  return {
    reason: "Accepted",
    message: `${matching.length} Pod${matching.length > 1 ? "s" : ""} match in ${where(namespaces)}`,
  };
}

function judgeRule(
  rule: PrometheusRule,
  version: string,
  features: readonly string[],
  ruleFile: (rule: PrometheusRule) => string,
): Omit<Verdict, "inConfig"> {
  const groups = rule.spec.groups ?? [];
  const seen = new Set<string>();
  for (const g of groups) {
    if (seen.has(g.name)) throw new Refusal("InvalidRules", `group ${JSON.stringify(g.name)} appears twice`);
    seen.add(g.name);
    const err = ruleGroupError(g, version, features);
    if (err !== undefined) throw new Refusal("InvalidRules", err);
  }
  // Its file goes into one Secret (a rule shard), which the API server caps at 1 MiB.
  const bytes = ruleFileBytes("", ruleFile(rule));
  if (bytes > MAX_RULE_FILE_BYTES) {
    throw new Refusal(
      "RuleFileTooLarge",
      `the rule file of this PrometheusRule is ${bytes} bytes, more than the ${MAX_RULE_FILE_BYTES} one Secret can hold: split its groups over several PrometheusRules`,
    );
  }
  const count = groups.reduce((n, g) => n + (g.rules?.length ?? 0), 0);
  return { reason: "Accepted", message: `${groups.length} group(s), ${count} rule(s) loaded` };
}
