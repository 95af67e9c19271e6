// The monitoring.coreos.com CRDs: the types derived from the schemas are what the code expects, the field names
// are prometheus-operator's (so a chart's monitor means the same to both operators), every modelled object keeps
// unknown fields, and the CRDs carry the install-if-absent annotation.
import type { LabelSelector as CoreLabelSelector, JSONSchemaProps } from "@capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type ConfigResourceCondition,
  INSTALL_IF_ABSENT_ANNOTATION,
  keepUnknownFields,
  type LabelSelector,
  RELABEL_ACTIONS,
  type RelabelConfig,
  type SafeTLSConfig,
  type ScrapeEndpointCommon,
  type ScrapeProtocol,
  type SecretKeySelector,
  type TLSConfig,
  type WorkloadBinding,
} from "./monitoring-common.ts";
import { type PodMetricsEndpoint, type PodMonitorSpec, podMonitorCrd } from "./pod-monitor.ts";
import { type PrometheusRuleSpec, prometheusRuleCrd, type Rule, type RuleGroup } from "./prometheus-rule.ts";
import type { MonitorScrapeSettings } from "./scrape-settings.ts";
import { type Endpoint, type ServiceMonitorSpec, serviceMonitorCrd } from "./service-monitor.ts";

// The declared keys of a type with an index signature (the monitor specs keep unknown fields).
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

const common: Record<keyof ScrapeEndpointCommon, true> = {
  path: true,
  scheme: true,
  params: true,
  interval: true,
  scrapeTimeout: true,
  honorLabels: true,
  honorTimestamps: true,
  metricRelabelings: true,
  relabelings: true,
  filterRunning: true,
  tlsConfig: true,
  authorization: true,
  basicAuth: true,
  bearerTokenSecret: true,
  followRedirects: true,
  enableHttp2: true,
  trackTimestampsStaleness: true,
};
const endpointKeys: Record<keyof Endpoint, true> = {
  ...common,
  port: true,
  targetPort: true,
  bearerTokenFile: true,
};
const podEndpointKeys: Record<keyof PodMetricsEndpoint, true> = {
  ...common,
  port: true,
  portNumber: true,
  targetPort: true,
};
const settingsKeys: Record<keyof MonitorScrapeSettings, true> = {
  attachMetadata: true,
  bodySizeLimit: true,
  scrapeProtocols: true,
  scrapeClassicHistograms: true,
  scrapeNativeHistograms: true,
  nativeHistogramBucketLimit: true,
  nativeHistogramMinBucketFactor: true,
  convertClassicHistogramsToNHCB: true,
  targetLimit: true,
  labelLimit: true,
  labelNameLengthLimit: true,
  labelValueLengthLimit: true,
  keepDroppedTargets: true,
  selectorMechanism: true,
};
const smKeys: Record<KnownKeys<ServiceMonitorSpec>, true> = {
  jobLabel: true,
  targetLabels: true,
  podTargetLabels: true,
  endpoints: true,
  selector: true,
  namespaceSelector: true,
  sampleLimit: true,
  fallbackScrapeProtocol: true,
  serviceDiscoveryRole: true,
  ...settingsKeys,
};
const pmKeys: Record<KnownKeys<PodMonitorSpec>, true> = {
  jobLabel: true,
  podTargetLabels: true,
  podMetricsEndpoints: true,
  selector: true,
  namespaceSelector: true,
  sampleLimit: true,
  fallbackScrapeProtocol: true,
  ...settingsKeys,
};
const ruleSpecKeys: Record<KnownKeys<PrometheusRuleSpec>, true> = { groups: true };
const groupKeys: Record<keyof RuleGroup, true> = {
  name: true,
  interval: true,
  labels: true,
  query_offset: true,
  limit: true,
  rules: true,
};
const ruleKeys: Record<keyof Rule, true> = {
  record: true,
  alert: true,
  expr: true,
  for: true,
  keep_firing_for: true,
  labels: true,
  annotations: true,
};
const relabelKeys: Record<keyof RelabelConfig, true> = {
  sourceLabels: true,
  separator: true,
  targetLabel: true,
  regex: true,
  modulus: true,
  replacement: true,
  action: true,
};
const tlsKeys: Record<keyof SafeTLSConfig, true> = {
  ca: true,
  cert: true,
  keySecret: true,
  serverName: true,
  insecureSkipVerify: true,
  minVersion: true,
  maxVersion: true,
};
const smTlsKeys: Record<keyof TLSConfig, true> = { ...tlsKeys, caFile: true, certFile: true, keyFile: true };
const bindingKeys: Record<keyof WorkloadBinding, true> = {
  group: true,
  resource: true,
  name: true,
  namespace: true,
  conditions: true,
};

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
const root = (crd: ReturnType<typeof serviceMonitorCrd>) =>
  crd.spec.versions[0]!.schema!.openAPIV3Schema as Schema;
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();

const sm = root(serviceMonitorCrd());
const pm = root(podMonitorCrd());
const pr = root(prometheusRuleCrd());
const smSpec = sm.properties!.spec!;
const pmSpec = pm.properties!.spec!;
const prSpec = pr.properties!.spec!;
const smEndpoint = smSpec.properties!.endpoints!.items!;
const pmEndpoint = pmSpec.properties!.podMetricsEndpoints!.items!;
const group = prSpec.properties!.groups!.items!;

// The types are derived from the schemas (Type.Static): what the code reads is what the CRD keeps.
describe("derived monitor types", () => {
  it("ServiceMonitor: endpoints and selector required, the rest optional", () => {
    expectTypeOf<ServiceMonitorSpec["endpoints"]>().toEqualTypeOf<Endpoint[]>();
    expectTypeOf<ServiceMonitorSpec["selector"]>().toEqualTypeOf<LabelSelector>();
    expectTypeOf<ServiceMonitorSpec["sampleLimit"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ServiceMonitorSpec["serviceDiscoveryRole"]>().toEqualTypeOf<
      "Endpoints" | "EndpointSlice" | undefined
    >();
    expectTypeOf<Endpoint["targetPort"]>().toEqualTypeOf<string | number | undefined>();
    expectTypeOf<Endpoint["tlsConfig"]>().toEqualTypeOf<TLSConfig | undefined>();
    expectTypeOf<NonNullable<Endpoint["tlsConfig"]>["caFile"]>().toEqualTypeOf<string | undefined>();
    // Fields prometheus-operator has and we do not model stay readable (the CRD keeps them).
    expectTypeOf<ServiceMonitorSpec["someUpstreamField"]>().toEqualTypeOf<unknown>();
    // @ts-expect-error an endpoint field the schema lacks is a type error (the API server would prune it)
    const bogus: Endpoint = { port: "web", bogusField: true };
    expect(bogus.port).toBe("web");
  });

  it("PodMonitor: only selector required", () => {
    expectTypeOf<PodMonitorSpec["selector"]>().toEqualTypeOf<LabelSelector>();
    expectTypeOf<PodMonitorSpec["podMetricsEndpoints"]>().toEqualTypeOf<PodMetricsEndpoint[] | undefined>();
    expectTypeOf<PodMetricsEndpoint["portNumber"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<PodMonitorSpec["fallbackScrapeProtocol"]>().toEqualTypeOf<ScrapeProtocol | undefined>();
    expectTypeOf<PodMonitorSpec["scrapeProtocols"]>().toEqualTypeOf<ScrapeProtocol[] | undefined>();
    expectTypeOf<PodMonitorSpec["nativeHistogramMinBucketFactor"]>().toEqualTypeOf<
      number | string | undefined
    >();
    // @ts-expect-error a PodMonitor endpoint has no bearerTokenFile (ServiceMonitor endpoints only)
    const bogus: PodMetricsEndpoint = { bearerTokenFile: "/token" };
    expect(bogus).toBeDefined();
  });

  it("PrometheusRule: groups need a name, rules an expr", () => {
    expectTypeOf<RuleGroup["name"]>().toEqualTypeOf<string>();
    expectTypeOf<Rule["expr"]>().toEqualTypeOf<string | number>();
    expectTypeOf<Rule["labels"]>().toEqualTypeOf<Record<string, string> | undefined>();
    // @ts-expect-error a rule field the schema lacks is a type error
    const bogus: Rule = { expr: "up", severity: "page" };
    expect(bogus.expr).toBe("up");
  });

  it("shared parts: core's LabelSelector, key selectors whose name is optional, binding conditions", () => {
    expectTypeOf<LabelSelector>().toEqualTypeOf<CoreLabelSelector>();
    // The schema (like core/v1's) requires only key; the old interface required name too.
    expectTypeOf<SecretKeySelector["name"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SecretKeySelector["key"]>().toEqualTypeOf<string>();
    expectTypeOf<ConfigResourceCondition["type"]>().toEqualTypeOf<"Accepted">();
    // The schema accepts any non-empty status (prometheus-operator's does too), so readers get a string.
    expectTypeOf<ConfigResourceCondition["status"]>().toEqualTypeOf<string>();
    expectTypeOf<RelabelConfig["action"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SafeTLSConfig["minVersion"]>().toEqualTypeOf<
      "TLS10" | "TLS11" | "TLS12" | "TLS13" | undefined
    >();
  });
});

describe("monitor types match their schemas", () => {
  it.each([
    ["ServiceMonitor spec", smKeys, smSpec],
    ["ServiceMonitor endpoints[]", endpointKeys, smEndpoint],
    ["PodMonitor spec", pmKeys, pmSpec],
    ["PodMonitor podMetricsEndpoints[]", podEndpointKeys, pmEndpoint],
    ["PrometheusRule spec", ruleSpecKeys, prSpec],
    ["PrometheusRule groups[]", groupKeys, group],
    ["PrometheusRule groups[].rules[]", ruleKeys, group.properties!.rules!.items],
    ["relabelings[]", relabelKeys, smEndpoint.properties!.relabelings!.items],
    ["PodMonitor tlsConfig", tlsKeys, pmEndpoint.properties!.tlsConfig],
    ["ServiceMonitor tlsConfig", smTlsKeys, smEndpoint.properties!.tlsConfig],
    ["status.bindings[]", bindingKeys, sm.properties!.status!.properties!.bindings!.items],
  ] as const)("%s", (_what, keys, schema) => {
    expect(props(schema)).toEqual(Object.keys(keys).sort());
  });
});

// prometheus-operator's JSON names (pkg/apis/monitoring/v1), written out here so a rename on our side fails.
describe("field names are prometheus-operator's", () => {
  it("ServiceMonitor", () => {
    expect(smSpec.required).toEqual(["endpoints", "selector"]);
    expect(props(smSpec.properties!.namespaceSelector)).toEqual(["any", "matchNames"]);
    expect(props(smEndpoint.properties!.authorization)).toEqual(["credentials", "type"]);
    expect(props(smEndpoint.properties!.tlsConfig!.properties!.ca)).toEqual(["configMap", "secret"]);
    expect(props(smEndpoint.properties!.bearerTokenSecret)).toEqual(["key", "name", "optional"]);
  });
  it("PodMonitor", () => {
    expect(pmSpec.required).toEqual(["selector"]);
    expect(pmEndpoint.properties!.portNumber).toMatchObject({ minimum: 1, maximum: 65535 });
  });
  it("PrometheusRule groups are a map keyed by name, rules need expr", () => {
    expect(prSpec.properties!.groups).toMatchObject({
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    });
    expect(group.properties!.rules!.items!.required).toEqual(["expr"]);
  });
  it("relabel actions in both spellings", () => {
    expect(smEndpoint.properties!.relabelings!.items!.properties!.action!.enum).toEqual(RELABEL_ACTIONS);
    expect(RELABEL_ACTIONS).toEqual(expect.arrayContaining(["labelmap", "LabelMap", "HashMod", "DropEqual"]));
  });
});

function objectNodes(s: Schema, path: string, out: [string, Schema][] = []): [string, Schema][] {
  if (s.type === "object" && s.properties !== undefined) out.push([path, s]);
  for (const [k, v] of Object.entries(s.properties ?? {})) objectNodes(v, `${path}.${k}`, out);
  if (s.items !== undefined) objectNodes(s.items, `${path}[]`, out);
  return out;
}

describe("unknown fields are kept", () => {
  it.each([
    ["ServiceMonitor", sm],
    ["PodMonitor", pm],
    ["PrometheusRule", pr],
  ])("%s: every modelled object under spec keeps unknown fields", (_kind, schema) => {
    const nodes = objectNodes(schema.properties!.spec!, "spec");
    expect(nodes.length).toBeGreaterThan(1);
    for (const [path, node] of nodes) {
      expect({ path, keep: node["x-kubernetes-preserve-unknown-fields"] }).toEqual({ path, keep: true });
    }
  });

  it("keepUnknownFields leaves leaves and maps alone and does not change its input", () => {
    const input: JSONSchemaProps = {
      type: "object",
      properties: {
        a: { type: "string" },
        m: { type: "object", additionalProperties: { type: "string" } },
        l: { type: "array", items: { type: "object", properties: { b: { type: "integer" } } } },
      },
    };
    const before = structuredClone(input);
    const out = keepUnknownFields(input) as Schema;
    expect(input).toEqual(before);
    expect(out["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    expect(out.properties!.a!["x-kubernetes-preserve-unknown-fields"]).toBeUndefined();
    expect(out.properties!.m!["x-kubernetes-preserve-unknown-fields"]).toBeUndefined();
    expect(out.properties!.l!.items!["x-kubernetes-preserve-unknown-fields"]).toBe(true);
  });
});

describe("monitor CRDs", () => {
  it.each([
    [serviceMonitorCrd(), "servicemonitors", "ServiceMonitor", "smon"],
    [podMonitorCrd(), "podmonitors", "PodMonitor", "pmon"],
    [prometheusRuleCrd(), "prometheusrules", "PrometheusRule", "promrule"],
  ])("%#: %s.monitoring.coreos.com/v1", (crd, plural, kind, short) => {
    expect(crd.metadata.name).toBe(`${plural}.monitoring.coreos.com`);
    expect(crd.metadata.annotations).toEqual({ [INSTALL_IF_ABSENT_ANNOTATION]: "true" });
    expect(crd.spec.names).toMatchObject({ kind, plural, shortNames: [short] });
    const v = crd.spec.versions;
    expect(v.map((x) => [x.name, x.served, x.storage])).toEqual([["v1", true, true]]);
    expect(v[0]!.subresources).toEqual({ status: {} });
  });

  it("bindings are a map keyed as prometheus-operator's, without its group enum", () => {
    const bindings = sm.properties!.status!.properties!.bindings!;
    expect(bindings["x-kubernetes-list-map-keys"]).toEqual(["group", "resource", "name", "namespace"]);
    expect(bindings.items!.properties!.group!.enum).toBeUndefined();
  });
});
