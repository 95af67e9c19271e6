// The gates planNext checks before any rule (rules 1, 3 and 5): operator-owned flags in extraArgs/extraEnv,
// a member of another cluster, and a spec.version that is malformed or an unsupported change. Each returns
// Degraded naming the field, or undefined.
import { type EtcdClusterSpec, flagEnvName, OPERATOR_OWNED_FLAGS } from "../api/etcd-cluster.ts";
import { type EtcdVersion, parseEtcdVersion, unsupportedVersionChange } from "./etcd-version.ts";
import type { Observed, Step } from "./types.ts";
import { degraded } from "./view.ts";

/**
 * Degraded when spec.extraArgs or spec.extraEnv sets a flag the operator owns. The API server refuses these
 * (CEL); this catches objects stored before the rule existed, so no pod is ever built with them.
 */
export function ownedFlagOverride(spec: EtcdClusterSpec): Step | undefined {
  const flag = Object.keys(spec.extraArgs ?? {}).find((k) => OPERATOR_OWNED_FLAGS.includes(k));
  if (flag !== undefined) {
    return {
      type: "Degraded",
      reason: "OperatorOwnedFlag",
      field: `spec.extraArgs.${flag}`,
      message: `spec.extraArgs.${flag}: --${flag} is set by the operator and cannot be overridden; remove it`,
    };
  }
  const env = (spec.extraEnv ?? []).find((e) => OPERATOR_OWNED_FLAGS.some((f) => flagEnvName(f) === e.name));
  if (env !== undefined) {
    return {
      type: "Degraded",
      reason: "OperatorOwnedFlag",
      field: "spec.extraEnv",
      message: `spec.extraEnv: ${env.name} sets a flag the operator owns and cannot be overridden; remove it`,
    };
  }
  return undefined;
}

/** Degraded when spec.version is malformed or an unsupported change from `current` (a version string or parsed). */
export function versionGate(
  spec: EtcdClusterSpec,
  current: EtcdVersion | string | undefined,
): Step | undefined {
  const target = parseEtcdVersion(spec.version);
  if (target === undefined) {
    return degraded("InvalidVersion", `spec.version "${spec.version}" is not MAJOR.MINOR.PATCH`);
  }
  const from = typeof current === "string" ? parseEtcdVersion(current) : current;
  const refused = from === undefined ? undefined : unsupportedVersionChange(from, target);
  if (refused !== undefined) return degraded("UnsupportedVersionChange", `spec.version: ${refused}`);
  return undefined;
}

/** Degraded when the cluster or a member answers with another cluster ID than the one recorded. */
export function clusterIDMismatch(observed: Observed): Step | undefined {
  const known = observed.knownClusterID;
  if (known === undefined || !observed.etcd.reachable) return undefined;
  const answers = [
    ...(observed.etcd.clusterID === undefined
      ? []
      : [{ who: "the member list", id: observed.etcd.clusterID }]),
    ...observed.etcd.members
      .filter((m) => m.clusterID !== undefined)
      .map((m) => ({ who: `member ${m.name}`, id: m.clusterID! })),
  ];
  const other = answers.find((a) => a.id !== known);
  if (other === undefined) return undefined;
  return {
    type: "Degraded",
    reason: "ClusterIDMismatch",
    field: "status.clusterID",
    message: `${other.who} answers with cluster ID ${other.id}, but this EtcdCluster is cluster ${known} (status.clusterID): another cluster's member (or a re-bootstrapped one) is behind these pods; nothing is done until an operator resolves it`,
  };
}
