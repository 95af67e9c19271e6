// The VaultRecovery planner's table: refusals, the survivor's choice, the fence, the fork, the survivor on
// peers.json, the rejoin, calling off, and an operator restarted anywhere (the plan is made from the objects alone).
import { describe, expect, it } from "vitest";
import { deletionHeld, planRecovery, type RecoveryObserved, type RecoveryServer } from "./recovery.ts";

const CID = "cid-1";

/** Overrides of a server; an undefined value removes the field. */
type Over = { [K in keyof RecoveryServer]?: RecoveryServer[K] | undefined };

/** A server of cluster demo: a live, unsealed standby with its claim, answering its indexes. */
function server(ordinal: number, over: Over = {}): RecoveryServer {
  const s: Record<string, unknown> = {
    name: `demo-${ordinal}`,
    ordinal,
    claim: true,
    claimUID: `uid-${ordinal}`,
    pod: "live",
    ready: true,
    vault: {
      reachable: true,
      initialized: true,
      sealed: false,
      standby: true,
      version: "1.14.8",
      clusterID: CID,
    },
    index: { applied: 100, committed: 100 },
    ...over,
  };
  for (const k of Object.keys(s)) if (s[k] === undefined) delete s[k];
  return s as unknown as RecoveryServer;
}

/** Gone: no pod (its claim kept). */
const gone = (ordinal: number, over: Over = {}) =>
  server(ordinal, {
    pod: "none",
    ready: false,
    ...over,
    vault: undefined,
    index: undefined,
  });

/** Gone with its data: no pod, no claim. */
const dead = (ordinal: number) => gone(ordinal, { claim: false, claimUID: undefined });

/** demo lost demo-1 and demo-2's pods (their claims kept); demo-0 answers alone. */
function lost(over: Partial<RecoveryObserved> = {}): RecoveryObserved {
  return {
    request: "dr",
    cluster: "demo",
    knownClusterID: CID,
    quorum: false,
    voters: ["demo-0", "demo-1", "demo-2"],
    servers: [server(0), dead(1), dead(2)],
    replaced: [],
    ...over,
  };
}

/** The survivor demo-0 marked by this request. */
const marked = (over: Partial<RecoveryObserved> = {}) =>
  lost({ survivorMark: "demo-0", finalizer: true, servers: [server(0), gone(1), gone(2)], ...over });

/** Forked on demo-0 (its claim marked "fork"), the others' claims recorded; demo-0 runs on peers.json. */
const forkedOn = (survivor: Over = {}, over: Partial<RecoveryObserved> = {}) =>
  marked({
    phase: "fork",
    replaced: [
      { claim: "data-demo-1", uid: "uid-1" },
      { claim: "data-demo-2", uid: "uid-2" },
    ],
    servers: [server(0, { recoveryPod: true, ...survivor }), gone(1), gone(2)],
    ...over,
  });

describe("planRecovery: refusals (nothing is changed)", () => {
  it("refuses while a quorum answers", () => {
    const step = planRecovery(lost({ quorum: true, active: "demo-0" }));
    expect(step).toMatchObject({ type: "Refuse", reason: "QuorumHealthy" });
  });

  it("refuses while a majority of the voters' pods are Ready by their kubelet (the operator may be cut off)", () => {
    const step = planRecovery(
      lost({
        servers: [
          server(0, { vault: { reachable: false, error: "connect ECONNREFUSED" } }),
          server(1, { vault: { reachable: false, error: "connect ECONNREFUSED" } }),
          dead(2),
        ],
      }),
    );
    expect(step).toMatchObject({ type: "Refuse", reason: "QuorumLossUnconfirmed" });
    expect(step.type === "Refuse" && step.message).toContain("2 of 3 raft voters' pods are Ready");
  });

  it("refuses when no server answers and none is named", () => {
    const step = planRecovery(
      lost({
        servers: [
          server(0, { ready: false, vault: { reachable: false, error: "timeout" } }),
          dead(1),
          dead(2),
        ],
      }),
    );
    expect(step).toMatchObject({ type: "Refuse", reason: "NoSurvivor", field: "spec.survivor" });
    expect(step.type === "Refuse" && step.message).toContain("demo-0: does not answer: timeout");
  });

  it("refuses when a server answers for this cluster but cannot say its raft indexes (its data cannot be compared)", () => {
    const step = planRecovery(
      lost({ servers: [server(0), server(1, { ready: false, index: { error: "500 internal" } }), dead(2)] }),
    );
    expect(step).toMatchObject({ type: "Refuse", reason: "SurvivorUnclear" });
    expect(step.type === "Refuse" && step.message).toContain(
      "demo-1 answers for this cluster but cannot say its raft indexes",
    );
  });

  it("refuses a named survivor without a data claim, or one answering uninitialized or for another cluster", () => {
    expect(
      planRecovery(
        lost({
          named: "demo-1",
          servers: [server(0), gone(1, { claim: false, claimUID: undefined }), dead(2)],
        }),
      ),
    ).toMatchObject({
      type: "Refuse",
      reason: "SurvivorHasNoData",
      field: "spec.survivor",
    });
    expect(planRecovery(lost({ named: "demo-4" }))).toMatchObject({
      type: "Refuse",
      reason: "SurvivorHasNoData",
    });
    const fresh = server(0, {
      vault: { reachable: true, initialized: false, sealed: true, standby: false, version: "1.14.8" },
    });
    expect(planRecovery(lost({ named: "demo-0", servers: [fresh, dead(1), dead(2)] }))).toMatchObject({
      type: "Refuse",
      reason: "SurvivorHasNoData",
    });
    const stranger = server(0, {
      vault: {
        reachable: true,
        initialized: true,
        sealed: false,
        standby: true,
        version: "1.14.8",
        clusterID: "other",
      },
    });
    expect(planRecovery(lost({ named: "demo-0", servers: [stranger, dead(1), dead(2)] }))).toMatchObject({
      type: "Refuse",
      reason: "SurvivorOtherCluster",
    });
  });
});

describe("planRecovery: the survivor", () => {
  it("is the server with the highest raft applied index, whatever its ordinal", () => {
    const step = planRecovery(
      lost({
        servers: [
          server(0, { index: { applied: 90, committed: 120 } }),
          server(1, { ready: false, index: { applied: 110, committed: 110 } }),
          dead(2),
        ],
      }),
    );
    expect(step).toMatchObject({ type: "MarkSurvivor", server: "demo-1", appliedIndex: 110 });
    expect(step.type === "MarkSurvivor" && step.candidates).toEqual([
      { server: "demo-0", appliedIndex: 90, committedIndex: 120 },
      { server: "demo-1", appliedIndex: 110, committedIndex: 110 },
      { server: "demo-2", excluded: "no data claim" },
    ]);
  });

  it("on equal applied indexes, the higher committed index; on equal both (the same data), the lowest ordinal", () => {
    const a = planRecovery(
      lost({
        servers: [
          server(0, { index: { applied: 100, committed: 100 } }),
          server(1, { ready: false, index: { applied: 100, committed: 104 } }),
          dead(2),
        ],
      }),
    );
    expect(a).toMatchObject({ type: "MarkSurvivor", server: "demo-1" });
    const b = planRecovery(
      lost({ servers: [dead(0), server(1, { ready: false }), server(2, { ready: false })] }),
    );
    expect(b).toMatchObject({ type: "MarkSurvivor", server: "demo-1" });
  });

  it("never a server answering for another cluster, however new its data", () => {
    const stranger = server(1, {
      ready: false,
      index: { applied: 9_999, committed: 9_999 },
      vault: {
        reachable: true,
        initialized: true,
        sealed: false,
        standby: false,
        version: "1.14.8",
        clusterID: "other",
      },
    });
    const step = planRecovery(lost({ servers: [server(0), stranger, dead(2)] }));
    expect(step).toMatchObject({ type: "MarkSurvivor", server: "demo-0" });
    expect(step.type === "MarkSurvivor" && step.candidates[1]?.excluded).toContain(
      "answers for another cluster",
    );
  });

  it("unseals a sealed server of this cluster first, so that it can say its indexes", () => {
    const sealed = server(1, {
      ready: false,
      index: undefined,
      vault: {
        reachable: true,
        initialized: true,
        sealed: true,
        standby: false,
        version: "1.14.8",
        clusterID: CID,
      },
    });
    expect(planRecovery(lost({ servers: [server(0), sealed, dead(2)] }))).toMatchObject({
      type: "Unseal",
      server: "demo-1",
    });
  });

  it("refuses to choose alone while a server that keeps its claim cannot be asked (its data may be newer, and its claim is replaced)", () => {
    const step = planRecovery(lost({ servers: [server(0), gone(1), dead(2)] }));
    expect(step).toMatchObject({ type: "Refuse", reason: "SurvivorUnclear", field: "spec.survivor" });
    expect(step.type === "Refuse" && step.message).toContain(
      "demo-1 keeps its data claim but cannot be asked",
    );
    // Named, the human accepts it: recovered from demo-0.
    expect(planRecovery(lost({ named: "demo-0", servers: [server(0), gone(1), dead(2)] }))).toMatchObject({
      type: "MarkSurvivor",
      server: "demo-0",
    });
  });

  it("a named survivor is taken as named, even when its pod is gone (its claim holds its data)", () => {
    expect(planRecovery(lost({ named: "demo-2", servers: [server(0), dead(1), gone(2)] }))).toMatchObject({
      type: "MarkSurvivor",
      server: "demo-2",
    });
  });
});

describe("planRecovery: fence before fork", () => {
  it("stops every other server's pod, one at a time, keeping its claim", () => {
    const step = planRecovery(marked({ servers: [server(0), server(1, { ready: false }), gone(2)] }));
    expect(step).toMatchObject({ type: "StopServer", server: "demo-1" });
    expect(planRecovery(marked({ servers: [server(0), gone(1), gone(2, { pod: "ended" })] }))).toMatchObject({
      type: "StopServer",
      server: "demo-2",
    });
  });

  it("waits while another server's pod is Terminating, naming it, since when and its node", () => {
    const since = new Date("2026-12-04T19:55:00Z");
    const step = planRecovery(
      marked({
        servers: [
          server(0),
          gone(1, { pod: "terminating", terminatingSince: since, node: "node-2" }),
          gone(2),
        ],
      }),
    );
    expect(step).toMatchObject({ type: "Wait", reason: "WaitingForFence", pods: ["demo-1"] });
    expect(step.type === "Wait" && step.message).toContain(
      "pod demo-1 is Terminating since 2026-12-04T19:55:00.000Z on node node-2: Vault may still be running behind a partition",
    );
  });

  it("forks once every other pod is gone: the claims to replace are recorded by uid", () => {
    expect(planRecovery(marked())).toMatchObject({
      type: "Fork",
      server: "demo-0",
      replaced: [
        { claim: "data-demo-1", uid: "uid-1" },
        { claim: "data-demo-2", uid: "uid-2" },
      ],
    });
  });

  it("a survivor whose claim went before the fork is refused (nothing was forked)", () => {
    const step = planRecovery(
      marked({ servers: [gone(0, { claim: false, claimTerminating: true }), gone(1), gone(2)] }),
    );
    expect(step).toMatchObject({ type: "Refuse", reason: "SurvivorLost" });
  });
});

describe("planRecovery: calling off", () => {
  it("deleted before the fork: the survivor mark is removed, then the finalizer released (Deleted)", () => {
    expect(planRecovery(marked({ deleting: true }))).toMatchObject({
      type: "RemoveSurvivorMark",
      server: "demo-0",
    });
    expect(planRecovery(lost({ deleting: true, finalizer: true }))).toMatchObject({
      type: "CallOff",
      reason: "Deleted",
    });
  });

  it("a quorum answering again before the fork cancels a started request (QuorumReturned)", () => {
    expect(planRecovery(marked({ quorum: true, active: "demo-0" }))).toMatchObject({
      type: "RemoveSurvivorMark",
    });
    expect(planRecovery(lost({ quorum: true, active: "demo-0", finalizer: true }))).toMatchObject({
      type: "CallOff",
      reason: "QuorumReturned",
    });
  });

  it("after the fork neither a deletion nor a quorum calls it off: the recovery goes on, the deletion is held", () => {
    const o = forkedOn(
      { pod: "none", recoveryPod: false },
      { deleting: true, quorum: true, active: "demo-0" },
    );
    expect(planRecovery(o)).toMatchObject({ type: "StartSurvivor", server: "demo-0" });
    expect(deletionHeld(o)).toContain("deletion waits until the survivor serves alone");
    expect(deletionHeld(marked({ deleting: true }))).toBeUndefined();
  });
});

describe("planRecovery: the survivor on peers.json", () => {
  it("starts the survivor's recovery pod once its old pod is gone, or replaces a pod made without it", () => {
    expect(planRecovery(forkedOn({ pod: "none", recoveryPod: false }))).toMatchObject({
      type: "StartSurvivor",
    });
    // The operator died between the fork mark and the pod's deletion: the old pod is replaced, never reused.
    expect(planRecovery(forkedOn({ recoveryPod: false }))).toMatchObject({ type: "StartSurvivor" });
  });

  it("names a failing peers.json init container (no raft data in the claim) instead of waiting in silence", () => {
    const step = planRecovery(
      forkedOn({
        initFailure: "exit 1: no raft data in /vault/data",
        vault: { reachable: false, error: "refused" },
      }),
    );
    expect(step).toMatchObject({ type: "Wait", reason: "PeersJsonFailed", pods: ["demo-0"] });
    expect(step.type === "Wait" && step.message).toContain("exit 1: no raft data in /vault/data");
  });

  it("waits for it to answer, unseals it, waits for its election", () => {
    expect(planRecovery(forkedOn({ vault: { reachable: false, error: "no IP" } }))).toMatchObject({
      type: "Wait",
      reason: "SurvivorStarting",
    });
    const sealed = {
      reachable: true as const,
      initialized: true,
      sealed: true,
      standby: false,
      version: "1.14.8",
    };
    expect(planRecovery(forkedOn({ vault: sealed }))).toMatchObject({ type: "Unseal", server: "demo-0" });
    expect(planRecovery(forkedOn())).toMatchObject({ type: "Wait", reason: "ElectingLeader" });
  });

  it("verifies it leads alone: a configuration still listing the others is not progress", () => {
    const peer = (id: string, leader = false) => ({ nodeID: id, address: `${id}:8201`, voter: true, leader });
    const three = forkedOn(
      {},
      { active: "demo-0", raft: { servers: [peer("demo-0", true), peer("demo-1"), peer("demo-2")] } },
    );
    expect(planRecovery(three)).toMatchObject({ type: "Wait", reason: "PeersNotApplied" });
    const alone = forkedOn({}, { active: "demo-0", raft: { servers: [peer("demo-0", true)] } });
    expect(planRecovery(alone)).toMatchObject({ type: "Verified", server: "demo-0" });
  });

  it("stops a pod of another server that appears after the fork (its old data must not rejoin)", () => {
    const step = planRecovery(
      forkedOn({}, { servers: [server(0, { recoveryPod: true }), server(1, { ready: false }), gone(2)] }),
    );
    expect(step).toMatchObject({ type: "StopServer", server: "demo-1" });
  });
});

describe("planRecovery: rejoin", () => {
  const rejoin = (servers: RecoveryServer[]) => forkedOn({}, { phase: "rejoin", active: "demo-0", servers });

  it("deletes each replaced claim (recorded by uid), then hands the cluster back to its own planner", () => {
    expect(planRecovery(rejoin([server(0, { recoveryPod: true }), gone(1), gone(2)]))).toMatchObject({
      type: "WipeServer",
      server: "demo-1",
      claim: "data-demo-1",
    });
    // demo-1's claim is a new one (another uid: the cluster's planner made it): never deleted.
    const step = planRecovery(
      rejoin([
        server(0, { recoveryPod: true }),
        gone(1, { claimUID: "new-1" }),
        gone(2, { claim: false, claimUID: undefined }),
      ]),
    );
    expect(step).toMatchObject({ type: "Rejoin" });
  });

  it("after an operator restart with every status lost, the marks on the survivor's claim say where it is", () => {
    // Nothing in the request's status: the phase, the survivor and the claims to replace are read from the claim.
    const o = rejoin([server(0, { recoveryPod: true }), gone(1, { claimUID: "new-1" }), gone(2)]);
    expect(planRecovery(o)).toMatchObject({ type: "WipeServer", server: "demo-2" });
  });
});
