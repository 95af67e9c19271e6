// The one step of an EtcdCluster reconcile, decided in one pure place (issue 27, "thin sync"): what stops the
// membership planner before it is asked (the cluster's TLS not in place, etcd authentication the operator cannot
// use), what automatic recovery adds to a lost quorum (no usable survivor or backup, a failed automatic recovery),
// and when the CA rotation may take its steps (only on a cluster in sync, never beside a scale, an upgrade or a
// replacement). reconcile/cluster/controller.ts observes, asks this, and acts: it decides nothing itself.
import type { AutomaticRecoveryDecision } from "./automatic-recovery.ts";
import type { Step } from "./plan.ts";

/** The cluster's TLS when it is not in place: certificates still being issued (waiting) or refused. */
export interface TLSVerdict {
  reason: string;
  field: string;
  message: string;
  /** cert-manager has not issued them yet: a Wait, not Degraded. */
  waiting?: boolean;
}

/** What the step is decided from. */
export interface ClusterStepInput {
  /** Set when the cluster's TLS is not in place: etcd cannot be asked anything then. */
  tls?: TLSVerdict;
  /** Set when etcd authentication cannot be used (plan/auth.ts: the root Secret missing or unusable). */
  auth?: { reason: string; field: string; message: string };
  /** The membership planner (plan/plan.ts planNext), asked only when neither TLS nor auth stops it. */
  membership: () => Step;
  /** What automatic recovery decided this reconcile (see {@link automaticRecoveryMayRun}). */
  automatic: AutomaticRecoveryDecision;
}

/**
 * In order: TLS not in place -> Wait (certificates being issued) or Degraded naming the field; etcd authentication
 * unusable -> Degraded naming the field; else the membership planner's step, except that a lost quorum that
 * automatic recovery cannot help (no survivor and no backup of this cluster, or an automatic recovery that failed)
 * is Degraded AutomaticRecoveryNoBackup or AutomaticRecoveryFailed naming spec.recovery.automatic.
 */
export function planClusterStep(input: ClusterStepInput): Step {
  const { tls, auth, automatic } = input;
  if (tls !== undefined) {
    return tls.waiting === true
      ? { type: "Wait", reason: tls.reason, message: tls.message }
      : { type: "Degraded", reason: tls.reason, field: tls.field, message: tls.message };
  }
  if (auth !== undefined) return { type: "Degraded", ...auth };
  const planned = input.membership();
  if (planned.type === "QuorumLost" && (automatic.type === "NoBackup" || automatic.type === "Blocked")) {
    return {
      type: "Degraded",
      reason: automatic.type === "NoBackup" ? "AutomaticRecoveryNoBackup" : "AutomaticRecoveryFailed",
      field: "spec.recovery.automatic",
      message: automatic.message,
    };
  }
  return planned;
}

/**
 * Whether automatic recovery may judge this reconcile: not while the cluster's TLS is not in place. Without its
 * certificates the operator cannot ask etcd anything, and a silent etcd says nothing about its quorum then, so no
 * recovery is started and the recorded loss time is kept as it is.
 */
export function automaticRecoveryMayRun(tls: TLSVerdict | undefined): boolean {
  return tls === undefined;
}

/** Whether the CA rotation may take its step: only on a cluster in sync whose TLS is in place. */
export function caRotationMayRun(step: Step, tls: TLSVerdict | undefined): boolean {
  return step.type === "InSync" && tls === undefined;
}
