// Rolling the spec out to the pods (rules 10, 12 and 13 of the planner): an outdated pod that does not serve is
// replaced at once while the quorum does not need it (heal.ts); otherwise nothing moves while a pod is sick (one
// whose certificate no trusted CA signs is reported, never restarted blindly); then pods on another image, pod
// template or certificate Secret are updated one at a time, standbys first, the active node last after a step-down.
// Pure.
import { quorum } from "@capstan/core";
import { healStep } from "./heal.ts";
import {
  servesOtherSecret,
  specTlsSecret,
  switchRestartMessage,
  switchStepDownMessage,
  untrustedStep,
} from "./tls-switch.ts";
import type { Step } from "./types.ts";
import { healthy, type RaftView, sickness, wait } from "./view.ts";

/**
 * Rule 10, first part: a pod below spec.replicas, built from an older spec, that the kubelet reports not Ready ->
 * replaced (UpgradePod or DeletePod Restart) while the other healthy voters keep a quorum (heal.ts).
 */
export function healOutdated(r: RaftView): Step | undefined {
  return healStep(r.image, r.spec.replicas, r.live, (p) => {
    const others = r.servers.filter((s) => s.voter && s.nodeID !== p.name);
    return others.filter((s) => r.healthyID(s.nodeID)).length >= quorum(r.voterCount);
  });
}

/**
 * Rule 12: a pod whose certificate the operator's client refuses with every CA it trusts -> Degraded
 * "CertificateUntrusted" naming it (tls-switch.ts); any other pod not healthy (ready, unsealed, a voter) -> Wait:
 * no upgrade or scale-out on a sick cluster.
 */
export function sickPods(r: RaftView): Step | undefined {
  const sick = r.live.filter((p) => !healthy(p, r.peerIDs, r.servers));
  // A pod whose certificate no trusted CA signs is reported, not waited for in silence (nor restarted blindly).
  const untrusted = untrustedStep(sick, specTlsSecret(r.cluster, r.spec), r.observed.namespace);
  if (untrusted !== undefined) return untrusted;
  if (sick.length === 0) return undefined;
  const why = sick.map((p) => `${p.name} (${sickness(p, r.peerIDs, r.servers)})`).join(", ");
  return wait("PodNotReady", `waiting for ${why}`);
}

/**
 * Before rule 13 takes the next pod: a pod below spec.replicas still terminating, or a raft voter with no pod,
 * is not among the live pods rule 12 checks. Both are what the very next reconcile sees of a pod the rollout just
 * restarted (seen end to end: the next standby went too, and two voters of three down is no quorum) -> Wait.
 * Scale-out is not held back by them: a server whose pod and claim were deleted is made again by it.
 */
function voterAway(r: RaftView): Step | undefined {
  const away = r.pods
    .filter((p) => p.terminatingSince !== undefined && p.ordinal < r.spec.replicas)
    .map((p) => `${p.name} (terminating)`);
  for (const s of r.servers) {
    if (s.voter && !r.podNames.has(s.nodeID)) away.push(`${s.nodeID} (a raft voter with no pod)`);
  }
  return away.length === 0 ? undefined : wait("PodNotReady", `waiting for ${away.join(", ")}`);
}

/**
 * Rule 13: pods on another image or template, or mounting another certificate Secret than spec's (a switch of
 * spec.tls.secretName, during which the client trusts the old and the new CA): standbys one at a time (lowest
 * ordinal first) -> UpgradePod, or DeletePod(Restart) on their data; then StepDown of the active, which is done last
 * as a standby (a single pod is updated in place).
 */
export function rollout(r: RaftView): Step | undefined {
  const { active, image, live } = r;
  const tlsSecret = specTlsSecret(r.cluster, r.spec);
  // Another image, pod template, or certificate Secret (a switch of spec.tls.secretName; it is in the template too).
  const outdated = live.filter(
    (p) => p.image !== image || p.templateOutdated === true || servesOtherSecret(p, tlsSecret),
  );
  if (outdated.length === 0) return undefined;
  const away = voterAway(r);
  if (away !== undefined) return away;
  const next = outdated.find((p) => p !== active) ?? active;
  if (next === active) {
    if (live.length > 1) {
      return {
        type: "StepDown",
        pod: active.name,
        message:
          switchStepDownMessage(active, live, tlsSecret) ??
          `stepping ${active.name} down: it is updated last, as a standby`,
      };
    }
  }
  if (next.image !== image) {
    return {
      type: "UpgradePod",
      pod: next.name,
      from: next.image,
      to: image,
      message: `upgrading ${next.name} from ${next.image} to ${image}`,
    };
  }
  return {
    type: "DeletePod",
    pod: next.name,
    deleteClaim: false,
    reason: "Restart",
    message:
      switchRestartMessage(next, live, tlsSecret) ??
      `restarting ${next.name} on its data to apply the changed pod template or configuration`,
  };
}
