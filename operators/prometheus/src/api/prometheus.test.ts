// The Prometheus types (derived from the schema) are what the code expects, the CRD is well formed, and the
// patterns and CEL rules mean what their messages say (checked here with JavaScript equivalents; the real CEL runs
// in the e2e CRD validation suite).
import type { Condition, LabelSelector, PodPlacement, ResourceQuantities } from "@capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";
import { PROMETHEUS_DURATION_PATTERN } from "./monitoring-common.ts";
import {
  type ArbitraryFSAccess,
  BYTE_SIZE_PATTERN,
  FEATURE_FLAG_PATTERN,
  OPERATOR_EXTERNAL_LABELS,
  type PrometheusClusterMetrics,
  PrometheusKind,
  type PrometheusPodTemplate,
  type PrometheusSelected,
  type PrometheusSpec,
  type PrometheusStatus,
  type PrometheusStorage,
  prometheusCrd,
  prometheusSchema,
  SCRAPE_DURATION_PATTERN,
} from "./prometheus.ts";

// Each record must name every key of its type and nothing else (the compiler checks that side); the tests check
// the generated CRD names the same properties. The types are derived from the schema, so this pins the field
// names: a rename shows here, in code review, rather than only in the users' objects.
const specKeys: Record<keyof PrometheusSpec, true> = {
  replicas: true,
  version: true,
  repository: true,
  serviceMonitorSelector: true,
  serviceMonitorNamespaceSelector: true,
  podMonitorSelector: true,
  podMonitorNamespaceSelector: true,
  ruleSelector: true,
  ruleNamespaceSelector: true,
  scrapeInterval: true,
  scrapeTimeout: true,
  evaluationInterval: true,
  externalLabels: true,
  retention: true,
  retentionSize: true,
  storage: true,
  resources: true,
  serviceAccountName: true,
  clusterMetrics: true,
  podTemplate: true,
  paused: true,
  enableFeatures: true,
  arbitraryFSAccessThroughSMs: true,
};
const storageKeys: Record<keyof PrometheusStorage, true> = {
  size: true,
  storageClassName: true,
  ephemeral: true,
};
const clusterMetricsKeys: Record<keyof PrometheusClusterMetrics, true> = {
  kubelet: true,
  apiServer: true,
};
const podTemplateKeys: Record<keyof PrometheusPodTemplate, true> = {
  labels: true,
  annotations: true,
  affinity: true,
  tolerations: true,
  nodeSelector: true,
};
const statusKeys: Record<keyof PrometheusStatus, true> = {
  observedGeneration: true,
  conditions: true,
  replicas: true,
  readyReplicas: true,
  selector: true,
  selected: true,
  configHash: true,
};
const selectedKeys: Record<keyof PrometheusSelected, true> = {
  serviceMonitors: true,
  podMonitors: true,
  rules: true,
};

type Schema = { properties?: Record<string, Schema>; items?: Schema; [key: string]: unknown };
type Rule = { rule: string; message: string };
const root = prometheusSchema as unknown as Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;
const props = (s: Schema | undefined) => Object.keys(s?.properties ?? {}).sort();
const rules = (s: Schema | undefined) => (s?.["x-kubernetes-validations"] ?? []) as Rule[];

// The types are derived from the schema (Type.Static); the defaulted spec fields are made present (the API server
// fills them in), and that list must be the schema's.
describe("derived Prometheus types", () => {
  it("defaulted spec fields are present, the others optional", () => {
    expectTypeOf<PrometheusSpec["replicas"]>().toEqualTypeOf<number>();
    expectTypeOf<PrometheusSpec["version"]>().toEqualTypeOf<string>();
    expectTypeOf<PrometheusSpec["retention"]>().toEqualTypeOf<string>();
    expectTypeOf<PrometheusSpec["storage"]>().toEqualTypeOf<PrometheusStorage>();
    expectTypeOf<PrometheusSpec["scrapeTimeout"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PrometheusSpec["retentionSize"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<PrometheusSpec["ruleSelector"]>().toEqualTypeOf<LabelSelector | undefined>();
    expectTypeOf<PrometheusSpec["externalLabels"]>().toEqualTypeOf<Record<string, string> | undefined>();
    expectTypeOf<PrometheusSpec["resources"]>().toEqualTypeOf<ResourceQuantities | undefined>();
    expectTypeOf<PrometheusSpec["arbitraryFSAccessThroughSMs"]>().toEqualTypeOf<
      ArbitraryFSAccess | undefined
    >();
    expectTypeOf<PrometheusPodTemplate>().toEqualTypeOf<PodPlacement>();
    expectTypeOf<PrometheusStatus["conditions"]>().toEqualTypeOf<Condition[] | undefined>();
    expectTypeOf<PrometheusStatus["selected"]>().toEqualTypeOf<PrometheusSelected | undefined>();
    // @ts-expect-error a storage field the schema lacks is a type error (the API server would prune it)
    const bogus: PrometheusStorage = { size: "1Gi", sizeLimit: "2Gi" };
    expect(bogus.size).toBe("1Gi");
  });

  it("the spec fields typed as always present are exactly those with a default in the schema", () => {
    // The compiler checks this names exactly the fields PrometheusSpec requires; the test, that they are the defaulted ones.
    const required: { [K in keyof PrometheusSpec as undefined extends PrometheusSpec[K] ? never : K]: true } =
      {
        replicas: true,
        version: true,
        repository: true,
        scrapeInterval: true,
        evaluationInterval: true,
        retention: true,
        storage: true,
      };
    const defaulted = Object.entries(spec.properties!)
      .filter(([, s]) => s.default !== undefined)
      .map(([k]) => k);
    expect(defaulted.sort()).toEqual(Object.keys(required).sort());
  });
});

describe("Prometheus types match the schema", () => {
  it.each([
    ["spec", specKeys, spec],
    ["spec.storage", storageKeys, spec.properties!.storage],
    ["spec.clusterMetrics", clusterMetricsKeys, spec.properties!.clusterMetrics],
    ["spec.podTemplate", podTemplateKeys, spec.properties!.podTemplate],
    ["status", statusKeys, status],
    ["status.selected", selectedKeys, status.properties!.selected],
  ] as const)("%s", (_path, keys, schema) => {
    expect(props(schema)).toEqual(Object.keys(keys).sort());
  });

  it("the six selectors are metav1.LabelSelectors", () => {
    for (const key of Object.keys(specKeys).filter((k) => k.endsWith("Selector"))) {
      expect(props(spec.properties![key])).toEqual(["matchExpressions", "matchLabels"]);
    }
  });
});

describe("prometheusCrd", () => {
  const crd = prometheusCrd();
  const version = crd.spec.versions[0]!;

  it("is named after the kind's plural and group, with the contract's names", () => {
    expect(crd.metadata.name).toBe("prometheuses.monitoring.capstan.dev");
    expect(PrometheusKind.apiVersion).toBe("monitoring.capstan.dev/v1alpha1");
    expect(crd.spec.names).toMatchObject({
      kind: "Prometheus",
      plural: "prometheuses",
      shortNames: ["prom"],
      categories: ["capstan"],
    });
  });

  it("has status and scale subresources pointing at real fields", () => {
    expect(version.subresources?.status).toEqual({});
    expect(version.subresources?.scale).toEqual({
      specReplicasPath: ".spec.replicas",
      statusReplicasPath: ".status.replicas",
      labelSelectorPath: ".status.selector",
    });
    expect(props(spec)).toContain("replicas");
    expect(props(status)).toEqual(expect.arrayContaining(["replicas", "selector"]));
  });

  it("printer columns read existing paths", () => {
    const cols = version.additionalPrinterColumns ?? [];
    expect(cols.map((c) => c.name)).toEqual([
      "Version",
      "Replicas",
      "Ready",
      "Reconciled",
      "Available",
      "Age",
    ]);
    for (const col of cols) {
      const [, top, field] = /^\.(\w+)\.(\w+)/.exec(col.jsonPath) ?? [];
      if (top === "metadata") continue;
      expect(props(top === "spec" ? spec : status)).toContain(field);
    }
  });

  it("defaults the contract's values", () => {
    const p = spec.properties!;
    expect(p.replicas).toMatchObject({ default: 1, minimum: 0 });
    expect(p.version).toMatchObject({ default: "3.16.0" });
    expect(p.repository).toMatchObject({ default: "quay.io/prometheus/prometheus" });
    expect(p.scrapeInterval).toMatchObject({ default: "30s" });
    expect(p.evaluationInterval).toMatchObject({ default: "30s" });
    expect(p.retention).toMatchObject({ default: "15d" });
    expect(p.storage).toMatchObject({ default: { size: "10Gi" } });
  });

  it("returns a fresh object each time", () => {
    const a = prometheusCrd();
    a.spec.names.kind = "Changed";
    expect(prometheusCrd().spec.names.kind).toBe("Prometheus");
  });
});

describe("version rule", () => {
  const rule = rules(spec.properties!.version)[0]!;
  const regex = new RegExp(/'(.*)'/.exec(rule.rule)![1]!);
  it.each(["3.16.0", "3.0.0", "10.1.2"])("accepts %s", (v) => expect(regex.test(v)).toBe(true));
  it.each(["v3.16.0", "2.53.0", "3.16", "3.16.0-rc.0", "latest"])("rejects %s", (v) =>
    expect(regex.test(v)).toBe(false),
  );
});

describe("interval pattern (Go and Prometheus read it alike)", () => {
  const regex = new RegExp(SCRAPE_DURATION_PATTERN);
  it.each(["30s", "1m30s", "1h", "500ms", "2m0s"])("accepts %s", (v) => expect(regex.test(v)).toBe(true));
  // 1d and 1.5m are Prometheus or Go durations but not both; 30s1m is out of order for Prometheus.
  it.each(["1d", "1.5m", "30s1m", "30", "1 m", "-1s", "1us"])("rejects %s", (v) =>
    expect(regex.test(v)).toBe(false),
  );
  it("is applied to the three intervals, with a length bound", () => {
    for (const key of ["scrapeInterval", "scrapeTimeout", "evaluationInterval"]) {
      expect(spec.properties![key]).toMatchObject({ pattern: SCRAPE_DURATION_PATTERN, minLength: 1 });
    }
  });
  it("scrapeTimeout is checked against scrapeInterval", () => {
    const [r] = rules(spec);
    expect(r!.rule).toBe(
      "!has(self.scrapeTimeout) || duration(self.scrapeTimeout) <= duration(self.scrapeInterval)",
    );
    expect(r!.message).toContain("scrapeTimeout must not be longer than scrapeInterval");
  });
});

describe("retention patterns", () => {
  const duration = new RegExp(PROMETHEUS_DURATION_PATTERN);
  it.each(["15d", "1y", "2w3d", "12h", "0"])("retention accepts %s", (v) =>
    expect(duration.test(v)).toBe(true),
  );
  it.each(["15 d", "1.5d", "d", "3d1w"])("retention rejects %s", (v) => expect(duration.test(v)).toBe(false));
  const size = new RegExp(BYTE_SIZE_PATTERN);
  it.each(["512MB", "10GiB", "1.5TB", "0"])("retentionSize accepts %s", (v) =>
    expect(size.test(v)).toBe(true),
  );
  it.each(["10Gi", "10G", "GB", "-1GB"])("retentionSize rejects %s", (v) => expect(size.test(v)).toBe(false));
});

// The storage rules, evaluated as CEL would on the object shapes (has(x) = the key is present).
describe("storage rules", () => {
  const [either, classImmutable, ephemeralImmutable] = rules(spec.properties!.storage);
  const eitherHolds = (s: PrometheusStorage) =>
    s.ephemeral === true ? s.size === undefined && s.storageClassName === undefined : s.size !== undefined;
  it.each<[PrometheusStorage, boolean]>([
    [{ size: "1Gi" }, true],
    [{ size: "1Gi", storageClassName: "fast" }, true],
    [{ ephemeral: true }, true],
    [{ ephemeral: false, size: "1Gi" }, true],
    [{}, false],
    [{ storageClassName: "fast" }, false],
    [{ ephemeral: true, size: "1Gi" }, false],
    [{ ephemeral: true, storageClassName: "fast" }, false],
  ])("%j -> %s", (s, ok) => expect(eitherHolds(s)).toBe(ok));
  it("says what to set", () => {
    expect(either!.rule).toBe(
      "has(self.ephemeral) && self.ephemeral ? !has(self.size) && !has(self.storageClassName) : has(self.size)",
    );
    expect(either!.message).toContain("either size");
  });
  it("storageClassName and ephemeral are transition rules", () => {
    expect(classImmutable!.rule).toContain("oldSelf.storageClassName");
    expect(classImmutable!.message).toContain("immutable");
    expect(ephemeralImmutable!.rule).toContain("oldSelf.ephemeral");
  });
});

describe("externalLabels rule", () => {
  const rule = rules(spec.properties!.externalLabels)[0]!;
  it.each(OPERATOR_EXTERNAL_LABELS)("refuses %s", (label) => {
    expect(rule.rule).toContain(`!('${label}' in self)`);
    expect(rule.message).toContain(label);
  });
});

describe("enableFeatures", () => {
  const field = spec.properties!.enableFeatures!;
  const name = new RegExp(FEATURE_FLAG_PATTERN);
  it.each(["promql-experimental-functions", "native-histograms", "st-storage", "otlp-deltatocumulative"])(
    "accepts the flag name %s",
    (v) => expect(name.test(v)).toBe(true),
  );
  // A comma would smuggle a second flag into the one --enable-feature argument the pods get.
  it.each(["a,b", "Promql", "-x", "x-", "x y", "", "x--y"])("refuses the flag name %j", (v) =>
    expect(name.test(v)).toBe(false),
  );
  it("is a bounded set of flag names", () => {
    expect(field).toMatchObject({ type: "array", "x-kubernetes-list-type": "set", maxItems: 32 });
    expect(field.items).toMatchObject({ pattern: FEATURE_FLAG_PATTERN, maxLength: 64 });
  });
  it("refuses the two OTLP delta flags together, as Prometheus refuses to start with both", () => {
    const [rule] = rules(field);
    const holds = (flags: string[]) =>
      !(flags.includes("otlp-deltatocumulative") && flags.includes("otlp-native-delta-ingestion"));
    expect(rule!.rule).toBe("!('otlp-deltatocumulative' in self && 'otlp-native-delta-ingestion' in self)");
    expect(holds(["otlp-deltatocumulative"])).toBe(true);
    expect(holds(["otlp-deltatocumulative", "otlp-native-delta-ingestion"])).toBe(false);
    expect(rule!.message).toContain("Prometheus refuses to start");
  });
});

describe("arbitraryFSAccessThroughSMs", () => {
  it("has prometheus-operator's deny, denying by default, and the namespaces trusted with the token", () => {
    const field = spec.properties!.arbitraryFSAccessThroughSMs!;
    expect(props(field)).toEqual(["deny", "serviceAccountTokenNamespaceSelector"]);
    expect(field.properties!.deny).toMatchObject({ type: "boolean", default: true });
    expect(props(field.properties!.serviceAccountTokenNamespaceSelector)).toEqual([
      "matchExpressions",
      "matchLabels",
    ]);
  });
});
