// Fixtures of the planner's table tests: a 1.14.8 cluster "demo" seen at NOW, pods in a named state, and the
// observation around them (claims, keys, token and raft voters derived from the pods unless overridden).
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { planNext } from "./plan.ts";
import type { Observed, ObservedKeys, ObservedPeer, ObservedPod, PodVault, Step } from "./types.ts";

export const NOW = new Date("2026-12-01T12:00:00Z");
export const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
export const IMAGE = "hashicorp/vault:1.14.8";
export const OLD = "hashicorp/vault:1.14.6";
export const ID = "c0ffee";

export const spec = (s: Partial<VaultClusterSpec> = {}): VaultClusterSpec => ({
  replicas: 3,
  version: "1.14.8",
  repository: "hashicorp/vault",
  storage: { size: "1Gi" },
  tls: { duration: "2160h", renewBefore: "720h" },
  unseal: { shares: 5, threshold: 3, keepRootToken: false, retainKeysOnDelete: true },
  ...s,
});

export type State = "active" | "standby" | "sealed" | "uninit" | "down";

export function vaultOf(state: State, version = "1.14.8", clusterID = ID): PodVault {
  switch (state) {
    case "down":
      return { reachable: false, error: "connect ECONNREFUSED" };
    case "uninit":
      return { reachable: true, initialized: false, sealed: true, standby: false, version };
    case "sealed":
      return { reachable: true, initialized: true, sealed: true, standby: false, version, clusterID };
    default:
      return {
        reachable: true,
        initialized: true,
        sealed: false,
        standby: state === "standby",
        version,
        clusterID,
      };
  }
}

export function pod(ordinal: number, state: State, extra: Partial<ObservedPod> = {}): ObservedPod {
  const image = extra.image ?? IMAGE;
  return {
    name: `demo-${ordinal}`,
    ordinal,
    ready: state === "active" || state === "standby",
    image,
    vault: vaultOf(state, image.split(":")[1]),
    ...extra,
  };
}

export const KEYS: ObservedKeys = { unsealKeys: 5, rootToken: false, operatorToken: true, clusterID: ID };

/** A cluster seen with `pods`; defaults: claims of every pod, keys and token fine, raft = the initialized pods as voters. */
/** Overrides of {@link observed}; `undefined` removes a default. */
export type Over = { [K in keyof Observed]?: Observed[K] | undefined };

export function observed(pods: ObservedPod[], o: Over = {}): Observed {
  const servers: ObservedPeer[] = pods
    .filter((p) => p.vault.reachable && p.vault.initialized)
    .map((p) => ({
      nodeID: p.name,
      address: `${p.name}.demo-internal.ns.svc:8201`,
      voter: true,
      leader: p.vault.reachable && !p.vault.sealed && !p.vault.standby,
    }));
  return {
    pods,
    claims: pods.map((p) => `data-${p.name}`),
    keys: KEYS,
    raft: { servers },
    token: { valid: true, ttlSeconds: 2_000_000, periodSeconds: 2_764_800 },
    knownClusterID: ID,
    knownVoters: servers.length,
    tls: { ready: true },
    ...o,
  } as Observed;
}

/** Just after init: the root token kept, no operator token yet (overrides in `keys` and `o`). */
export const justInit = (pods: ObservedPod[], keys: Partial<ObservedKeys> = {}, o: Over = {}) =>
  observed(pods, {
    keys: { unsealKeys: 5, rootToken: true, operatorToken: false, clusterID: ID, ...keys },
    token: undefined,
    ...o,
  });

/** A raft configuration of `names`, `leader` leading, every one a voter but `nonVoters`. */
export const peers = (names: string[], leader: string, nonVoters: string[] = []) => ({
  servers: names.map((n) => ({
    nodeID: n,
    address: n,
    voter: !nonVoters.includes(n),
    leader: n === leader,
  })),
});

export const healthy3 = () => [pod(0, "active"), pod(1, "standby"), pod(2, "standby")];

export function plan(o: Observed, s: Partial<VaultClusterSpec> = {}): Step {
  return planNext("demo", spec(s), o, NOW);
}
