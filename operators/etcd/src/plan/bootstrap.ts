// Rule 2 of planNext, when no member answers: restart members on their kept data (how a cluster whose pods all
// went away comes back), else quorum loss for the evidence to confirm; never bootstrapped: restart on the claims
// that exist (a lost status never leads to a second cluster), wait for the seed, or create it (restored first
// with spec.bootstrap.restore).
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { versionGate } from "./gates.ts";
import { quorumLost } from "./quorum-evidence.ts";
import { planRestore } from "./restore.ts";
import type { Observed, PlanOptions, Step } from "./types.ts";
import { wait } from "./view.ts";

/** The step when etcd is unreachable (no member answered). */
export function planUnreachable(spec: EtcdClusterSpec, observed: Observed, options: PlanOptions): Step {
  if (observed.bootstrapped) {
    const refused = versionGate(spec, observed.knownVersion);
    if (refused !== undefined) return refused;
    return (
      // The members last seen, and every member whose data claim exists: status.members can be empty or stale
      // (status wiped, then clusterID recovered before any member answered), and waiting for a quorum that only
      // these pods can bring back would wait for ever. Starting a pod on its own data never makes a new cluster.
      restartOnData(spec, observed, [...new Set([...(observed.knownMembers ?? []), ...observed.volumes])]) ??
      quorumLost(observed)
    );
  }
  const restoring = planRestore(spec, observed, options);
  if (restoring !== undefined) return restoring;
  const seed = observed.volumes.length === 1 ? observed.volumes[0] : undefined;
  if (
    seed !== undefined &&
    observed.pods.length === 0 &&
    (observed.terminating ?? []).length === 0 &&
    (observed.seedVolumes ?? []).includes(seed)
  ) {
    // The only claim is a seed's whose pod was never made (the operator stopped between the two), or a one-member
    // cluster's seed: starting it as a new cluster is safe either way, because etcd ignores the bootstrap flags
    // when the data directory holds a member and resumes that member.
    return {
      type: "CreateSeed",
      name: seed,
      message: `starting seed member ${seed} on its claim, made by an earlier CreateSeed`,
    };
  }
  if (observed.volumes.length > 0) {
    // status.clusterID is lost but the members' data is not: bring the same cluster back from its data
    // (a seed being created has its pod, so it is not restarted).
    const restart = restartOnData(spec, observed, observed.volumes);
    if (restart !== undefined) return restart;
  }
  if (observed.pods.length === 0 && observed.volumes.length === 0) {
    if ((observed.terminating ?? []).length > 0) {
      return wait(
        "PodTerminating",
        `waiting for ${observed.terminating?.map((p) => p.name).join(", ")} to go away`,
      );
    }
    return {
      type: "CreateSeed",
      name: options.freshName,
      message: `bootstrapping with seed member ${options.freshName}`,
    };
  }
  const lost = observed.pods.filter((p) => p.dataLost === true);
  if (lost.length > 0 && lost.length === observed.pods.length) {
    return {
      type: "Degraded",
      reason: "DataLost",
      message: `no status.clusterID is recorded and ${lost.map((p) => p.name).join(", ")} found an empty data directory: the data claims hold no cluster; delete the EtcdCluster's claims to bootstrap a new cluster (nothing is deleted automatically)`,
    };
  }
  return wait("SeedStarting", `waiting for member ${observed.pods.map((p) => p.name).join(", ")} to answer`);
}

/** StartMemberPod for the first of `names` whose pod is gone and whose data volume is kept, if any. */
export function restartOnData(spec: EtcdClusterSpec, observed: Observed, names: string[]): Step | undefined {
  if (spec.storage.ephemeral === true) return undefined;
  const withPod = new Set(observed.pods.map((p) => p.name));
  const name = [...names].sort().find((n) => !withPod.has(n) && observed.volumes.includes(n));
  if (name === undefined) return undefined;
  return {
    type: "StartMemberPod",
    name,
    reason: "PodMissing",
    message: `the pod of member ${name} is gone while the cluster has no quorum; restarting it on its data volume`,
  };
}
