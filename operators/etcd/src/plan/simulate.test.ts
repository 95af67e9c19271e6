// Drives the planner against a small in-memory model of an etcd cluster, one step per "reconcile", and checks
// that it converges and never breaks the invariants the rules promise.
import { quorum } from "@capstan/core";
import { describe, expect, it } from "vitest";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { type Observed, planNext, type Step } from "./plan.ts";
import { spec } from "./test-builders.ts";

interface SimMember {
  id: string;
  name: string;
  learner: boolean;
  started: boolean;
  leader: boolean;
  version: string;
}

class Sim {
  members: SimMember[] = [];
  pods = new Set<string>();
  volumes = new Set<string>();
  bootstrapped = false;
  next = 0;
  log: Step[] = [];
  readonly spec: EtcdClusterSpec;

  constructor(spec: EtcdClusterSpec) {
    this.spec = spec;
  }

  observe(): Observed {
    const live = this.members.filter((m) => m.started && this.pods.has(m.name));
    const base = { pods: [...this.pods].map((name) => ({ name, ready: true })), volumes: [...this.volumes] };
    if (live.length === 0) {
      return { etcd: { reachable: false, error: "no endpoints" }, ...base, bootstrapped: this.bootstrapped };
    }
    return {
      etcd: {
        reachable: true,
        members: this.members.map((m) => ({
          id: m.id,
          name: m.name,
          peerURLs: [`http://${m.name}.demo-peer.ns.svc:2380`],
          isLearner: m.learner,
          started: m.started,
          healthy: m.started && this.pods.has(m.name),
          leader: m.leader,
          version: m.version,
          raftIndex: 500,
        })),
      },
      ...base,
      bootstrapped: this.bootstrapped,
    };
  }

  /** Plans and applies one step; returns it. */
  step(): Step {
    const step = planNext(this.spec, this.observe(), new Date(0), { freshName: `demo-m${this.next}` });
    this.log.push(step);
    const byName = (name: string) => this.members.find((m) => m.name === name)!;
    const remove = (name: string) => {
      this.members = this.members.filter((m) => m.name !== name);
      this.pods.delete(name);
      this.volumes.delete(name);
    };
    switch (step.type) {
      case "CreateSeed":
        this.next++;
        this.members.push({
          id: `id-${step.name}`,
          name: step.name,
          learner: false,
          started: true,
          leader: true,
          version: this.spec.version,
        });
        this.pods.add(step.name);
        this.volumes.add(step.name);
        this.bootstrapped = true;
        break;
      case "AddLearner":
        this.next++;
        this.members.push({
          id: `id-${step.name}`,
          name: step.name,
          learner: true,
          started: false,
          leader: false,
          version: this.spec.version,
        });
        break;
      case "StartMemberPod":
        byName(step.name).started = true;
        this.pods.add(step.name);
        this.volumes.add(step.name);
        break;
      case "PromoteLearner":
        byName(step.name).learner = false;
        break;
      case "RemoveMember":
      case "ReplaceMember":
        expect(byName(step.name).leader, "the leader is never removed while another voter exists").toBe(
          false,
        );
        remove(step.name);
        break;
      case "CleanupMember":
        remove(step.name);
        break;
      case "MoveLeader":
        for (const m of this.members) m.leader = m.id === step.to;
        break;
      case "UpgradeMember":
        byName(step.name).version = step.to;
        break;
      default:
        break;
    }
    const voters = this.members.filter((m) => !m.learner);
    expect(this.members.filter((m) => m.learner).length).toBeLessThanOrEqual(1);
    if (voters.length > 0)
      expect(voters.filter((m) => m.started).length).toBeGreaterThanOrEqual(quorum(voters.length));
    return step;
  }

  /** Steps until InSync (or a limit); returns the step types taken. */
  converge(limit = 60): string[] {
    for (let i = 0; i < limit; i++) {
      if (this.step().type === "InSync") return this.log.map((s) => s.type);
    }
    throw new Error(`did not converge: ${this.log.map((s) => s.type).join(" ")}`);
  }
}

describe("simulated reconciles", () => {
  it("creates a 3-member cluster: seed, then one learner at a time", () => {
    const sim = new Sim(spec());
    expect(sim.converge()).toEqual([
      "CreateSeed",
      "AddLearner",
      "StartMemberPod",
      "PromoteLearner",
      "AddLearner",
      "StartMemberPod",
      "PromoteLearner",
      "InSync",
    ]);
    expect(sim.members.map((m) => m.name)).toEqual(["demo-m0", "demo-m1", "demo-m2"]);
  });

  it("scales 3 -> 5 -> 3 one member at a time, keeping the leader", () => {
    const sim = new Sim(spec());
    sim.converge();
    sim.spec.replicas = 5;
    sim.log = [];
    sim.converge();
    expect(sim.members.length).toBe(5);
    sim.spec.replicas = 3;
    sim.log = [];
    expect(sim.converge()).toEqual(["RemoveMember", "RemoveMember", "InSync"]);
    expect(sim.members.find((m) => m.leader)?.name).toBe("demo-m0");
  });

  it("a rolling upgrade moves the leader last, after handing leadership over", () => {
    const sim = new Sim(spec({ version: "3.6.14" }));
    sim.converge();
    sim.spec.version = "3.6.15";
    sim.log = [];
    expect(sim.converge()).toEqual([
      "UpgradeMember",
      "UpgradeMember",
      "MoveLeader",
      "UpgradeMember",
      "InSync",
    ]);
    const upgraded = sim.log.filter((s) => s.type === "UpgradeMember").map((s) => s.name);
    expect(upgraded).toEqual(["demo-m1", "demo-m2", "demo-m0"]);
    expect(sim.members.every((m) => m.version === "3.6.15")).toBe(true);
  });

  it("replaces a member that lost its pod and data under a new name", () => {
    const sim = new Sim(spec());
    sim.converge();
    sim.pods.delete("demo-m1");
    sim.volumes.delete("demo-m1");
    sim.log = [];
    expect(sim.converge()).toEqual([
      "ReplaceMember",
      "AddLearner",
      "StartMemberPod",
      "PromoteLearner",
      "InSync",
    ]);
    expect(sim.members.map((m) => m.name)).toEqual(["demo-m0", "demo-m2", "demo-m3"]);
  });

  it("an operator killed after every step of a scale-out converges with no extra member", () => {
    // The planner keeps no state, so a restarted operator plans from what it observes: the member added
    // just before the crash, with no pod yet.
    const sim = new Sim(spec({ replicas: 5 }));
    sim.converge();
    sim.spec.replicas = 7;
    sim.step(); // AddLearner, then the operator dies before StartMemberPod
    expect(sim.log.at(-1)?.type).toBe("AddLearner");
    expect(sim.step().type).toBe("StartMemberPod");
    sim.converge();
    expect(sim.members.length).toBe(7);
    expect(new Set(sim.members.map((m) => m.name)).size).toBe(7);
  });

  it("status wiped and every pod deleted: the same members come back on their data, never a new seed", () => {
    const sim = new Sim(spec());
    sim.converge();
    const ids = sim.members.map((m) => m.id);
    sim.bootstrapped = false; // status.clusterID lost
    sim.pods.clear();
    sim.log = [];
    const steps = sim.converge();
    expect(steps).not.toContain("CreateSeed");
    expect(steps).not.toContain("ReplaceMember");
    expect(steps).not.toContain("CleanupMember");
    expect(sim.members.map((m) => m.id)).toEqual(ids);
  });
});
