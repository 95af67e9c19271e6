// The Vault planner: from the spec and what the operator observed, the ONE next step to take. Pure: no I/O, no
// clock (the caller passes `now`), no randomness; the reconciler performs the step and plans again next time.
// planNext keeps only the order of the rules; the rules live by concern beside it (gates.ts, bootstrap.ts,
// unseal.ts, quorum.ts, token.ts, membership.ts, rollout.ts and the modules they name), with what they share in
// view.ts.
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { autopilotReportStep, autopilotWriteStep } from "./autopilot.ts";
import { keysWithoutData, planInit, restartOnData } from "./bootstrap.ts";
import { holdCreateOnTerminatingClaim } from "./claim-lost.ts";
import { clusterIDMismatch, specGate, tlsGate } from "./gates.ts";
import { claimLost, joinRaft, notAPeer, scaleIn, scaleOut } from "./membership.ts";
import { noActiveNode, voterQuorumLost } from "./quorum.ts";
import { registrationStep } from "./registration.ts";
import { healOutdated, rollout, sickPods } from "./rollout.ts";
import { stalledStep } from "./stalled.ts";
import { storageStep } from "./storage.ts";
import { planToken } from "./token.ts";
import type { Observed, PlanOptions, Step } from "./types.ts";
import { unsealStep } from "./unseal.ts";
import { downgradeStep } from "./versions.ts";
import { raftView, view, wait } from "./view.ts";

export { ordinalOf } from "./ordinal.ts";
export type {
  Observed,
  ObservedKeys,
  ObservedPeer,
  ObservedPod,
  ObservedToken,
  PlanOptions,
  PodVault,
  Step,
} from "./types.ts";
export { PLAN_DEFAULTS, runsImage, vaultImage } from "./view.ts";

/**
 * Plans the next step. The rules, in order (the first that applies wins); where each lives: 1-3 gates.ts, 4-5
 * bootstrap.ts, 6 unseal.ts, 7 quorum.ts, 8 token.ts (and versions.ts), 9, 11 and 14 membership.ts (with
 * claim-lost.ts and scale-in.ts), 10, 12 and 13 rollout.ts (with heal.ts, stalled.ts and tls-switch.ts), 15
 * autopilot.ts, storage.ts and registration.ts:
 *  1. spec.paused -> Wait. spec.config with an operator-owned key (an object older than the CEL rule) -> Degraded.
 *  2. The listener certificate is not in place -> Wait (or Degraded when the user's Secret is missing).
 *  3. A pod answers with another cluster_id than the recorded one -> Degraded naming both ids; nothing is done.
 *  4. Not initialized (no keys in the Secret):
 *     - a pod reports initialized -> Degraded: with an init-started marker "InitResponseLost" with the
 *       remediation, else "KeysMissing" (never a second init);
 *     - a marker younger than the grace period -> Wait (an init may be in flight);
 *     - pod 0 missing -> CreatePod; pod 0 not answering -> Wait; else InitVault on pod 0.
 *  5. Keys but neither pods nor claims -> Degraded "KeysWithoutData". Pods of existing members gone (claim kept,
 *     ordinal below replicas) -> CreatePod(Restart), no gate.
 *  6. A sealed, initialized pod -> Unseal (always safe: it only lets a node that is a member serve); fewer keys in the
 *     Secret than the threshold -> Degraded "UnsealKeysInsufficient" (keys Vault refuses: see unseal.ts).
 *  7. No active node: quorum of the known voters unsealed -> Wait (election); every answering pod uninitialized
 *     -> Degraded "DataLost"; else Degraded "QuorumLost": no membership change.
 *  8. Operator token: missing or refused, with the root token at hand -> BootstrapToken; without it ->
 *     RegenerateRootToken (sys/generate-root with the unseal keys, then BootstrapToken); root token kept against
 *     spec -> RevokeRootToken; less than half its period left -> RenewToken.
 *     Then spec.version older than the cluster runs (the active node's version, status.currentVersion) ->
 *     Degraded "DowngradeRefused" (versions.ts); it also holds back the restart of rule 5.
 *  9. An uninitialized pod (a new pod, or one whose data was lost): its node ID still a raft peer -> RemovePeer
 *     (DataLost) first; else JoinRaft towards the active pod.
 * 10. Stalled pods (crash loop or container error, unschedulable, Pending too long, terminating too long, image
 *     pull failure of spec's image) -> Degraded naming them (stalled.ts); also instead of waiting when no pod
 *     answers; no claim is ever deleted for it. A pull failure of an older image -> UpgradePod.
 *     Before it: a pod below spec.replicas, built from an older spec, that the kubelet reports not Ready ->
 *     replaced (UpgradePod or DeletePod Restart) while the quorum does not need it (heal.ts), also with no
 *     active node and before init. Pods beyond spec.replicas are not reported: the scale-in removes them.
 * 11. Scale-in: the highest ordinal at or above spec.replicas: a raft peer -> StepDown first if it is the active
 *     node, then RemovePeer only while every other voter is healthy (scale-in.ts says why); not a peer -> DeletePod with its claim. Raft peers
 *     that are no pod of ours (interrupted removals) -> RemovePeer(Orphan).
 * 12. A pod whose certificate the operator's client refuses with every CA it trusts -> Degraded
 *     "CertificateUntrusted" naming it (tls-switch.ts; also when no node is active); never restarted blindly.
 *     Any pod not healthy (ready, unsealed, a voter) -> Wait: no upgrade or scale-out on a sick cluster.
 * 13. Rolling upgrade / restart: pods on another image or template, or mounting another certificate Secret than
 *     spec's (a switch of spec.tls.secretName, during which the client trusts the old and the new CA), standbys
 *     one at a time (lowest ordinal first), then StepDown of the active, which is done last as a standby.
 * 14. Scale-out: the lowest missing ordinal below spec.replicas -> CreatePod(ScaleOut), one at a time.
 * 15. spec.autopilot differs from autopilot's configuration -> ConfigureAutopilot through the active pod (autopilot.ts;
 *     turning dead-server cleanup off is done earlier, right after rule 8, whatever the pods' health). Then claims of
 *     another size than spec.storage.size -> Degraded naming them (storage.ts); then a spec.autopilot that cannot be
 *     applied -> Degraded "AutopilotMinQuorum" or "AutopilotForbidden" (the operator's policy lacks the path), or
 *     Wait when the configuration could not be read; then the pods' registration objects refused by the API server ->
 *     Degraded "ServiceRegistrationForbidden", or a pod Ready for a minute that Vault's service registration has not
 *     labelled -> Degraded "ServiceRegistrationFailed" (registration.ts); else InSync. Autopilot and the
 *     registration never hold back another step.
 */
export function planNext(
  cluster: string,
  spec: VaultClusterSpec,
  observed: Observed,
  now: Date,
  options: PlanOptions = {},
): Step {
  // Whatever rule asks for a pod, none is made on a claim that is being deleted (claim-lost.ts).
  return holdCreateOnTerminatingClaim(
    planStep(cluster, spec, observed, now, options),
    observed.claimsTerminating ?? [],
  );
}

function planStep(
  cluster: string,
  spec: VaultClusterSpec,
  observed: Observed,
  now: Date,
  options: PlanOptions,
): Step {
  const v = view(cluster, spec, observed, now, options);
  const gated = specGate(spec) ?? tlsGate(observed.tls) ?? clusterIDMismatch(v);
  if (gated !== undefined) return gated;

  const keys = observed.keys;
  if (keys === undefined || keys.unsealKeys === 0) return planInit(v);

  // From here the cluster was initialized and the keys are at hand.
  // A downgrade: no pod is created on, restarted on or changed to the older release (unseal stays allowed).
  const downgrade = downgradeStep(spec.version, v.live, observed.knownVersion);
  const started =
    keysWithoutData(v) ?? restartOnData(v, downgrade) ?? unsealStep(v.live, keys, spec.unseal.threshold);
  if (started !== undefined) return started;

  const active = v.live.find(
    (p) => p.vault.reachable && p.vault.initialized && !p.vault.sealed && !p.vault.standby,
  );
  if (active === undefined) return noActiveNode(v, downgrade);
  const token = planToken(spec, keys, observed.token, active.name) ?? downgrade;
  if (token !== undefined) return token;
  if (!("servers" in observed.raft)) {
    return wait(
      "RaftUnknown",
      `the raft configuration could not be read from ${active.name}: ${observed.raft.error}`,
    );
  }

  const r = raftView(v, active, observed.raft.servers);
  return (
    voterQuorumLost(r) ??
    // What stops autopilot removing servers is not held back by the sickness it would act on (rule 15).
    autopilotWriteStep(spec, observed.autopilot, active.name, true) ??
    joinRaft(r) ??
    claimLost(r) ??
    notAPeer(r) ??
    healOutdated(r) ??
    stalledStep(v.image, v.live, v.pods, now, v.opts, spec.replicas) ??
    scaleIn(r) ??
    sickPods(r) ??
    rollout(r) ??
    scaleOut(r) ??
    autopilotWriteStep(spec, observed.autopilot, active.name) ??
    storageStep(cluster, spec, observed.claimSizes, observed.namespace) ??
    autopilotReportStep(spec, observed.autopilot) ??
    registrationStep(v.live, now, v.opts.registrationAfterMs, cluster, observed.registrationRefused) ?? {
      type: "InSync",
      message: `${v.live.length} pods unsealed, ${active.name} active`,
    }
  );
}
