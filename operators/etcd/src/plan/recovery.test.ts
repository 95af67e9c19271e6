// Table tests of the disaster-recovery planner, and a simulation of a recovery interrupted at every step whose
// next leader knows only what is on the objects (no memory of the last one's choice).
import { describe, expect, it } from "vitest";
import { planRecovery, type RecoveryMember, type RecoveryObserved, type RecoveryStep } from "./recovery.ts";

const m = (name: string, o: Partial<RecoveryMember> = {}): RecoveryMember => ({
  name,
  claimOwned: true,
  pod: true,
  ...o,
});
const st = (raftIndex: number, revision = raftIndex) => ({ raftIndex, revision, clusterID: "c1" });
const obs = (members: RecoveryMember[], o: Partial<RecoveryObserved> = {}): RecoveryObserved => ({
  request: "dr",
  from: "Survivor",
  quorum: false,
  members,
  ...o,
});

type Case = [string, RecoveryObserved, Partial<RecoveryStep>];

const cases: Case[] = [
  [
    "a quorum answers: refused, nothing changed",
    obs([m("a", { status: st(10) }), m("b", { status: st(10) }), m("c")], { quorum: true }),
    { type: "Refuse", reason: "QuorumHealthy" },
  ],
  [
    "one survivor: marked first",
    obs([m("a"), m("b", { status: st(120, 40) }), m("c")]),
    { type: "MarkSurvivor", name: "b", raftIndex: 120, revision: 40 },
  ],
  [
    "two survivors: the higher raft index wins, whatever the names",
    obs([m("a", { status: st(100) }), m("b"), m("c", { status: st(130) })]),
    { type: "MarkSurvivor", name: "c" },
  ],
  [
    "two survivors with the same raft index: the higher revision wins",
    obs([m("a", { status: st(100, 7) }), m("b", { status: st(100, 9) }), m("c")]),
    { type: "MarkSurvivor", name: "b" },
  ],
  [
    "two survivors equal in everything: the first name (a stable choice)",
    obs([m("b", { status: st(100) }), m("a", { status: st(100) })]),
    { type: "MarkSurvivor", name: "a" },
  ],
  [
    "a member that answers but whose claim is not owned is no survivor",
    obs([m("a", { claimOwned: false, status: st(500) }), m("b", { status: st(100) })]),
    { type: "MarkSurvivor", name: "b" },
  ],
  [
    "no survivor: refused, recover from a backup",
    obs([m("a"), m("b"), m("c", { pod: false })]),
    { type: "Refuse", reason: "NoSurvivor" },
  ],
  [
    "survivor marked: the other claims are kept one at a time, never deleted",
    obs([m("a"), m("b", { survivorMark: true, status: st(120) }), m("c")]),
    { type: "KeepClaim", name: "a" },
  ],
  [
    "new leader after one claim was kept: the marked survivor stays chosen, although another now answers higher",
    obs([
      m("a", { claimOwned: false, claimKept: true }),
      m("b", { survivorMark: true, status: st(120) }),
      m("c", { status: st(900) }),
    ]),
    { type: "KeepClaim", name: "c" },
  ],
  [
    "claims kept: the replaced members' pods are stopped",
    obs([
      m("a", { claimOwned: false, claimKept: true }),
      m("b", { survivorMark: true, status: st(120), membersListed: 3 }),
      m("c", { claimOwned: false, claimKept: true, pod: false }),
    ]),
    { type: "StopMember", name: "a" },
  ],
  [
    "others stopped: the survivor restarts with --force-new-cluster",
    obs([
      m("a", { claimOwned: false, claimKept: true, pod: false }),
      m("b", { survivorMark: true, status: st(120), membersListed: 3 }),
    ]),
    { type: "ForceNewCluster", name: "b" },
  ],
  [
    "phase force, pod gone: started with the flag",
    obs([
      m("a", { claimOwned: false, claimKept: true, pod: false }),
      m("b", { survivorMark: true, recoveryPhase: "force", pod: false }),
    ]),
    { type: "StartSurvivor", name: "b", forceNewCluster: true },
  ],
  [
    "phase force, the old pod without the flag still there (deleted before it went): delete it again",
    obs([m("b", { survivorMark: true, recoveryPhase: "force", membersListed: 3 })]),
    { type: "ForceNewCluster", name: "b" },
  ],
  [
    "survivor running with the flag, not yet alone: wait",
    obs([
      m("a", { claimOwned: false, claimKept: true, pod: false }),
      m("b", { survivorMark: true, recoveryPhase: "force", forceNewCluster: true }),
    ]),
    { type: "Wait", reason: "ForceNewCluster" },
  ],
  [
    "survivor alone and healthy with the flag: restart it without",
    obs([
      m("a", { claimOwned: false, claimKept: true, pod: false }),
      m("b", {
        survivorMark: true,
        recoveryPhase: "force",
        forceNewCluster: true,
        status: st(121),
        membersListed: 1,
        healthy: true,
      }),
    ]),
    { type: "RemoveForceFlag", name: "b" },
  ],
  [
    "phase unforce, pod gone: started without the flag (never a second force-new-cluster)",
    obs([m("b", { survivorMark: true, recoveryPhase: "unforce", pod: false })]),
    { type: "StartSurvivor", name: "b", forceNewCluster: false },
  ],
  [
    "phase unforce, the flagged pod still there: delete it again",
    obs([
      m("b", {
        survivorMark: true,
        recoveryPhase: "unforce",
        forceNewCluster: true,
        membersListed: 1,
        healthy: true,
      }),
    ]),
    { type: "RemoveForceFlag", name: "b" },
  ],
  [
    "phase unforce, without the flag, starting: wait",
    obs([m("b", { survivorMark: true, recoveryPhase: "unforce" })]),
    { type: "Wait", reason: "SurvivorStarting" },
  ],
  [
    "survivor alone and healthy without the flag: recovered, with revision and cluster ID",
    obs([
      m("a", { claimOwned: false, claimKept: true, pod: false }),
      m("b", {
        survivorMark: true,
        recoveryPhase: "unforce",
        status: { raftIndex: 130, revision: 41, clusterID: "c9" },
        membersListed: 1,
        healthy: true,
      }),
    ]),
    { type: "Recovered", survivor: "b", revision: 41, clusterID: "c9" },
  ],
  [
    "recovery started and a quorum answers again (the survivor alone): continues, not refused",
    obs(
      [
        m("a", { claimOwned: false, claimKept: true, pod: false }),
        m("b", {
          survivorMark: true,
          recoveryPhase: "unforce",
          status: st(130),
          membersListed: 1,
          healthy: true,
        }),
      ],
      { quorum: true },
    ),
    { type: "Recovered", survivor: "b" },
  ],
  [
    "the survivor's claim vanished mid-way: refused, the kept claims stay",
    obs([m("a", { claimOwned: false, claimKept: true }), m("b", { claimOwned: false, survivorMark: true })]),
    { type: "Refuse", reason: "SurvivorLost" },
  ],
  [
    "from a backup: every claim kept first",
    obs([m("a", { status: st(100) }), m("b")], { from: "Backup" }),
    { type: "KeepClaim", name: "a" },
  ],
  [
    "from a backup, claims kept: pods stopped",
    obs(
      [
        m("a", { claimOwned: false, claimKept: true }),
        m("b", { claimOwned: false, claimKept: true, pod: false }),
      ],
      {
        from: "Backup",
      },
    ),
    { type: "StopMember", name: "a" },
  ],
  [
    "from a backup, everything stopped and kept: restore",
    obs([m("a", { claimOwned: false, claimKept: true, pod: false })], { from: "Backup" }),
    { type: "RestoreFromBackup" },
  ],
  [
    "from a backup with a quorum: refused",
    obs([m("a", { status: st(1) })], { from: "Backup", quorum: true }),
    { type: "Refuse", reason: "QuorumHealthy" },
  ],
];

describe("planRecovery", () => {
  it.each(cases)("%s", (_name, o, want) => expect(planRecovery(o)).toMatchObject(want));
});

/** Members as objects and processes; `restart` is what the ordinary planner does for a pod that is gone. */
class World {
  members: RecoveryMember[];
  steps: RecoveryStep[] = [];
  forced = false;
  constructor(members: RecoveryMember[]) {
    this.members = members;
  }
  get(name: string): RecoveryMember {
    return this.members.find((x) => x.name === name)!;
  }
  /** One reconcile by whoever leads now: it sees only the objects and etcd's answers. */
  reconcile(): RecoveryStep {
    const step = planRecovery(obs(structuredClone(this.members)));
    this.steps.push(step);
    switch (step.type) {
      case "MarkSurvivor":
        this.get(step.name).survivorMark = true;
        break;
      case "KeepClaim":
        Object.assign(this.get(step.name), { claimOwned: false, claimKept: true });
        break;
      case "StopMember":
        Object.assign(this.get(step.name), { pod: false, healthy: false });
        delete this.get(step.name).membersListed;
        break;
      case "ForceNewCluster":
      case "RemoveForceFlag": {
        // The phase is written on the claim, then the pod deleted.
        const x = this.get(step.name);
        x.recoveryPhase = step.type === "ForceNewCluster" ? "force" : "unforce";
        Object.assign(x, { pod: false, healthy: false });
        delete x.membersListed;
        break;
      }
      case "StartSurvivor":
        Object.assign(this.get(step.name), { pod: true, forceNewCluster: step.forceNewCluster });
        break;
      case "Wait": {
        // Time passes: a running survivor answers: alone once it has ever run with --force-new-cluster.
        for (const x of this.members.filter((y) => y.survivorMark === true && y.pod)) {
          if (x.forceNewCluster === true) this.forced = true;
          Object.assign(x, { membersListed: this.forced ? 1 : 3, healthy: this.forced });
        }
        break;
      }
    }
    return step;
  }
}

describe("recovery from a survivor, interrupted at every step", () => {
  const start = () =>
    new World([
      m("a", { status: st(100), membersListed: 3 }),
      m("b", { status: st(150), membersListed: 3 }),
      m("c", { pod: false }),
    ]);

  it("always ends recovered from b, with every other claim kept and none deleted", () => {
    for (let cut = 1; cut < 12; cut++) {
      const w = start();
      let last: RecoveryStep | undefined;
      for (let i = 0; i < 30; i++) {
        // After the choice, member a comes back with a higher raft index (and the leader may have changed: the
        // planner holds no memory): the choice written on b's claim stands.
        if (i === cut) w.get("a").status = st(999);
        last = w.reconcile();
        if (last.type === "Recovered" || last.type === "Refuse") break;
      }
      const trace = w.steps.map((s) => s.type).join(", ");
      expect(last, trace).toMatchObject({ type: "Recovered", survivor: "b" });
      expect(
        w.steps.filter((s) => s.type === "MarkSurvivor"),
        trace,
      ).toHaveLength(1);
      expect(
        w.steps.filter((s) => s.type === "ForceNewCluster"),
        trace,
      ).toHaveLength(1);
      expect(
        w.steps.filter((s) => s.type === "RemoveForceFlag"),
        trace,
      ).toHaveLength(1);
      expect(w.members.filter((x) => x.claimKept).map((x) => x.name)).toEqual(["a", "c"]);
      expect(w.members.every((x) => x.claimOwned || x.claimKept)).toBe(true);
    }
  });
});
