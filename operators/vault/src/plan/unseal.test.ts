// planNext's unseal rule (6, unseal.ts): a sealed, initialized pod is unsealed before anything else is judged.
import { describe, expect, it } from "vitest";
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import { justInit, observed, plan, pod } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

describe("unseal", () => {
  it.each<[string, Observed, Partial<Step>, Partial<VaultClusterSpec>?]>([
    ["pod 0 sealed after init: unseal", justInit([pod(0, "sealed")]), { type: "Unseal", pod: "demo-0" }],
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
});
