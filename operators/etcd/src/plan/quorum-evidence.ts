// Judging a loss of quorum from independent evidence (issue 27). "The operator cannot reach etcd" is never proof
// that etcd is down: a wrong password, a TLS mismatch, a NetworkPolicy, DNS or a partition on the operator's side
// look the same. Destructive recovery (automatic, or an EtcdRestore) needs the members' own readiness as their
// kubelet probes it (/readyz fails without a quorum): a loss is confirmed only when a majority of the voting
// members' pods is NOT Ready and the operator's failures are not authentication or TLS errors. Pure.
import { quorum } from "@capstan/core";
import type { EtcdFailureKind, Observed, ObservedPod, Step } from "./types.ts";

export type { EtcdFailureKind } from "./types.ts";

const AUTH = [
  "permission denied",
  "authentication failed",
  "invalid auth token",
  "user name is empty",
  "auth store is old",
  "authentication is on and the operator has no credentials",
  "user name not found",
  "invalid auth management",
];
const TLS = [
  "certificate",
  "unable to verify",
  "self-signed",
  "self signed",
  "unknown ca",
  "handshake",
  "err_tls",
  "err_ssl",
  "ssl alert",
  "ssl routines",
  "wrong version number",
  "altname",
  "client sent an http request to an https server",
];
const NETWORK = [
  "econnrefused",
  "etimedout",
  "ehostunreach",
  "enetunreach",
  "enotfound",
  "eai_again",
  "econnreset",
  "epipe",
  "timed out",
  "timeout",
  "other side closed",
  "socket hang up",
  "und_err_socket",
  "no member pod has an ip address",
];

/**
 * Classifies a failure from its text (an EtcdError's message lists every endpoint's). Authentication first (etcd
 * answered), then TLS, then the network; anything else etcd said is its own error. Of several endpoints' failures
 * the strongest wins: one TLS failure among refused connections is a TLS problem.
 */
export function classifyEtcdFailure(message: string): EtcdFailureKind {
  const text = message.toLowerCase();
  if (AUTH.some((s) => text.includes(s))) return "auth";
  if (TLS.some((s) => text.includes(s))) return "tls";
  if (NETWORK.some((s) => text.includes(s))) return "network";
  return text.includes("etcdserver") || /http \d{3}/.test(text) ? "etcd" : "network";
}

/** What the evidence says of the quorum the operator could not see. */
export type QuorumJudgement =
  /** The operator sees a quorum of healthy voters. */
  | { state: "Healthy" }
  /** Confirmed: a majority of the voters' pods is not Ready by its kubelet, and the operator is not shut out. */
  | { state: "Lost"; message: string }
  /**
   * The operator sees no quorum but cannot confirm a loss: its own calls fail for authentication or TLS, or a
   * majority of the voters' pods is Ready by its kubelet. Nothing is recovered; Degraded with this reason.
   */
  | {
      state: "Unconfirmed";
      reason: "AuthFailed" | "TLSFailed" | "OperatorCutOff";
      field?: string;
      message: string;
    };

/** Ready by the kubelet's probe and, when the kubelet reported it, with its etcd container running. */
export function readyByKubelet(pod: ObservedPod | undefined): boolean {
  return pod?.ready === true && pod.running !== false;
}

/** The voting members the judgement counts: etcd's list when it answered, else the ones status last saw. */
function voters(observed: Observed): string[] {
  const { etcd } = observed;
  if (etcd.reachable) return etcd.members.filter((m) => !m.isLearner).map((m) => m.name);
  if ((observed.knownVoters ?? []).length > 0) return [...(observed.knownVoters ?? [])];
  if ((observed.knownMembers ?? []).length > 0) return [...(observed.knownMembers ?? [])];
  return [...new Set([...observed.pods.map((p) => p.name), ...observed.volumes])];
}

const STRENGTH: Record<EtcdFailureKind, number> = { auth: 3, tls: 2, network: 1, etcd: 0 };

/** The operator's failure, its kind and text: the member list's, or the unhealthy voters' health checks'. */
function operatorFailure(observed: Observed): { kind: EtcdFailureKind; text: string } | undefined {
  const { etcd } = observed;
  if (!etcd.reachable) {
    const kind =
      observed.auth?.failure !== undefined ? "auth" : (etcd.failure ?? classifyEtcdFailure(etcd.error));
    return { kind, text: etcd.error };
  }
  const failures = etcd.members
    .filter((m) => !m.isLearner && !m.healthy && m.healthError !== undefined)
    .map((m) => ({
      kind: m.healthFailure ?? classifyEtcdFailure(m.healthError!),
      text: `${m.name}: ${m.healthError}`,
    }));
  if (failures.length === 0) return undefined;
  const kind = failures.map((f) => f.kind).sort((a, b) => STRENGTH[b] - STRENGTH[a])[0]!;
  return { kind, text: failures.map((f) => f.text).join("; ") };
}

/**
 * The judgement, in order: a quorum of healthy voters answers -> Healthy. The operator's failures are
 * authentication errors -> Unconfirmed AuthFailed; TLS errors -> Unconfirmed TLSFailed (whatever the pods say:
 * the operator cannot see, so it must not act). A majority of the voters' pods Ready by their kubelet ->
 * Unconfirmed OperatorCutOff. Else Lost. Each message names the evidence.
 */
export function judgeQuorum(observed: Observed): QuorumJudgement {
  const { etcd } = observed;
  const names = voters(observed);
  if (etcd.reachable) {
    const healthy = etcd.members.filter((m) => !m.isLearner && m.healthy).length;
    if (names.length > 0 && healthy >= quorum(names.length)) return { state: "Healthy" };
  }
  const pods = new Map(observed.pods.map((p) => [p.name, p]));
  const ready = names.filter((n) => readyByKubelet(pods.get(n))).sort();
  const needed = quorum(names.length);
  const kubelet = `${ready.length} of ${names.length} voting members' pods are Ready by their kubelet probes${ready.length === 0 ? "" : ` (${ready.join(", ")})`}, a quorum needs ${needed}`;
  const failure = operatorFailure(observed);
  const seen = etcd.reachable
    ? `${etcd.members.filter((m) => !m.isLearner && m.healthy).length} of ${names.length} voting members answer the operator's health checks${failure === undefined ? "" : ` (${failure.text})`}`
    : `no etcd member answers the operator (${etcd.error})`;
  const noRecovery =
    "no recovery is started and nothing is removed while the loss of quorum is not confirmed";
  if (failure?.kind === "auth") {
    return {
      state: "Unconfirmed",
      reason: "AuthFailed",
      field: "spec.auth.rootSecretRef",
      message: `etcd refuses the operator's credentials (${failure.text}); ${kubelet}: fix the root Secret (spec.auth.rootSecretRef, key password) to match etcd's root password; ${noRecovery}`,
    };
  }
  if (failure?.kind === "tls") {
    return {
      state: "Unconfirmed",
      reason: "TLSFailed",
      field: "spec.tls",
      message: `the operator's TLS handshake with the members fails (${failure.text}); ${kubelet}: check that the members' certificates and the operator's client certificate come from the CA of spec.tls; ${noRecovery}`,
    };
  }
  if (names.length > 0 && ready.length >= needed) {
    return {
      state: "Unconfirmed",
      reason: "OperatorCutOff",
      message: `${seen}, but ${kubelet}: the members serve, the operator is cut off from them; check NetworkPolicies (the operator's pods must reach the client port 2379), DNS and the network of the operator's node; ${noRecovery}`,
    };
  }
  return { state: "Lost", message: `${seen}; ${kubelet}` };
}

/**
 * The planner's step when no quorum answers the operator and no member can be restarted on its data: QuorumLost
 * when the evidence confirms the loss, else Degraded naming what the operator saw and what the kubelet says.
 */
export function quorumLost(observed: Observed): Step {
  const judged = judgeQuorum(observed);
  if (judged.state === "Unconfirmed") {
    const { reason, field, message } = judged;
    return { type: "Degraded", reason, ...(field === undefined ? {} : { field }), message };
  }
  const why = judged.state === "Lost" ? judged.message : "no quorum answers";
  return { type: "QuorumLost", message: `${why}; nothing is removed until a quorum is back` };
}
