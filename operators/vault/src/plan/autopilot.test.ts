// Table tests of spec.autopilot in the planner: one write when the live configuration differs (none when it is the
// same, durations compared as Vault keeps them), dead-server cleanup turned off even on a sick cluster, a minQuorum
// below a quorum refused, a 403 reported with the command and never holding back another step.
import { describe, expect, it } from "vitest";
import type { VaultAutopilot } from "../api/vault-cluster.ts";
import type { ObservedAutopilot } from "./autopilot.ts";
import type { Observed, Step } from "./plan.ts";
import { healthy3, observed, plan, pod } from "./plan-fixtures.ts";

/** What a new Vault 1.14 cluster answers. */
const LIVE = {
  cleanup_dead_servers: false,
  dead_server_last_contact_threshold: "24h0m0s",
  last_contact_threshold: "10s",
  max_trailing_logs: 1000,
  min_quorum: 0,
  server_stabilization_time: "10s",
};
const live = (over: Partial<typeof LIVE> = {}): ObservedAutopilot => ({ config: { ...LIVE, ...over } });
const FORBIDDEN: ObservedAutopilot = { forbidden: true, error: "HTTP 403: permission denied" };
const seen = (a: ObservedAutopilot | undefined, pods = healthy3()) => observed(pods, { autopilot: a });
const cleanup: VaultAutopilot = { cleanupDeadServers: true, minQuorum: 3 };

describe("spec.autopilot", () => {
  it.each<[string, Observed, VaultAutopilot | undefined, Partial<Step>]>([
    [
      "absent: Vault's configuration is left alone",
      seen(live({ cleanup_dead_servers: true })),
      undefined,
      { type: "InSync" },
    ],
    ["{}: Vault's defaults, as a new cluster has them: no write", seen(live()), {}, { type: "InSync" }],
    [
      "durations compared as durations (90s is 1m30s) and in whole seconds (1.5s is 1s)",
      seen(live({ server_stabilization_time: "1m30s", last_contact_threshold: "1s" })),
      { serverStabilizationTime: "90s", lastContactThreshold: "1.5s" },
      { type: "InSync" },
    ],
    [
      "cleanup asked: one write through the active pod, the whole configuration",
      seen(live()),
      cleanup,
      {
        type: "ConfigureAutopilot",
        pod: "demo-0",
        config: {
          cleanup_dead_servers: true,
          dead_server_last_contact_threshold: "24h",
          last_contact_threshold: "10s",
          max_trailing_logs: 1000,
          min_quorum: 3,
          server_stabilization_time: "10s",
        },
        message:
          "writing autopilot's configuration through demo-0: cleanupDeadServers false -> true, minQuorum 0 -> 3",
      },
    ],
    [
      "the configuration written: in sync",
      seen(live({ cleanup_dead_servers: true, min_quorum: 3 })),
      cleanup,
      { type: "InSync" },
    ],
    [
      "a changed threshold",
      seen(live({ cleanup_dead_servers: true, min_quorum: 3 })),
      { ...cleanup, deadServerLastContactThreshold: "1h" },
      {
        type: "ConfigureAutopilot",
        message:
          "writing autopilot's configuration through demo-0: deadServerLastContactThreshold 24h0m0s -> 1h",
      },
    ],
    [
      "minQuorum left unset with cleanup off: Vault's min_quorum is not compared",
      seen(live({ min_quorum: 2 })),
      { maxTrailingLogs: 1000 },
      { type: "InSync" },
    ],
  ])("%s", (_, o, autopilot, step) => {
    expect(plan(o, autopilot === undefined ? {} : { autopilot })).toMatchObject(step);
  });

  it.each<[string, VaultAutopilot, number, Partial<Step>]>([
    ["cleanup without minQuorum", { cleanupDeadServers: true }, 3, { reason: "AutopilotMinQuorum" }],
    [
      "minQuorum 2 (Vault wants 3)",
      { cleanupDeadServers: true, minQuorum: 2 },
      3,
      { reason: "AutopilotMinQuorum" },
    ],
    [
      "minQuorum above replicas",
      { cleanupDeadServers: true, minQuorum: 5 },
      3,
      { reason: "AutopilotMinQuorum" },
    ],
    ["minQuorum above replicas, cleanup off", { minQuorum: 5 }, 3, { reason: "AutopilotMinQuorum" }],
  ])(
    "a refused spec: %s -> Degraded naming spec.autopilot.minQuorum, nothing written",
    (_, autopilot, replicas, step) => {
      const pods = Array.from({ length: replicas }, (_, i) => pod(i, i === 0 ? "active" : "standby"));
      const got = plan(seen(live(), pods), { replicas, autopilot });
      expect(got).toMatchObject({ type: "Degraded", ...step });
      expect(got.message).toContain("spec.autopilot.minQuorum");
    },
  );

  it("five replicas with minQuorum 3 (a quorum of 5): written", () => {
    const pods = [pod(0, "active"), ...[1, 2, 3, 4].map((i) => pod(i, "standby"))];
    expect(plan(seen(live(), pods), { replicas: 5, autopilot: cleanup })).toMatchObject({
      type: "ConfigureAutopilot",
      config: { cleanup_dead_servers: true, min_quorum: 3 },
    });
  });

  it("a sick pod: turning cleanup off goes first, and only that field", () => {
    const sick = [pod(0, "active"), pod(1, "standby"), pod(2, "standby", { ready: false })];
    const o = seen(live({ cleanup_dead_servers: true, min_quorum: 3 }), sick);
    expect(
      plan(o, { autopilot: { cleanupDeadServers: false, deadServerLastContactThreshold: "48h" } }),
    ).toEqual({
      type: "ConfigureAutopilot",
      pod: "demo-0",
      config: { cleanup_dead_servers: false },
      message: expect.stringContaining("the rest of spec.autopilot waits for a healthy cluster"),
    });
    // Any other change waits for the pod.
    expect(plan(o, { autopilot: { ...cleanup, deadServerLastContactThreshold: "48h" } })).toMatchObject({
      type: "Wait",
      reason: "PodNotReady",
    });
    // Once off, the rest waits too.
    expect(
      plan(seen(live(), sick), {
        autopilot: { cleanupDeadServers: false, deadServerLastContactThreshold: "48h" },
      }),
    ).toMatchObject({ type: "Wait", reason: "PodNotReady" });
  });

  it("no active node: never written", () => {
    const o = seen(live({ cleanup_dead_servers: true, min_quorum: 3 }), [
      pod(0, "standby"),
      pod(1, "standby"),
      pod(2, "down"),
    ]);
    expect(plan(o, { autopilot: { cleanupDeadServers: false } })).toMatchObject({
      type: "Wait",
      reason: "ElectingLeader",
    });
  });

  it("a 403 (the policy of an older operator): Degraded with the command that adds the path", () => {
    const step = plan(seen(FORBIDDEN), { autopilot: cleanup });
    expect(step).toMatchObject({ type: "Degraded", reason: "AutopilotForbidden" });
    expect(step.message).toContain(
      "capstan-vault-operator does not allow sys/storage/raft/autopilot/configuration",
    );
    expect(step.message).toContain(
      `{ vault policy read capstan-vault-operator; printf '\\npath "sys/storage/raft/autopilot/configuration" {\\n  capabilities = ["read", "update"]\\n}\\n'; } | vault policy write capstan-vault-operator -`,
    );
  });

  const refused: VaultAutopilot = { cleanupDeadServers: true, minQuorum: 2 };
  it.each<[string, Observed, VaultAutopilot, Partial<Step>]>([
    [
      "a 403, a scale-out",
      seen(FORBIDDEN, [pod(0, "active"), pod(1, "standby")]),
      cleanup,
      { type: "CreatePod", pod: "demo-2" },
    ],
    [
      "a 403, an upgrade",
      seen(FORBIDDEN, [
        pod(0, "active"),
        pod(1, "standby"),
        pod(2, "standby", { image: "hashicorp/vault:1.14.6" }),
      ]),
      cleanup,
      { type: "UpgradePod", pod: "demo-2" },
    ],
    [
      "a refused minQuorum, a scale-out",
      seen(live(), [pod(0, "active"), pod(1, "standby")]),
      refused,
      { type: "CreatePod", pod: "demo-2" },
    ],
  ])("autopilot never holds back another step: %s", (_, o, autopilot, step) => {
    expect(plan(o, { autopilot })).toMatchObject(step);
  });

  it("written before a storage report (that waits on a human), reported after it", () => {
    const o = observed(healthy3(), {
      autopilot: live(),
      claimSizes: { "data-demo-0": "512Mi", "data-demo-1": "1Gi", "data-demo-2": "1Gi" },
    });
    expect(plan(o, { autopilot: cleanup })).toMatchObject({ type: "ConfigureAutopilot" });
    expect(plan({ ...o, autopilot: FORBIDDEN }, { autopilot: cleanup })).toMatchObject({
      reason: "StorageNotExpanded",
    });
  });

  it("an unreadable configuration: Wait naming the error, nothing written", () => {
    expect(plan(seen({ error: "HTTP 500: boom" }), { autopilot: cleanup })).toMatchObject({
      type: "Wait",
      reason: "AutopilotUnknown",
      message: expect.stringContaining("HTTP 500: boom"),
    });
  });
});
