// Table tests of issue 27 item 4 in the disaster-recovery planner: a learner is never the survivor (etcd panics
// forcing one, "removed all voters"), and a learner --force-new-cluster leaves in the member list (etcd-io/etcd#20893,
// some 3.5 and 3.6 releases) is no second member: the recovery removes it before it ends, on every accepted release.
import { describe, expect, it } from "vitest";
import { planRecovery, type RecoveryMember, type RecoveryObserved, type RecoveryStep } from "./recovery.ts";

import { m, obs, st } from "./test-builders.ts";

const kept = (name: string, o: Partial<RecoveryMember> = {}) =>
  m(name, { claimOwned: false, claimKept: true, pod: false, ...o });
const survivor = (o: Partial<RecoveryMember> = {}) =>
  m("b", { survivorMark: true, status: st(120), membersListed: 3, ...o });

type Case = [string, RecoveryObserved, Partial<RecoveryStep>];

const learnerCases: Case[] = [
  [
    "learners: a learner answering with the most recent data is never the survivor",
    obs([
      m("a", { status: st(100) }),
      m("b", { status: st(500), learner: true }),
      m("c", { status: st(90) }),
    ]),
    { type: "MarkSurvivor", name: "a", raftIndex: 100 },
  ],
  [
    "learners: only a learner answers -> refused (etcd panics forcing a learner), recover from a backup",
    obs([m("a"), m("b", { status: st(500), learner: true }), m("c", { pod: false })]),
    {
      type: "Refuse",
      reason: "OnlyLearnersSurvive",
      message: expect.stringMatching(/only learners answer \(b\).*from: Backup/),
    },
  ],
  [
    "learners: a marked survivor that turns out a learner is never forced (nothing destructive was done yet)",
    obs([kept("a"), survivor({ learner: true }), kept("c")]),
    { type: "Refuse", reason: "SurvivorIsLearner" },
  ],
  [
    "learners: with the flag, one voter and a leftover learner (etcd-io/etcd#20893) is alone: the flag goes",
    obs([
      kept("a"),
      survivor({
        recoveryPhase: "force",
        forceNewCluster: true,
        status: st(121),
        membersListed: 2,
        learnersListed: [{ id: "a1", name: "a" }],
        healthy: true,
      }),
    ]),
    { type: "RemoveForceFlag", name: "b" },
  ],
  [
    "learners: without the flag, a leftover learner is removed before the recovery ends",
    obs([
      kept("a"),
      survivor({
        recoveryPhase: "unforce",
        status: st(130),
        membersListed: 2,
        learnersListed: [{ id: "a1", name: "a" }],
        healthy: true,
      }),
    ]),
    { type: "RemoveLearner", name: "b", learner: "a", memberId: "a1" },
  ],
  [
    "learners: a second voter listed is still not alone (only learners are discounted)",
    obs([
      kept("a"),
      survivor({
        recoveryPhase: "force",
        forceNewCluster: true,
        status: st(121),
        membersListed: 3,
        learnersListed: [{ id: "a1", name: "a" }],
        healthy: true,
      }),
    ]),
    { type: "Wait", reason: "ForceNewCluster" },
  ],
];

describe("planRecovery from a survivor: learners", () => {
  it.each(learnerCases)("%s", (_name, o, want) => expect(planRecovery(o)).toMatchObject(want));
});

/** A survivor recovery on a release with etcd-io/etcd#20893: the learner stays listed after the flag. */
describe("recovery from a survivor with a learner left behind by --force-new-cluster", () => {
  it("ends recovered, removing the learner once, never waiting for it", () => {
    const members = [
      m("a", { status: st(100), membersListed: 3, learner: true }),
      m("b", { status: st(150), membersListed: 3 }),
      m("c", { pod: false }),
    ];
    const get = (n: string) => members.find((x) => x.name === n)!;
    const steps: RecoveryStep[] = [];
    let listed = [{ id: "a1", name: "a" }];
    for (let i = 0; i < 30; i++) {
      const step = planRecovery(obs(structuredClone(members)));
      steps.push(step);
      if (step.type === "Recovered" || step.type === "Refuse") break;
      const x = "name" in step ? get(step.name) : undefined;
      if (step.type === "MarkSurvivor") x!.survivorMark = true;
      if (step.type === "KeepClaim") Object.assign(x!, { claimOwned: false, claimKept: true });
      if (step.type === "StopMember") Object.assign(x!, { pod: false, status: undefined });
      if (step.type === "ForceNewCluster" || step.type === "RemoveForceFlag") {
        x!.recoveryPhase = step.type === "ForceNewCluster" ? "force" : "unforce";
        Object.assign(x!, { pod: false, healthy: false, forceNewCluster: false });
      }
      if (step.type === "StartSurvivor") {
        // The flag drops the voters a and c but (etcd-io/etcd#20893) keeps the learner a.
        Object.assign(x!, {
          pod: true,
          forceNewCluster: step.forceNewCluster,
          healthy: true,
          membersListed: 1 + listed.length,
          learnersListed: listed,
        });
      }
      if (step.type === "RemoveLearner") {
        listed = listed.filter((l) => l.id !== step.memberId);
        Object.assign(x!, { membersListed: 1 + listed.length, learnersListed: listed });
      }
    }
    const trace = steps.map((s) => s.type).join(", ");
    expect(steps.at(-1), trace).toMatchObject({ type: "Recovered", survivor: "b" });
    expect(
      steps.filter((s) => s.type === "RemoveLearner"),
      trace,
    ).toHaveLength(1);
    expect(
      steps.filter((s) => s.type === "ForceNewCluster"),
      trace,
    ).toHaveLength(1);
  });
});
