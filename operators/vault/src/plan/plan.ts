// The Vault planner: from the spec and what the operator observed, the ONE next step to take. Pure: no I/O, no
// clock (the caller passes `now`), no randomness; the reconciler performs the step and plans again next time.
import { OPERATOR_OWNED_CONFIG_KEYS, type VaultClusterSpec } from "../api/vault-cluster.ts";
import { autopilotReportStep, autopilotWriteStep } from "./autopilot.ts";
import { claimLostStep, holdCreateOnTerminatingClaim } from "./claim-lost.ts";
import { healStep } from "./heal.ts";
import { byOrdinal, ordinalOf } from "./ordinal.ts";
import { registrationStep } from "./registration.ts";
import { scaleInStep } from "./scale-in.ts";
import { spreadHint, stalledStep } from "./stalled.ts";
import { storageStep } from "./storage.ts";
import {
  servesOtherSecret,
  specTlsSecret,
  switchRestartMessage,
  switchStepDownMessage,
  untrustedStep,
} from "./tls-switch.ts";
import type {
  Observed,
  ObservedKeys,
  ObservedPeer,
  ObservedPod,
  ObservedToken,
  PlanOptions,
  Step,
} from "./types.ts";
import { unsealKeysStep } from "./unseal.ts";
import { downgradeStep } from "./versions.ts";

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

/** Defaults of {@link PlanOptions}. */
export const PLAN_DEFAULTS: Required<PlanOptions> = {
  initGraceMs: 2 * 60_000,
  unschedulableAfterMs: 2 * 60_000,
  pendingAfterMs: 10 * 60_000,
  terminatingAfterMs: 5 * 60_000,
  notPeerAfterMs: 2 * 60_000,
  registrationAfterMs: 60_000,
};

/** Votes needed for a quorum among `voters`. */
export function quorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

export { ordinalOf };

/** The image a VaultCluster's pods run: `<repository>:<version>`. */
export function vaultImage(spec: Pick<VaultClusterSpec, "repository" | "version">): string {
  return `${spec.repository}:${spec.version}`;
}

/**
 * True when the container the kubelet runs is `image` (the runtime may report it fully qualified, e.g.
 * docker.io/hashicorp/vault:1.14.8). Without a container status, the pod spec's image is taken.
 */
export function runsImage(p: Pick<ObservedPod, "image" | "runningImage">, image: string): boolean {
  const running = p.runningImage ?? p.image;
  return running === image || running.endsWith(`/${image}`);
}

function wait(reason: string, message: string): Step {
  return { type: "Wait", reason, message };
}

function degraded(reason: string, message: string, pods?: string[]): Step {
  return { type: "Degraded", reason, message, ...(pods === undefined ? {} : { pods }) };
}

const REMEDIATION_INIT_LOST =
  "the unseal keys and root token were only in the lost answer: if you saved them, write them into the keys Secret (unseal-key-0.., root-token); otherwise the data cannot be unsealed: delete the VaultCluster and its claims (and the keys Secret, if one was made) to start a new cluster. The operator never initializes twice";

/**
 * Plans the next step. The rules, in order (the first that applies wins):
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
  const hint = spreadHint(spec.podTemplate, spec.replicas);
  const opts = { ...PLAN_DEFAULTS, ...options, ...(hint === undefined ? {} : { unschedulableHint: hint }) };
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
  if (!observed.tls.ready) {
    return observed.tls.reason === "TLSSecretMissing"
      ? degraded(observed.tls.reason, observed.tls.message)
      : wait(observed.tls.reason, observed.tls.message);
  }

  const pods = [...observed.pods].sort((a, b) => a.ordinal - b.ordinal);
  const live = pods.filter((p) => p.terminatingSince === undefined);
  const known = observed.knownClusterID ?? observed.keys?.clusterID;
  const strangers = live.filter(
    (p) =>
      p.vault.reachable &&
      p.vault.clusterID !== undefined &&
      known !== undefined &&
      p.vault.clusterID !== known,
  );
  if (strangers.length > 0) {
    const ids = strangers.map((p) => `${p.name} answers ${p.vault.reachable ? p.vault.clusterID : "?"}`);
    return degraded(
      "ClusterIDMismatch",
      `${ids.join(", ")} but this VaultCluster is cluster_id ${known}: a pod joined another Vault cluster (or its data was replaced); nothing is done until it is fixed by hand`,
      strangers.map((p) => p.name),
    );
  }

  const keys = observed.keys;
  const initialized = live.filter((p) => p.vault.reachable && p.vault.initialized);
  if (keys === undefined || keys.unsealKeys === 0) {
    return planInit(
      cluster,
      observed.initStartedAt,
      live,
      initialized,
      now,
      opts,
      () =>
        healStep(vaultImage(spec), spec.replicas, live, () => true) ??
        stalledStep(vaultImage(spec), live, pods, now, opts, spec.replicas),
    );
  }

  // From here the cluster was initialized and the keys are at hand.
  if (pods.length === 0 && observed.claims.length === 0) {
    return degraded(
      "KeysWithoutData",
      `the keys Secret holds the unseal keys of an initialized Vault (cluster_id ${known ?? "unknown"}) but no pod or data claim exists (the VaultCluster was deleted and created again?): delete the keys Secret to initialize a new, empty cluster, or restore the claims; the operator never initializes over existing keys`,
    );
  }
  const podNames = new Set(pods.map((p) => p.name));
  const byName = new Map(pods.map((p) => [p.name, p]));
  // A downgrade: no pod is created on, restarted on or changed to the older release (unseal stays allowed).
  const downgrade = downgradeStep(spec.version, live, observed.knownVersion);
  for (const claim of [...observed.claims].sort(byOrdinal(cluster))) {
    const ordinal = ordinalOf(cluster, claim.replace(/^data-/, ""));
    const pod = claim.replace(/^data-/, "");
    if (ordinal === undefined || ordinal >= spec.replicas || podNames.has(pod)) continue;
    if (downgrade !== undefined) return downgrade;
    return {
      type: "CreatePod",
      pod,
      reason: "Restart",
      message: `the pod ${pod} is gone; starting it again on its data claim ${claim}`,
    };
  }

  for (const p of live) {
    if (p.vault.reachable && p.vault.initialized && p.vault.sealed) {
      const cannot = unsealKeysStep(p, keys.unsealKeys, spec.unseal.threshold);
      if (cannot !== undefined) return cannot;
      return { type: "Unseal", pod: p.name, message: `unsealing ${p.name}` };
    }
  }

  const active = live.find(
    (p) => p.vault.reachable && p.vault.initialized && !p.vault.sealed && !p.vault.standby,
  );
  if (active === undefined) {
    const unsealed = live.filter((p) => p.vault.reachable && p.vault.initialized && !p.vault.sealed).length;
    const voters = Math.max(observed.knownVoters ?? 0, 1);
    if (unsealed >= quorum(voters)) {
      return wait(
        "ElectingLeader",
        `${unsealed} pods are unsealed and no active node yet: waiting for an election`,
      );
    }
    // An outdated pod that does not serve is replaced (a reverted upgrade or config heals it), and a pod the
    // kubelet cannot run (crash loop, image pull) is named rather than waited for.
    // (Never towards an older release than the cluster runs: then the refusal is what is reported.)
    const heal = healStep(vaultImage(spec), spec.replicas, live, () => true);
    if (heal !== undefined) return downgrade ?? heal;
    const stalled = stalledStep(vaultImage(spec), live, pods, now, opts, spec.replicas);
    const untrusted = untrustedStep(live, specTlsSecret(cluster, spec), observed.namespace);
    if (unsealed === 0 && initialized.length === 0 && live.every((p) => !p.vault.reachable)) {
      return stalled ?? untrusted ?? wait("PodsStarting", "no Vault pod answers yet");
    }
    if (initialized.length === 0) {
      return degraded(
        "DataLost",
        `every pod that answers reports uninitialized while the keys Secret holds the keys of cluster_id ${known ?? "unknown"}: the raft data is gone; restore the claims from a backup, or delete the claims and the keys Secret to start a new cluster (the operator never initializes over existing keys)`,
      );
    }
    const named = [stalled, untrusted].flatMap((d) => (d?.type === "Degraded" ? (d.pods ?? []) : []));
    return degraded(
      "QuorumLost",
      `${unsealed} of ${voters} raft voters are unsealed and no node is active: a quorum needs ${quorum(voters)}; no membership change is made until it is back${stalled?.type === "Degraded" ? `; ${stalled.message}` : ""}${untrusted?.type === "Degraded" ? `; ${untrusted.message}` : ""}`,
      named.length === 0 ? undefined : named,
    );
  }

  const tokenStep = planToken(spec, keys, observed.token, active.name);
  if (tokenStep !== undefined) return tokenStep;
  if (downgrade !== undefined) return downgrade;

  if (!("servers" in observed.raft)) {
    return wait(
      "RaftUnknown",
      `the raft configuration could not be read from ${active.name}: ${observed.raft.error}`,
    );
  }
  const servers = observed.raft.servers;
  const peerIDs = new Set(servers.map((s) => s.nodeID));
  const lost = voterQuorumLost(active.name, servers, byName, () =>
    healStep(vaultImage(spec), spec.replicas, live, () => true),
  );
  if (lost !== undefined) return lost;
  // What stops autopilot removing servers is not held back by the sickness it would act on (rule 15).
  const stopCleanup = autopilotWriteStep(spec, observed.autopilot, active.name, true);
  if (stopCleanup !== undefined) return stopCleanup;

  for (const p of live) {
    if (!p.vault.reachable || p.vault.initialized) continue;
    if (peerIDs.has(p.name)) {
      return {
        type: "RemovePeer",
        nodeID: p.name,
        via: active.name,
        reason: "DataLost",
        message: `${p.name} reports uninitialized (its data was lost) while it is still a raft peer: removing its old peer before it rejoins`,
      };
    }
    if (p.ordinal >= spec.replicas) continue; // being scaled in: not joined again
    return {
      type: "JoinRaft",
      pod: p.name,
      leader: active.name,
      message: `${p.name} joins the raft cluster through ${active.name}`,
    };
  }

  const claimLost = claimLostStep({
    live,
    claims: observed.claims,
    claimsTerminating: observed.claimsTerminating ?? [],
    servers,
    active: active.name,
    healthy: (id) => healthy(byName.get(id), peerIDs, servers),
    quorum,
    now,
  });
  if (claimLost !== undefined) return claimLost;

  const voterCount = servers.filter((s) => s.voter).length;
  const notAPeer = notAPeerStep(
    live,
    spec.replicas,
    peerIDs,
    now,
    opts.notPeerAfterMs,
    () =>
      servers.filter((s) => s.voter && healthy(byName.get(s.nodeID), peerIDs, servers)).length >=
      quorum(voterCount),
  );
  if (notAPeer !== undefined) return notAPeer;

  const heal = healStep(vaultImage(spec), spec.replicas, live, (p) => {
    const others = servers.filter((s) => s.voter && s.nodeID !== p.name);
    return others.filter((s) => healthy(byName.get(s.nodeID), peerIDs, servers)).length >= quorum(voterCount);
  });
  if (heal !== undefined) return heal;
  const stalled = stalledStep(vaultImage(spec), live, pods, now, opts, spec.replicas);
  if (stalled !== undefined) return stalled;

  const scaleIn = scaleInStep(
    cluster,
    spec.replicas,
    live,
    podNames,
    observed.claims,
    servers,
    active.name,
    (id) => healthy(byName.get(id), peerIDs, servers),
  );
  if (scaleIn !== undefined) return scaleIn;

  const sick = live.filter((p) => !healthy(p, peerIDs, servers));
  const tlsSecret = specTlsSecret(cluster, spec);
  // A pod whose certificate no trusted CA signs is reported, not waited for in silence (nor restarted blindly).
  const untrusted = untrustedStep(sick, tlsSecret, observed.namespace);
  if (untrusted !== undefined) return untrusted;
  if (sick.length > 0) {
    const why = sick.map((p) => `${p.name} (${sickness(p, peerIDs, servers)})`).join(", ");
    return wait("PodNotReady", `waiting for ${why}`);
  }

  const image = vaultImage(spec);
  // Another image, pod template, or certificate Secret (a switch of spec.tls.secretName; it is in the template too).
  const outdated = live.filter(
    (p) => p.image !== image || p.templateOutdated === true || servesOtherSecret(p, tlsSecret),
  );
  if (outdated.length > 0) {
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

  for (let ordinal = 0; ordinal < spec.replicas; ordinal++) {
    const pod = `${cluster}-${ordinal}`;
    if (podNames.has(pod)) continue;
    return {
      type: "CreatePod",
      pod,
      reason: "ScaleOut",
      message: `scaling out to ${spec.replicas}: creating ${pod}`,
    };
  }

  const autopilot = autopilotWriteStep(spec, observed.autopilot, active.name);
  if (autopilot !== undefined) return autopilot;
  const storage = storageStep(cluster, spec, observed.claimSizes, observed.namespace);
  if (storage !== undefined) return storage;
  const autopilotReport = autopilotReportStep(spec, observed.autopilot);
  if (autopilotReport !== undefined) return autopilotReport;
  const registration = registrationStep(
    live,
    now,
    opts.registrationAfterMs,
    cluster,
    observed.registrationRefused,
  );
  if (registration !== undefined) return registration;

  return { type: "InSync", message: `${live.length} pods unsealed, ${active.name} active` };
}

/** Rule 4: before the keys exist. */
function planInit(
  cluster: string,
  marker: Date | undefined,
  live: ObservedPod[],
  initialized: ObservedPod[],
  now: Date,
  opts: Required<PlanOptions>,
  stalled: () => Step | undefined,
): Step {
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
  const first = live.find((p) => p.ordinal === 0);
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
    return stalled() ?? wait("PodStarting", `waiting for ${pod} to answer: ${first.vault.error}`);
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

/** Rule 8: the operator's own token. */
function planToken(
  spec: VaultClusterSpec,
  keys: ObservedKeys,
  token: ObservedToken | undefined,
  active: string,
): Step | undefined {
  const usable = keys.operatorToken && token?.valid !== false;
  if (!usable) {
    if (keys.rootToken) {
      return {
        type: "BootstrapToken",
        pod: active,
        message: "writing the operator's policy and creating its periodic token with the root token",
      };
    }
    const why = keys.operatorToken
      ? `Vault refuses it: ${token?.valid === false ? token.error : ""}`
      : "it is missing";
    return {
      type: "RegenerateRootToken",
      pod: active,
      message: `the operator token in the keys Secret is unusable (${why}) and no root token is kept: generating a root token with the unseal keys, to make a new operator token and revoke it`,
    };
  }
  if (keys.rootToken && !spec.unseal.keepRootToken) {
    return {
      type: "RevokeRootToken",
      pod: active,
      message: "revoking the initial root token (spec.unseal.keepRootToken is false)",
    };
  }
  if (token?.valid === true && token.periodSeconds > 0 && token.ttlSeconds < token.periodSeconds / 2) {
    return {
      type: "RenewToken",
      pod: active,
      message: `renewing the operator token (${token.ttlSeconds}s of its ${token.periodSeconds}s period left)`,
    };
  }
  return undefined;
}

/**
 * Rule 9, last part: a pod below spec.replicas that is initialized and unsealed, Ready for `afterMs`, and still not
 * in the raft configuration the active node reports is no peer any more (a scale-in reverted after its peer was
 * removed, autopilot's dead-server cleanup, a peer removed by hand). Its data is of no use to the cluster (the
 * cluster's data is in the quorum, which holds without it): its pod and claim are deleted, and a new pod on a new
 * claim joins fresh. Only while the other voters' quorum is healthy (`quorumHolds`).
 */
function notAPeerStep(
  live: ObservedPod[],
  replicas: number,
  peerIDs: Set<string>,
  now: Date,
  afterMs: number,
  quorumHolds: () => boolean,
): Step | undefined {
  for (const p of live) {
    if (p.ordinal >= replicas || peerIDs.has(p.name)) continue;
    if (!p.vault.reachable || !p.vault.initialized || p.vault.sealed) continue;
    if (!p.ready || p.readySince === undefined || now.getTime() - p.readySince.getTime() < afterMs) continue;
    if (!quorumHolds()) return undefined;
    return {
      type: "DeletePod",
      pod: p.name,
      deleteClaim: true,
      reason: "NotAPeer",
      message: `${p.name} is unsealed but not in the raft configuration (its peer was removed: a reverted scale-in, autopilot's dead-server cleanup, or by hand), so its data is of no use to the cluster: deleting its pod and claim; a new pod on a new claim joins fresh`,
    };
  }
  return undefined;
}

/**
 * Rule 7 with an active node: the quorum is counted from the voters of the raft configuration it reports (a new
 * server is a non-voter until autopilot promotes it), not from the pods. Fewer unsealed voters than a quorum ->
 * Degraded "QuorumLost" naming the missing voters (an active node without a quorum cannot commit, and its answer as
 * active does not last), after replacing an outdated pod that does not serve (`heal`: a broken pod never blocks its
 * fix); no membership change, which would need the quorum.
 */
function voterQuorumLost(
  active: string,
  servers: ObservedPeer[],
  byName: Map<string, ObservedPod>,
  heal: () => Step | undefined,
): Step | undefined {
  const voters = servers.filter((s) => s.voter).map((s) => s.nodeID);
  const unsealed = voters.filter((id) => {
    const p = byName.get(id);
    return (
      p?.terminatingSince === undefined &&
      p?.vault.reachable === true &&
      p.vault.initialized &&
      !p.vault.sealed
    );
  });
  if (voters.length === 0 || unsealed.length >= quorum(voters.length)) return undefined;
  const fix = heal();
  if (fix !== undefined) return fix;
  const missing = voters.filter((id) => !unsealed.includes(id));
  return degraded(
    "QuorumLost",
    `${active} answers as active, but only ${unsealed.length} of ${voters.length} raft voters are unsealed (missing: ${missing.join(", ")}): a quorum needs ${quorum(voters.length)}; no membership change is made until the missing voters are back`,
    missing,
  );
}

/** Ready in Kubernetes, unsealed, and a raft voter. */
function healthy(p: ObservedPod | undefined, peerIDs: Set<string>, servers: ObservedPeer[]): boolean {
  if (p === undefined || p.terminatingSince !== undefined) return false;
  return sickness(p, peerIDs, servers) === undefined;
}

function sickness(p: ObservedPod, peerIDs: Set<string>, servers: ObservedPeer[]): string | undefined {
  if (!runsImage(p, p.image)) return `still running ${p.runningImage}, to be restarted on ${p.image}`;
  if (!p.vault.reachable) return "not answering";
  if (!p.vault.initialized) return "not joined";
  if (p.vault.sealed) return "sealed";
  if (!peerIDs.has(p.name)) return "not a raft peer";
  if (servers.find((s) => s.nodeID === p.name)?.voter !== true) return "not yet a raft voter";
  if (!p.ready) return "not ready";
  return undefined;
}
