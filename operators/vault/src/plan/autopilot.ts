// spec.autopilot against the configuration the active node reports: the one write that makes them equal (never a
// write when they are), and what to report when it cannot be made (a spec whose minQuorum could let autopilot's
// dead-server cleanup shrink the voters below a quorum of the cluster; a policy of an older operator that lacks the
// path). Pure: the caller observes and writes.
import { parseGoDuration, quorum } from "@capstan/core";
import {
  AUTOPILOT_DEFAULTS,
  AUTOPILOT_MIN_QUORUM_FLOOR,
  type VaultAutopilot,
  type VaultClusterSpec,
} from "../api/vault-cluster.ts";
import { AUTOPILOT_CONFIGURATION_PATH, addToPolicyCommand, OPERATOR_POLICY_NAME } from "../vault/policy.ts";
import type { AutopilotConfig, ObservedAutopilot, Step } from "./types.ts";

export type { AutopilotConfig, ObservedAutopilot } from "./types.ts";

/** The spec's names of Vault's fields, for messages. */
const SPEC_NAMES: Record<keyof AutopilotConfig, keyof VaultAutopilot> = {
  cleanup_dead_servers: "cleanupDeadServers",
  dead_server_last_contact_threshold: "deadServerLastContactThreshold",
  last_contact_threshold: "lastContactThreshold",
  max_trailing_logs: "maxTrailingLogs",
  min_quorum: "minQuorum",
  server_stabilization_time: "serverStabilizationTime",
};

const DURATIONS = new Set<keyof AutopilotConfig>([
  "dead_server_last_contact_threshold",
  "last_contact_threshold",
  "server_stabilization_time",
]);

/** spec.autopilot with Vault's defaults for the fields it leaves unset. */
export function desiredAutopilot(a: VaultAutopilot): AutopilotConfig {
  return {
    cleanup_dead_servers: a.cleanupDeadServers ?? AUTOPILOT_DEFAULTS.cleanupDeadServers,
    dead_server_last_contact_threshold:
      a.deadServerLastContactThreshold ?? AUTOPILOT_DEFAULTS.deadServerLastContactThreshold,
    last_contact_threshold: a.lastContactThreshold ?? AUTOPILOT_DEFAULTS.lastContactThreshold,
    max_trailing_logs: a.maxTrailingLogs ?? AUTOPILOT_DEFAULTS.maxTrailingLogs,
    ...(a.minQuorum === undefined ? {} : { min_quorum: a.minQuorum }),
    server_stabilization_time: a.serverStabilizationTime ?? AUTOPILOT_DEFAULTS.serverStabilizationTime,
  };
}

/** Whole seconds of a Go duration, as Vault keeps it (it drops the fraction), or undefined when unreadable. */
function seconds(text: string): number | undefined {
  try {
    return Math.floor(parseGoDuration(text) / 1000);
  } catch {
    return undefined;
  }
}

/** The fields of `want` the live configuration differs on, as "<spec field> <live> -> <wanted>". */
export function autopilotChanges(want: AutopilotConfig, live: AutopilotConfig): string[] {
  const changes: string[] = [];
  for (const key of Object.keys(SPEC_NAMES) as (keyof AutopilotConfig)[]) {
    const w = want[key];
    if (w === undefined) continue;
    const l = live[key];
    const same = DURATIONS.has(key) ? seconds(String(w)) === seconds(String(l)) : w === l;
    if (!same) changes.push(`${SPEC_NAMES[key]} ${String(l)} -> ${String(w)}`);
  }
  return changes;
}

/**
 * Why spec.autopilot cannot be applied (the CEL rules' meaning, for objects older than them), or undefined. With
 * dead-server cleanup on, minQuorum must be set, at least 3 (Vault's rule) and at least a quorum of spec.replicas:
 * autopilot then never leaves fewer voters than a majority of the cluster asked for. Never above spec.replicas.
 */
export function autopilotSpecProblem(
  spec: Pick<VaultClusterSpec, "replicas" | "autopilot">,
): string | undefined {
  const a = spec.autopilot;
  if (a === undefined) return undefined;
  const least = Math.max(AUTOPILOT_MIN_QUORUM_FLOOR, quorum(spec.replicas));
  if (a.cleanupDeadServers === true && (a.minQuorum === undefined || a.minQuorum < least)) {
    return `spec.autopilot.minQuorum is ${a.minQuorum ?? "unset"} with spec.autopilot.cleanupDeadServers on: set it to at least ${least} (Vault requires ${AUTOPILOT_MIN_QUORUM_FLOOR}, and a quorum of ${spec.replicas} replicas is ${quorum(spec.replicas)}), so the cleanup never leaves fewer voters than a majority of the cluster`;
  }
  if (a.minQuorum !== undefined && a.minQuorum > spec.replicas) {
    return `spec.autopilot.minQuorum ${a.minQuorum} is above spec.replicas ${spec.replicas}: the cleanup could never run; lower it to at most ${spec.replicas}`;
  }
  return undefined;
}

/** The Degraded message when Vault answers 403 on autopilot's configuration. */
export function autopilotForbiddenMessage(error: string): string {
  return `the operator's Vault policy ${OPERATOR_POLICY_NAME} does not allow ${AUTOPILOT_CONFIGURATION_PATH} (Vault answered: ${error}): the policy was written by an older operator, so spec.autopilot is not applied and the operator does not widen its own policy. Add the path with the vault CLI and a root or admin token (VAULT_ADDR, VAULT_TOKEN set): ${addToPolicyCommand(AUTOPILOT_CONFIGURATION_PATH, ["read", "update"])}`;
}

/**
 * The write that brings the live configuration to spec.autopilot through the active node `via`, or undefined
 * (in sync, not asked, unreadable, or a refused spec). `disableOnly`: only a write that turns dead-server cleanup
 * off, and only that field (the planner asks so before it waits for a sick pod: what stops autopilot removing
 * servers is never held back by the sickness it would act on; any other change waits for a healthy cluster).
 */
export function autopilotWriteStep(
  spec: Pick<VaultClusterSpec, "replicas" | "autopilot">,
  observed: ObservedAutopilot | undefined,
  via: string,
  disableOnly = false,
): Step | undefined {
  if (spec.autopilot === undefined || observed === undefined || !("config" in observed)) return undefined;
  if (autopilotSpecProblem(spec) !== undefined) return undefined;
  const want = desiredAutopilot(spec.autopilot);
  const live = observed.config;
  if (disableOnly) {
    if (!live.cleanup_dead_servers || want.cleanup_dead_servers) return undefined;
    return {
      type: "ConfigureAutopilot",
      pod: via,
      config: { cleanup_dead_servers: false },
      message: `turning autopilot's dead-server cleanup off through ${via} (spec.autopilot.cleanupDeadServers is false); the rest of spec.autopilot waits for a healthy cluster`,
    };
  }
  const changes = autopilotChanges(want, live);
  if (changes.length === 0) return undefined;
  return {
    type: "ConfigureAutopilot",
    pod: via,
    config: want,
    message: `writing autopilot's configuration through ${via}: ${changes.join(", ")}`,
  };
}

/** What to report instead of InSync about spec.autopilot (a refused spec, a 403, an unreadable configuration). */
export function autopilotReportStep(
  spec: Pick<VaultClusterSpec, "replicas" | "autopilot">,
  observed: ObservedAutopilot | undefined,
): Step | undefined {
  if (spec.autopilot === undefined) return undefined;
  const problem = autopilotSpecProblem(spec);
  if (problem !== undefined) return { type: "Degraded", reason: "AutopilotMinQuorum", message: problem };
  if (observed === undefined || "config" in observed) return undefined;
  if ("forbidden" in observed) {
    return {
      type: "Degraded",
      reason: "AutopilotForbidden",
      message: autopilotForbiddenMessage(observed.error),
    };
  }
  return {
    type: "Wait",
    reason: "AutopilotUnknown",
    message: `autopilot's configuration could not be read, so spec.autopilot is not compared: ${observed.error}`,
  };
}
