// The planner's part of a switch of the listener certificate's source (spec.tls.secretName set, changed or unset):
// which pods still serve another Secret than spec's (they are restarted onto it by the rolling restart, one at a
// time, the active one last after a step-down), and the pods whose certificate the operator's client refuses with
// every CA it trusts: those are reported, never restarted blindly. Pure.
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import type { ObservedPod, Step } from "./types.ts";

/** The Secret spec asks the pods to serve: spec.tls.secretName, else the operator's `<cluster>-tls`. */
export function specTlsSecret(cluster: string, spec: Pick<VaultClusterSpec, "tls">): string {
  return spec.tls.secretName ?? `${cluster}-tls`;
}

/** True when `p` mounts (so serves) another certificate Secret than `secret`. */
export function servesOtherSecret(p: ObservedPod, secret: string): boolean {
  return p.tlsSecret !== undefined && p.tlsSecret !== secret;
}

/** How far a switch to `secret` is, for the messages: "2 of 3 pods serve Secret vault-cm". */
function progress(live: readonly ObservedPod[], secret: string): string {
  const done = live.filter((p) => !servesOtherSecret(p, secret)).length;
  return `${done} of ${live.length} pods serve Secret ${secret}`;
}

/** The message of the restart of `p` onto spec's Secret, when that is why it is restarted. */
export function switchRestartMessage(
  p: ObservedPod,
  live: readonly ObservedPod[],
  secret: string,
): string | undefined {
  if (!servesOtherSecret(p, secret)) return undefined;
  return `restarting ${p.name} on its data onto the listener certificate of Secret ${secret} (it serves Secret ${p.tlsSecret}; the operator trusts both CAs until every pod is moved): ${progress(live, secret)}`;
}

/** The message of the step-down of the active pod `p` before its restart onto spec's Secret. */
export function switchStepDownMessage(
  p: ObservedPod,
  live: readonly ObservedPod[],
  secret: string,
): string | undefined {
  if (!servesOtherSecret(p, secret)) return undefined;
  return `stepping ${p.name} down: it still serves Secret ${p.tlsSecret} and is restarted last, as a standby, onto Secret ${secret}; ${progress(live, secret)}`;
}

/**
 * Degraded "CertificateUntrusted" naming the pods that answered with a certificate the operator trusts with none
 * of its CAs, or undefined. Such a pod is not restarted: the operator cannot tell whether it is the active node (no
 * step-down is possible) nor whether it is unsealed, and Vault cannot be asked to unseal it afterwards if the new
 * certificate is refused too.
 */
export function untrustedStep(
  pods: readonly ObservedPod[],
  secret: string,
  namespace?: string,
): Step | undefined {
  const refused = pods.filter(
    (p) => p.terminatingSince === undefined && !p.vault.reachable && p.vault.certificateRejected === true,
  );
  if (refused.length === 0) return undefined;
  const ns = namespace === undefined ? "" : ` -n ${namespace}`;
  const each = refused
    .map((p) => {
      const error = p.vault.reachable ? "" : p.vault.error;
      const mounts = p.tlsSecret ?? secret;
      const fix =
        mounts === secret
          ? `check that ca.crt of Secret ${secret} signs its tls.crt, and that the certificate is valid and names the pod's DNS name`
          : `it mounts Secret ${mounts} from before the switch to Secret ${secret} (spec.tls.secretName): restore Secret ${mounts} (with the ca.crt of the certificate the pod serves), or, once you know it is not the active node, \`kubectl delete pod ${p.name}${ns}\` restarts it onto Secret ${secret}`;
      return `${p.name} presents a certificate that no CA the operator trusts signs (${error}): ${fix}`;
    })
    .join("; ");
  return {
    type: "Degraded",
    reason: "CertificateUntrusted",
    message: `${each}; the operator cannot see, unseal or step down ${refused.length === 1 ? "this pod" : "these pods"} and does not restart ${refused.length === 1 ? "it" : "them"} blindly`,
    pods: refused.map((p) => p.name),
  };
}
