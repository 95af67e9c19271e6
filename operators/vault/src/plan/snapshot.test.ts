// The VaultSnapshot planner, one case per rule: what it waits for, what fails it at once, the deadline, the Job's
// outcome and results (a stored file that differs from the verified snapshot fails it), and a refused token.
import { describe, expect, it } from "vitest";
import type { VaultCluster } from "../api/vault-cluster.ts";
import type { VaultSnapshot } from "../api/vault-snapshot.ts";
import { cluster as baseCluster } from "../reconcile/test-fixture.ts";
import { planSnapshot, planTokenFailed, type SnapshotInput } from "./snapshot.ts";

const now = new Date("2026-12-07T10:00:00Z");
const SHA = "a".repeat(64);

const snapshot = (
  over: Partial<VaultSnapshot["spec"]> = {},
  status?: VaultSnapshot["status"],
): VaultSnapshot => ({
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultSnapshot",
  metadata: {
    name: "s1",
    namespace: "ns",
    uid: "u-s1",
    generation: 1,
    creationTimestamp: "2026-12-07T09:59:00Z",
  },
  spec: {
    clusterName: "demo",
    destination: { s3: { bucket: "snaps", credentialsSecret: { name: "s3" } } },
    activeDeadlineSeconds: 3600,
    ...over,
  },
  ...(status === undefined ? {} : { status }),
});

const activeCluster = (): VaultCluster => ({
  ...baseCluster(3),
  status: { active: "demo-1", clusterID: "cid-old", currentVersion: "1.14.8" },
});

const plan = (over: Partial<SnapshotInput>) =>
  planSnapshot({ snapshot: snapshot(), cluster: activeCluster(), now, ...over });
const condition = (p: ReturnType<typeof plan>, type: string) => p.conditions.find((c) => c.type === type);

describe("planSnapshot before the Job", () => {
  it("makes the Job once the cluster has an active node, recording its cluster_id and version", () => {
    const p = plan({});
    expect(p.action).toEqual({ type: "CreateJob" });
    expect(p.status).toMatchObject({ phase: "Running", clusterID: "cid-old", vaultVersion: "1.14.8" });
    expect(p.event?.reason).toBe("SnapshotStarted");
  });

  it.each([
    ["no cluster", { cluster: undefined }, "ClusterNotFound", true],
    ["no active node", { cluster: baseCluster(3) }, "NoActiveNode", false],
    [
      "the cluster being restored (a temporary Vault serves)",
      { cluster: { ...activeCluster(), status: { ...activeCluster().status, phase: "Restoring" as const } } },
      "ClusterRestoring",
      false,
    ],
  ] as const)("waits, Pending: %s", (_what, over, reason, degraded) => {
    const p = plan(over);
    expect(p.action).toBeUndefined();
    expect(p.status.phase).toBe("Pending");
    expect(condition(p, "Progressing")?.reason).toBe(reason);
    expect(condition(p, "Degraded")?.status).toBe(degraded ? "True" : "False");
    expect(p.requeueAfter).toBeGreaterThan(0);
  });

  it("fails past spec.activeDeadlineSeconds from its creation, naming what it waited for", () => {
    const later = new Date("2026-12-07T10:05:00Z");
    const p = planSnapshot({
      snapshot: snapshot({ activeDeadlineSeconds: 60 }),
      cluster: baseCluster(3),
      now: later,
    });
    expect(p.status.phase).toBe("Failed");
    expect(condition(p, "Degraded")).toMatchObject({ reason: "DeadlineExceeded" });
    expect(condition(p, "Degraded")?.message).toMatch(/no active node/);
  });

  it("fails at once: missing S3 credentials, or a destination claim that holds a cluster's data", () => {
    expect(
      condition(
        plan({ secretsProblem: "spec.destination.s3.credentialsSecret.name: Secret ns/s3 does not exist" }),
        "Degraded",
      ),
    ).toMatchObject({ status: "True", reason: "CredentialsMissing" });
    const onClaim = planSnapshot({
      snapshot: snapshot({ destination: { pvc: { claimName: "data-demo-0" } } }),
      cluster: activeCluster(),
      claim: { vaultCluster: "demo" },
      now,
    });
    expect(onClaim.status.phase).toBe("Failed");
    expect(condition(onClaim, "Degraded")?.reason).toBe("ClaimOwnedByCluster");
    const noClaim = planSnapshot({
      snapshot: snapshot({ destination: { pvc: { claimName: "snaps" } } }),
      cluster: activeCluster(),
      now,
    });
    expect(condition(noClaim, "Progressing")?.reason).toBe("ClaimNotFound");
  });
});

describe("planSnapshot with its Job", () => {
  const location = "s3://snaps/ns/demo/s1-u-s1.snap";
  const done = { succeeded: true, location, completionTime: new Date("2026-12-07T09:59:40Z") };

  it("is Running while the Job runs", () => {
    const p = plan({ job: { succeeded: false } });
    expect(p.status.phase).toBe("Running");
    expect(p.action).toBeUndefined();
  });

  it("fails with the failed step's words, and drops the token", () => {
    const p = plan({
      job: { succeeded: false, failed: { reason: "BackoffLimitExceeded", message: "x; snapshot: HTTP 403" } },
    });
    expect(p.status.phase).toBe("Failed");
    expect(condition(p, "Degraded")?.message).toMatch(/snapshot: HTTP 403/);
    expect(p.dropToken).toBe(true);
  });

  it("succeeds with the verified snapshot's index, size, sha256 and the Job's location", () => {
    const p = plan({
      job: done,
      results: {
        save: { size: 1234, sha256: SHA, index: 77, term: 3 },
        upload: { location: "file:///x", size: 1234, sha256: SHA },
      },
    });
    expect(p.status).toEqual({
      phase: "Succeeded",
      size: 1234,
      sha256: SHA,
      location,
      raftIndex: 77,
      raftTerm: 3,
      completionTime: "2026-12-07T09:59:40.000Z",
    });
    expect(p.dropToken).toBe(true);
    expect(p.event?.reason).toBe("SnapshotSucceeded");
  });

  it("fails when what was stored is not the snapshot that was verified", () => {
    const p = plan({
      job: done,
      results: {
        save: { size: 1234, sha256: SHA, index: 77, term: 3 },
        upload: { location, size: 1234, sha256: "b".repeat(64) },
      },
    });
    expect(condition(p, "Degraded")?.reason).toBe("StoredSnapshotDiffers");
  });

  it("waits for the results, then fails when a container left none", () => {
    expect(condition(plan({ job: done }), "Progressing")?.reason).toBe("ReadingResults");
    expect(condition(plan({ job: done, results: {} }), "Degraded")?.reason).toBe("ResultUnreadable");
  });

  it("does nothing once ended, but drops a token left when the Job ended", () => {
    const ended = snapshot({}, { phase: "Succeeded" });
    expect(planSnapshot({ snapshot: ended, now })).toEqual({ status: {}, conditions: [] });
    expect(planSnapshot({ snapshot: ended, job: done, now }).dropToken).toBe(true);
  });
});

describe("planTokenFailed", () => {
  it("a 403 is Degraded SnapshotForbidden with the vault commands that grant the role", () => {
    const p = planTokenFailed(snapshot(), now, true, "1 error occurred: permission denied");
    expect(p.status.phase).toBe("Pending");
    expect(condition(p, "Degraded")).toMatchObject({ status: "True", reason: "SnapshotForbidden" });
    expect(condition(p, "Degraded")?.message).toMatch(
      /vault write auth\/token\/roles\/capstan-vault-snapshot/,
    );
    expect(p.event?.type).toBe("Warning");
  });

  it("another failure waits, and past the deadline fails", () => {
    expect(condition(planTokenFailed(snapshot(), now, false, "no answer"), "Progressing")?.reason).toBe(
      "VaultUnreachable",
    );
    const late = planTokenFailed(snapshot({ activeDeadlineSeconds: 30 }), now, true, "permission denied");
    expect(late.status.phase).toBe("Failed");
    expect(condition(late, "Degraded")?.reason).toBe("DeadlineExceeded");
  });
});
