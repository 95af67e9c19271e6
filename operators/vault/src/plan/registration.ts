// Vault's Kubernetes service registration, as the planner judges it: a pod built with it whose Vault has never
// labelled it (no vault-initialized label) long after it became Ready cannot reach the API server or is refused
// there, and the `-active` Service, which selects Vault's vault-active label, would not follow it when it leads.
// Only Vault can write those labels, and the operator does not put itself back in the path: it reports the pods and
// the likely causes. And when the API server refuses the pods' ServiceAccount, Role or RoleBinding (the operator's
// RBAC lags its version), the pods run without registration: that is reported too. Pure: the caller observes.
import type { ObservedPod, Step } from "./types.ts";

/**
 * Degraded "ServiceRegistrationFailed" naming the pods that run with registration, have been Ready for `afterMs`
 * and that Vault has still not labelled; undefined when there are none. Vault sets its labels within a second of
 * starting when the API server answers, and retries every 5 s when it does not, so `afterMs` (a minute) only rules
 * out the informer's lag.
 */
export function registrationStep(
  live: ObservedPod[],
  now: Date,
  afterMs: number,
  serviceAccount: string,
  refused?: string,
): Step | undefined {
  if (refused !== undefined) {
    return {
      type: "Degraded",
      reason: "ServiceRegistrationForbidden",
      message: `the API server refused the pods' ServiceAccount, Role or RoleBinding ${serviceAccount} (${refused}): the pods run without Vault's Kubernetes service registration and the -active Service follows the operator's vault.capstan.dev/state label, so it moves to a new leader only when the operator runs. Give the operator create and patch on serviceaccounts, roles and rolebindings (upgrade the chart with the operator: its RBAC lists them); the pods are then restarted onto registration one at a time`,
    };
  }
  const unlabelled = live.filter(
    (p) =>
      p.terminatingSince === undefined &&
      p.registers === true &&
      p.registered !== true &&
      p.readySince !== undefined &&
      now.getTime() - p.readySince.getTime() >= afterMs,
  );
  if (unlabelled.length === 0) return undefined;
  const pods = unlabelled.map((p) => p.name);
  return {
    type: "Degraded",
    reason: "ServiceRegistrationFailed",
    message: `Vault has not labelled ${pods.join(", ")} (no vault-initialized label) although ${pods.length === 1 ? "it has" : "they have"} been Ready for ${Math.round(afterMs / 1000)}s: its Kubernetes service registration cannot reach the API server or is refused, so the -active Service (selecting vault-active=true) will not point at ${pods.length === 1 ? "it" : "them"} while active. Look for "unable to set initial state" in \`kubectl logs <pod> -c vault\`; check that egress from the pods to the API server is allowed (a NetworkPolicy) and that ServiceAccount ${serviceAccount} is bound to Role ${serviceAccount} naming the pod`,
    pods,
  };
}
