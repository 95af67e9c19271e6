// Pod pieces every operator's builders repeat: the security contexts that pass the Pod Security "restricted"
// profile, the default "one pod per node" anti-affinity, and container resources from a CRD's quantities.
import type { ObjectOf, Pod } from "../api/kinds.ts";
import type { ResourceQuantities } from "../api/schema.ts";

type PodSpec = NonNullable<ObjectOf<typeof Pod>["spec"]>;
type Container = PodSpec["containers"][number];
/** A pod's `spec.securityContext`. */
export type PodSecurityContext = NonNullable<PodSpec["securityContext"]>;
/** A container's `securityContext`. */
export type ContainerSecurityContext = NonNullable<Container["securityContext"]>;
/** A pod's `spec.affinity`. */
export type Affinity = NonNullable<PodSpec["affinity"]>;
/** A container's `resources`. */
export type ResourceRequirements = NonNullable<Container["resources"]>;

/**
 * The pod-level securityContext of the "restricted" profile: non-root as `uid`, group `gid` (default `uid`) which
 * also owns mounted volumes (fsGroup), seccomp RuntimeDefault.
 */
export function restrictedPodSecurityContext(uid: number, gid: number = uid): PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: gid,
    fsGroup: gid,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

/**
 * The container-level securityContext of the "restricted" profile: no privilege escalation, read-only root
 * filesystem, non-root, every capability dropped, seccomp RuntimeDefault; `runAsUser` when the container's image
 * would otherwise run as another user than the pod's.
 */
export function restrictedContainerSecurityContext(runAsUser?: number): ContainerSecurityContext {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
    ...(runAsUser === undefined ? {} : { runAsUser }),
  };
}

/**
 * Pod anti-affinity spreading the pods `matchLabels` selects over nodes (or over the domains of `topologyKey`, e.g.
 * topology.kubernetes.io/zone), so one node's (one domain's) loss costs one pod: "Preferred" (weight 100; the
 * default) lets the scheduler co-locate them when it must, "Required" leaves a pod Pending instead.
 */
export function spreadOverNodes(
  matchLabels: Record<string, string>,
  mode: "Preferred" | "Required" = "Preferred",
  topologyKey = "kubernetes.io/hostname",
): Affinity {
  const term = { topologyKey, labelSelector: { matchLabels } };
  if (mode === "Required")
    return { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
    },
  };
}

/**
 * A container's `resources` from a CRD's `{ limits?, requests? }`, whose quantities may be numbers (`cpu: 1`) or
 * strings: every quantity as a string, absent parts left out.
 */
export function resourceRequirements(r: ResourceQuantities): ResourceRequirements {
  const strings = (m: Record<string, string | number>) =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]));
  return {
    ...(r.limits === undefined ? {} : { limits: strings(r.limits) }),
    ...(r.requests === undefined ? {} : { requests: strings(r.requests) }),
  };
}
