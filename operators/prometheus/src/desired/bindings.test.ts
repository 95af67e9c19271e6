// The monitor status (status.bindings[]) and the server's status.selected built from a selection.
import { describe, expect, it } from "vitest";
import type { ConfigResourceStatus, WorkloadBinding } from "../api/monitoring-common.ts";
import type { Prometheus } from "../api/prometheus.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import { bindingFor, selectedStatus, withBinding, withoutBinding } from "./bindings.ts";
import type { MonitorFeedback } from "./select.ts";

const prom = { metadata: { name: "main", namespace: "monitoring" }, spec: {} } as Prometheus;
const T0 = "2026-12-01T10:00:00Z";
const T1 = "2026-12-01T11:00:00Z";

const feedback = (accepted: boolean, reason: MonitorFeedback["reason"]): MonitorFeedback => ({
  kind: "ServiceMonitor",
  namespace: "app",
  name: "web",
  generation: 4,
  accepted,
  inConfig: accepted,
  reason,
  message: `m-${reason}`,
});

const ours = (status: "True" | "False", since: string): WorkloadBinding => ({
  group: "monitoring.capstan.dev",
  resource: "prometheuses",
  name: "main",
  namespace: "monitoring",
  conditions: [{ type: "Accepted", status, lastTransitionTime: since, reason: "x", message: "x" }],
});
const theirs: WorkloadBinding = {
  group: "monitoring.coreos.com",
  resource: "prometheuses",
  name: "main",
  namespace: "monitoring",
  conditions: [{ type: "Accepted", status: "True", lastTransitionTime: T0 }],
};

describe("bindingFor", () => {
  it.each<[string, ConfigResourceStatus | undefined, boolean, string]>([
    ["first binding", undefined, true, T1],
    ["status unchanged keeps the transition time", { bindings: [ours("True", T0)] }, true, T0],
    ["status changed moves it", { bindings: [ours("True", T0)] }, false, T1],
    ["another server's binding does not count", { bindings: [{ ...theirs }] }, true, T1],
  ])("%s", (_name, previous, accepted, since) => {
    const b = bindingFor(prom, feedback(accepted, accepted ? "Accepted" : "InvalidRegex"), previous, T1);
    expect(b).toEqual({
      group: "monitoring.capstan.dev",
      resource: "prometheuses",
      name: "main",
      namespace: "monitoring",
      conditions: [
        {
          type: "Accepted",
          status: accepted ? "True" : "False",
          lastTransitionTime: since,
          reason: accepted ? "Accepted" : "InvalidRegex",
          message: accepted ? "m-Accepted" : "m-InvalidRegex",
          observedGeneration: 4,
        },
      ],
    });
  });
});

describe("withBinding / withoutBinding", () => {
  it("replaces this server's entry in place and keeps the others", () => {
    const next = ours("False", T1);
    expect(withBinding({ bindings: [theirs, ours("True", T0)] }, next).bindings).toEqual([theirs, next]);
  });
  it("appends a new entry", () => {
    expect(withBinding({ bindings: [theirs] }, ours("True", T0)).bindings).toEqual([
      theirs,
      ours("True", T0),
    ]);
    expect(withBinding(undefined, ours("True", T0)).bindings).toEqual([ours("True", T0)]);
  });
  it("removes only this server's entry", () => {
    expect(withoutBinding({ bindings: [ours("True", T0), theirs] }, prom).bindings).toEqual([theirs]);
    expect(withoutBinding(undefined, prom).bindings).toEqual([]);
  });
});

describe("selectedStatus", () => {
  const sm = (namespace: string, name: string) => ({
    object: { metadata: { namespace, name } } as ServiceMonitor,
  });
  it("lists what the configuration holds as sorted namespace/name", () => {
    expect(
      selectedStatus({
        serviceMonitors: [sm("b", "x"), sm("a", "y")],
        podMonitors: [],
        rules: [{ metadata: { namespace: "m", name: "r" }, spec: {} }],
      }),
    ).toEqual({ serviceMonitors: ["a/y", "b/x"], podMonitors: [], rules: ["m/r"] });
  });
});
