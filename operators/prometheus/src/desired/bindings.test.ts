// The monitor status (status.bindings[]) and the server's status.selected built from a selection.
import { describe, expect, it } from "vitest";
import type { ConfigResourceStatus, WorkloadBinding } from "../api/monitoring-common.ts";
import type { Prometheus } from "../api/prometheus.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import {
  acceptedVerdict,
  bindingFor,
  type LoadState,
  selectedStatus,
  withBinding,
  withoutBinding,
} from "./bindings.ts";
import { type FeedbackReason, IN_CONFIG_REASONS, type MonitorFeedback } from "./select.ts";

const prom = { metadata: { name: "main", namespace: "monitoring" }, spec: {} } as Prometheus;
const T0 = "2026-12-01T10:00:00Z";
const T1 = "2026-12-01T11:00:00Z";

const feedback = (inConfig: boolean, reason: MonitorFeedback["reason"]): MonitorFeedback => ({
  kind: "ServiceMonitor",
  namespace: "app",
  name: "web",
  generation: 4,
  inConfig,
  reason,
  message: `m-${reason}`,
});
const LOADED: LoadState = { loaded: true };

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
    const b = bindingFor(
      prom,
      feedback(accepted, accepted ? "Accepted" : "InvalidRegex"),
      previous,
      LOADED,
      T1,
    );
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

/** Every reason a selected object can get (select.ts), in the configuration or not. */
const ALL_REASONS: FeedbackReason[] = [
  "Accepted",
  "NoTargets",
  "PortNotFound",
  "InvalidSelector",
  "NoEndpoints",
  "InvalidRegex",
  "InvalidRelabeling",
  "InvalidDuration",
  "InvalidScrapeTimeout",
  "InvalidAuthorization",
  "InvalidTLS",
  "UnsupportedField",
  "SecretNotFound",
  "InvalidRules",
  "RuleFileTooLarge",
];
const PENDING: LoadState = {
  loaded: false,
  reason: "ReloadPending",
  message: "in configuration generation 0123456789abcdef; waiting for every pod to load it",
};
const REFUSED: LoadState = {
  loaded: false,
  reason: "ConfigRefused",
  message: "Prometheus in prometheus-main-0 refused configuration generation 0123456789abcdef",
};
const accepted = (status: "True" | "False" | "Unknown", observedGeneration?: number) => ({
  type: "Accepted" as const,
  status,
  lastTransitionTime: T0,
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
});

describe("acceptedVerdict: Accepted means in the configuration, reported once the pods run it", () => {
  // Every reason, with the pods running the configuration (loaded), still loading it, or having refused it.
  const rows = ALL_REASONS.flatMap((reason) =>
    [
      ["loaded", LOADED],
      ["pending", PENDING],
      ["refused", REFUSED],
    ].map(([load, state]) => [reason, load, state] as [FeedbackReason, string, LoadState]),
  );
  it.each(rows)("%s, configuration %s", (reason, _load, state) => {
    const inConfig = IN_CONFIG_REASONS.includes(reason);
    const v = acceptedVerdict(feedback(inConfig, reason), undefined, state);
    if (!inConfig) {
      // Left out of the configuration: refused at once, whatever the pods do.
      expect(v).toEqual({ status: "False", reason, message: `m-${reason}` });
    } else if (state.loaded) {
      // In the configuration the pods run: Accepted, the diagnostic (NoTargets, PortNotFound) as its reason.
      expect(v).toEqual({ status: "True", reason, message: `m-${reason}` });
    } else {
      // In a configuration the pods do not run (yet): not reported accepted before the reload.
      expect(v).toEqual({
        status: "Unknown",
        reason: state.reason,
        message: `${state.message}; m-${reason}`,
      });
    }
  });

  it("the three reasons of objects in the configuration are exactly Accepted and its diagnostics", () => {
    expect([...IN_CONFIG_REASONS].sort()).toEqual(["Accepted", "NoTargets", "PortNotFound"]);
  });

  it.each<[string, ReturnType<typeof accepted> | undefined, LoadState, string]>([
    [
      "True at this generation stays True while a new configuration loads",
      accepted("True", 4),
      PENDING,
      "True",
    ],
    ["... and while the pods refuse a newer one", accepted("True", 4), REFUSED, "True"],
    ["True at an older generation waits for the reload", accepted("True", 3), PENDING, "Unknown"],
    ["False before (left out) waits for the reload", accepted("False", 4), PENDING, "Unknown"],
    ["Unknown before stays Unknown until the reload", accepted("Unknown", 4), PENDING, "Unknown"],
    ["Unknown before becomes True once loaded", accepted("Unknown", 4), LOADED, "True"],
  ])("%s", (_name, previous, state, status) => {
    expect(acceptedVerdict(feedback(true, "NoTargets"), previous, state).status).toBe(status);
  });

  it("bindingFor moves the transition time only when the status changes", () => {
    const pending = bindingFor(prom, feedback(true, "Accepted"), undefined, PENDING, T0);
    expect(pending.conditions?.[0]).toMatchObject({ status: "Unknown", reason: "ReloadPending" });
    const loaded = bindingFor(prom, feedback(true, "Accepted"), { bindings: [pending] }, LOADED, T1);
    expect(loaded.conditions?.[0]).toMatchObject({
      status: "True",
      reason: "Accepted",
      lastTransitionTime: T1,
      observedGeneration: 4,
    });
    const diagnosed = bindingFor(prom, feedback(true, "NoTargets"), { bindings: [loaded] }, PENDING, T0);
    expect(diagnosed.conditions?.[0]).toMatchObject({
      status: "True",
      reason: "NoTargets",
      lastTransitionTime: T1,
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
