// The restore planner, one case per rule and per fault an SRE meets: data that must not be written over, a snapshot
// missing, unfinished, of another checksum or of a newer Vault, keys missing or in conflict, the temporary Vault's
// steps, the Job's outcome, the operator dying mid-way (only objects and Vault are read, never status), keys that do
// not open the restored data (the act step decides between them and a pod that restarted before the restore).
import { describe, expect, it } from "vitest";
import { planRestore, type RestoreObserved } from "./restore.ts";

const now = new Date("2026-12-07T10:00:00Z");

/** A restore from VaultSnapshot s1 into demo, nothing made yet. */
const base = (): RestoreObserved => ({
  cluster: "demo",
  version: "1.14.8",
  source: "snapshot/s1",
  snapshot: { phase: "Succeeded", sha256: "a".repeat(64), vaultVersion: "1.14.8", readable: true },
  keysSource: { name: "demo-unseal-keys", unsealKeys: 3 },
  claims: [],
  pod0: { exists: false, reachable: false },
  tokenSecret: false,
  now,
});

const marked = (mark: string) => [{ name: "data-demo-0", ordinal: 0, mark }];
const temporary = { unsealKeys: 1, rootToken: true, clusterID: "cid-temp" };
const up = { exists: true, reachable: true, initialized: true, sealed: false, clusterID: "cid-temp" };

const plan = (over: Partial<RestoreObserved>) => planRestore({ ...base(), ...over });

describe("planRestore: checks before anything is made", () => {
  it.each([
    ["a claim it did not make (data)", { claims: [{ name: "data-demo-0", ordinal: 0 }] }, "RestoreOverData"],
    ["the VaultSnapshot missing", { snapshot: "missing" as const }, "RestoreSnapshotMissing"],
    [
      "a snapshot not Succeeded",
      { snapshot: { phase: "Running", readable: true } },
      "RestoreSnapshotNotSucceeded",
    ],
    ["spec.restore.sha256 not the snapshot's", { expectedSha256: "b".repeat(64) }, "RestoreChecksumMismatch"],
    [
      "a snapshot of a newer Vault than spec.version",
      { snapshot: { phase: "Succeeded", vaultVersion: "1.15.0", readable: true } },
      "RestoreVersionDowngrade",
    ],
    [
      "the keys Secret missing",
      { keysSource: { name: "old-keys", missing: true as const } },
      "RestoreKeysMissing",
    ],
    ["the keys Secret empty", { keysSource: { name: "old-keys", unsealKeys: 0 } }, "RestoreKeysMissing"],
    [
      "the cluster's keys Secret holding other keys",
      { keysSource: { name: "old-keys", unsealKeys: 3 }, ownKeys: { unsealKeys: 3, sameAsSource: false } },
      "KeysSecretConflict",
    ],
  ])("refuses %s, naming it", (_what, over, reason) => {
    const step = plan(over);
    expect(step).toMatchObject({ type: "Refuse", reason });
  });

  it("copies the keys from another Secret before anything else, and never over other keys", () => {
    expect(
      plan({
        keysSource: { name: "old-keys", unsealKeys: 3 },
        ownKeys: { unsealKeys: 0, sameAsSource: false },
      }).type,
    ).toBe("CopyKeys");
    expect(
      plan({
        keysSource: { name: "old-keys", unsealKeys: 3 },
        ownKeys: { unsealKeys: 3, sameAsSource: true },
      }).type,
    ).toBe("CreateFirstPod");
  });
});

describe("planRestore: the temporary Vault", () => {
  it("makes pod 0, waits for it, inits it (after an init's grace), unseals it, makes the token, then the Job", () => {
    expect(plan({}).type).toBe("CreateFirstPod");
    expect(
      plan({ claims: marked("pending"), pod0: { exists: true, reachable: false, error: "no IP" } }),
    ).toMatchObject({
      type: "Wait",
      reason: "PodStarting",
    });
    const uninit = { exists: true, reachable: true, initialized: false, sealed: true };
    expect(plan({ claims: marked("pending"), pod0: uninit }).type).toBe("InitTemporary");
    expect(
      plan({ claims: marked("pending"), pod0: uninit, initStartedAt: new Date(now.getTime() - 30_000) }).type,
    ).toBe("Wait");
    const sealed = { exists: true, reachable: true, initialized: true, sealed: true };
    expect(plan({ claims: marked("pending"), pod0: sealed, temporaryKeys: temporary }).type).toBe(
      "UnsealTemporary",
    );
    const noID = { unsealKeys: 1, rootToken: true };
    expect(plan({ claims: marked("pending"), pod0: up, temporaryKeys: noID }).type).toBe("MakeToken");
    expect(plan({ claims: marked("pending"), pod0: up, temporaryKeys: temporary }).type).toBe("MakeToken");
    expect(
      plan({ claims: marked("pending"), pod0: up, temporaryKeys: temporary, tokenSecret: true }).type,
    ).toBe("CreateJob");
  });

  it("an initialized pod 0 whose temporary keys were lost is refused, with the way out", () => {
    const sealed = { exists: true, reachable: true, initialized: true, sealed: true };
    const step = plan({ claims: marked("pending"), pod0: sealed });
    expect(step).toMatchObject({ type: "Refuse", reason: "RestoreInitLost" });
    expect(step.type === "Refuse" && step.message).toMatch(/delete the pod demo-0 and its claim data-demo-0/);
  });
});

describe("planRestore: the Job and after", () => {
  const forced = { claims: marked("forced"), pod0: up, temporaryKeys: temporary, tokenSecret: true };

  it("waits while the Job runs, and after it succeeded until the server seals itself", () => {
    expect(plan({ ...forced, job: { succeeded: false } })).toMatchObject({ reason: "RestoreInProgress" });
    expect(plan({ ...forced, job: { succeeded: true } })).toMatchObject({ reason: "RestoreApplying" });
  });

  it("a failed Job is Degraded with its step's words; deleting it makes a new one", () => {
    const failed = plan({
      ...forced,
      job: { succeeded: false, failed: { reason: "BackoffLimitExceeded", message: "fetch: sha256 differs" } },
    });
    expect(failed).toMatchObject({ type: "Refuse", reason: "RestoreFailed" });
    expect(failed.type === "Refuse" && failed.message).toMatch(
      /fetch: sha256 differs.*kubectl delete job demo-restore/,
    );
    expect(plan(forced).type).toBe("CreateJob");
  });

  it("once forced, a sealed server is unsealed with the snapshot's keys (also with the operator restarted, status lost)", () => {
    const sealed = { exists: true, reachable: true, initialized: true, sealed: true };
    expect(plan({ ...forced, pod0: sealed }).type).toBe("UnsealRestored");
    // The Job alone is evidence enough that the snapshot may have gone in.
    expect(plan({ ...forced, claims: marked("pending"), job: { succeeded: true }, pod0: sealed }).type).toBe(
      "UnsealRestored",
    );
  });

  it("is confirmed once the server serves another cluster_id than the temporary one, then done", () => {
    const restored = { ...up, clusterID: "cid-old" };
    expect(plan({ ...forced, pod0: restored, job: { succeeded: true } })).toEqual({
      type: "Confirm",
      clusterID: "cid-old",
      message: expect.stringContaining("cid-old"),
    });
    expect(plan({ ...forced, claims: marked("done") })).toEqual({ type: "Done" });
  });

  it("once forced, the snapshot's absence no longer holds the restore back (the Job already has it)", () => {
    const sealed = { exists: true, reachable: true, initialized: true, sealed: true };
    expect(plan({ ...forced, snapshot: "missing", pod0: sealed }).type).toBe("UnsealRestored");
  });
});
