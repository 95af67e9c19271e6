// A broken pod never blocks its own fix (DESIGN, "Judging before acting"): a pod built from an older spec (image,
// config, podTemplate) that the kubelet reports not Ready is replaced with the current spec, instead of waiting
// for it to become healthy first, which it cannot. Pure.
import type { ObservedPod, Step } from "./types.ts";

/** Why a pod does not serve, in the kubelet's and scheduler's words when they said something. */
function notServing(p: ObservedPod): string {
  if (p.containerFailure !== undefined) return `its vault container is in ${p.containerFailure.reason}`;
  if (p.imagePullError !== undefined) return `it cannot pull ${p.imagePullError.image}`;
  if (p.unschedulableSince !== undefined) return "no node can take it";
  if (p.pendingSince !== undefined) return "it is Pending";
  return p.vault.reachable ? "it is not Ready" : "it is not Ready and does not answer";
}

/**
 * The replacement of the first pod (lowest ordinal, below spec.replicas) that is outdated and not Ready, or
 * undefined. `quorumHoldsWithout(pod)` says whether the healthy voters other than it keep a quorum (always true
 * when no node is active: a pod that does not serve cannot lower what serves).
 *
 * The evidence is the kubelet's (the pod's Ready condition, which Vault's readiness probe sets only when unsealed),
 * not the operator's own failure to reach Vault. Replacing such a pod takes nothing that serves away, so it is safe
 * whenever the quorum does not depend on it:
 *  - another image only -> UpgradePod (the kubelet restarts vault on its data with spec's image): a crash-looping
 *    upgrade is rolled back, an image that cannot be pulled is moved to spec's;
 *  - another template (config, podTemplate, TLS Secret) -> DeletePod(Restart), claim kept: the pod is made again
 *    from the current spec on its data (a bad config reverted, an unschedulable nodeSelector fixed).
 */
export function healStep(
  image: string,
  replicas: number,
  live: ObservedPod[],
  quorumHoldsWithout: (pod: ObservedPod) => boolean,
): Step | undefined {
  for (const p of [...live].sort((a, b) => a.ordinal - b.ordinal)) {
    if (p.ordinal >= replicas || p.ready) continue;
    // Vault says it is unsealed (an active node or standby whose readiness lags): it serves; the rollout takes it.
    if (p.vault.reachable && p.vault.initialized && !p.vault.sealed) continue;
    const imageOutdated = p.image !== image;
    if (!imageOutdated && p.templateOutdated !== true) continue;
    if (!quorumHoldsWithout(p)) continue;
    const why = notServing(p);
    if (p.templateOutdated === true) {
      return {
        type: "DeletePod",
        pod: p.name,
        deleteClaim: false,
        reason: "Restart",
        message: `replacing ${p.name}, built from an older pod template or configuration, which does not serve (${why}): it is made again from the current spec on its data claim`,
      };
    }
    return {
      type: "UpgradePod",
      pod: p.name,
      from: p.image,
      to: image,
      message: `moving ${p.name} from ${p.image} to ${image}: it does not serve (${why}), so it does not wait for the rollout`,
    };
  }
  return undefined;
}
