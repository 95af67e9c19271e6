// planNext's gates (rules 1, 3 and 5, gates.ts): paused, operator-owned flags, another cluster's member, and
// spec.version changes etcd does not support.
import { describe, expect, it } from "vitest";
import { planNext } from "./plan.ts";
import { type Case, cluster, FRESH, member, NOW, pod, spec, three } from "./test-builders.ts";

const cases: Case[] = [
  // paused
  [
    "paused: nothing, even on a sick cluster",
    spec({ paused: true }),
    cluster(three({ healthy: false })),
    { type: "Wait", reason: "Paused" },
  ],
  [
    "minor downgrade refused",
    spec({ version: "3.5.21" }),
    cluster(three()),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "two-minor jump refused",
    spec({ version: "3.6.15" }),
    cluster(three({ version: "3.4.35" })),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "major change refused",
    spec({ version: "4.0.0" }),
    cluster(three()),
    { type: "Degraded", field: "spec.version" },
  ],
  [
    "jump judged from the lowest member version, mid-upgrade",
    spec({ version: "3.7.0" }),
    cluster([member("demo-a", { leader: true, version: "3.5.21" }), member("demo-b"), member("demo-c")]),
    { type: "Degraded", field: "spec.version" },
  ],
  [
    "malformed version refused",
    spec({ version: "latest" }),
    cluster(three()),
    { type: "Degraded", reason: "InvalidVersion", field: "spec.version" },
  ],
  [
    "a refused version blocks scale-out (no member starts on it)",
    spec({ version: "3.5.21", replicas: 5 }),
    cluster(three()),
    { type: "Degraded", field: "spec.version" },
  ],
  [
    "the member list answers with another cluster ID: Degraded naming both",
    spec(),
    {
      ...cluster(three()),
      etcd: { reachable: true, members: three(), clusterID: "c2" },
      knownClusterID: "c1",
    },
    { type: "Degraded", reason: "ClusterIDMismatch" },
  ],
  [
    "one member answers with another cluster ID: Degraded, nothing removed",
    spec({ replicas: 2 }),
    {
      ...cluster([
        member("demo-a", { leader: true }),
        member("demo-b"),
        member("demo-c", { clusterID: "c9" }),
      ]),
      knownClusterID: "c1",
    },
    { type: "Degraded", reason: "ClusterIDMismatch" },
  ],

  [
    "an operator-owned flag in extraArgs (stored before the CEL rule): Degraded naming the field",
    spec({ extraArgs: { "snapshot-count": "100", "data-dir": "/tmp" } }),
    cluster(three()),
    { type: "Degraded", reason: "OperatorOwnedFlag", field: "spec.extraArgs.data-dir" },
  ],
  [
    "an operator-owned flag as ETCD_* in extraEnv: Degraded",
    spec({ extraEnv: [{ name: "ETCD_INITIAL_CLUSTER", value: "x" }] }),
    cluster(three()),
    { type: "Degraded", reason: "OperatorOwnedFlag", field: "spec.extraEnv" },
  ],

  // upgrades
  [
    "3.5 -> 3.6 refused below 3.5.32 (etcd's upgrade guide)",
    spec({ version: "3.6.15" }),
    cluster(three({ version: "3.5.31" })),
    { type: "Degraded", reason: "UnsupportedVersionChange", field: "spec.version" },
  ],
  [
    "3.5.32 -> 3.6 allowed",
    spec({ version: "3.6.15" }),
    cluster(three({ version: "3.5.32" })),
    { type: "UpgradeMember", name: "demo-b" },
  ],
  [
    "quorum lost with a refused version: no member is restarted on it",
    spec({ version: "3.6.15" }),
    {
      ...cluster([
        member("demo-a", { version: "3.5.20" }),
        member("demo-b", { healthy: false, version: "3.5.20" }),
        member("demo-c", { healthy: false, version: "3.5.20" }),
      ]),
      pods: [pod("demo-a")],
    },
    { type: "Degraded", reason: "UnsupportedVersionChange" },
  ],
];

describe("planNext: gates (gates.ts)", () => {
  it.each(cases)("%s", (_name, s, observed, expected) => {
    expect(planNext(s, observed, NOW, { freshName: FRESH })).toMatchObject(expected);
  });

  it("every step carries a message", () => {
    for (const [, s, observed] of cases) {
      expect(planNext(s, observed, NOW, { freshName: FRESH }).message).not.toBe("");
    }
  });
});
