// Reconciles of a server with many rules against core's in-memory API server, which refuses a Secret over 1 MiB as
// the real one does (issue 29, item 6): the rule files are spread over Secrets prometheus-<name>-rules-<i>, each
// under the limit, listed in rule_files and mounted by the pods; shards no longer needed go once the pods carry
// the configuration that no longer lists them; and a write the API server refuses (too large, forbidden, a quota)
// is Degraded naming the object, one Warning Event, Reconciled=False, and no thrown error.
import { gunzipSync } from "node:zlib";
import { type KubeObject, Secret, StatefulSet } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import type { PrometheusRule } from "../api/prometheus-rule.ts";
import { defaultSpec, manyRules } from "../desired/config-fixtures.ts";
import { CONFIG_HASH_ANNOTATION, CONFIG_KEY } from "../desired/objects.ts";
import { ControllerState } from "./options.ts";
import { KINDS, MONITORING_NAMESPACE, quietReconciler } from "./test-fixture.ts";

const server = (generation = 1): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "main", namespace: "monitoring", uid: "p-1", generation },
  spec: { ...defaultSpec, ruleSelector: {} },
});

function run(
  state: ControllerState,
  objects: readonly KubeObject[],
  setup?: Parameters<typeof reconcileOnce>[1]["setup"],
): Promise<ReconcileRun> {
  return reconcileOnce(quietReconciler(state), {
    kinds: KINDS,
    objects,
    request: server(),
    ...(setup === undefined ? {} : { setup }),
  });
}

const secrets = (r: ReconcileRun) =>
  r.objects.filter((o) => o.kind === "Secret") as (KubeObject & { data?: Record<string, string> })[];
const shardNames = (r: ReconcileRun) =>
  secrets(r)
    .map((s) => s.metadata.name ?? "")
    .filter((n) => n.startsWith("prometheus-main-rules-"))
    .sort();
const dataBytes = (s: { data?: Record<string, string> }) =>
  Object.entries(s.data ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.from(v, "base64").length, 0);
const configOf = (r: ReconcileRun) => {
  const s = r.get(Secret, "prometheus-main", "monitoring");
  return parse(gunzipSync(Buffer.from(s?.data?.[CONFIG_KEY] ?? "", "base64")).toString("utf8")) as {
    rule_files?: string[];
  };
};
const condition = (r: ReconcileRun, type: string) =>
  r.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === type);

describe("rules spread over Secrets", () => {
  it("450 rules (1.2 MB): every Secret under 1 MiB, every rule file in a shard and in rule_files, mounted", async () => {
    const state = new ControllerState();
    const rules = manyRules(450);
    const first = await run(state, [MONITORING_NAMESPACE, server(), ...rules]);
    first.expectNoError();
    expect(shardNames(first)).toEqual([
      "prometheus-main-rules-0",
      "prometheus-main-rules-1",
      "prometheus-main-rules-2",
    ]);
    for (const s of secrets(first)) expect(dataBytes(s), s.metadata.name).toBeLessThan(600 * 1024);
    const files = new Set<string>();
    for (const name of shardNames(first)) {
      for (const k of Object.keys(first.get(Secret, name, "monitoring")?.data ?? {})) files.add(k);
      expect(first.get(Secret, name, "monitoring")?.metadata.ownerReferences?.[0]?.uid).toBe("p-1");
    }
    expect(files.size).toBe(450);
    expect(configOf(first).rule_files).toEqual([...files].sort().map((f) => `/etc/prometheus/rules/${f}`));
    // No rule file left in the config Secret: only their checksums.
    expect(Object.keys(first.get(Secret, "prometheus-main", "monitoring")?.data ?? {})).toEqual([
      CONFIG_KEY,
      "config.sha256",
      "rules.sha256",
      "assets.sha256",
    ]);
    // The reloader sees every shard in the candidate directory (it copies them to where rule_files names).
    const volume = first
      .get(StatefulSet, "prometheus-main", "monitoring")
      ?.spec?.template.spec?.volumes?.find((v) => v.name === "candidate");
    const sources = volume?.projected?.sources?.map((s) => s.secret?.name);
    expect(sources).toEqual(expect.arrayContaining(["prometheus-main", ...shardNames(first)]));
    const status = first.get(PrometheusKind, "main", "monitoring")?.status;
    expect(condition(first, "Reconciled")?.status).toBe("True");
    expect(condition(first, "Degraded")?.status).toBe("False");
    expect(status?.selected?.rules).toHaveLength(450);

    // Steady state: nothing written.
    (await run(state, first.objects)).expectNoWrites();
  });

  it("one rule changed: only its shard and the config Secret are written", async () => {
    const state = new ControllerState();
    const rules = manyRules(450);
    const first = await run(state, [MONITORING_NAMESPACE, server(), ...rules]);
    first.expectNoError();
    const changed = first.objects.map((o) => {
      if (o.kind !== "PrometheusRule" || o.metadata.name !== "team-rules-0200") return o;
      const r = structuredClone(o) as PrometheusRule;
      const g = r.spec.groups?.[0]?.rules?.[0];
      if (g) g.for = "15m";
      r.metadata.generation = 2;
      return r;
    });
    const next = await run(state, changed);
    next.expectNoError();
    const shardOf = (r: ReconcileRun) =>
      shardNames(r).find((n) =>
        Object.hasOwn(r.get(Secret, n, "monitoring")?.data ?? {}, "monitoring_team-rules-0200.yaml"),
      );
    expect(shardOf(next)).toBe(shardOf(first));
    expect(
      next
        .writesOf(Secret)
        .map((w) => w.name)
        .sort(),
    ).toEqual(["prometheus-main", shardOf(first)]);
    expect(next.writesOf(StatefulSet)).toEqual([]);
  });

  it("rules deleted: the empty shard goes once the pods carry the configuration without them", async () => {
    const state = new ControllerState();
    const first = await run(state, [MONITORING_NAMESPACE, server(), ...manyRules(450)]);
    first.expectNoError();
    const pod: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "prometheus-main-0",
        namespace: "monitoring",
        uid: "pod-0",
        labels: { "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": "main" },
      },
    };
    // Keep the first 100 rules: shards 1 and 2 are no longer needed.
    const fewer = [...first.objects, pod].filter(
      (o) => o.kind !== "PrometheusRule" || (o.metadata.name ?? "") < "team-rules-0100",
    );
    const a = await run(state, fewer);
    a.expectNoError();
    // The pod still runs the previous configuration: the shards stay this time, the pod is stamped.
    expect(shardNames(a)).toHaveLength(3);
    expect(a.get(Secret, "prometheus-main-rules-1", "monitoring")?.data).toEqual(
      first.get(Secret, "prometheus-main-rules-1", "monitoring")?.data,
    );
    expect(
      a.objects.find((o) => o.kind === "Pod")?.metadata.annotations?.[CONFIG_HASH_ANNOTATION],
    ).toBeDefined();
    const b = await run(state, a.objects);
    b.expectNoError();
    expect(shardNames(b)).toEqual(["prometheus-main-rules-0"]);
    expect(b.writes.map((w) => `${w.verb} ${w.name}`).sort()).toEqual([
      "delete prometheus-main-rules-1",
      "delete prometheus-main-rules-2",
    ]);
    (await run(state, b.objects)).expectNoWrites();
  });
});

describe("a write the API server refuses", () => {
  it("too large: Degraded naming the Secret and the server's message, one Event, Reconciled=False, no throw", async () => {
    const state = new ControllerState();
    const first = await run(state, [MONITORING_NAMESPACE, server(), ...manyRules(10)]);
    first.expectNoError();
    const hash = first.get(PrometheusKind, "main", "monitoring")?.status?.configHash;
    const more = [...first.objects, ...manyRules(450).slice(10)];
    const message =
      'Secret "prometheus-main-rules-1" is invalid: data: Too long: must have at most 1048576 bytes';
    const refuse = (r: Parameters<NonNullable<Parameters<typeof reconcileOnce>[1]["setup"]>>[0]) => {
      r.fail({ verb: "apply", kind: "Secret", name: "prometheus-main-rules-1" }, 422, { message });
    };
    const a = await run(state, more, refuse);
    a.expectNoError();
    const degraded = condition(a, "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "WriteRefused" });
    expect(degraded?.message).toContain("Secret monitoring/prometheus-main-rules-1");
    expect(degraded?.message).toContain(message);
    expect(condition(a, "Reconciled")).toMatchObject({ status: "False", reason: "WriteRefused" });
    // The configuration that was not written is not reported as the server's.
    expect(a.get(PrometheusKind, "main", "monitoring")?.status?.configHash).toBe(hash);
    expect(a.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["WriteRefused"]);
    expect(a.result).toEqual({ requeueAfter: expect.any(Number) });
    // The same refusal again: no second Event.
    const b = await run(state, a.objects, refuse);
    b.expectNoError();
    expect(b.events.filter((e) => e.reason === "WriteRefused")).toEqual([]);
    // Accepted again: the condition clears.
    const c = await run(state, b.objects);
    c.expectNoError();
    expect(condition(c, "Degraded")?.status).toBe("False");
    expect(condition(c, "Reconciled")?.status).toBe("True");
  });

  it("a quota (403) on the config Secret: Degraded naming it, Reconciled=False", async () => {
    const state = new ControllerState();
    const message =
      'secrets "prometheus-main" is forbidden: exceeded quota: secrets, requested: secrets=1, used: secrets=10, limited: secrets=10';
    const a = await run(state, [MONITORING_NAMESPACE, server(), ...manyRules(3)], (s) => {
      s.fail({ verb: "apply", kind: "Secret", name: "prometheus-main" }, 403, { message });
    });
    a.expectNoError();
    expect(condition(a, "Degraded")).toMatchObject({ status: "True", reason: "WriteRefused" });
    expect(condition(a, "Degraded")?.message).toContain(`Secret monitoring/prometheus-main: ${message}`);
    expect(condition(a, "Reconciled")?.status).toBe("False");
    expect(a.events.map((e) => e.reason)).toContain("WriteRefused");
  });

  it("a rule file over the shard budget gets a shard of its own, under the real limit", async () => {
    // A rule file alone over the shard budget (but under the hard limit) gets a shard of its own.
    const state = new ControllerState();
    const big = manyRules(1)[0] as PrometheusRule;
    const group = big.spec.groups?.[0];
    const rule = group?.rules?.[0];
    if (rule?.annotations) rule.annotations.description = "x".repeat(700 * 1024);
    const r = await run(state, [MONITORING_NAMESPACE, server(), big, ...manyRules(3).slice(1)]);
    r.expectNoError();
    for (const s of secrets(r)) expect(dataBytes(s)).toBeLessThan(1024 * 1024);
    expect(Object.keys(r.get(Secret, "prometheus-main-rules-0", "monitoring")?.data ?? {})).toEqual([
      "monitoring_team-rules-0000.yaml",
    ]);
    expect(shardNames(r)).toEqual(["prometheus-main-rules-0", "prometheus-main-rules-1"]);
    expect(condition(r, "Degraded")?.status).toBe("False");
  });
});
