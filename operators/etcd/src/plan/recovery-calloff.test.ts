// Table tests of calling a recovery off (plan/recovery-calloff.ts through planRecovery): an EtcdRestore deleted, or a
// quorum answering again, before the fork gives back what it took (the kept claims, one at a time, then the survivor
// mark) and then ends; after the fork nothing calls it off, and a deletion waits for the end.
import { describe, expect, it } from "vitest";
import {
  planRecovery,
  type RecoveryFromBackup,
  type RecoveryMember,
  type RecoveryObserved,
  type RecoveryStep,
} from "./recovery.ts";
import { deletionHeld, forkedAt } from "./recovery-calloff.ts";
import { fromBackup, m, obs, st } from "./test-builders.ts";

type Case = [string, RecoveryObserved, Partial<RecoveryStep>];

/** A survivor recovery before the fork: a marked, b and c kept, c's pod not yet stopped. */
const survivorMidway = (o: { kept?: string[]; mark?: boolean } = {}): RecoveryMember[] => {
  const kept = new Set(o.kept ?? ["b", "c"]);
  return [
    m("a", { status: st(150), ...(o.mark === false ? {} : { survivorMark: true }) }),
    m("b", kept.has("b") ? { claimOwned: false, claimKept: true, pod: false } : { pod: false }),
    m("c", kept.has("c") ? { claimOwned: false, claimKept: true } : {}),
  ];
};
/** The same recovery after the fork: the survivor's claim says "force". */
const survivorForked = (o: Partial<RecoveryMember> = {}): RecoveryMember[] => [
  m("a", { survivorMark: true, recoveryPhase: "force", pod: false, ...o }),
  m("b", { claimOwned: false, claimKept: true, pod: false }),
  m("c", { claimOwned: false, claimKept: true, pod: false }),
];

const SEED = "demo-seed1";
const fb = fromBackup;
/** A backup recovery before the fork: a kept and stopped, b's claim still owned, c kept with its pod. */
const backupMidway: RecoveryMember[] = [
  m("a", { claimOwned: false, claimKept: true, pod: false }),
  m("b"),
  m("c", { claimOwned: false, claimKept: true }),
];
const keptAll: RecoveryMember[] = ["a", "b", "c"].map((n) =>
  m(n, { claimOwned: false, claimKept: true, pod: false }),
);
const bobs = (members: RecoveryMember[], backup: RecoveryFromBackup, o: Partial<RecoveryObserved> = {}) =>
  obs(members, { from: "Backup", backup, ...o });
const deleted = { deleting: true, finalizer: true } as const;

const cases: Case[] = [
  [
    "survivor, deleted before the fork: the first kept claim given back",
    obs(survivorMidway(), deleted),
    { type: "GiveBackClaim", name: "b", message: expect.stringContaining("being deleted") },
  ],
  [
    "survivor, deleted before the fork, b given back: c next",
    obs(survivorMidway({ kept: ["c"] }), deleted),
    { type: "GiveBackClaim", name: "c" },
  ],
  [
    "survivor, deleted before the fork, every claim given back: the survivor mark removed",
    obs(survivorMidway({ kept: [] }), deleted),
    { type: "RemoveSurvivorMark", name: "a" },
  ],
  [
    "survivor, deleted before the fork, nothing left of it: called off (the finalizer is released)",
    obs(survivorMidway({ kept: [], mark: false }), deleted),
    { type: "CallOff", reason: "Deleted", message: expect.stringContaining("deleted") },
  ],
  [
    "deleted before anything was written: called off at once",
    obs([m("a", { status: st(150) }), m("b"), m("c")], { deleting: true }),
    { type: "CallOff", reason: "Deleted" },
  ],
  [
    "survivor, a quorum answers again before the fork: the kept claims given back, not kept further",
    obs(survivorMidway({ kept: ["c"] }), { quorum: true, finalizer: true }),
    { type: "GiveBackClaim", name: "c", message: expect.stringContaining("quorum") },
  ],
  [
    "survivor, a quorum answers again before the fork, claims given back: the mark removed",
    obs(survivorMidway({ kept: [] }), { quorum: true, finalizer: true }),
    { type: "RemoveSurvivorMark", name: "a" },
  ],
  [
    "survivor, a quorum answers again, everything given back: Cancelled (not Failed: it had started)",
    obs(survivorMidway({ kept: [], mark: false }), { quorum: true, finalizer: true }),
    { type: "CallOff", reason: "QuorumReturned", message: expect.stringContaining("quorum") },
  ],
  [
    "a quorum at a request never started (no finalizer, nothing written): refused as before",
    obs([m("a", { status: st(10) }), m("b", { status: st(10) }), m("c")], { quorum: true }),
    { type: "Refuse", reason: "QuorumHealthy" },
  ],
  [
    "deleted while a quorum answers: the deletion is the reason",
    obs(survivorMidway({ kept: [], mark: false }), { ...deleted, quorum: true }),
    { type: "CallOff", reason: "Deleted" },
  ],
  [
    "survivor, deleted after the fork: the recovery goes on (its pod started with the flag)",
    obs(survivorForked(), deleted),
    { type: "StartSurvivor", name: "a", forceNewCluster: true },
  ],
  [
    "survivor, the forced pod serving alone (a quorum of one answers): not called off, the flag removed",
    obs(survivorForked({ pod: true, forceNewCluster: true, healthy: true, membersListed: 1 }), {
      quorum: true,
      finalizer: true,
    }),
    { type: "RemoveForceFlag", name: "a" },
  ],
  [
    "backup, deleted before the fork: the first kept claim given back (no mark to remove)",
    bobs(backupMidway, fb(), deleted),
    { type: "GiveBackClaim", name: "a" },
  ],
  [
    "backup, deleted before the fork, every kept claim given back: called off",
    bobs([m("a", { pod: false }), m("b"), m("c")], fb(), deleted),
    { type: "CallOff", reason: "Deleted" },
  ],
  [
    "backup, a quorum answers again before the fork: the kept claims given back",
    bobs(backupMidway, fb(), { quorum: true, finalizer: true }),
    { type: "GiveBackClaim", name: "a" },
  ],
  [
    "backup, deleted after the fork (the seed's claim made): the restore goes on",
    bobs([...keptAll, m(SEED, { pod: false })], fb({ claims: [{ name: SEED, state: "pending" }] }), deleted),
    { type: "StartRestore", name: SEED },
  ],
  [
    "backup, deleted with the restore Job there but its claim gone: held too (the Job is the fork's)",
    bobs(keptAll, fb({ job: { succeeded: true } }), deleted),
    { type: "Wait", reason: "SeedClaimLost" },
  ],
  [
    "backup, the seed serving alone (a quorum answers) after the fork: recovered, not called off",
    bobs(
      [
        ...keptAll,
        m(SEED, {
          healthy: true,
          membersListed: 1,
          status: { raftIndex: 5, revision: 1_000_000_042, clusterID: "new1" },
        }),
      ],
      fb({ claims: [{ name: SEED, state: "done" }] }),
      { quorum: true, finalizer: true },
    ),
    { type: "Recovered", seed: SEED },
  ],
];

describe("planRecovery: calling a recovery off", () => {
  it.each(cases)("%s", (_name, observed, expected) => {
    expect(planRecovery(observed)).toMatchObject(expected);
  });

  it("a deletion after the fork is held, naming the step that forked; before it, none is", () => {
    expect(forkedAt(obs(survivorMidway(), deleted))).toBeUndefined();
    expect(deletionHeld(obs(survivorMidway(), deleted))).toBeUndefined();
    expect(forkedAt(obs(survivorForked(), deleted))).toBe("ForceNewCluster");
    const held = deletionHeld(obs(survivorForked(), deleted));
    expect(held).toContain(
      "deletion waits for the recovery to finish (the cluster was forked at ForceNewCluster)",
    );
    expect(held).toContain("remove the finalizer by hand only if");
    expect(held).toContain("etcd.capstan.dev/recovery");
    const backup = bobs(
      [...keptAll, m(SEED, { pod: false })],
      fb({ claims: [{ name: SEED, state: "pending" }] }),
      deleted,
    );
    expect(deletionHeld(backup)).toContain("forked at StartRestore");
    // Not being deleted: nothing is held, even after the fork.
    expect(deletionHeld(obs(survivorForked(), { finalizer: true }))).toBeUndefined();
  });
});

describe("a recovery called off, reconcile after reconcile", () => {
  /** Applies each step to the members as the API server would, until the request ends. */
  function callOff(members: RecoveryMember[], o: Partial<RecoveryObserved>): RecoveryStep[] {
    const steps: RecoveryStep[] = [];
    for (let i = 0; i < 10; i++) {
      const step = planRecovery(obs(members, { finalizer: true, ...o }));
      steps.push(step);
      const member = "name" in step ? members.find((x) => x.name === step.name) : undefined;
      if (step.type === "GiveBackClaim" && member !== undefined) {
        member.claimKept = false;
        member.claimOwned = true;
      } else if (step.type === "RemoveSurvivorMark" && member !== undefined) {
        member.survivorMark = false;
      } else {
        break;
      }
    }
    return steps;
  }

  it.each([
    ["deleted", { deleting: true }, "Deleted"],
    ["a quorum back", { quorum: true }, "QuorumReturned"],
  ] as const)(
    "%s before the fork: every kept claim given back one at a time, the mark, then the end",
    (_n, o, reason) => {
      const members = survivorMidway();
      const steps = callOff(members, o);
      expect(steps.map((s) => `${s.type}${"name" in s ? ` ${s.name}` : ""}`)).toEqual([
        "GiveBackClaim b",
        "GiveBackClaim c",
        "RemoveSurvivorMark a",
        "CallOff",
      ]);
      expect(steps.at(-1)).toMatchObject({ type: "CallOff", reason });
      expect(members.every((x) => x.claimOwned && x.claimKept !== true && x.survivorMark !== true)).toBe(
        true,
      );
    },
  );
});
