// The last-good generation (issue 29, item 5), reconciled against core's in-memory API server with scripted pod
// answers (what each pod's reloader serves at /user/state): the operator copies the candidate to the last-good
// Secrets only once every pod, on the spec's image, accepted it (not with pods at different generations, one
// mid-upgrade, or one that did not answer); the steady state writes nothing; a Secret deleted by hand or a copy
// interrupted between two writes is completed; last-good rule shards no longer used go after the Secret naming the
// generation; and a pod that refused the candidate is Degraded ConfigRefused with Prometheus's words, one Event.
import { type KubeObject, Secret } from "@capstan/core";
import { type ReconcileRun, reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type Prometheus, PrometheusKind } from "../api/prometheus.ts";
import { type PrometheusRule, PrometheusRuleKind } from "../api/prometheus-rule.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import { GENERATION_ANNOTATION } from "../desired/objects.ts";
import { PrometheusOperatorMetrics } from "./metrics.ts";
import { ControllerState } from "./options.ts";
import { reconcilePrometheus } from "./reconcile.ts";
import type { ReloaderState, RuntimeInfo } from "./reload.ts";
import { KINDS, MONITORING_NAMESPACE } from "./test-fixture.ts";

const server = (version = defaultSpec.version): Prometheus => ({
  apiVersion: PrometheusKind.apiVersion,
  kind: PrometheusKind.kind,
  metadata: { name: "main", namespace: "monitoring", uid: "p-1", generation: 1 },
  spec: { ...defaultSpec, version, replicas: 2, ruleSelector: {} },
});

const promRule = (name: string, expr = "up == 0"): PrometheusRule => ({
  apiVersion: PrometheusRuleKind.apiVersion,
  kind: PrometheusRuleKind.kind,
  metadata: { name, namespace: "monitoring", uid: `r-${name}`, generation: 1 },
  spec: { groups: [{ name, rules: [{ alert: `${name}Down`, expr }] }] },
});

/** Server pod i, ready at 10.0.0.1<i>, running `image`. */
const pod = (i: number, image = `quay.io/prometheus/prometheus:v${defaultSpec.version}`): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `prometheus-main-${i}`,
      namespace: "monitoring",
      uid: `pod-${i}`,
      labels: { "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": "main" },
    },
    spec: { containers: [{ name: "prometheus", image }] },
    status: { podIP: `10.0.0.1${i}`, conditions: [{ type: "Ready", status: "True" }] },
  }) as KubeObject;

interface Harness {
  state: ControllerState;
  /** Each pod IP's reloader state (absent: it does not answer). */
  reloader: Map<string, ReloaderState>;
  runtime: Map<string, RuntimeInfo>;
  /** Each pod's prometheus container log; how many times it was read. */
  logs: Map<string, string>;
  logReads: number;
}

const harness = (): Harness => ({
  state: new ControllerState(),
  reloader: new Map(),
  runtime: new Map(),
  logs: new Map(),
  logReads: 0,
});

function run(
  h: Harness,
  objects: readonly KubeObject[],
  request = server(),
  setup?: Parameters<typeof reconcileOnce>[1]["setup"],
): Promise<ReconcileRun> {
  return reconcileOnce(
    (req, ctx) =>
      reconcilePrometheus(req, ctx, {
        metrics: new PrometheusOperatorMetrics(new Registry()),
        state: h.state,
        runtimeInfo: async (ip) => h.runtime.get(ip),
        reloaderState: async (ip) => h.reloader.get(ip),
        podLog: async (_, pod) => {
          h.logReads++;
          return h.logs.get(pod);
        },
      }),
    { kinds: KINDS, objects, request, ...(setup === undefined ? {} : { setup }) },
  );
}

const writeList = (r: ReconcileRun) =>
  r.writes.map(
    (w) => `${w.verb} ${w.kind} ${w.namespace}/${w.name}${w.subresource ? ` ${w.subresource}` : ""}`,
  );

const candidateId = (r: ReconcileRun) =>
  r.get(Secret, "prometheus-main", "monitoring")?.metadata.annotations?.[GENERATION_ANNOTATION] ?? "";

const accepted = (id: string, refused = "", message = ""): ReloaderState => ({
  accepted: id,
  refused,
  message,
});

const degraded = (r: ReconcileRun) =>
  r.get(PrometheusKind, "main", "monitoring")?.status?.conditions?.find((c) => c.type === "Degraded");

/** The objects with the StatefulSet rolled out (both pods ready and up to date), as the kubelet would report. */
const rolledOut = (objects: readonly KubeObject[]): KubeObject[] =>
  objects.map((o) =>
    o.kind === "StatefulSet"
      ? ({
          ...o,
          status: {
            observedGeneration: o.metadata.generation ?? 1,
            replicas: 2,
            readyReplicas: 2,
            updatedReplicas: 2,
          },
        } as KubeObject)
      : o,
  );

/** A server with one rule and two pods on generation `before`, reconciled once. */
async function started(h: Harness, before = "0000000000000000") {
  h.reloader.set("10.0.0.10", accepted(before));
  h.reloader.set("10.0.0.11", accepted(before));
  const first = await run(h, [MONITORING_NAMESPACE, server(), promRule("a"), pod(0), pod(1)]);
  first.expectNoError();
  return first;
}

describe("recording the last-good generation", () => {
  it("not before every pod accepted the candidate; then the candidate's copy, once; the steady state writes nothing", async () => {
    const h = harness();
    const first = await started(h);
    const id = candidateId(first);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(first.get(Secret, "prometheus-main-last-good", "monitoring")).toBeUndefined();

    // Two pods at different generations: not yet; the pods are catching up, so it looks again soon (the
    // StatefulSet itself is rolled out).
    h.reloader.set("10.0.0.10", accepted(id));
    const half = await run(h, rolledOut(first.objects));
    expect(writeList(half)).toEqual(["patch Prometheus monitoring/main status"]); // Progressing: RolledOut
    expect(half.result).toEqual({ requeueAfter: 15_000 });

    h.reloader.set("10.0.0.11", accepted(id));
    const all = await run(h, half.objects);
    all.expectNoError();
    // ... and the rule, in the configuration every pod now runs, is reported Accepted.
    expect(writeList(all).sort()).toEqual([
      "apply Secret monitoring/prometheus-main-last-good",
      "apply Secret monitoring/prometheus-main-last-good-rules-0",
      "patch PrometheusRule monitoring/a status",
    ]);
    // Shards before the Secret that names the generation.
    expect(writeList(all)[0]).toBe("apply Secret monitoring/prometheus-main-last-good-rules-0");
    const candidate = all.get(Secret, "prometheus-main", "monitoring");
    const lastGood = all.get(Secret, "prometheus-main-last-good", "monitoring");
    expect(lastGood?.data).toEqual({
      ...candidate?.data,
      version: Buffer.from(defaultSpec.version).toString("base64"),
    });
    expect(lastGood?.metadata.annotations?.[GENERATION_ANNOTATION]).toBe(id);
    expect(all.get(Secret, "prometheus-main-last-good-rules-0", "monitoring")?.data).toEqual(
      all.get(Secret, "prometheus-main-rules-0", "monitoring")?.data,
    );
    expect(all.events.map((e) => e.reason)).toEqual(["LastGoodRecorded"]);
    expect(all.events[0]?.note).toContain(`configuration generation ${id}`);

    const steady = await run(h, all.objects);
    steady.expectNoWrites();
    expect(steady.events).toEqual([]);
    expect(steady.result).toEqual({ requeueAfter: 300_000 });
  });

  it("not while a pod runs another Prometheus image (mid-upgrade), nor while one does not answer", async () => {
    const h = harness();
    const first = await started(h);
    const id = candidateId(first);
    h.reloader.set("10.0.0.10", accepted(id));
    h.reloader.set("10.0.0.11", accepted(id));
    const old = pod(1, "quay.io/prometheus/prometheus:v3.15.0");
    const upgrading = await run(h, [
      ...first.objects.filter((o) => o.metadata.name !== "prometheus-main-1"),
      old,
    ]);
    expect(upgrading.get(Secret, "prometheus-main-last-good", "monitoring")).toBeUndefined();
    h.reloader.delete("10.0.0.11");
    const silent = await run(h, first.objects);
    expect(silent.get(Secret, "prometheus-main-last-good", "monitoring")).toBeUndefined();
  });

  it("a last-good Secret deleted by hand, or a copy interrupted between two writes, is completed", async () => {
    const h = harness();
    const first = await started(h);
    const id = candidateId(first);
    h.reloader.set("10.0.0.10", accepted(id));
    h.reloader.set("10.0.0.11", accepted(id));
    const recorded = await run(h, first.objects);
    // Deleted by hand: written again at the next reconcile.
    const deleted = await run(
      h,
      recorded.objects.filter((o) => o.metadata.name !== "prometheus-main-last-good"),
    );
    expect(writeList(deleted)).toEqual(["apply Secret monitoring/prometheus-main-last-good"]);
    // The operator died after writing the new shards, before the Secret naming the generation: the Secret still
    // names the older generation (the init container's checksums then fail, and it starts from the candidate).
    const changed = await run(h, [
      ...recorded.objects.filter((o) => o.metadata.name !== "a"),
      promRule("a", "up == 2"),
    ]);
    const id2 = candidateId(changed);
    expect(id2).not.toBe(id);
    h.reloader.set("10.0.0.10", accepted(id2));
    h.reloader.set("10.0.0.11", accepted(id2));
    const interrupted = await run(h, changed.objects, server(), (api) => {
      api.fail({ verb: "apply", kind: Secret, name: "prometheus-main-last-good" }, 500);
    });
    expect(interrupted.error).toBeDefined();
    expect(
      interrupted.get(Secret, "prometheus-main-last-good", "monitoring")?.metadata.annotations?.[
        GENERATION_ANNOTATION
      ],
    ).toBe(id);
    const completed = await run(h, interrupted.objects);
    completed.expectNoError();
    // (The rule, written anew without a status, is reported Accepted now that every pod runs it.)
    expect(writeList(completed)).toEqual([
      "apply Secret monitoring/prometheus-main-last-good",
      "patch PrometheusRule monitoring/a status",
    ]);
    expect(
      completed.get(Secret, "prometheus-main-last-good", "monitoring")?.metadata.annotations?.[
        GENERATION_ANNOTATION
      ],
    ).toBe(id2);
  });

  it("last-good rule shards the generation no longer uses go, after the Secret naming it", async () => {
    const h = harness();
    const first = await started(h);
    const id = candidateId(first);
    h.reloader.set("10.0.0.10", accepted(id));
    h.reloader.set("10.0.0.11", accepted(id));
    const recorded = await run(h, first.objects);
    expect(recorded.get(Secret, "prometheus-main-last-good-rules-0", "monitoring")).toBeDefined();
    // The rule goes: the candidate has no shard any more.
    const removed = await run(
      h,
      recorded.objects.filter((o) => o.metadata.name !== "a"),
    );
    const id2 = candidateId(removed);
    h.reloader.set("10.0.0.10", accepted(id2));
    h.reloader.set("10.0.0.11", accepted(id2));
    const again = await run(h, removed.objects);
    again.expectNoError();
    expect(writeList(again).filter((w) => w.includes("last-good"))).toEqual([
      "apply Secret monitoring/prometheus-main-last-good",
      "delete Secret monitoring/prometheus-main-last-good-rules-0",
    ]);
  });
});

describe("a generation Prometheus refuses", () => {
  it("is Degraded ConfigRefused naming the pod and Prometheus's words, one Event; the last-good stays", async () => {
    const h = harness();
    const first = await started(h);
    const id = candidateId(first);
    h.reloader.set("10.0.0.10", accepted(id));
    h.reloader.set("10.0.0.11", accepted(id));
    const recorded = await run(h, first.objects);
    const changed = await run(h, [
      ...recorded.objects.filter((o) => o.metadata.name !== "a"),
      promRule("a", "up == 3"),
    ]);
    const bad = candidateId(changed);
    const said = `failed to reload config: one or more errors occurred while applying the new configuration (--config.file="/etc/prometheus/config/prometheus.yml")`;
    h.reloader.set("10.0.0.10", accepted(id, bad, said));
    h.reloader.set("10.0.0.11", accepted(bad));
    // Its log says which rule (the reload's answer only sums up).
    h.logs.set(
      "prometheus-main-0",
      [
        'time=2026-12-07T00:04:31.863Z level=INFO source=main.go:1744 msg="Loading configuration file" filename=/etc/prometheus/config/prometheus.yml',
        'time=2026-12-07T00:04:31.864Z level=ERROR source=manager.go:286 msg="loading groups failed" component="rule manager" err="/etc/prometheus/rules/monitoring_a.yaml: 5:15: group \\"a\\": bad"',
        `time=2026-12-07T00:04:31.865Z level=ERROR source=main.go:1442 msg="Error reloading config" err="one or more errors"`,
      ].join("\n"),
    );
    // Its runtimeinfo says the same; ReloadFailed does not repeat it.
    h.runtime.set("10.0.0.10", { reloadConfigSuccess: false, lastConfigTime: "2026-12-01T10:00:00Z" });
    const refused = await run(h, changed.objects);
    refused.expectNoError();
    expect(degraded(refused)).toMatchObject({ status: "True", reason: "ConfigRefused" });
    expect(degraded(refused)?.message).toBe(
      `Prometheus in prometheus-main-0 refused configuration generation ${bad}: ${said}: /etc/prometheus/rules/monitoring_a.yaml: 5:15: group "a": bad; it keeps running generation ${id}, and a restarted or recreated pod starts from the last-good generation ${id}: fix the object the message names (kubectl logs prometheus-main-0 -c prometheus has the details)`,
    );
    expect(refused.events.filter((e) => e.reason === "ConfigRefused")).toHaveLength(1);
    expect(refused.events[0]?.type).toBe("Warning");
    expect(refused.events[0]?.note).toContain(said);
    expect(refused.events.some((e) => e.reason === "ReloadFailed")).toBe(false);
    // Not recorded: one pod refused it.
    expect(
      refused.get(Secret, "prometheus-main-last-good", "monitoring")?.metadata.annotations?.[
        GENERATION_ANNOTATION
      ],
    ).toBe(id);
    // The same refusal again: no write, no new Event, and the log is not read again (it scrolls on: the message
    // stays).
    h.logs.delete("prometheus-main-0");
    const again = await run(h, refused.objects);
    again.expectNoWrites();
    expect(again.events).toEqual([]);
    expect(h.logReads).toBe(1);

    // Fixed: the new candidate is accepted everywhere, recorded, and Degraded clears.
    const fixed = await run(h, [
      ...again.objects.filter((o) => o.metadata.name !== "a"),
      promRule("a", "up == 4"),
    ]);
    const good = candidateId(fixed);
    h.reloader.set("10.0.0.10", accepted(good));
    h.reloader.set("10.0.0.11", accepted(good));
    h.runtime.set("10.0.0.10", { reloadConfigSuccess: true, lastConfigTime: "2026-12-01T10:01:00Z" });
    const healed = await run(h, fixed.objects);
    expect(degraded(healed)).toMatchObject({ status: "False", reason: "AsExpected" });
    expect(
      healed.get(Secret, "prometheus-main-last-good", "monitoring")?.metadata.annotations?.[
        GENERATION_ANNOTATION
      ],
    ).toBe(good);
  });

  it("a refusal of an older candidate is history: not reported once the candidate moved on", async () => {
    const h = harness();
    const first = await started(h);
    const id = candidateId(first);
    h.reloader.set(
      "10.0.0.10",
      accepted("1111111111111111", "2222222222222222", "failed to reload config: x"),
    );
    const r = await run(h, first.objects);
    expect(degraded(r)?.reason).not.toBe("ConfigRefused");
    expect(id).not.toBe("2222222222222222");
  });
});
