// The gates planNext checks before any rule (rules 1 to 3): spec.paused, an operator-owned key in spec.config, the
// listener certificate not in place, and a pod of another Vault cluster. Each returns a Wait or a Degraded naming
// what to fix, or undefined. Pure.
import { OPERATOR_OWNED_CONFIG_KEYS, type VaultClusterSpec } from "../api/vault-cluster.ts";
import type { Observed, Step } from "./types.ts";
import { degraded, type View, wait } from "./view.ts";

/**
 * Rule 1: spec.paused -> Wait; spec.config with an operator-owned key (an object older than the CEL rule) ->
 * Degraded naming the keys.
 */
export function specGate(spec: VaultClusterSpec): Step | undefined {
  if (spec.paused === true) {
    return wait(
      "Paused",
      "spec.paused is true: no init, unseal, membership change or pod update until it is unset",
    );
  }
  const owned = Object.keys(spec.config ?? {}).filter((k) => OPERATOR_OWNED_CONFIG_KEYS.includes(k));
  if (owned.length > 0) {
    return degraded(
      "ConfigKeyOwned",
      `spec.config sets ${owned.join(", ")}, which the operator owns: remove ${owned.length === 1 ? "it" : "them"} from spec.config`,
    );
  }
  return undefined;
}

/** Rule 2: the listener certificate is not in place -> Wait, or Degraded when the user's Secret is missing. */
export function tlsGate(tls: Observed["tls"]): Step | undefined {
  if (tls.ready) return undefined;
  return tls.reason === "TLSSecretMissing"
    ? degraded(tls.reason, tls.message)
    : wait(tls.reason, tls.message);
}

/** Rule 3: a pod answers with another cluster_id than the recorded one -> Degraded naming both ids. */
export function clusterIDMismatch(v: View): Step | undefined {
  const { known } = v;
  const strangers = v.live.filter(
    (p) =>
      p.vault.reachable &&
      p.vault.clusterID !== undefined &&
      known !== undefined &&
      p.vault.clusterID !== known,
  );
  if (strangers.length === 0) return undefined;
  const ids = strangers.map((p) => `${p.name} answers ${p.vault.reachable ? p.vault.clusterID : "?"}`);
  return degraded(
    "ClusterIDMismatch",
    `${ids.join(", ")} but this VaultCluster is cluster_id ${known}: a pod joined another Vault cluster (or its data was replaced); nothing is done until it is fixed by hand`,
    strangers.map((p) => p.name),
  );
}
