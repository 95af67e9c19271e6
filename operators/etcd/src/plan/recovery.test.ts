// Table tests of the disaster-recovery planner, and a simulation of a recovery interrupted at every step whose
// next leader knows only what is on the objects (no memory of the last one's choice).
import { describe, expect, it } from "vitest";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import {
  planRecovery,
  type RecoveryFromBackup,
  type RecoveryMember,
  type RecoveryObserved,
  type RecoveryStep,
} from "./recovery.ts";
import type { ObservedRestore } from "./restore.ts";

import { m, obs, st } from "./test-builders.ts";

type Case = [string, RecoveryObserved, Partial<RecoveryStep>];

const cases: Case[] = [
  [
    "a quorum answers: refused, nothing changed",
    obs([m("a", { status: st(10) }), m("b", { status: st(10) }), m("c")], { quorum: true }),
    { type: "Refuse", reason: "QuorumHealthy" },
  ],
  [
    "no quorum answers the operator but a majority of pods is Ready (operator cut off): refused, nothing changed",
    obs([m("a", { status: st(10) }), m("b", { status: st(10) }), m("c")], {
      unconfirmed: { reason: "OperatorCutOff", message: "3 of 3 voting members' pods are Ready" },
    }),
    {
      type: "Refuse",
      reason: "QuorumLossUnconfirmed",
      message: expect.stringContaining("OperatorCutOff: 3 of 3"),
    },
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

// Recovery from a backup.
const SHA = "a".repeat(64);
const SEED = "demo-seed1";
const specWith = (o: Partial<EtcdClusterSpec> = {}, sha256?: string): EtcdClusterSpec => ({
  replicas: 3,
  version: "3.6.15",
  repository: "gcr.io/etcd-development/etcd",
  storage: { size: "1Gi" },
  bootstrap: { restore: { backup: { name: "nightly" }, ...(sha256 === undefined ? {} : { sha256 }) } },
  ...o,
});
const good = { phase: "Succeeded", etcdVersion: "3.6.15", sha256: SHA, revision: 42 };
const fb = (
  restore: Partial<ObservedRestore> = {},
  o: Partial<RecoveryFromBackup> = {},
): RecoveryFromBackup => ({
  spec: specWith(),
  seed: SEED,
  source: "backup/nightly",
  restore: { claims: [], operatorImage: true, backup: good, ...restore },
  ...o,
});
const fbNoBackup = (): RecoveryFromBackup => {
  const x = fb();
  delete x.restore.backup;
  return x;
};
const bobs = (members: RecoveryMember[], backup: RecoveryFromBackup | undefined, quorum = false) =>
  obs(members, { from: "Backup", quorum, ...(backup === undefined ? {} : { backup }) });
const lostThree = [
  m("a", { status: st(100), membersListed: 3 }),
  m("b", { claimOwned: false }),
  m("c", { pod: false }),
];
const keptAll = [
  m("a", { claimOwned: false, claimKept: true, pod: false }),
  m("b", { claimOwned: false, pod: false }),
  m("c", { claimOwned: false, claimKept: true, pod: false }),
];
const seedMember = (o: Partial<RecoveryMember> = {}) => m(SEED, { pod: false, ...o });
const seedClaim = (state: "pending" | "done") => ({ claims: [{ name: SEED, state }] });

const backupCases: Case[] = [
  [
    "from a backup with a quorum: refused, nothing changed",
    bobs(lostThree, fb(), true),
    { type: "Refuse", reason: "QuorumHealthy" },
  ],
  [
    "from a backup while etcd refuses the operator's credentials: refused, nothing changed",
    obs(lostThree, {
      from: "Backup",
      backup: fb(),
      unconfirmed: { reason: "AuthFailed", message: "refused" },
    }),
    { type: "Refuse", reason: "QuorumLossUnconfirmed" },
  ],
  [
    "from a backup without spec.source (an object older than the CEL rule): refused naming spec.source",
    bobs(lostThree, undefined),
    { type: "Refuse", reason: "BackupUnusable", field: "spec.source" },
  ],
  [
    "from a backup, the EtcdBackup missing: waits, nothing changed",
    bobs(lostThree, fbNoBackup()),
    { type: "Wait", reason: "BackupNotReady", message: expect.stringContaining("spec.source.backup") },
  ],
  [
    "from a backup, the EtcdBackup still running: waits",
    bobs(lostThree, fb({ backup: { phase: "Running" } })),
    { type: "Wait", reason: "BackupNotReady" },
  ],
  [
    "from a backup, the EtcdBackup Failed: refused before any claim is kept",
    bobs(lostThree, fb({ backup: { phase: "Failed" } })),
    { type: "Refuse", reason: "BackupUnusable", field: "spec.source.backup.name" },
  ],
  [
    "from a backup, its sha256 differs from spec.source.sha256: refused naming spec.source.sha256",
    bobs(lostThree, fb({}, { spec: specWith({}, "b".repeat(64)) })),
    { type: "Refuse", reason: "BackupUnusable", field: "spec.source.sha256" },
  ],
  [
    "from a backup taken on etcd 3.6 into a cluster at 3.5: refused naming spec.version",
    bobs(lostThree, fb({}, { spec: specWith({ version: "3.5.21" }) })),
    { type: "Refuse", reason: "BackupUnusable", field: "spec.version" },
  ],
  [
    "from a backup whose location cannot be read: refused",
    bobs(lostThree, fb({ sourceError: "EtcdBackup nightly: status.location is malformed" })),
    { type: "Refuse", reason: "BackupUnusable", message: expect.stringContaining("status.location") },
  ],
  [
    "from a backup, the operator does not know its image: refused",
    bobs(lostThree, fb({ operatorImage: false })),
    { type: "Refuse", reason: "BackupUnusable", message: expect.stringContaining("OPERATOR_IMAGE") },
  ],
  [
    "from a backup into ephemeral members: refused (no claim to restore into)",
    bobs(lostThree, fb({}, { spec: specWith({ storage: { ephemeral: true } }) })),
    { type: "Refuse", reason: "NeedsStorage", field: "spec.storage" },
  ],
  [
    "from a backup, the derived seed name already a member: refused",
    bobs([...lostThree, m(SEED)], fb()),
    { type: "Refuse", reason: "SeedNameInUse" },
  ],
  [
    "from a backup, usable: every owned claim kept first, one at a time",
    bobs(lostThree, fb()),
    { type: "KeepClaim", name: "a" },
  ],
  [
    "from a backup, started (a claim kept): the backup vanishing later never fails it, it keeps going",
    bobs([m("a", { claimOwned: false, claimKept: true }), m("c", { pod: false })], fbNoBackup()),
    { type: "KeepClaim", name: "c" },
  ],
  [
    "from a backup, claims kept: every old pod stopped, with or without a claim",
    bobs(
      [m("a", { claimOwned: false, claimKept: true, pod: false }), m("b", { claimOwned: false, pod: true })],
      fb(),
    ),
    { type: "StopMember", name: "b" },
  ],
  [
    "from a backup, old pods still terminating: waits before restoring (the fence shared with a survivor's)",
    bobs([{ ...keptAll[0]!, terminating: { since: new Date(0) } }, ...keptAll.slice(1)], fb()),
    { type: "Wait", reason: "WaitingForFence" },
  ],
  [
    "from a backup, all kept and stopped: the seed's claim and Job",
    bobs(keptAll, fb()),
    { type: "StartRestore", name: SEED },
  ],
  [
    "from a backup, started, the backup gone now: waits naming spec.source, never fails half-way",
    bobs(keptAll, fbNoBackup()),
    { type: "Wait", reason: "RestoreBackupMissing", message: expect.stringContaining("spec.source.backup") },
  ],
  [
    "from a backup, seed claim made but no Job (interrupted): the Job",
    bobs([...keptAll, seedMember()], fb(seedClaim("pending"))),
    { type: "StartRestore", name: SEED },
  ],
  [
    "from a backup, the Job running: waits",
    bobs([...keptAll, seedMember()], fb({ ...seedClaim("pending"), job: { succeeded: false } })),
    { type: "Wait", reason: "Restoring" },
  ],
  [
    "from a backup, the Job failed: waits with its message (the old members stay kept)",
    bobs(
      [...keptAll, seedMember()],
      fb({
        ...seedClaim("pending"),
        job: { succeeded: false, failed: { reason: "BackoffLimitExceeded", message: "sha256 mismatch" } },
      }),
    ),
    { type: "Wait", reason: "RestoreFailed", message: expect.stringContaining("sha256 mismatch") },
  ],
  [
    "from a backup, the Job succeeded: the seed's claim marked done",
    bobs([...keptAll, seedMember()], fb({ ...seedClaim("pending"), job: { succeeded: true } })),
    { type: "FinishRestore", name: SEED },
  ],
  [
    "from a backup, the seed's claim gone while its Job exists: waits, never trusts the Job for an empty claim",
    bobs(keptAll, fb({ job: { succeeded: true } })),
    { type: "Wait", reason: "SeedClaimLost" },
  ],
  [
    "from a backup, the seed restored: started as a new cluster",
    bobs([...keptAll, seedMember()], fb({ ...seedClaim("done"), job: { succeeded: true } })),
    { type: "StartSeed", name: SEED },
  ],
  [
    "from a backup, the seed not serving yet: waits",
    bobs([...keptAll, seedMember({ pod: true })], fb(seedClaim("done"))),
    { type: "Wait", reason: "SeedStarting" },
  ],
  [
    "from a backup, the seed serving alone: recovered with its revision, the snapshot's and the new cluster ID",
    bobs(
      [
        ...keptAll,
        seedMember({
          pod: true,
          healthy: true,
          membersListed: 1,
          status: { raftIndex: 5, revision: 1_000_000_042, clusterID: "new1" },
        }),
      ],
      fb(seedClaim("done")),
    ),
    { type: "Recovered", seed: SEED, snapshotRevision: 42, revision: 1_000_000_042, clusterID: "new1" },
  ],
  [
    "from a backup, a quorum answering after the old members were stopped (the seed): not refused, it goes on",
    bobs([...keptAll, seedMember({ pod: true })], fb(seedClaim("done")), true),
    { type: "Wait", reason: "SeedStarting" },
  ],
];

describe("planRecovery from a backup", () => {
  it.each(backupCases)("%s", (_name, o, want) => expect(planRecovery(o)).toMatchObject(want));
  it("never keeps or stops the seed", () => {
    const step = planRecovery(
      bobs(
        [m("a", { claimOwned: false, claimKept: true, pod: false }), seedMember({ pod: true })],
        fb(seedClaim("pending")),
      ),
    );
    expect(step.type).not.toBe("KeepClaim");
    expect(step.type).not.toBe("StopMember");
  });
});

/** Objects and processes of a recovery from a backup; each reconcile sees only them. */
class BackupWorld {
  members: RecoveryMember[];
  backup: RecoveryFromBackup;
  steps: RecoveryStep[] = [];
  jobs = 0;
  constructor(members: RecoveryMember[], backup: RecoveryFromBackup) {
    this.members = members;
    this.backup = backup;
  }
  get(name: string): RecoveryMember | undefined {
    return this.members.find((x) => x.name === name);
  }
  reconcile(): RecoveryStep {
    const step = planRecovery(bobs(structuredClone(this.members), structuredClone(this.backup)));
    this.steps.push(step);
    const r = this.backup.restore;
    switch (step.type) {
      case "KeepClaim":
        Object.assign(this.get(step.name)!, { claimOwned: false, claimKept: true });
        break;
      case "StopMember":
        Object.assign(this.get(step.name)!, {
          pod: false,
          healthy: false,
          terminating: { since: new Date(0) },
        });
        break;
      case "StartRestore":
        if (this.get(step.name) === undefined) this.members.push(m(step.name, { pod: false }));
        if (!r.claims.some((c) => c.name === step.name)) r.claims.push({ name: step.name, state: "pending" });
        if (r.job === undefined) {
          r.job = { succeeded: false };
          this.jobs++;
        }
        break;
      case "FinishRestore":
        r.claims = r.claims.map((c) => (c.name === step.name ? { ...c, state: "done" } : c));
        break;
      case "StartSeed":
        Object.assign(this.get(step.name)!, { pod: true });
        break;
      case "Wait":
        // Time passes: terminating pods go, the Job finishes, a started seed serves alone.
        for (const x of this.members) delete x.terminating;
        if (r.job !== undefined) r.job = { succeeded: true };
        for (const x of this.members.filter((y) => y.name === SEED && y.pod)) {
          Object.assign(x, {
            healthy: true,
            membersListed: 1,
            status: { raftIndex: 3, revision: 1_000_000_042, clusterID: "new1" },
          });
        }
        break;
    }
    return step;
  }
}

describe("recovery from a backup, interrupted at every step", () => {
  it("always ends recovered into the one seed from one Job, every old claim kept and none deleted", () => {
    for (let cut = 0; cut < 14; cut++) {
      const w = new BackupWorld(structuredClone(lostThree), fb());
      let last: RecoveryStep | undefined;
      for (let i = 0; i < 40; i++) {
        // A new leader at step `cut`: it knows only the objects (the planner holds no memory either way), and the
        // observation it starts from may show the Job a step late (the cache lags): the next reconcile repeats.
        if (i === cut) w.reconcile();
        last = w.reconcile();
        if (last.type === "Recovered" || last.type === "Refuse") break;
      }
      const trace = w.steps.map((s) => s.type).join(", ");
      expect(last, trace).toMatchObject({
        type: "Recovered",
        seed: SEED,
        clusterID: "new1",
        snapshotRevision: 42,
      });
      expect(w.jobs, trace).toBe(1);
      expect(
        w.backup.restore.claims.map((c) => c.name),
        trace,
      ).toEqual([SEED]);
      expect(
        w.members.filter((x) => x.claimKept).map((x) => x.name),
        trace,
      ).toEqual(["a", "c"]);
      expect(
        w.members.filter((x) => x.name !== SEED).every((x) => !x.pod && !x.claimOwned),
        trace,
      ).toBe(true);
    }
  });
});
