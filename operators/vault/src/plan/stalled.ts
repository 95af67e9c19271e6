// Pods that do not move on their own (rule 10 of the planner): the kubelet's own evidence (crash loops, image
// pulls, container errors), the scheduler's (unschedulable), and time (Pending or terminating too long). Each is
// reported as Degraded naming the pod and what Kubernetes says about it; no claim is ever deleted for it.
import { DEFAULT_ANTI_AFFINITY, DEFAULT_TOPOLOGY_KEY, type VaultPodTemplate } from "../api/vault-cluster.ts";
import type { ContainerFailure, ObservedPod, Step } from "./types.ts";

export type { ContainerFailure } from "./types.ts";

/** Timings of {@link stalledStep} (the planner's options). */
export interface StalledTimings {
  unschedulableAfterMs: number;
  pendingAfterMs: number;
  terminatingAfterMs: number;
  /** What the spec's placement says about an unschedulable pod (e.g. one voter per node required). */
  unschedulableHint?: string;
}

/**
 * What spec.podTemplate's voter spread says about a pod that finds no node: with the default anti-affinity (no
 * affinity of the user's), Required means every voter needs a node (a domain of topologyKey) of its own.
 */
export function spreadHint(
  template: Pick<VaultPodTemplate, "affinity" | "antiAffinity" | "topologyKey"> | undefined,
  replicas: number,
): string | undefined {
  if (template?.affinity !== undefined || (template?.antiAffinity ?? DEFAULT_ANTI_AFFINITY) !== "Required")
    return undefined;
  const key = template?.topologyKey ?? DEFAULT_TOPOLOGY_KEY;
  return `spec.podTemplate.antiAffinity is Required: each of the ${replicas} voters needs a node of its own (a distinct ${key}), so that no node holds a quorum; add nodes, or set it to Preferred where there are fewer (e.g. a single-node cluster)`;
}

/** Waiting reasons of a container that the kubelet will not get running by itself (besides image pulls). */
export const CONTAINER_FAILURE_REASONS: ReadonlySet<string> = new Set([
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

/** One line on a failing container: the kubelet's reason, restarts, and the last exit with its message. */
export function describeContainerFailure(f: ContainerFailure): string {
  const parts = [`its vault container is in ${f.reason}`];
  if (f.message !== undefined && f.message !== "") parts[0] += ` (${f.message})`;
  if (f.restarts > 0) parts.push(`restarted ${f.restarts} times`);
  if (f.lastExit !== undefined) {
    const how = f.lastExit.reason === undefined ? "" : ` (${f.lastExit.reason})`;
    const msg =
      f.lastExit.message === undefined || f.lastExit.message === ""
        ? ""
        : `: ${f.lastExit.message.trim().split("\n").slice(-3).join(" / ").slice(0, 300)}`;
    parts.push(`last exit code ${f.lastExit.exitCode}${how}${msg}`);
  }
  return parts.join(", ");
}

/**
 * The first stalled pod as a step: an older image spec no longer asks for that cannot be pulled -> UpgradePod (the
 * rollout heals it); else Degraded naming every stalled pod below `replicas` (or terminating for too long), the
 * reason of the first.
 */
export function stalledStep(
  image: string,
  live: ObservedPod[],
  all: ObservedPod[],
  now: Date,
  opts: StalledTimings,
  replicas = Number.POSITIVE_INFINITY,
): Step | undefined {
  const age = (since: Date) => now.getTime() - since.getTime();
  for (const p of live) {
    if (p.imagePullError !== undefined && p.imagePullError.image !== image) {
      return {
        type: "UpgradePod",
        pod: p.name,
        from: p.imagePullError.image,
        to: image,
        message: `${p.name} cannot pull ${p.imagePullError.image} (${p.imagePullError.reason}), which spec no longer asks for; moving it to ${image}`,
      };
    }
  }
  const stalled: { pod: string; reason: string; why: string }[] = [];
  for (const p of all) {
    if (p.terminatingSince !== undefined && age(p.terminatingSince) >= opts.terminatingAfterMs) {
      stalled.push({
        pod: p.name,
        reason: "PodStuckTerminating",
        why: `has been terminating for ${Math.round(age(p.terminatingSince) / 1000)}s (its node may be unreachable; delete it with --force once the node is gone)`,
      });
    } else if (p.terminatingSince !== undefined || p.ordinal >= replicas) {
      // Terminating: not yet long. Beyond spec.replicas: the scale-in deletes it (a pod never scheduled too).
    } else if (p.imagePullError !== undefined) {
      stalled.push({
        pod: p.name,
        reason: "ImagePullFailed",
        why: `cannot pull ${p.imagePullError.image} (${p.imagePullError.reason}): fix spec.repository/spec.version or the registry`,
      });
    } else if (p.containerFailure !== undefined) {
      const f = p.containerFailure;
      stalled.push({
        pod: p.name,
        reason: f.reason === "CrashLoopBackOff" ? "PodCrashLooping" : "PodContainerFailed",
        why: `does not run: ${describeContainerFailure(f)}; see kubectl logs --previous ${p.name} -c vault`,
      });
    } else if (p.unschedulableSince !== undefined && age(p.unschedulableSince) >= opts.unschedulableAfterMs) {
      stalled.push({
        pod: p.name,
        reason: "PodUnschedulable",
        why: `has found no node for ${Math.round(age(p.unschedulableSince) / 1000)}s: check its nodeSelector, tolerations, affinity and resources${opts.unschedulableHint === undefined ? "" : `; ${opts.unschedulableHint}`}`,
      });
    } else if (p.pendingSince !== undefined && age(p.pendingSince) >= opts.pendingAfterMs) {
      stalled.push({
        pod: p.name,
        reason: "PodPending",
        why: `has been Pending for ${Math.round(age(p.pendingSince) / 1000)}s (its data claim may not bind)`,
      });
    }
  }
  const first = stalled[0];
  if (first === undefined) return undefined;
  return {
    type: "Degraded",
    reason: first.reason,
    message: `${stalled.map((s) => `${s.pod} ${s.why}`).join("; ")}; the rollout waits on it and no data claim is deleted`,
    pods: stalled.map((s) => s.pod),
  };
}
