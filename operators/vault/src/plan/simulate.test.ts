// The planner driven to convergence against a small model of Kubernetes and Vault: bootstrap (one init), scale
// 3 -> 5 -> 3 (raft peers equal the pods after each step, peers removed before pods and claims), and a rolling
// upgrade (standbys first, the active last after a step-down).
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { type Observed, type ObservedPod, planNext, type Step, vaultImage } from "./plan.ts";

interface ModelPod {
  image: string;
  /** Holds raft data of this cluster (joined or initialized). */
  initialized: boolean;
  sealed: boolean;
}

/** Kubernetes objects and Vault's state, changed by each step as the reconciler and Vault would. */
class World {
  pods = new Map<string, ModelPod>();
  claims = new Set<string>();
  peers = new Set<string>();
  active: string | undefined;
  keys = { unsealKeys: 0, rootToken: false, operatorToken: false };
  inits = 0;

  observe(): Observed {
    const pods: ObservedPod[] = [...this.pods].map(([name, p]) => ({
      name,
      ordinal: Number(name.split("-")[1]),
      ready: p.initialized && !p.sealed,
      image: p.image,
      vault: {
        reachable: true,
        initialized: p.initialized,
        sealed: p.sealed,
        standby: name !== this.active,
        version: p.image.split(":")[1] ?? "",
        ...(p.initialized ? { clusterID: "cid" } : {}),
      },
    }));
    return {
      pods,
      claims: [...this.claims],
      ...(this.keys.unsealKeys > 0 || this.inits > 0 ? { keys: { ...this.keys, clusterID: "cid" } } : {}),
      raft:
        this.active === undefined
          ? { error: "no active" }
          : {
              servers: [...this.peers].map((n) => ({
                nodeID: n,
                address: n,
                voter: true,
                leader: n === this.active,
              })),
            },
      tls: { ready: true },
      knownVoters: this.peers.size,
    };
  }

  /** Applies `step`; throws on a step that would be unsafe in this world. */
  apply(step: Step, image: string): void {
    switch (step.type) {
      case "CreatePod": {
        const claim = `data-${step.pod}`;
        const hasData = this.claims.has(claim) && this.peers.has(step.pod);
        this.claims.add(claim);
        this.pods.set(step.pod, { image, initialized: hasData, sealed: true });
        return;
      }
      case "InitVault":
        this.inits++;
        this.keys = { unsealKeys: 5, rootToken: true, operatorToken: false };
        this.pods.get(step.pod)!.initialized = true;
        this.peers.add(step.pod);
        return;
      case "Unseal": {
        const p = this.pods.get(step.pod)!;
        p.sealed = false;
        if (this.active === undefined || !this.pods.has(this.active)) this.active = step.pod;
        return;
      }
      case "JoinRaft": {
        expect(this.active).toBe(step.leader);
        const p = this.pods.get(step.pod)!;
        Object.assign(p, { initialized: true, sealed: false });
        this.peers.add(step.pod);
        return;
      }
      case "RemovePeer":
        expect(step.nodeID).not.toBe(this.active);
        this.peers.delete(step.nodeID);
        return;
      case "DeletePod":
        if (step.deleteClaim) {
          expect(this.peers.has(step.pod), `${step.pod} deleted while still a raft peer`).toBe(false);
          this.claims.delete(`data-${step.pod}`);
        }
        this.pods.delete(step.pod);
        return;
      case "StepDown": {
        const next = [...this.peers].sort().find((n) => n !== step.pod && this.pods.get(n)?.sealed === false);
        expect(next).toBeDefined();
        this.active = next;
        return;
      }
      case "UpgradePod": {
        const p = this.pods.get(step.pod)!;
        p.image = step.to;
        p.sealed = true;
        if (this.active === step.pod) this.active = undefined;
        return;
      }
      case "BootstrapToken":
        this.keys.operatorToken = true;
        return;
      case "RevokeRootToken":
        this.keys.rootToken = false;
        return;
      default:
        throw new Error(`unexpected step ${step.type}: ${step.message}`);
    }
  }

  /** Plans and applies until InSync; returns the steps taken. */
  converge(spec: VaultClusterSpec, max = 100): Step[] {
    const steps: Step[] = [];
    for (let i = 0; i < max; i++) {
      const step = planNext("demo", spec, this.observe(), new Date("2026-12-01T12:00:00Z"));
      if (step.type === "InSync") return steps;
      steps.push(step);
      this.apply(step, vaultImage(spec));
    }
    throw new Error(
      `no convergence after ${max} steps: ${steps
        .slice(-5)
        .map((s) => s.type)
        .join(", ")}`,
    );
  }
}

const spec = (s: Partial<VaultClusterSpec> = {}): VaultClusterSpec => ({
  replicas: 3,
  version: "1.14.6",
  repository: "hashicorp/vault",
  storage: { size: "1Gi" },
  tls: { duration: "2160h", renewBefore: "720h" },
  unseal: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
  ...s,
});

const podNames = (w: World) => [...w.pods.keys()].sort();

describe("simulated lifecycle", () => {
  const world = new World();

  it("bootstraps 3 pods with exactly one init, the operator token made and the root token revoked", () => {
    const steps = world.converge(spec());
    expect(world.inits).toBe(1);
    expect(podNames(world)).toEqual(["demo-0", "demo-1", "demo-2"]);
    expect([...world.peers].sort()).toEqual(podNames(world));
    expect(world.keys).toMatchObject({ operatorToken: true, rootToken: false });
    expect(steps.findIndex((s) => s.type === "BootstrapToken")).toBeLessThan(
      steps.findIndex((s) => s.type === "JoinRaft"),
    );
  });

  it("scales 3 -> 5 one pod at a time, then 5 -> 3 removing each peer before its pod and claim", () => {
    const out = world.converge(spec({ replicas: 5 }));
    expect(out.filter((s) => s.type === "CreatePod").map((s) => ("pod" in s ? s.pod : ""))).toEqual([
      "demo-3",
      "demo-4",
    ]);
    expect([...world.peers].sort()).toEqual(podNames(world));
    const back = world.converge(spec({ replicas: 3 }));
    expect(back.map((s) => `${s.type} ${"pod" in s ? s.pod : "nodeID" in s ? s.nodeID : ""}`)).toEqual([
      "RemovePeer demo-4",
      "DeletePod demo-4",
      "RemovePeer demo-3",
      "DeletePod demo-3",
    ]);
    expect([...world.peers].sort()).toEqual(["demo-0", "demo-1", "demo-2"]);
    expect([...world.claims].sort()).toEqual(["data-demo-0", "data-demo-1", "data-demo-2"]);
    expect(world.inits).toBe(1);
  });

  it("upgrades standbys first, then steps the active down and upgrades it last", () => {
    const before = world.active!;
    const steps = world.converge(spec({ version: "1.14.8" }));
    const upgrades = steps.filter((s) => s.type === "UpgradePod").map((s) => ("pod" in s ? s.pod : ""));
    expect(upgrades).toHaveLength(3);
    expect(upgrades[2]).toBe(before);
    const stepDown = steps.findIndex((s) => s.type === "StepDown");
    expect(stepDown).toBeGreaterThan(steps.findIndex((s) => s.type === "UpgradePod"));
    expect(stepDown).toBeLessThan(
      steps.lastIndexOf(steps.find((s) => s.type === "UpgradePod" && s.pod === before)!),
    );
    expect([...world.pods.values()].every((p) => p.image === "hashicorp/vault:1.14.8" && !p.sealed)).toBe(
      true,
    );
    expect(world.inits).toBe(1);
  });

  it("recovers a pod whose claim was deleted with it: old peer removed, rejoined, never a second init", () => {
    const victim = [...world.pods.keys()].find((n) => n !== world.active)!;
    world.pods.delete(victim);
    world.claims.delete(`data-${victim}`);
    const steps = world.converge(spec({ version: "1.14.8" }));
    expect(steps.map((s) => s.type)).toEqual(["CreatePod", "RemovePeer", "JoinRaft"]);
    expect([...world.peers].sort()).toEqual(podNames(world));
    expect(world.inits).toBe(1);
  });
});
