// Golden files of the generated configuration (testdata/*.yaml; UPDATE_GOLDEN=1 rewrites them), and the properties
// the reconciler relies on: determinism, a hash that follows the content, the assets list, escaping.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Prometheus } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import { ASSETS_DIR, RULES_DIR } from "./assets.ts";
import { renderConfig } from "./config.ts";
import { fullServiceMonitor, GOLDEN_CASES, none, podMonitor, prometheus, rule } from "./config-fixtures.ts";
import type { SelectedMonitors } from "./select.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

/** Compares `actual` with testdata/<name>; with UPDATE_GOLDEN=1 writes it instead. */
function golden(name: string, actual: string): void {
  const url = new URL(name, TESTDATA);
  if (UPDATE) writeFileSync(url, actual);
  expect(existsSync(url), `testdata/${name} is missing: run UPDATE_GOLDEN=1 npm test`).toBe(true);
  expect(actual).toBe(readFileSync(url, "utf8"));
}

describe("golden files", () => {
  it.each(GOLDEN_CASES)("$name ($file)", ({ file, prometheus: p, selected }) => {
    golden(file, renderConfig(p, selected).yaml);
  });

  it("an empty selection has no rule files and no assets", () => {
    const out = renderConfig(prometheus(), none);
    expect(out.rules).toEqual({});
    expect(out.assets).toEqual([]);
  });

  it("a PrometheusRule becomes one rule file (rules-<file>)", () => {
    const out = renderConfig(prometheus(), { ...none, rules: [rule] });
    expect(Object.keys(out.rules)).toEqual(["etcd_etcd-alerts.yaml"]);
    golden("rules-etcd_etcd-alerts.yaml", out.rules["etcd_etcd-alerts.yaml"]!);
  });
});

describe("renderConfig", () => {
  const selection: SelectedMonitors = {
    serviceMonitors: [{ object: fullServiceMonitor, namespaces: ["shop", "shop-staging"] }],
    podMonitors: [{ object: podMonitor, namespaces: ["etcd"] }],
    rules: [rule],
  };

  it("produces YAML that parses, jobs named as prometheus-operator names them", () => {
    const out = renderConfig(prometheus(), selection);
    const config = parse(out.yaml) as { scrape_configs: { job_name: string }[]; rule_files: string[] };
    expect(config.scrape_configs.map((j) => j.job_name)).toEqual([
      "serviceMonitor/shop/api/0",
      "serviceMonitor/shop/api/1",
      "serviceMonitor/shop/api/2",
      "podMonitor/etcd/etcd-members/0",
      "podMonitor/etcd/etcd-members/1",
    ]);
    expect(config.rule_files).toEqual([`${RULES_DIR}/etcd_etcd-alerts.yaml`]);
  });

  it("is deterministic: input order does not matter, the hash is stable", () => {
    const other: Prometheus = prometheus();
    other.spec.externalLabels = { b: "2", a: "1" };
    const a = renderConfig(other, {
      serviceMonitors: [
        { object: fullServiceMonitor, namespaces: ["shop"] },
        {
          object: { ...fullServiceMonitor, metadata: { name: "aaa", namespace: "shop" } },
          namespaces: ["shop"],
        },
      ],
      podMonitors: [],
      rules: [rule, { ...rule, metadata: { name: "x", namespace: "a" } }],
    });
    other.spec.externalLabels = { a: "1", b: "2" };
    const b = renderConfig(other, {
      serviceMonitors: [
        {
          object: { ...fullServiceMonitor, metadata: { name: "aaa", namespace: "shop" } },
          namespaces: ["shop"],
        },
        { object: fullServiceMonitor, namespaces: ["shop"] },
      ],
      podMonitors: [],
      rules: [{ ...rule, metadata: { name: "x", namespace: "a" } }, rule],
    });
    expect(b).toEqual(a);
    expect(a.hash).toMatch(/^[0-9a-f]{16}$/);
  });

  it("the hash follows the configuration and the rule files", () => {
    const base = renderConfig(prometheus(), selection);
    const changedConfig = renderConfig(prometheus({ scrapeInterval: "15s" }), selection);
    const changedRule: PrometheusRule = structuredClone(rule);
    changedRule.spec.groups![0]!.rules![0]!.for = "3m";
    const changedRules = renderConfig(prometheus(), { ...selection, rules: [changedRule] });
    expect(changedRules.yaml).toBe(base.yaml);
    expect(new Set([base.hash, changedConfig.hash, changedRules.hash]).size).toBe(3);
  });

  it("lists every Secret and ConfigMap key the configuration reads, once, with its file", () => {
    const out = renderConfig(prometheus(), selection);
    expect(out.assets.map((a) => [a.kind, a.namespace, a.name, a.key, a.path])).toEqual([
      ["ConfigMap", "shop", "shop-ca", "ca.crt", `${ASSETS_DIR}/configmap_shop_shop-ca_ca.crt`],
      ["Secret", "shop", "basic", "pass", `${ASSETS_DIR}/secret_shop_basic_pass`],
      ["Secret", "shop", "basic", "user", `${ASSETS_DIR}/secret_shop_basic_user`],
      ["Secret", "shop", "scrape-client", "tls.crt", `${ASSETS_DIR}/secret_shop_scrape-client_tls.crt`],
      ["Secret", "shop", "scrape-client", "tls.key", `${ASSETS_DIR}/secret_shop_scrape-client_tls.key`],
      ["Secret", "shop", "scrape-token", "token", `${ASSETS_DIR}/secret_shop_scrape-token_token`],
    ]);
    for (const a of out.assets) expect(out.yaml).toContain(a.path);
  });

  it("keeps user external label values literal ($ escaped) and the operator's labels first", () => {
    const out = renderConfig(prometheus({ externalLabels: { cost: "$5", prometheus: "mine" } }), none);
    const labels = (parse(out.yaml) as { global: { external_labels: Record<string, string> } }).global
      .external_labels;
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Prometheus expands ${POD_NAME} itself
    const replica = "${POD_NAME}";
    expect(labels).toEqual({ prometheus: "monitoring/main", prometheus_replica: replica, cost: "$$5" });
  });

  it("escapes regex characters of selector label values", () => {
    const out = renderConfig(prometheus(), {
      ...none,
      serviceMonitors: [{ object: fullServiceMonitor, namespaces: ["shop"] }],
    });
    expect(out.yaml).toContain("regex: (v1\\.2);true");
  });
});
