// Table tests of a server's interest (interest.ts): which Services and Pods can change a server's reconcile, and
// which servers a Service or Pod event maps to (with the old and the new object of an update, as core maps them).
import type { KubeObject, ReconcileRequest } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { PodMonitor } from "../api/pod-monitor.ts";
import type { Prometheus } from "../api/prometheus.ts";
import type { ServiceMonitor } from "../api/service-monitor.ts";
import { defaultSpec } from "../desired/config-fixtures.ts";
import type { SelectedMonitors } from "../desired/select.ts";
import { type Interest, interestedServers, interestOf, isInterested } from "./interest.ts";

const server = (name: string, namespace = "monitoring"): Prometheus => ({
  metadata: { name, namespace },
  spec: { ...defaultSpec },
});

const sm = (selector: ServiceMonitor["spec"]["selector"], namespace = "app"): ServiceMonitor => ({
  metadata: { name: "sm", namespace },
  spec: { selector, endpoints: [{ port: "metrics" }] },
});

const pm = (selector: PodMonitor["spec"]["selector"], namespace = "app"): PodMonitor => ({
  metadata: { name: "pm", namespace },
  spec: { selector, podMetricsEndpoints: [{ port: "metrics" }] },
});

const obj = (kind: string, namespace: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: { name: "x", namespace, ...(labels === undefined ? {} : { labels }) },
});

const nothing: Pick<SelectedMonitors, "serviceMonitors" | "podMonitors"> = {
  serviceMonitors: [],
  podMonitors: [],
};

describe("interestOf + isInterested", () => {
  const cases: {
    name: string;
    selection: Pick<SelectedMonitors, "serviceMonitors" | "podMonitors">;
    kind: "Service" | "Pod";
    object: KubeObject;
    want: boolean;
  }[] = [
    {
      name: "the server's own pod",
      selection: nothing,
      kind: "Pod",
      object: obj("Pod", "monitoring", {
        "app.kubernetes.io/name": "prometheus",
        "app.kubernetes.io/instance": "a",
      }),
      want: true,
    },
    {
      name: "another server's pod",
      selection: nothing,
      kind: "Pod",
      object: obj("Pod", "monitoring", {
        "app.kubernetes.io/name": "prometheus",
        "app.kubernetes.io/instance": "b",
      }),
      want: false,
    },
    {
      name: "a pod with the server's labels in another namespace",
      selection: nothing,
      kind: "Pod",
      object: obj("Pod", "app", {
        "app.kubernetes.io/name": "prometheus",
        "app.kubernetes.io/instance": "a",
      }),
      want: false,
    },
    {
      name: "a pod a PodMonitor matches, in its own namespace (the default scope)",
      selection: {
        serviceMonitors: [],
        podMonitors: [{ object: pm({ matchLabels: { app: "web" } }), namespaces: ["app"] }],
      },
      kind: "Pod",
      object: obj("Pod", "app", { app: "web", extra: "1" }),
      want: true,
    },
    {
      name: "a pod with matching labels outside the PodMonitor's namespaces",
      selection: {
        serviceMonitors: [],
        podMonitors: [{ object: pm({ matchLabels: { app: "web" } }), namespaces: ["app"] }],
      },
      kind: "Pod",
      object: obj("Pod", "other", { app: "web" }),
      want: false,
    },
    {
      name: "a pod anywhere, for a PodMonitor with namespaceSelector.any",
      selection: { serviceMonitors: [], podMonitors: [{ object: pm({ matchLabels: { app: "web" } }) }] },
      kind: "Pod",
      object: obj("Pod", "far", { app: "web" }),
      want: true,
    },
    {
      name: "a pod matchExpressions exclude",
      selection: {
        serviceMonitors: [],
        podMonitors: [
          {
            object: pm({ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] }),
            namespaces: ["app"],
          },
        ],
      },
      kind: "Pod",
      object: obj("Pod", "app", { tier: "db" }),
      want: false,
    },
    {
      name: "a pod, when only a ServiceMonitor matches its labels",
      selection: {
        serviceMonitors: [{ object: sm({ matchLabels: { app: "web" } }), namespaces: ["app"] }],
        podMonitors: [],
      },
      kind: "Pod",
      object: obj("Pod", "app", { app: "web" }),
      want: false,
    },
    {
      name: "a Service a ServiceMonitor matches",
      selection: {
        serviceMonitors: [{ object: sm({ matchLabels: { app: "web" } }), namespaces: ["app"] }],
        podMonitors: [],
      },
      kind: "Service",
      object: obj("Service", "app", { app: "web" }),
      want: true,
    },
    {
      name: "a Service with matching labels outside the ServiceMonitor's matchNames",
      selection: {
        serviceMonitors: [{ object: sm({ matchLabels: { app: "web" } }), namespaces: ["a", "b"] }],
        podMonitors: [],
      },
      kind: "Service",
      object: obj("Service", "c", { app: "web" }),
      want: false,
    },
    {
      name: "any Service in scope, for an empty selector",
      selection: { serviceMonitors: [{ object: sm({}), namespaces: ["app"] }], podMonitors: [] },
      kind: "Service",
      object: obj("Service", "app"),
      want: true,
    },
    {
      name: "a Service, when only a PodMonitor matches its labels",
      selection: {
        serviceMonitors: [],
        podMonitors: [{ object: pm({ matchLabels: { app: "web" } }), namespaces: ["app"] }],
      },
      kind: "Service",
      object: obj("Service", "app", { app: "web" }),
      want: false,
    },
    {
      name: "a Service, for a server without monitors (its own Services are owned, mapped by owner reference)",
      selection: nothing,
      kind: "Service",
      object: obj("Service", "monitoring", {
        "app.kubernetes.io/name": "prometheus",
        "app.kubernetes.io/instance": "a",
      }),
      want: false,
    },
  ];
  it.each(cases)("$name: $want", ({ selection, kind, object, want }) => {
    expect(isInterested(interestOf(server("a"), selection), kind, object)).toBe(want);
  });

  it("keeps one scope per distinct selector and namespaces", () => {
    const web = { matchLabels: { app: "web" } };
    const interest = interestOf(server("a"), {
      serviceMonitors: [
        { object: sm(web), namespaces: ["app"] },
        { object: sm(web), namespaces: ["app"] },
        { object: sm(web), namespaces: ["other"] },
      ],
      podMonitors: [{ object: pm(web), namespaces: ["app"] }],
    });
    expect(interest.services).toHaveLength(2);
    expect(interest.pods).toHaveLength(2); // its own pods and the PodMonitor's
  });
});

describe("interestedServers", () => {
  const servers = new Map<string, ReconcileRequest>([
    ["monitoring/a", { namespace: "monitoring", name: "a" }],
    ["monitoring/b", { namespace: "monitoring", name: "b" }],
  ]);
  const interests = new Map<string, Interest>([
    [
      "monitoring/a",
      interestOf(server("a"), {
        serviceMonitors: [],
        podMonitors: [{ object: pm({ matchLabels: { app: "web" } }), namespaces: ["app"] }],
      }),
    ],
    [
      "monitoring/b",
      interestOf(server("b"), {
        serviceMonitors: [{ object: sm({ matchLabels: { app: "api" } }), namespaces: ["app"] }],
        podMonitors: [],
      }),
    ],
  ]);
  const names = (reqs: ReconcileRequest[]) => reqs.map((r) => r.name).sort();
  /** What core enqueues for an update: the union of the map of the new and of the old object. */
  const update = (kind: "Service" | "Pod", old: KubeObject, cur: KubeObject, i = interests) =>
    [
      ...new Set([
        ...names(interestedServers(servers, i, kind, cur)),
        ...names(interestedServers(servers, i, kind, old)),
      ]),
    ].sort();

  it("a pod only server a's PodMonitor matches maps to a only", () => {
    expect(names(interestedServers(servers, interests, "Pod", obj("Pod", "app", { app: "web" })))).toEqual([
      "a",
    ]);
  });
  it("a Service only server b's ServiceMonitor matches maps to b only", () => {
    expect(
      names(interestedServers(servers, interests, "Service", obj("Service", "app", { app: "api" }))),
    ).toEqual(["b"]);
  });
  it("a pod or Service no server selects maps to none", () => {
    expect(interestedServers(servers, interests, "Pod", obj("Pod", "app", { app: "api" }))).toEqual([]);
    expect(interestedServers(servers, interests, "Service", obj("Service", "app", { app: "web" }))).toEqual(
      [],
    );
  });
  it("a pod whose labels moved out of a's selector still maps to a (through the old object)", () => {
    expect(update("Pod", obj("Pod", "app", { app: "web" }), obj("Pod", "app", { app: "gone" }))).toEqual([
      "a",
    ]);
  });
  it("a pod whose labels moved into a's selector maps to a", () => {
    expect(update("Pod", obj("Pod", "app", { app: "gone" }), obj("Pod", "app", { app: "web" }))).toEqual([
      "a",
    ]);
  });
  it("a server's own pod maps to that server", () => {
    const own = obj("Pod", "monitoring", {
      "app.kubernetes.io/name": "prometheus",
      "app.kubernetes.io/instance": "b",
    });
    expect(names(interestedServers(servers, interests, "Pod", own))).toEqual(["b"]);
  });
  it("a server with no recorded interest gets every event", () => {
    const onlyA = new Map([...interests].filter(([k]) => k === "monitoring/a"));
    expect(
      names(interestedServers(servers, onlyA, "Service", obj("Service", "app", { app: "api" }))),
    ).toEqual(["b"]);
    expect(names(interestedServers(servers, onlyA, "Pod", obj("Pod", "far")))).toEqual(["b"]);
    expect(names(interestedServers(servers, new Map(), "Pod", obj("Pod", "far")))).toEqual(["a", "b"]);
  });
});
