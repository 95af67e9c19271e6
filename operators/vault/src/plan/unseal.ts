// Unsealing (rule 6 of the planner): the next sealed pod to unseal, and judging the unseal keys: before an unseal,
// whether the keys Secret can unseal at all (enough keys for the threshold Vault reports); after one, whether
// Vault's answer says the keys are wrong. Either is something only a human can fix (restore the right keys into the
// Secret), so it is Degraded naming the pod and the counts, never a wait that lasts for ever. Pure.
import type { ObservedKeys, ObservedPod, Step } from "./types.ts";

export type { SealProgress } from "./types.ts";

/**
 * Rule 6 of the planner: the first sealed, initialized pod -> Unseal (always safe: it only lets a node that is a
 * member serve), or Degraded when the keys Secret cannot unseal it ({@link unsealKeysStep}); else undefined.
 */
export function unsealStep(live: ObservedPod[], keys: ObservedKeys, specThreshold: number): Step | undefined {
  for (const p of live) {
    if (p.vault.reachable && p.vault.initialized && p.vault.sealed) {
      const cannot = unsealKeysStep(p, keys.unsealKeys, specThreshold);
      if (cannot !== undefined) return cannot;
      return { type: "Unseal", pod: p.name, message: `unsealing ${p.name}` };
    }
  }
  return undefined;
}

/**
 * Before unsealing `pod`: Degraded `UnsealKeysInsufficient` when the Secret holds fewer keys than the threshold
 * (Vault's own, from seal-status; else spec.unseal.threshold, which is immutable), else undefined.
 */
export function unsealKeysStep(pod: ObservedPod, keysHeld: number, specThreshold: number): Step | undefined {
  const threshold = pod.seal?.threshold ?? specThreshold;
  if (keysHeld >= threshold) return undefined;
  return {
    type: "Degraded",
    reason: "UnsealKeysInsufficient",
    message: `${pod.name} is sealed and needs ${threshold} unseal keys but the keys Secret holds ${keysHeld}: add the missing unseal-key-<n> entries (of ${pod.seal?.shares ?? "the"} shares made at init) to the Secret; the pod stays sealed until then`,
    pods: [pod.name],
  };
}

/** How an Unseal step ended, as the controller saw it. */
export type UnsealOutcome =
  /** Vault answered an error (HTTP status, 0 when unreachable, and its errors). */
  | { error: { status: number; errors: string[] } }
  /** The step ran every key and the pod stayed sealed (the act's UnsealIncomplete). */
  | { stillSealed: true; message: string };

/**
 * After an Unseal step failed: Degraded when the failure says the keys are wrong, else undefined (the step is
 * retried: the pod restarted, Vault did not answer, a joining node has no challenge yet).
 *  - Vault refused a key (HTTP 400 "Unseal failed, invalid key", "invalid key: ...", "'key' must be a valid hex or
 *    base64 string", or a 500 that failed to combine or decrypt with them) -> `UnsealKeysInvalid`;
 *  - every key was entered and the pod is still sealed (duplicate keys: Vault counts a key once; progress reset)
 *    -> `UnsealKeysInvalid`, or `UnsealKeysInsufficient` when fewer keys than the threshold are held.
 */
export function judgeUnsealOutcome(
  pod: string,
  outcome: UnsealOutcome,
  keysHeld: number,
  threshold: number,
): Step | undefined {
  if ("stillSealed" in outcome) {
    const reason = keysHeld < threshold ? "UnsealKeysInsufficient" : "UnsealKeysInvalid";
    return {
      type: "Degraded",
      reason,
      message: `${outcome.message}; ${pod} needs ${threshold} distinct keys of this cluster: ${
        reason === "UnsealKeysInsufficient"
          ? "add the missing unseal-key-<n> entries to the keys Secret"
          : "some keys in the keys Secret are duplicates or belong to another cluster: restore the keys from your backup"
      }`,
      pods: [pod],
    };
  }
  const { status, errors } = outcome.error;
  const text = errors.join("; ");
  // Vault's answer while a just-joined node has not yet fetched the leader's challenge: not about the keys.
  if (/invalid key size 0/.test(text)) return undefined;
  const rejected =
    (status === 400 && /invalid key|must be a valid hex or base64/i.test(text)) ||
    (status === 500 && /combine|decrypt|invalid key/i.test(text));
  if (!rejected) return undefined;
  return {
    type: "Degraded",
    reason: "UnsealKeysInvalid",
    message: `${pod} refuses the unseal keys of the keys Secret (HTTP ${status}: ${text}); the Secret holds ${keysHeld} keys and ${threshold} are needed: they are wrong or belong to another cluster; restore the keys from your backup. The pod stays sealed until then`,
    pods: [pod],
  };
}
