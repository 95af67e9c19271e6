// Table tests of the automatic-recovery decision: the clock from status.quorumLostSince, one EtcdRestore per loss,
// none while one runs or after one failed, Degraded without a backup.
import { describe, expect, it } from "vitest";
import {
  type AutomaticRecoveryDecision,
  type AutomaticRecoveryObserved,
  planAutomaticRecovery,
} from "./automatic-recovery.ts";

const T0 = new Date("2026-12-02T08:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const good = (name: string, secondsAfterT0: number, clusterID = "c1") => ({
  name,
  phase: "Succeeded",
  completionTime: at(secondsAfterT0 - 86_400),
  clusterID,
});
/** A member that answered its status alone, with its data claim (what the recovery planner reads). */
const member = (name: string, raftIndex: number, revision: number, clusterID: string, learner = false) => ({
  name,
  claimOwned: true,
  pod: true,
  status: { raftIndex, revision, clusterID },
  ...(learner ? { learner: true } : {}),
});
type Input = Omit<Partial<AutomaticRecoveryObserved>, "lostSince"> & { lostSince?: Date | undefined };
const o = (input: Input = {}): AutomaticRecoveryObserved => {
  const { lostSince, ...x } = input;
  const since = "lostSince" in input ? lostSince : T0;
  return {
    ...(since === undefined ? {} : { lostSince: since }),
    enabled: true,
    afterSeconds: 900,
    paused: false,
    bootstrapped: true,
    quorum: false,
    now: at(901),
    restores: [],
    backups: [good("nightly-1", 0), good("nightly-2", 100)],
    clusterIDs: ["c1"],
    nameFor: (t) => `demo-auto-${t.getTime() / 1000}`,
    ...x,
  };
};

type Case = [string, AutomaticRecoveryObserved, Partial<AutomaticRecoveryDecision>];
const cases: Case[] = [
  ["quorum answers: nothing, the loss time cleared", o({ quorum: true }), { type: "None" }],
  [
    "no quorum answers the operator but the loss is not confirmed (pods Ready, or its auth or TLS failing): the armed clock is reset, nothing created",
    o({ unconfirmed: { reason: "OperatorCutOff", message: "3 of 3 pods Ready" }, now: at(86_400) }),
    { type: "None" },
  ],
  ["never bootstrapped: nothing", o({ bootstrapped: false, lostSince: undefined }), { type: "None" }],
  [
    "quorum just lost: the time recorded now, nothing else",
    o({ lostSince: undefined, now: at(5) }),
    { type: "Wait", lostSince: at(5) },
  ],
  ["disabled: only the clock", o({ enabled: false }), { type: "Wait", lostSince: T0 }],
  [
    "before afterSeconds: waits (the recorded time counts, not the operator's start)",
    o({ now: at(899) }),
    { type: "Wait", message: expect.stringContaining("2026-12-02T08:15:00.000Z") },
  ],
  [
    "afterSeconds under the least is read as the least (an object older than the schema's bound)",
    o({ afterSeconds: 10, now: at(200) }),
    { type: "Wait" },
  ],
  [
    "after afterSeconds: one EtcdRestore of the newest Succeeded backup, named after the loss",
    o(),
    {
      type: "CreateRestore",
      name: `demo-auto-${T0.getTime() / 1000}`,
      from: "Backup",
      backup: "nightly-2",
      lostSince: T0,
    },
  ],
  [
    "afterSeconds shorter than the operator's floor (900 s by default: Kubernetes' node failover, eviction after 300 s and force-detach 360 s later, comes first): waits for the floor",
    o({ afterSeconds: 600, now: at(601) }),
    { type: "Wait", lostSince: T0, message: expect.stringContaining("2026-12-02T08:15:00.000Z") },
  ],
  [
    "an operator floor lowered by the cluster's admin (a test cluster): afterSeconds counts",
    o({ afterSeconds: 300, floorSeconds: 300, now: at(301) }),
    { type: "CreateRestore", from: "Backup" },
  ],
  [
    "a zone blip: a member's pod being deleted (evicted from its unreachable node): Failover, the armed clock cleared, nothing created",
    o({ now: at(86_400), terminating: [{ name: "demo-b", since: at(300) }] }),
    { type: "Failover", pods: ["demo-b"], message: expect.stringContaining("demo-b (being deleted since") },
  ],
  [
    "a voter answers its status alone with this cluster's data, newer than the newest backup: from: Survivor",
    o({
      backups: [{ ...good("nightly-2", 100), revision: 500 }],
      survivors: [member("demo-a", 900, 700, "c1"), member("demo-c", 950, 720, "c1")],
    }),
    { type: "CreateRestore", from: "Survivor", survivor: "demo-c" },
  ],
  [
    "a survivor and no backup at all: from: Survivor (no longer NoBackup)",
    o({ backups: [], survivors: [member("demo-a", 9, 7, "c1")] }),
    { type: "CreateRestore", from: "Survivor", survivor: "demo-a" },
  ],
  [
    "the only member answering is a learner, or answers from another cluster: the backup",
    o({
      survivors: [member("demo-l", 990, 990, "c1", true), member("demo-x", 999, 999, "other")],
    }),
    { type: "CreateRestore", from: "Backup", backup: "nightly-2" },
  ],
  [
    "a survivor older than the newest backup (it was cut off long before the loss): the backup, saying why",
    o({
      backups: [{ ...good("nightly-2", 100), revision: 800 }],
      survivors: [member("demo-a", 900, 700, "c1")],
    }),
    {
      type: "CreateRestore",
      from: "Backup",
      backup: "nightly-2",
      message: expect.stringContaining("demo-a answers, but at revision 700, older than the backup's 800"),
    },
  ],
  [
    "a called-off automatic recovery (Cancelled) neither blocks nor counts as under way",
    o({ restores: [{ name: "demo-auto-1", phase: "Cancelled", automatic: true }] }),
    { type: "CreateRestore" },
  ],
  [
    "a newer backup that failed or runs is not used",
    o({
      backups: [
        good("nightly-1", 0),
        { name: "nightly-3", phase: "Failed", completionTime: at(50) },
        { name: "nightly-4", phase: "Running" },
      ],
    }),
    { type: "CreateRestore", backup: "nightly-1" },
  ],
  [
    "the EtcdRestore for this loss exists already (created before a restart): no second",
    o({ restores: [{ name: `demo-auto-${T0.getTime() / 1000}`, phase: "Succeeded", automatic: true }] }),
    { type: "Wait" },
  ],
  [
    "an EtcdRestore of this cluster under way (by a human): waits",
    o({ restores: [{ name: "by-hand", phase: "Running", automatic: false }] }),
    { type: "Wait", message: expect.stringContaining("by-hand") },
  ],
  [
    "an EtcdRestore of this cluster just created (no phase yet): waits",
    o({ restores: [{ name: "by-hand", automatic: false }] }),
    { type: "Wait" },
  ],
  [
    "an earlier automatic recovery failed: blocked, a human decides",
    o({ restores: [{ name: "demo-auto-1", phase: "Failed", automatic: true }] }),
    { type: "Blocked", name: "demo-auto-1" },
  ],
  [
    "a human's failed EtcdRestore does not block (they chose to try)",
    o({ restores: [{ name: "by-hand", phase: "Failed", automatic: false }] }),
    { type: "CreateRestore" },
  ],
  [
    "an earlier automatic recovery succeeded, quorum lost again later: a new one for the new loss",
    o({ restores: [{ name: "demo-auto-1", phase: "Succeeded", automatic: true }] }),
    { type: "CreateRestore", name: `demo-auto-${T0.getTime() / 1000}` },
  ],
  ["paused: waits", o({ paused: true }), { type: "Wait", message: expect.stringContaining("spec.paused") }],
  [
    "the newest backup is of another cluster of the same name (another cluster ID): the newest of this one instead",
    o({ backups: [good("nightly-1", 0), good("old-life", 500, "b0")] }),
    { type: "CreateRestore", backup: "nightly-1" },
  ],
  [
    "after a restore from a backup (a new cluster ID), a backup of the cluster it was restored from still counts",
    o({ backups: [good("before-restore", 0, "a0")], clusterIDs: ["c1", "a0"] }),
    { type: "CreateRestore", backup: "before-restore" },
  ],
  [
    "only backups of another cluster ID, or with none recorded: NoBackup naming them, nothing restored",
    o({
      backups: [good("old-life", 500, "b0"), { name: "unknown", phase: "Succeeded", completionTime: at(0) }],
    }),
    {
      type: "NoBackup",
      message: expect.stringMatching(/old-life \(b0\), unknown \(no cluster ID recorded\) hold other data/),
    },
  ],
  [
    "no Succeeded backup: NoBackup naming spec.recovery.automatic",
    o({ backups: [{ name: "nightly-3", phase: "Failed" }] }),
    { type: "NoBackup", message: expect.stringContaining("spec.recovery.automatic") },
  ],
];

describe("planAutomaticRecovery", () => {
  it.each(cases)("%s", (_name, obs, want) => {
    const got = planAutomaticRecovery(obs);
    expect(got).toMatchObject(want);
    if (want.type === "None") expect(got.lostSince).toBeUndefined();
  });

  it("a restart at any moment of a loss creates exactly one EtcdRestore, at the same time", () => {
    // Each reconcile knows only the recorded time and the objects; restarts do not reset anything.
    let recorded: Date | undefined;
    const restores: AutomaticRecoveryObserved["restores"] = [];
    const created: { at: number; name: string }[] = [];
    for (let s = 0; s <= 1500; s += 7) {
      const d = planAutomaticRecovery(o({ lostSince: recorded, now: at(s), restores: [...restores] }));
      recorded = d.lostSince;
      if (d.type === "CreateRestore") {
        created.push({ at: s, name: d.name });
        restores.push({ name: d.name, automatic: true });
      }
    }
    expect(created).toHaveLength(1);
    expect(created[0]!.at).toBeGreaterThanOrEqual(900);
    expect(created[0]!.at).toBeLessThan(910);
  });
});
