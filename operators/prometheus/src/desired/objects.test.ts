// Golden files of every object the operator builds for a Prometheus (testdata/objects-*.json; UPDATE_GOLDEN=1
// rewrites them), and the rules they follow: restricted pods, no restart on a config change, RBAC scope.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import { renderConfig } from "./config.ts";
import { defaultSpec, none, rule } from "./config-fixtures.ts";
import { generationId } from "./generation.ts";
import { discoveryRbac, discoveryScope, serviceAccount } from "./objects/discovery-rbac.ts";
import { configSecret, lastGoodSecrets, ruleShardSecrets } from "./objects/secrets.ts";
import { clientService, governingService } from "./objects/services.ts";
import { podDisruptionBudget, statefulSet } from "./objects/statefulset.ts";
import { CONFIG_KEY, GENERATION_ANNOTATION, RELOADER_SCRIPT } from "./objects.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const TESTDATA = new URL("../../testdata/", import.meta.url);

afterAll(() => {
  if (UPDATE)
    execFileSync("npx", ["biome", "format", "--write", fileURLToPath(TESTDATA)], { stdio: "inherit" });
});

/** Compares `actual` with testdata/objects-<name>.json; with UPDATE_GOLDEN=1 writes it instead. */
function golden(name: string, actual: unknown): void {
  const url = new URL(`objects-${name}.json`, TESTDATA);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) writeFileSync(url, text);
  expect(existsSync(url), `testdata/objects-${name}.json is missing: run UPDATE_GOLDEN=1 npm test`).toBe(
    true,
  );
  expect(JSON.parse(readFileSync(url, "utf8"))).toEqual(JSON.parse(text));
}

const server = (spec: Partial<PrometheusSpec> = {}): Prometheus => ({
  apiVersion: "monitoring.capstan.dev/v1alpha1",
  kind: "Prometheus",
  metadata: { name: "main", namespace: "monitoring", uid: "9b1c0f5e-0000-4000-8000-000000000001" },
  spec: {
    ...defaultSpec,
    ...spec,
  },
});

const full = server({
  replicas: 3,
  version: "3.15.1",
  repository: "registry.example/prometheus",
  retention: "30d",
  retentionSize: "8GB",
  storage: { size: "50Gi", storageClassName: "fast" },
  resources: { requests: { cpu: "500m", memory: "2Gi" }, limits: { memory: "4Gi" } },
  serviceAccountName: "custom-sa",
  enableFeatures: ["promql-experimental-functions", "exemplar-storage"],
  podTemplate: {
    labels: { team: "observability", "app.kubernetes.io/name": "spoofed" },
    annotations: { "example.com/owner": "observability" },
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "monitoring", effect: "NoSchedule" }],
    nodeSelector: { "node-role": "monitoring" },
  },
});
const settings = { reloaderImage: "busybox:1.37" };

describe("golden files", () => {
  it.each([
    ["statefulset", () => statefulSet(server(), settings)],
    ["statefulset-full", () => statefulSet(full, { reloaderImage: "capstan.local/busybox:1" })],
    ["statefulset-ephemeral", () => statefulSet(server({ storage: { ephemeral: true } }), settings)],
    ["service-client", () => clientService(server())],
    ["service-governing", () => governingService(server())],
    ["serviceaccount", () => serviceAccount(server())],
    ["pdb", () => podDisruptionBudget(full)],
    ["rbac-namespaces", () => discoveryRbac(server(), { all: false, namespaces: ["apps", "monitoring"] })],
    ["rbac-cluster", () => discoveryRbac(full, { all: true })],
    ["rbac-nodes", () => discoveryRbac(server(), { all: false, namespaces: ["monitoring"], nodes: true })],
    [
      "secret",
      () =>
        configSecret(server(), renderConfig(server(), { ...none, rules: [rule] }), { secret_a_b_c: "dG9r" }),
    ],
  ])("%s", (name, build) => {
    golden(name, build());
  });
});

describe("rules the builders follow", () => {
  it("the Secret holds prometheus.yml gzipped and the assets (the rule files are in shards), annotated with the hash", () => {
    const config = renderConfig(server(), { ...none, rules: [rule] });
    const secret = configSecret(server(), config, { secret_a_b_c: "dG9r" });
    const yml = gunzipSync(Buffer.from(secret.data?.[CONFIG_KEY] ?? "", "base64")).toString("utf8");
    expect(yml).toBe(config.yaml);
    expect(Object.keys(secret.data ?? {}).sort()).toEqual([
      "assets.sha256",
      "config.sha256",
      CONFIG_KEY,
      "rules.sha256",
      "secret_a_b_c",
    ]);
    expect(secret.metadata.annotations?.["monitoring.capstan.dev/config-hash"]).toBe(config.hash);
    // Same input, same bytes: an unchanged configuration is no write.
    expect(configSecret(server(), config, { secret_a_b_c: "dG9r" })).toEqual(secret);
  });

  it("the config Secret carries the checksums of every file of the generation, and its id", () => {
    const config = renderConfig(server(), { ...none, rules: [rule] });
    const secret = configSecret(server(), config, { secret_a_b_c: "dG9r" });
    const text = (k: string) => Buffer.from(secret.data?.[k] ?? "", "base64").toString("utf8");
    const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
    expect(text("config.sha256")).toBe(
      `${sha(Buffer.from(secret.data?.[CONFIG_KEY] ?? "", "base64"))}  ${CONFIG_KEY}\n`,
    );
    const [file] = Object.keys(config.rules);
    expect(text("rules.sha256")).toBe(`${sha(config.rules[file ?? ""] ?? "")}  ${file}\n`);
    expect(text("assets.sha256")).toBe(`${sha("tok")}  secret_a_b_c\n`);
    // The id is what the reloader computes: sha256 of the three texts, 16 hex digits.
    const id = sha(text("config.sha256") + text("rules.sha256") + text("assets.sha256")).slice(0, 16);
    expect(secret.metadata.annotations?.[GENERATION_ANNOTATION]).toBe(id);
    expect(
      generationId({
        "config.sha256": text("config.sha256"),
        "rules.sha256": text("rules.sha256"),
        "assets.sha256": text("assets.sha256"),
      }),
    ).toBe(id);
    // Any file changing changes the id: a rotated credential is a new generation.
    const rotated = configSecret(server(), config, { secret_a_b_c: "dG9rMg==" });
    expect(rotated.metadata.annotations?.[GENERATION_ANNOTATION]).not.toBe(id);
  });

  it("the last-good copy: the candidate's data and version, same shard layout, content-addressed", () => {
    const config = renderConfig(server(), { ...none, rules: [rule] });
    const candidate = configSecret(server(), config, { secret_a_b_c: "dG9r" });
    const shards = ruleShardSecrets(server(), [{}, config.rules]);
    const lg = lastGoodSecrets(server(), candidate, shards, "3.16.0");
    expect(lg.secret.metadata.name).toBe("prometheus-main-last-good");
    expect(lg.secret.data).toEqual({ ...candidate.data, version: Buffer.from("3.16.0").toString("base64") });
    expect(lg.secret.metadata.annotations).toEqual({
      [GENERATION_ANNOTATION]: candidate.metadata.annotations?.[GENERATION_ANNOTATION],
      "monitoring.capstan.dev/prometheus-version": "3.16.0",
    });
    expect(lg.secret.metadata.labels?.["app.kubernetes.io/component"]).toBe("last-good");
    expect(lg.shards.map((s) => s.metadata.name)).toEqual(["prometheus-main-last-good-rules-1"]);
    expect(lg.shards[0]?.data).toEqual(shards[0]?.data);
    expect(lg.shards[0]?.metadata.labels?.["app.kubernetes.io/component"]).toBe("last-good-rules");
    expect(lg.secret.metadata.ownerReferences?.[0]?.name).toBe("main");
    // The same generation recorded again is the same object: no write.
    expect(lastGoodSecrets(server(), candidate, shards, "3.16.0")).toEqual(lg);
  });

  it("Prometheus reads only the live emptyDir (tmpfs) the init container and the reloader fill", () => {
    const spec = statefulSet(server(), settings).spec?.template.spec;
    const prom = spec?.containers?.find((c) => c.name === "prometheus");
    expect(prom?.args).toContain("--config.file=/etc/prometheus/config/prometheus.yml");
    // The reloader's state, served for the operator at /user/state.
    expect(prom?.args).toContain("--web.user-assets=/etc/prometheus/reloader");
    expect(prom?.volumeMounts).toEqual([
      { name: "live", mountPath: "/etc/prometheus", readOnly: true },
      { name: "data", mountPath: "/prometheus" },
    ]);
    expect(spec?.volumes?.find((v) => v.name === "live")).toEqual({
      name: "live",
      emptyDir: { medium: "Memory" },
    });
    const init = spec?.initContainers?.find((c) => c.name === "init-config");
    expect(init?.command).toEqual(["sh", "-c", RELOADER_SCRIPT, "reloader", "once"]);
    expect(init?.env).toEqual([{ name: "PROMETHEUS_VERSION", value: "3.16.0" }]);
    expect(init?.volumeMounts).toEqual([
      { name: "live", mountPath: "/etc/prometheus" },
      { name: "candidate", mountPath: "/etc/capstan/candidate", readOnly: true },
      { name: "last-good", mountPath: "/etc/capstan/last-good", readOnly: true },
    ]);
    const reloader = spec?.containers?.find((c) => c.name === "reloader");
    expect(reloader?.command).toEqual(["sh", "-c", RELOADER_SCRIPT, "reloader"]);
    expect(reloader?.volumeMounts).toEqual([
      { name: "live", mountPath: "/etc/prometheus" },
      { name: "candidate", mountPath: "/etc/capstan/candidate", readOnly: true },
    ]);
    // No Secret volume of credentials any more: they come with their generation.
    expect(spec?.volumes?.map((v) => v.name)).toEqual(["live", "candidate", "last-good"]);
  });

  it("a configuration change does not change the pod template (reloaded live, never restarted)", () => {
    const before = statefulSet(server(), settings);
    const config = renderConfig(server(), { ...none, rules: [rule] });
    expect(config.hash).not.toBe(renderConfig(server(), none).hash);
    expect(statefulSet(server(), settings)).toEqual(before);
    expect(JSON.stringify(before)).not.toContain(config.hash);
  });

  it("every container is restricted: non-root, no capabilities, seccomp RuntimeDefault, read-only root", () => {
    const spec = statefulSet(full, settings).spec?.template.spec;
    expect(spec?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
      expect(c.securityContext, c.name).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ["ALL"] },
      });
    }
  });

  it("podTemplate labels never override the selector labels", () => {
    const sts = statefulSet(full, settings);
    expect(sts.spec?.template.metadata?.labels).toMatchObject(sts.spec?.selector.matchLabels ?? { none: "" });
    expect(sts.spec?.template.metadata?.labels?.team).toBe("observability");
  });

  it("no PodDisruptionBudget for one replica", () => {
    expect(podDisruptionBudget(server())).toBeUndefined();
    expect(podDisruptionBudget(server({ replicas: 2 }))?.spec?.maxUnavailable).toBe(1);
  });

  it("discovery scope: the union of the monitors' namespaces, or all when one says any", () => {
    expect(discoveryScope([{ namespaces: ["b"] }, { namespaces: ["a", "b"] }])).toEqual({
      all: false,
      namespaces: ["a", "b"],
    });
    expect(discoveryScope([{ namespaces: ["a"] }, {}])).toEqual({ all: true });
    expect(discoveryScope([])).toEqual({ all: false, namespaces: [] });
  });

  it("discovery scope reads Nodes when a monitor attaches node metadata (attachMetadata.node: true)", () => {
    const spec = (node?: boolean) => ({ spec: node === undefined ? {} : { attachMetadata: { node } } });
    expect(
      discoveryScope([
        { namespaces: ["a"], object: spec(false) },
        { namespaces: ["b"], object: spec() },
      ]),
    ).toEqual({
      all: false,
      namespaces: ["a", "b"],
    });
    expect(discoveryScope([{ namespaces: ["a"], object: spec(true) }])).toEqual({
      all: false,
      namespaces: ["a"],
      nodes: true,
    });
    expect(discoveryScope([{ object: spec(true) }])).toEqual({ all: true, nodes: true });
  });

  it("Nodes are cluster-scoped: a ClusterRole of their own beside the Roles, or in the cluster-wide one", () => {
    const namespaced = discoveryRbac(server(), { all: false, namespaces: ["monitoring"], nodes: true });
    expect(namespaced.owned.map((o) => o.kind)).toEqual(["Role", "RoleBinding"]);
    expect(namespaced.foreign.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([
      "ClusterRole prometheus-monitoring-main",
      "ClusterRoleBinding prometheus-monitoring-main",
    ]);
    expect((namespaced.foreign[0] as { rules: unknown[] }).rules).toEqual([
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
    ]);
    const all = discoveryRbac(server(), { all: true, nodes: true });
    expect(all.owned).toEqual([]);
    expect(
      (all.foreign[0] as { rules: { resources: string[] }[] }).rules.flatMap((r) => r.resources),
    ).toEqual(["pods", "services", "endpointslices", "namespaces", "nodes"]);
    // Without node metadata, no ClusterRole for a namespaced scope.
    expect(discoveryRbac(server(), { all: false, namespaces: ["monitoring"] }).foreign).toEqual([]);
  });

  it("the pods get the server's feature flags as one --enable-feature argument", () => {
    const args = (s: Prometheus) => statefulSet(s, settings).spec?.template.spec?.containers[0]?.args ?? [];
    expect(args(full)).toContain("--enable-feature=exemplar-storage,promql-experimental-functions");
    expect(args(server()).some((a) => a.startsWith("--enable-feature"))).toBe(false);
  });

  it("RBAC in the server's namespace is owned; elsewhere it is labelled for cleanup", () => {
    const rbac = discoveryRbac(server(), { all: false, namespaces: ["apps", "monitoring"] });
    expect(rbac.owned.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      "Role monitoring/prometheus-main",
      "RoleBinding monitoring/prometheus-main",
    ]);
    expect(rbac.owned.every((o) => o.metadata.ownerReferences?.[0]?.controller === true)).toBe(true);
    expect(rbac.foreign.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      "Role apps/prometheus-monitoring-main",
      "RoleBinding apps/prometheus-monitoring-main",
    ]);
    expect(rbac.foreign.every((o) => o.metadata.ownerReferences === undefined)).toBe(true);
  });
});
