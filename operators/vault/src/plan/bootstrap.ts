// Bringing a cluster up (rules 4 and 5 of the planner): the first init on pod 0, exactly once (a lost answer or lost
// keys are reported, never initialized over), and, once the keys exist, the pods of existing members started again
// on their kept data claims. Pure.
import { healStep } from "./heal.ts";
import { byOrdinal, ordinalOf } from "./ordinal.ts";
import { stalledStep } from "./stalled.ts";
import type { Step } from "./types.ts";
import { degraded, type View, wait } from "./view.ts";

const REMEDIATION_INIT_LOST =
  "the unseal keys and root token were only in the lost answer: if you saved them, write them into the keys Secret (unseal-key-0.., root-token); otherwise the data cannot be unsealed: delete the VaultCluster and its claims (and the keys Secret, if one was made) to start a new cluster. The operator never initializes twice";

/**
 * Rule 4: before the keys exist.
 *  - a pod reports initialized -> Degraded: with an init-started marker "InitResponseLost" with the remediation,
 *    else "KeysMissing" (never a second init);
 *  - a marker younger than the grace period -> Wait (an init may be in flight);
 *  - pod 0 missing -> CreatePod; pod 0 not answering -> a pod to replace or a stalled pod, else Wait; else
 *    InitVault on pod 0.
 */
export function planInit(v: View): Step {
  const { cluster, initialized, now, opts } = v;
  const marker = v.observed.initStartedAt;
  if (initialized.length > 0) {
    const which = initialized.map((p) => p.name).join(", ");
    if (marker !== undefined) {
      return degraded(
        "InitResponseLost",
        `an init was started at ${marker.toISOString()} and ${which} reports initialized, but its answer never reached the keys Secret: ${REMEDIATION_INIT_LOST}`,
      );
    }
    return degraded(
      "KeysMissing",
      `${which} reports initialized but the keys Secret holds no unseal keys: restore the Secret (unseal-key-0.., operator-token) from your backup; the operator never initializes twice`,
    );
  }
  if (marker !== undefined && now.getTime() - marker.getTime() < opts.initGraceMs) {
    return wait(
      "InitInProgress",
      `an init started at ${marker.toISOString()}; waiting for it to finish or time out`,
    );
  }
  const first = v.live.find((p) => p.ordinal === 0);
  const pod = `${cluster}-0`;
  if (first === undefined) {
    return {
      type: "CreatePod",
      pod,
      reason: "Bootstrap",
      message: `creating ${pod}, the pod Vault is initialized on`,
    };
  }
  if (!first.vault.reachable) {
    const stalled =
      healStep(v.image, v.spec.replicas, v.live, () => true) ??
      stalledStep(v.image, v.live, v.pods, now, opts, v.spec.replicas);
    return stalled ?? wait("PodStarting", `waiting for ${pod} to answer: ${first.vault.error}`);
  }
  return {
    type: "InitVault",
    pod,
    message:
      marker === undefined
        ? `initializing Vault on ${pod}`
        : `initializing Vault on ${pod}: the init started at ${marker.toISOString()} never reached it (it still reports uninitialized)`,
  };
}

/** Rule 5: keys but neither pods nor claims -> Degraded "KeysWithoutData" (never an init over existing keys). */
export function keysWithoutData(v: View): Step | undefined {
  if (v.pods.length > 0 || v.observed.claims.length > 0) return undefined;
  return degraded(
    "KeysWithoutData",
    `the keys Secret holds the unseal keys of an initialized Vault (cluster_id ${v.known ?? "unknown"}) but no pod or data claim exists (the VaultCluster was deleted and created again?): delete the keys Secret to initialize a new, empty cluster, or restore the claims; the operator never initializes over existing keys`,
  );
}

/**
 * Rule 5: the pod of an existing member is gone (its claim kept, its ordinal below spec.replicas) -> CreatePod
 * (Restart) on its data, with no gate: restarting a member on its own data is always safe. Not on a refused
 * downgrade: then `downgrade` is the step.
 */
export function restartOnData(v: View, downgrade: Step | undefined): Step | undefined {
  const { cluster } = v;
  const podNames = new Set(v.pods.map((p) => p.name));
  for (const claim of [...v.observed.claims].sort(byOrdinal(cluster))) {
    const ordinal = ordinalOf(cluster, claim.replace(/^data-/, ""));
    const pod = claim.replace(/^data-/, "");
    if (ordinal === undefined || ordinal >= v.spec.replicas || podNames.has(pod)) continue;
    if (downgrade !== undefined) return downgrade;
    return {
      type: "CreatePod",
      pod,
      reason: "Restart",
      message: `the pod ${pod} is gone; starting it again on its data claim ${claim}`,
    };
  }
  return undefined;
}
