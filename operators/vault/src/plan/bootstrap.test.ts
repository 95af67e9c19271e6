// planNext's bootstrap rules (4 and 5, bootstrap.ts): the first init on pod 0, exactly once (a lost answer or lost
// keys are reported, never initialized over), and the pods of existing members started again on their data.
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { ago, observed, peers, plan, pod } from "./plan-fixtures.ts";
import type { Observed, ObservedKeys, ObservedPod, Step } from "./types.ts";

describe("first init", () => {
  const fresh = (pods: ObservedPod[], marker?: Date, keys?: ObservedKeys) =>
    observed(pods, {
      keys,
      initStartedAt: marker,
      raft: { error: "no active node" },
      knownClusterID: undefined,
      knownVoters: 0,
    });

  it.each<[string, Observed, Partial<Step>]>([
    ["nothing exists: pod 0 first", fresh([]), { type: "CreatePod", pod: "demo-0", reason: "Bootstrap" }],
    ["pod 0 not answering yet", fresh([pod(0, "down")]), { type: "Wait", reason: "PodStarting" }],
    [
      "pod 0 Pending for 20 minutes before init (its claim does not bind): Degraded naming it",
      fresh([pod(0, "down", { pendingSince: ago(1200) })]),
      { type: "Degraded", reason: "PodPending", pods: ["demo-0"] },
    ],
    ["pod 0 uninitialized: init it", fresh([pod(0, "uninit")]), { type: "InitVault", pod: "demo-0" }],
    [
      "keys Secret exists without keys and no marker: init",
      fresh([pod(0, "uninit")], undefined, { unsealKeys: 0, rootToken: false, operatorToken: false }),
      { type: "InitVault", pod: "demo-0" },
    ],
    [
      "a marker younger than the grace: an init may be in flight",
      fresh([pod(0, "uninit")], ago(30)),
      { type: "Wait", reason: "InitInProgress" },
    ],
    [
      "an old marker and pod 0 still uninitialized: the init never reached Vault, init",
      fresh([pod(0, "uninit")], ago(600)),
      { type: "InitVault", pod: "demo-0" },
    ],
    [
      "a marker and pod 0 initialized without keys: the answer was lost, never a second init",
      fresh([pod(0, "sealed")], ago(600)),
      { type: "Degraded", reason: "InitResponseLost" },
    ],
    [
      "a marker, still within the grace, and pod 0 initialized: lost answer",
      fresh([pod(0, "sealed")], ago(5)),
      { type: "Degraded", reason: "InitResponseLost" },
    ],
    [
      "no keys at all and a pod initialized (Secret deleted): no init, restore the keys",
      fresh([pod(0, "sealed"), pod(1, "uninit")]),
      { type: "Degraded", reason: "KeysMissing" },
    ],
  ])("%s", (_name, o, want) => expect(plan(o)).toMatchObject(want));

  it("names the remediation when the init answer was lost", () => {
    const step = plan(fresh([pod(0, "sealed")], ago(600)));
    expect(step.message).toMatch(/delete the VaultCluster and its claims \(and the keys Secret/);
    expect(step.message).toMatch(/never initializes twice/);
  });
});

describe("after init: the keys' data, the members' pods", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    [
      "keys kept from a deleted VaultCluster, nothing else: never an init over them",
      observed([], { claims: [], raft: { error: "no pod" } }),
      { type: "Degraded", reason: "KeysWithoutData" },
    ],
    [
      "a pod deleted by hand (claim kept) is started again at once",
      observed([pod(0, "active"), pod(2, "standby")], {
        claims: ["data-demo-0", "data-demo-1", "data-demo-2"],
        raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0"),
      }),
      { type: "CreatePod", pod: "demo-1", reason: "Restart" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));
});
