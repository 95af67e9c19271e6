// planNext's token rule (8, token.ts): the operator's own token made, the root token revoked, the token renewed.
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { healthy3, justInit, KEYS, observed, plan, pod } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

describe("the operator token", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
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
  ])("%s", (_name, o, want, s) => expect(plan(o, s)).toMatchObject(want));

  it("the operator token is created before any join (raft changes need it)", () => {
    expect(justInit([pod(0, "active"), pod(1, "uninit")])).toBeDefined();
    expect(plan(justInit([pod(0, "active"), pod(1, "uninit")]))).toMatchObject({ type: "BootstrapToken" });
  });
});
