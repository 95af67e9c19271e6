// The quorum (rule 7 of the planner): with no active node, an election is waited for while a quorum of the known
// voters is unsealed; else the cluster is reported (DataLost, QuorumLost) and no membership change is made. With an
// active node, the quorum is counted from the voters of the raft configuration it reports. Either way an outdated
// pod that does not serve is replaced first (heal.ts: a broken pod never blocks its own fix). Pure.
import { quorum } from "@capstan/core";
import { healStep } from "./heal.ts";
import { stalledStep } from "./stalled.ts";
import { specTlsSecret, untrustedStep } from "./tls-switch.ts";
import type { Step } from "./types.ts";
import { degraded, type RaftView, type View, wait } from "./view.ts";

/**
 * Rule 7 with no active node: a quorum of the known voters unsealed -> Wait (election); an outdated pod that does
 * not serve -> replaced (or the refused downgrade reported); no pod answering -> a stalled or untrusted pod, else
 * Wait; every answering pod uninitialized -> Degraded "DataLost"; else Degraded "QuorumLost" naming the stalled and
 * untrusted pods: no membership change.
 */
export function noActiveNode(v: View, downgrade: Step | undefined): Step {
  const { live, initialized, known } = v;
  const unsealed = live.filter((p) => p.vault.reachable && p.vault.initialized && !p.vault.sealed).length;
  const voters = Math.max(v.observed.knownVoters ?? 0, 1);
  if (unsealed >= quorum(voters)) {
    return wait(
      "ElectingLeader",
      `${unsealed} pods are unsealed and no active node yet: waiting for an election`,
    );
  }
  // An outdated pod that does not serve is replaced (a reverted upgrade or config heals it), and a pod the
  // kubelet cannot run (crash loop, image pull) is named rather than waited for.
  // (Never towards an older release than the cluster runs: then the refusal is what is reported.)
  const heal = healStep(v.image, v.spec.replicas, live, () => true);
  if (heal !== undefined) return downgrade ?? heal;
  const stalled = stalledStep(v.image, live, v.pods, v.now, v.opts, v.spec.replicas);
  const untrusted = untrustedStep(live, specTlsSecret(v.cluster, v.spec), v.observed.namespace);
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

/**
 * Rule 7 with an active node: the quorum is counted from the voters of the raft configuration it reports (a new
 * server is a non-voter until autopilot promotes it), not from the pods. Fewer unsealed voters than a quorum ->
 * Degraded "QuorumLost" naming the missing voters (an active node without a quorum cannot commit, and its answer as
 * active does not last), after replacing an outdated pod that does not serve (a broken pod never blocks its fix);
 * no membership change, which would need the quorum.
 */
export function voterQuorumLost(r: RaftView): Step | undefined {
  const voters = r.servers.filter((s) => s.voter).map((s) => s.nodeID);
  const unsealed = voters.filter((id) => {
    const p = r.byName.get(id);
    return (
      p?.terminatingSince === undefined &&
      p?.vault.reachable === true &&
      p.vault.initialized &&
      !p.vault.sealed
    );
  });
  if (voters.length === 0 || unsealed.length >= quorum(voters.length)) return undefined;
  const fix = healStep(r.image, r.spec.replicas, r.live, () => true);
  if (fix !== undefined) return fix;
  const missing = voters.filter((id) => !unsealed.includes(id));
  return degraded(
    "QuorumLost",
    `${r.active.name} answers as active, but only ${unsealed.length} of ${voters.length} raft voters are unsealed (missing: ${missing.join(", ")}): a quorum needs ${quorum(voters.length)}; no membership change is made until the missing voters are back`,
    missing,
  );
}
