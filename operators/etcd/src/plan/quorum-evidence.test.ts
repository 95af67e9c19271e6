// Issue 27: a loss of quorum judged from evidence that does not pass through the operator alone. Table cases through
// the membership planner, the automatic-recovery decision and an EtcdRestore's "quorum healthy" check: the operator
// cut off by a NetworkPolicy, refused by etcd's auth, failing TLS, against a real loss (the members' pods not Ready).
import { describe, expect, it } from "vitest";
import { planAutomaticRecovery } from "./automatic-recovery.ts";
import { type Observed, type ObservedPod, planNext, type Step } from "./plan.ts";
import { classifyEtcdFailure, type EtcdFailureKind, judgeQuorum, readyByKubelet } from "./quorum-evidence.ts";
import { planRecovery } from "./recovery.ts";
import { member, spec } from "./test-builders.ts";

const NOW = new Date("2026-12-04T12:00:00Z");
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);
const NAMES = ["demo-a", "demo-b", "demo-c"];
const REFUSED =
  "member list: no etcd endpoint answered (http://10.0.0.1:2379, http://10.0.0.2:2379, http://10.0.0.3:2379): http://10.0.0.1:2379: connect ECONNREFUSED 10.0.0.1:2379; http://10.0.0.2:2379: connect ECONNREFUSED 10.0.0.2:2379; http://10.0.0.3:2379: connect ECONNREFUSED 10.0.0.3:2379";
const TLS_ERROR =
  "member list: no etcd endpoint answered (https://10.0.0.1:2379): https://10.0.0.1:2379: UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate";
const AUTH_ERROR = "etcd http://10.0.0.1:2379: member list: etcdserver: permission denied";

const pod = (name: string, o: Partial<ObservedPod> = {}): ObservedPod => ({
  name,
  ready: true,
  running: true,
  ...o,
});

/** A bootstrapped three-member cluster the operator cannot reach; `ready` of its pods Ready by their kubelet. */
const unreachable = (
  ready: number,
  error: string,
  failure?: EtcdFailureKind,
  o: Partial<Observed> = {},
): Observed => ({
  etcd: { reachable: false, error, ...(failure === undefined ? {} : { failure }) },
  pods: NAMES.map((n, i) => (i < ready ? pod(n) : pod(n, { ready: false, notReadySince: secondsAgo(3600) }))),
  volumes: [...NAMES],
  bootstrapped: true,
  knownMembers: [...NAMES],
  knownVoters: [...NAMES],
  ...o,
});

const plan = (observed: Observed): Step => planNext(spec(), observed, NOW, { freshName: "demo-x" });

/** The automatic-recovery decision for `observed`, the loss recorded an hour ago (afterSeconds 600). */
const automatic = (observed: Observed) => {
  const judged = judgeQuorum(observed);
  return planAutomaticRecovery({
    enabled: true,
    afterSeconds: 600,
    paused: false,
    bootstrapped: true,
    quorum: judged.state === "Healthy",
    ...(judged.state === "Unconfirmed" ? { unconfirmed: judged } : {}),
    lostSince: secondsAgo(3600),
    now: NOW,
    restores: [],
    backups: [{ name: "nightly", phase: "Succeeded", completionTime: secondsAgo(7200), clusterID: "c1" }],
    clusterIDs: ["c1"],
    nameFor: () => "demo-auto-x",
  });
};

/** An EtcdRestore (from: Survivor, not started, every member answering its status alone) asked for `observed`. */
const requested = (observed: Observed) => {
  const judged = judgeQuorum(observed);
  return planRecovery({
    request: "dr",
    from: "Survivor",
    quorum: judged.state === "Healthy",
    ...(judged.state === "Unconfirmed" ? { unconfirmed: judged } : {}),
    members: NAMES.map((name) => ({
      name,
      claimOwned: true,
      pod: true,
      status: { raftIndex: 10, revision: 5, clusterID: "ff" },
    })),
  });
};

describe("classifyEtcdFailure", () => {
  it.each([
    [REFUSED, "network"],
    ["member list: no etcd endpoint answered (x): x: timed out", "network"],
    ["x: getaddrinfo ENOTFOUND demo-a.demo-peer.ns.svc", "network"],
    ["x: connect EHOSTUNREACH 10.0.0.1:2379", "network"],
    ["x: UND_ERR_CONNECT_TIMEOUT Connect Timeout Error", "network"],
    [TLS_ERROR, "tls"],
    ["x: ERR_SSL_TLSV1_ALERT_UNKNOWN_CA tlsv1 alert unknown ca", "tls"],
    ["x: DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate", "tls"],
    [AUTH_ERROR, "auth"],
    ["etcd x: authenticate as root: etcdserver: authentication failed, invalid user ID or password", "auth"],
    ["etcd x: range: etcdserver: invalid auth token", "auth"],
    ["etcd x: member list: etcdserver: no leader", "etcd"],
    ["x: HTTP 503: [-]linearizable_read failed", "etcd"],
  ])("%s -> %s", (message, kind) => expect(classifyEtcdFailure(message)).toBe(kind));
});

describe("judging a loss of quorum from independent evidence", () => {
  it("all pods Ready by their kubelet, the operator refused (NetworkPolicy): Degraded OperatorCutOff naming both, never QuorumLost", () => {
    const observed = unreachable(3, REFUSED, "network");
    const step = plan(observed);
    expect(step).toMatchObject({ type: "Degraded", reason: "OperatorCutOff" });
    if (step.type !== "Degraded") throw new Error("unreachable");
    expect(step.message).toContain("3 of 3 voting members' pods are Ready by their kubelet probes");
    expect(step.message).toContain("ECONNREFUSED");
    expect(step.message).toContain("NetworkPolicies");
    // An armed clock (lost an hour ago, afterSeconds 600) does not fire: it is reset.
    expect(automatic(observed)).toEqual({ type: "None" });
    expect(requested(observed)).toMatchObject({ type: "Refuse", reason: "QuorumLossUnconfirmed" });
  });

  it("a majority (2 of 3) Ready, the third down, the operator timing out: still cut off, no recovery", () => {
    const observed = unreachable(2, "member list: no etcd endpoint answered (x): x: timed out");
    expect(plan(observed)).toMatchObject({ type: "Degraded", reason: "OperatorCutOff" });
    expect(automatic(observed).type).toBe("None");
  });

  it("a Ready pod whose etcd container is not running does not count", () => {
    expect(readyByKubelet(pod("demo-a", { running: false }))).toBe(false);
    expect(readyByKubelet({ name: "demo-a", ready: true })).toBe(true);
    const observed = unreachable(3, REFUSED, "network", {
      pods: [pod("demo-a"), pod("demo-b", { running: false }), pod("demo-c", { ready: false })],
    });
    expect(plan(observed).type).toBe("QuorumLost");
  });

  it("majority Ready and etcd refuses the operator's credentials: Degraded AuthFailed, no recovery", () => {
    const observed = unreachable(3, AUTH_ERROR, "auth");
    expect(plan(observed)).toMatchObject({
      type: "Degraded",
      reason: "AuthFailed",
      field: "spec.auth.rootSecretRef",
    });
    expect(automatic(observed).type).toBe("None");
    expect(requested(observed)).toMatchObject({ type: "Refuse", reason: "QuorumLossUnconfirmed" });
  });

  it("an authentication failure is never a loss of quorum, even with the pods not Ready", () => {
    const observed = unreachable(0, AUTH_ERROR);
    expect(judgeQuorum(observed)).toMatchObject({ state: "Unconfirmed", reason: "AuthFailed" });
    expect(automatic(observed).type).toBe("None");
  });

  it("a TLS failure: Degraded TLSFailed naming spec.tls, no recovery, even with the pods not Ready", () => {
    for (const ready of [3, 0]) {
      const observed = unreachable(ready, TLS_ERROR);
      const step = plan(observed);
      expect(step).toMatchObject({ type: "Degraded", reason: "TLSFailed", field: "spec.tls" });
      if (step.type === "Degraded") expect(step.message).toContain("unable to verify the first certificate");
      expect(automatic(observed).type).toBe("None");
      expect(requested(observed)).toMatchObject({ type: "Refuse", reason: "QuorumLossUnconfirmed" });
    }
  });

  it("a majority of pods NOT Ready and the operator refused: QuorumLost as before, recovery after afterSeconds", () => {
    const observed = unreachable(1, REFUSED, "network");
    const step = plan(observed);
    expect(step.type).toBe("QuorumLost");
    expect(step.message).toContain("1 of 3 voting members' pods are Ready");
    expect(automatic(observed)).toMatchObject({ type: "CreateRestore", backup: "nightly" });
    expect(requested(observed)).toMatchObject({ type: "MarkSurvivor" });
  });

  it("etcd answers, but the operator's health checks of two voters are refused while their pods are Ready: cut off", () => {
    const refused = {
      healthy: false,
      healthError: "connect ECONNREFUSED",
      healthFailure: "network",
    } as const;
    const observed: Observed = {
      etcd: {
        reachable: true,
        members: [member("demo-a", { leader: true }), member("demo-b", refused), member("demo-c", refused)],
      },
      pods: NAMES.map((n) => pod(n)),
      volumes: [...NAMES],
      bootstrapped: true,
    };
    expect(plan(observed)).toMatchObject({ type: "Degraded", reason: "OperatorCutOff" });
    expect(automatic(observed).type).toBe("None");
    // The same answers with the two pods not Ready: a loss.
    const lost = {
      ...observed,
      pods: [pod("demo-a"), pod("demo-b", { ready: false }), pod("demo-c", { ready: false })],
    };
    expect(plan(lost).type).toBe("QuorumLost");
    expect(automatic(lost).type).toBe("CreateRestore");
  });

  it("a quorum answering the operator is healthy whatever else", () => {
    const observed: Observed = {
      etcd: { reachable: true, members: NAMES.map((n) => member(n)) },
      pods: NAMES.map((n) => pod(n)),
      volumes: [...NAMES],
      bootstrapped: true,
    };
    expect(judgeQuorum(observed)).toEqual({ state: "Healthy" });
  });

  it("the voters are status.members without learners: a Ready learner's pod is no evidence of a quorum", () => {
    const observed = unreachable(1, REFUSED, "network", {
      pods: [pod("demo-a"), pod("demo-b", { ready: false }), pod("demo-c", { ready: false }), pod("demo-l")],
      knownMembers: [...NAMES, "demo-l"],
      knownVoters: [...NAMES],
    });
    expect(plan(observed).type).toBe("QuorumLost");
  });
});
