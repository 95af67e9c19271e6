// Table tests of the planner: for each observed situation, the one step it must take (or refuse to take).
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import type { Observed, ObservedKeys, ObservedPod, Step } from "./plan.ts";
import { ordinalOf, planNext, quorum } from "./plan.ts";
import {
  ago,
  healthy3,
  ID,
  IMAGE,
  KEYS,
  NOW,
  OLD,
  type Over,
  observed,
  plan,
  pod,
  spec,
  vaultOf,
} from "./plan-fixtures.ts";

describe("helpers", () => {
  it.each([
    [1, 1],
    [3, 2],
    [4, 3],
    [5, 3],
  ])("quorum(%i) = %i", (n, q) => expect(quorum(n)).toBe(q));
  it.each([
    ["demo-0", 0],
    ["demo-12", 12],
    ["demo-01", undefined],
    ["demo-x", undefined],
    ["other-1", undefined],
  ])("ordinalOf(%s)", (name, o) => expect(ordinalOf("demo", name)).toBe(o));
});

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

describe("after init: unseal, token, join", () => {
  const justInit = (pods: ObservedPod[], keys: Partial<ObservedKeys> = {}, o: Over = {}) =>
    observed(pods, {
      keys: { unsealKeys: 5, rootToken: true, operatorToken: false, clusterID: ID, ...keys },
      token: undefined,
      ...o,
    });

  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    ["pod 0 sealed after init: unseal", justInit([pod(0, "sealed")]), { type: "Unseal", pod: "demo-0" }],
    [
      "active with the root token only: bootstrap the operator token",
      justInit([pod(0, "active")]),
      { type: "BootstrapToken", pod: "demo-0" },
    ],
    [
      "operator token made, root still there: revoke it",
      justInit(
        [pod(0, "active")],
        { operatorToken: true },
        { token: { valid: true, ttlSeconds: 100, periodSeconds: 100 } },
      ),
      { type: "RevokeRootToken", pod: "demo-0" },
    ],
    [
      "keepRootToken: the root token stays, scale-out goes on",
      justInit(
        [pod(0, "active")],
        { operatorToken: true },
        { token: { valid: true, ttlSeconds: 100, periodSeconds: 100 } },
      ),
      { type: "CreatePod", pod: "demo-1", reason: "ScaleOut" },
      { unseal: { shares: 5, threshold: 3, keepRootToken: true, retainKeysOnDelete: true } },
    ],
    [
      "token below half its period: renew",
      observed(healthy3(), { token: { valid: true, ttlSeconds: 10, periodSeconds: 100 } }),
      { type: "RenewToken", pod: "demo-0" },
    ],
    [
      "token refused and no root token: a root token is generated with the unseal keys",
      observed(healthy3(), { token: { valid: false, error: "permission denied" } }),
      { type: "RegenerateRootToken", pod: "demo-0" },
    ],
    [
      "token missing and no root token: the same",
      observed(healthy3(), { keys: { ...KEYS, operatorToken: false } }),
      { type: "RegenerateRootToken", pod: "demo-0" },
    ],
    [
      "token refused but a root token is kept: a new operator token",
      observed(healthy3(), {
        keys: { ...KEYS, rootToken: true },
        token: { valid: false, error: "permission denied" },
      }),
      { type: "BootstrapToken" },
    ],
    [
      "a new pod uninitialized: it joins through the active pod",
      observed([pod(0, "active"), pod(1, "uninit")]),
      { type: "JoinRaft", pod: "demo-1", leader: "demo-0" },
    ],
    [
      "keys present and a pod reporting uninitialized never re-inits, even pod 0",
      observed([pod(0, "uninit"), pod(1, "active"), pod(2, "standby")], {
        raft: {
          servers: [
            { nodeID: "demo-1", address: "a", voter: true, leader: true },
            { nodeID: "demo-2", address: "b", voter: true, leader: false },
          ],
        },
      }),
      { type: "JoinRaft", pod: "demo-0", leader: "demo-1" },
    ],
    [
      "a pod whose data was lost: its old peer is removed first",
      observed([pod(0, "active"), pod(1, "uninit"), pod(2, "standby")], {
        raft: {
          servers: ["demo-0", "demo-1", "demo-2"].map((n, i) => ({
            nodeID: n,
            address: n,
            voter: true,
            leader: i === 0,
          })),
        },
      }),
      { type: "RemovePeer", nodeID: "demo-1", via: "demo-0", reason: "DataLost" },
    ],
    [
      "a restarted (sealed) pod is unsealed even while another is not ready",
      observed([pod(0, "active"), pod(1, "sealed"), pod(2, "down")]),
      { type: "Unseal", pod: "demo-1" },
    ],
    [
      "all pods sealed after a full restart: unseal the first",
      observed([pod(0, "sealed"), pod(1, "sealed"), pod(2, "sealed")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Unseal", pod: "demo-0" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));

  it("the operator token is created before any join (raft changes need it)", () => {
    expect(justInit([pod(0, "active"), pod(1, "uninit")])).toBeDefined();
    expect(plan(justInit([pod(0, "active"), pod(1, "uninit")]))).toMatchObject({ type: "BootstrapToken" });
  });
});

describe("refusals", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    ["paused", observed([]), { type: "Wait", reason: "Paused" }, { paused: true }],
    [
      "an owned config key (object older than the CEL rule)",
      observed(healthy3()),
      { type: "Degraded", reason: "ConfigKeyOwned" },
      { config: { ui: true, listener: {} } },
    ],
    [
      "the user's TLS Secret is missing",
      observed(healthy3(), {
        tls: { ready: false, reason: "TLSSecretMissing", message: "Secret x is missing" },
      }),
      { type: "Degraded", reason: "TLSSecretMissing" },
    ],
    [
      "operator TLS being issued",
      observed([], { tls: { ready: false, reason: "TLSIssuing", message: "issuing" } }),
      { type: "Wait", reason: "TLSIssuing" },
    ],
    [
      "a pod answering with another cluster_id: Degraded naming both, no action",
      observed([
        pod(0, "active"),
        pod(1, "standby", { vault: vaultOf("standby", "1.14.8", "beef") }),
        pod(2, "sealed"),
      ]),
      { type: "Degraded", reason: "ClusterIDMismatch", pods: ["demo-1"] },
    ],
    [
      "quorum lost: one of three unsealed, two down; no membership change",
      observed([pod(0, "standby"), pod(1, "down"), pod(2, "down")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Degraded", reason: "QuorumLost" },
    ],
    [
      "keys kept from a deleted VaultCluster, nothing else: never an init over them",
      observed([], { claims: [], raft: { error: "no pod" } }),
      { type: "Degraded", reason: "KeysWithoutData" },
    ],
    [
      "every pod uninitialized while the keys exist: the data is gone, no init, no join",
      observed([pod(0, "uninit"), pod(1, "uninit"), pod(2, "uninit")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Degraded", reason: "DataLost" },
    ],
    [
      "two of three unsealed standbys and no active: an election is due",
      observed([pod(0, "standby"), pod(1, "standby"), pod(2, "down")], {
        raft: { error: "no active" },
        knownVoters: 3,
      }),
      { type: "Wait", reason: "ElectingLeader" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));

  it("the cluster_id mismatch message names both ids", () => {
    const step = plan(
      observed([pod(0, "active"), pod(1, "standby", { vault: vaultOf("standby", "1.14.8", "beef") })]),
    );
    expect(step.message).toContain("beef");
    expect(step.message).toContain(ID);
  });
});

describe("an unschedulable voter names the spread rule that holds it", () => {
  const stuck = observed([
    ...healthy3().slice(0, 2),
    pod(2, "down", { ready: false, unschedulableSince: ago(180) }),
  ]);
  it("with the default (one voter per node required): names antiAffinity, the topology key and what to do", () => {
    const step = plan(stuck);
    expect(step).toMatchObject({ type: "Degraded", reason: "PodUnschedulable" });
    expect(step.message).toContain(
      "spec.podTemplate.antiAffinity is Required: each of the 3 voters needs a node",
    );
    expect(step.message).toContain("kubernetes.io/hostname");
  });
  it("with Preferred, or an affinity of the user's: no such hint", () => {
    for (const podTemplate of [{ antiAffinity: "Preferred" as const }, { affinity: { nodeAffinity: {} } }]) {
      const step = plan(stuck, { podTemplate });
      expect(step).toMatchObject({ type: "Degraded", reason: "PodUnschedulable" });
      expect(step.message).not.toContain("antiAffinity");
    }
  });
});

describe("stalled pods: Degraded naming the pod, never a claim deleted", () => {
  it.each<[string, Observed, Partial<Step>]>([
    [
      "unschedulable for 3 minutes",
      observed([...healthy3().slice(0, 2), pod(2, "down", { ready: false, unschedulableSince: ago(180) })]),
      { type: "Degraded", reason: "PodUnschedulable", pods: ["demo-2"] },
    ],
    [
      "unschedulable for 10 seconds: just wait",
      observed([...healthy3().slice(0, 2), pod(2, "down", { unschedulableSince: ago(10) })]),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "Pending for 20 minutes (claim not bound)",
      observed([...healthy3().slice(0, 2), pod(2, "down", { pendingSince: ago(1200) })]),
      { type: "Degraded", reason: "PodPending", pods: ["demo-2"] },
    ],
    [
      "stuck terminating for 10 minutes",
      observed([...healthy3().slice(0, 2), pod(2, "down", { terminatingSince: ago(600) })]),
      { type: "Degraded", reason: "PodStuckTerminating", pods: ["demo-2"] },
    ],
    [
      "cannot pull spec's image",
      observed([
        ...healthy3().slice(0, 2),
        pod(2, "down", { imagePullError: { image: IMAGE, reason: "ImagePullBackOff" } }),
      ]),
      { type: "Degraded", reason: "ImagePullFailed", pods: ["demo-2"] },
    ],
    [
      "cannot pull an image spec no longer asks for: move it to spec's",
      observed([
        ...healthy3().slice(0, 2),
        pod(2, "down", {
          image: "hashicorp/vault:9.9.9",
          imagePullError: { image: "hashicorp/vault:9.9.9", reason: "ErrImagePull" },
        }),
      ]),
      { type: "UpgradePod", pod: "demo-2", to: IMAGE },
    ],
  ])("%s", (_name, o, want) => {
    const step = plan(o);
    expect(step).toMatchObject(want);
    expect(step.type).not.toBe("DeletePod");
  });
});

describe("scaling", () => {
  const peers = (names: string[], leader: string, nonVoters: string[] = []) => ({
    servers: names.map((n) => ({
      nodeID: n,
      address: n,
      voter: !nonVoters.includes(n),
      leader: n === leader,
    })),
  });

  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    ["in sync", observed(healthy3()), { type: "InSync" }],
    [
      "3 -> 5: one pod at a time",
      observed(healthy3()),
      { type: "CreatePod", pod: "demo-3", reason: "ScaleOut" },
      { replicas: 5 },
    ],
    [
      "3 -> 5: the new pod is not a voter yet: wait before the next",
      observed([...healthy3(), pod(3, "standby")], {
        raft: peers(["demo-0", "demo-1", "demo-2", "demo-3"], "demo-0", ["demo-3"]),
      }),
      { type: "Wait", reason: "PodNotReady" },
      { replicas: 5 },
    ],
    [
      "3 -> 5: the new pod is still starting",
      observed([...healthy3(), pod(3, "down")]),
      { type: "Wait", reason: "PodNotReady" },
      { replicas: 5 },
    ],
    [
      "5 -> 3: the peer of the highest ordinal goes first",
      observed([...healthy3(), pod(3, "standby"), pod(4, "standby")]),
      { type: "RemovePeer", nodeID: "demo-4", via: "demo-0", reason: "ScaleIn" },
    ],
    [
      "5 -> 3: then its pod and claim",
      observed([...healthy3(), pod(3, "standby"), pod(4, "standby")], {
        raft: peers(["demo-0", "demo-1", "demo-2", "demo-3"], "demo-0"),
      }),
      { type: "DeletePod", pod: "demo-4", deleteClaim: true, reason: "ScaleIn" },
    ],
    [
      "5 -> 3: the victim is active: step down first",
      observed([
        pod(0, "standby"),
        pod(1, "standby"),
        pod(2, "standby"),
        pod(3, "standby"),
        pod(4, "active"),
      ]),
      { type: "StepDown", pod: "demo-4" },
    ],
    [
      "5 -> 3: a claim left without pod or peer (interrupted scale-in) is deleted",
      observed(healthy3(), { claims: ["data-demo-0", "data-demo-1", "data-demo-2", "data-demo-3"] }),
      { type: "DeletePod", pod: "demo-3", deleteClaim: true },
    ],
    [
      "5 -> 3: a dead peer without pod beyond replicas is removed (bank-vaults#796)",
      observed(healthy3(), { raft: peers(["demo-0", "demo-1", "demo-2", "demo-4"], "demo-0") }),
      { type: "RemovePeer", nodeID: "demo-4", reason: "Orphan" },
    ],
    [
      "removal refused when it would break the quorum of healthy voters",
      observed([pod(0, "active"), pod(1, "down"), pod(2, "down"), pod(3, "standby"), pod(4, "standby")], {
        raft: peers(["demo-0", "demo-1", "demo-2", "demo-3", "demo-4"], "demo-0"),
        claims: [],
      }),
      { type: "Wait", reason: "QuorumAtRisk" },
    ],
    [
      "a pod deleted by hand (claim kept) is started again at once",
      observed([pod(0, "active"), pod(2, "standby")], {
        claims: ["data-demo-0", "data-demo-1", "data-demo-2"],
        raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0"),
      }),
      { type: "CreatePod", pod: "demo-1", reason: "Restart" },
    ],
    [
      "pod and claim deleted by hand: recreated as a new pod (then its old peer is removed, it rejoins)",
      observed([pod(0, "active"), pod(2, "standby")], {
        claims: ["data-demo-0", "data-demo-2"],
        raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0"),
      }),
      { type: "CreatePod", pod: "demo-1", reason: "ScaleOut" },
    ],
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));

  it("a pod and claim deleted by hand, its peer already removed: created again", () => {
    const o = observed([pod(0, "active"), pod(2, "standby")], {
      claims: ["data-demo-0", "data-demo-2"],
      raft: peers(["demo-0", "demo-2"], "demo-0"),
    });
    expect(plan(o)).toMatchObject({ type: "CreatePod", pod: "demo-1", reason: "ScaleOut" });
  });
});

describe("rolling upgrade", () => {
  const upgrading = (images: string[], activeAt: number, o: Over = {}) =>
    observed(
      images.map((image, i) => pod(i, i === activeAt ? "active" : "standby", { image })),
      o,
    );

  it.each<[string, Observed, Partial<Step>]>([
    [
      "standbys first, lowest ordinal",
      upgrading([OLD, OLD, OLD], 0),
      { type: "UpgradePod", pod: "demo-1", from: OLD, to: IMAGE },
    ],
    ["then the next standby", upgrading([OLD, IMAGE, OLD], 0), { type: "UpgradePod", pod: "demo-2" }],
    ["then the active steps down", upgrading([OLD, IMAGE, IMAGE], 0), { type: "StepDown", pod: "demo-0" }],
    [
      "the old active is upgraded last, as a standby",
      upgrading([OLD, IMAGE, IMAGE], 1),
      { type: "UpgradePod", pod: "demo-0" },
    ],
    [
      "one pod at a time: the upgraded one must be back unsealed first",
      observed([pod(0, "active", { image: OLD }), pod(1, "sealed"), pod(2, "standby", { image: OLD })]),
      { type: "Unseal", pod: "demo-1" },
    ],
    [
      "one pod at a time: and a voter again",
      observed([pod(0, "active", { image: OLD }), pod(1, "standby"), pod(2, "standby", { image: OLD })], {
        raft: {
          servers: ["demo-0", "demo-1", "demo-2"].map((n, i) => ({
            nodeID: n,
            address: n,
            voter: i !== 1,
            leader: i === 0,
          })),
        },
      }),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "an image changed in place but the old container still runs (and is ready): wait, no next step",
      observed([
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE, runningImage: `docker.io/${OLD}` }),
        pod(2, "standby", { image: OLD }),
      ]),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "the last standby changed in place, its container not yet restarted: no step-down yet",
      observed([
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE, runningImage: `docker.io/${IMAGE}` }),
        pod(2, "standby", { image: IMAGE, runningImage: OLD }),
      ]),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "the runtime reports the image fully qualified: it counts as running spec's image",
      observed([
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE, runningImage: `docker.io/${IMAGE}` }),
        pod(2, "standby", { image: IMAGE, runningImage: `docker.io/${IMAGE}` }),
      ]),
      { type: "StepDown", pod: "demo-0" },
    ],
    [
      "a single pod is upgraded in place (no standby to hand over to)",
      observed([pod(0, "active", { image: OLD })]),
      { type: "UpgradePod", pod: "demo-0" },
    ],
    [
      "a changed pod template restarts standbys on their data, the claim kept",
      observed([pod(0, "active"), pod(1, "standby", { templateOutdated: true }), pod(2, "standby")]),
      { type: "DeletePod", pod: "demo-1", deleteClaim: false, reason: "Restart" },
    ],
  ])("%s", (_name, o, want) =>
    expect(planNext("demo", spec(_name.includes("single") ? { replicas: 1 } : {}), o, NOW)).toMatchObject(
      want,
    ),
  );
});

describe("status wiped", () => {
  it("no knownClusterID or voters in status: the keys' cluster_id and the raft config still guide it", () => {
    const o = observed(healthy3(), { knownClusterID: undefined, knownVoters: undefined });
    expect(plan(o)).toMatchObject({ type: "InSync" });
    const stranger = observed(
      [
        pod(0, "active"),
        pod(1, "standby", { vault: vaultOf("standby", "1.14.8", "beef") }),
        pod(2, "standby"),
      ],
      { knownClusterID: undefined },
    );
    expect(plan(stranger)).toMatchObject({ type: "Degraded", reason: "ClusterIDMismatch" });
  });

  it("all pods gone, claims kept: restarted on their data, never a second init", () => {
    const o = observed([], {
      claims: ["data-demo-0", "data-demo-1", "data-demo-2"],
      raft: { error: "no pod" },
    });
    expect(plan(o)).toMatchObject({ type: "CreatePod", pod: "demo-0", reason: "Restart" });
  });
});
