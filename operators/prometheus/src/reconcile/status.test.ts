// Table tests of the Prometheus conditions: availability and rollout from the StatefulSet, Degraded from the first
// problem, Reconciled from the configuration (or paused); and that the same input gives the same status.
import type { Condition, PodObject, StatefulSetObject } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { Prometheus, PrometheusSpec } from "../api/prometheus.ts";
import { conditionsOf, podProblems, type StatusInput, statusOf } from "./status.ts";

const NOW = new Date("2026-12-01T12:00:00Z");
const server = (spec: Partial<PrometheusSpec> = {}): Prometheus => ({
  metadata: { name: "main", namespace: "monitoring", generation: 3 },
  spec: {
    replicas: 2,
    version: "3.16.0",
    repository: "r",
    scrapeInterval: "30s",
    evaluationInterval: "30s",
    retention: "15d",
    storage: { size: "1Gi" },
    ...spec,
  },
});
const sts = (ready: number, updated = ready, replicas = ready, observed = 1): StatefulSetObject => ({
  metadata: { name: "prometheus-main", generation: 1 },
  status: { replicas, readyReplicas: ready, updatedReplicas: updated, observedGeneration: observed },
});
const selected = { serviceMonitors: ["a/b"], podMonitors: [], rules: ["a/r"] };
const pick = (cs: Condition[]) => Object.fromEntries(cs.map((c) => [c.type, `${c.status} ${c.reason}`]));

describe("conditionsOf", () => {
  it.each<[string, Partial<PrometheusSpec>, StatusInput, Record<string, string>]>([
    [
      "all pods ready and up to date",
      {},
      { statefulSet: sts(2), selected, problems: [] },
      {
        Available: "True PodsReady",
        Progressing: "False RolledOut",
        Degraded: "False AsExpected",
        Reconciled: "True ConfigurationGenerated",
      },
    ],
    [
      "no StatefulSet yet",
      {},
      { selected, problems: [] },
      {
        Available: "False NoPodReady",
        Progressing: "True RollingOut",
        Degraded: "False AsExpected",
        Reconciled: "True ConfigurationGenerated",
      },
    ],
    [
      "one of two ready",
      {},
      { statefulSet: sts(1, 2, 2), selected, problems: [] },
      {
        Available: "True PodsReady",
        Progressing: "True RollingOut",
        Degraded: "False AsExpected",
        Reconciled: "True ConfigurationGenerated",
      },
    ],
    [
      "all ready, one still on the old revision",
      {},
      { statefulSet: sts(2, 1, 2), selected, problems: [] },
      {
        Available: "True PodsReady",
        Progressing: "True RollingOut",
        Degraded: "False AsExpected",
        Reconciled: "True ConfigurationGenerated",
      },
    ],
    [
      "the StatefulSet controller has not seen the last change",
      {},
      { statefulSet: { ...sts(2), metadata: { name: "x", generation: 2 } }, selected, problems: [] },
      {
        Available: "True PodsReady",
        Progressing: "True RollingOut",
        Degraded: "False AsExpected",
        Reconciled: "True ConfigurationGenerated",
      },
    ],
    [
      "scaled to zero",
      { replicas: 0 },
      { statefulSet: sts(0), selected, problems: [] },
      {
        Available: "False ScaledToZero",
        Progressing: "False RolledOut",
        Degraded: "False AsExpected",
        Reconciled: "True ConfigurationGenerated",
      },
    ],
    [
      "a malformed selector",
      {},
      {
        statefulSet: sts(2),
        problems: [
          { reason: "InvalidSelector", message: "m" },
          { reason: "ReloadFailed", message: "n" },
        ],
        configProblem: { reason: "InvalidSelector", message: "m" },
      },
      {
        Available: "True PodsReady",
        Progressing: "False RolledOut",
        Degraded: "True InvalidSelector",
        Reconciled: "False InvalidSelector",
      },
    ],
    [
      "paused",
      { paused: true },
      { statefulSet: sts(1, 1, 1), problems: [] },
      {
        Available: "True PodsReady",
        Progressing: "False Paused",
        Degraded: "False AsExpected",
        Reconciled: "False Paused",
      },
    ],
  ])("%s", (_name, spec, input, want) => {
    expect(pick(conditionsOf(server(spec), input, NOW))).toEqual(want);
  });

  it("says how many selected objects were not accepted", () => {
    const c = conditionsOf(server(), { statefulSet: sts(2), selected, notAccepted: 2, problems: [] }, NOW);
    expect(c.find((x) => x.type === "Reconciled")?.message).toBe(
      "1 ServiceMonitor, 0 PodMonitors and 1 PrometheusRule in the configuration; 2 selected objects not accepted: see their status.bindings or Events",
    );
  });
});

describe("statusOf", () => {
  it("the same input twice gives the same status (no write in a steady state)", () => {
    const input: StatusInput = { statefulSet: sts(2), selected, configHash: "abc", problems: [] };
    const first = statusOf(server(), input, NOW);
    const p = { ...server(), status: first };
    expect(statusOf(p, input, new Date("2026-12-01T13:00:00Z"))).toEqual(first);
    expect(first).toMatchObject({
      observedGeneration: 3,
      replicas: 2,
      readyReplicas: 2,
      selector: "app.kubernetes.io/name=prometheus,app.kubernetes.io/instance=main",
      selected,
      configHash: "abc",
    });
  });

  it("keeps the previous selection and hash when the configuration could not be computed", () => {
    const p = { ...server(), status: { selected, configHash: "old" } };
    const s = statusOf(p, { problems: [{ reason: "InvalidSelector", message: "m" }] }, NOW);
    expect(s.selected).toEqual(selected);
    expect(s.configHash).toBe("old");
  });
});

describe("podProblems", () => {
  const pod = (name: string, status: NonNullable<PodObject["status"]>, deleting = false): PodObject => ({
    metadata: { name, ...(deleting ? { deletionTimestamp: "2026-12-01T12:00:00Z" } : {}) },
    status,
  });
  const waiting = (container: string, image: string, reason: string, message = "") => ({
    name: container,
    image,
    imageID: "",
    ready: false,
    restartCount: 0,
    state: { waiting: { reason, message } },
  });
  const reasons = (pods: PodObject[]) => podProblems(pods).map((p) => p.reason);

  it.each([
    ["running and ready", [pod("p-0", { phase: "Running", containerStatuses: [] })], []],
    [
      "ErrImagePull",
      [pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v9", "ErrImagePull")] })],
      ["ImagePullFailed"],
    ],
    [
      "ImagePullBackOff",
      [pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v9", "ImagePullBackOff")] })],
      ["ImagePullFailed"],
    ],
    [
      "an init container's image",
      [pod("p-0", { initContainerStatuses: [waiting("init", "busybox:x", "ErrImagePull")] })],
      ["ImagePullFailed"],
    ],
    [
      "unschedulable",
      [
        pod("p-0", {
          phase: "Pending",
          conditions: [
            {
              type: "PodScheduled",
              status: "False",
              reason: "Unschedulable",
              message: "0/1 nodes are available",
            },
          ],
        }),
      ],
      ["PodUnschedulable"],
    ],
    [
      "not yet scheduled (no reason)",
      [pod("p-0", { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False" }] })],
      [],
    ],
    [
      "crash-looping",
      [pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v3", "CrashLoopBackOff")] })],
      ["PodCrashLooping"],
    ],
    [
      "ContainerCreating is normal",
      [pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v3", "ContainerCreating")] })],
      [],
    ],
    [
      "a pod being deleted",
      [pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v9", "ErrImagePull")] }, true)],
      [],
    ],
    [
      "two pods: each, in name order",
      [
        pod("p-1", { containerStatuses: [waiting("prometheus", "q/p:v3", "CrashLoopBackOff")] }),
        pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v9", "ImagePullBackOff")] }),
      ],
      ["ImagePullFailed", "PodCrashLooping"],
    ],
  ] as [string, PodObject[], string[]][])("%s", (_, pods, want) => {
    expect(reasons(pods)).toEqual(want);
  });

  it("names the pod, the image and what to check; the kubelet's changing text stays out", () => {
    const a = podProblems([
      pod("p-0", { containerStatuses: [waiting("prometheus", "q/p:v9", "ErrImagePull", "rpc error 1")] }),
    ]);
    const b = podProblems([
      pod("p-0", {
        containerStatuses: [waiting("prometheus", "q/p:v9", "ImagePullBackOff", "Back-off pulling")],
      }),
    ]);
    expect(a).toEqual(b);
    expect(a[0]?.message).toContain("pod p-0 cannot pull image q/p:v9");
    expect(a[0]?.message).toContain("spec.version");
  });
});
