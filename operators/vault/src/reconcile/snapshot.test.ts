// The VaultSnapshot controller against core's in-memory API server and a scripted Vault: the Job's token is made
// through the active pod with the operator's token, against the snapshot role, kept in a Secret only the Job mounts
// (never in status or events) and deleted once the Job ended; a refused token is Degraded with no Job; a finished
// snapshot's next reconcile writes nothing.
import { Job, type KubeObject, Pod, Secret } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { describe, expect, it } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { type VaultSnapshot, VaultSnapshotKind } from "../api/vault-snapshot.ts";
import { tlsSecret } from "../desired/objects.ts";
import type { VaultClient } from "../vault/vault-client.ts";
import { VaultError } from "../vault/vault-client.ts";
import type { VaultTarget } from "./observe.ts";
import { reconcileVaultSnapshot } from "./snapshot.ts";
import { cluster, keysSecretWithToken, podObjects } from "./test-fixture.ts";

const SHA = "c".repeat(64);
const kinds = [VaultClusterKind, VaultSnapshotKind];

const snapshot: VaultSnapshot = {
  apiVersion: VaultSnapshotKind.apiVersion,
  kind: VaultSnapshotKind.kind,
  metadata: { name: "s1", namespace: "ns", uid: "u-s1", generation: 1 },
  spec: {
    clusterName: "demo",
    destination: { s3: { bucket: "snaps", credentialsSecret: { name: "creds" } } },
    activeDeadlineSeconds: 600,
  },
};

function world(): KubeObject[] {
  const c: VaultCluster = {
    ...cluster(3),
    status: { active: "demo-1", clusterID: "cid-1", currentVersion: "1.14.8" },
  };
  return [
    c,
    ...podObjects(c, 1),
    keysSecretWithToken(),
    tlsSecret(c, "demo-tls", { cert: "CERT", key: "KEY" }, "CA PEM"),
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "creds", namespace: "ns" },
      data: { AWS_ACCESS_KEY_ID: "YQ==", AWS_SECRET_ACCESS_KEY: "Yg==" },
    } as KubeObject,
    snapshot,
  ];
}

/** A scripted Vault whose createLimitedToken records what it was asked (or throws `refuse`). */
function vault(asked: { target: VaultTarget; input: unknown }[], refuse?: VaultError) {
  return (target: VaultTarget) =>
    ({
      createLimitedToken: async (input: unknown) => {
        asked.push({ target, input });
        if (refuse !== undefined) throw refuse;
        return "hvs.job-token";
      },
      close: async () => undefined,
    }) as unknown as VaultClient;
}

const run = (objects: KubeObject[], asked: { target: VaultTarget; input: unknown }[], refuse?: VaultError) =>
  reconcileOnce(
    (req, ctx) =>
      reconcileVaultSnapshot(req, ctx, { operatorImage: "op:1", vaultClient: vault(asked, refuse) }),
    { kinds, objects, request: snapshot },
  );

describe("VaultSnapshot reconcile", () => {
  it("makes a limited token through the active pod with the operator's token, its Secret, then the Job", async () => {
    const asked: { target: VaultTarget; input: unknown }[] = [];
    const first = await run(world(), asked);
    first.expectNoError();
    expect(asked).toEqual([
      {
        target: expect.objectContaining({ address: "https://10.0.0.2:8200", token: "hvs.op", ca: "CA PEM" }),
        input: { role: "capstan-vault-snapshot", ttl: "600s", numUses: 3, displayName: "vault-snapshot-s1" },
      },
    ]);
    const secret = first.get(Secret, "s1-vault-token", "ns");
    expect(Buffer.from(secret?.data?.token ?? "", "base64").toString()).toBe("hvs.job-token");
    expect(first.get(Job, "s1", "ns")).toBeDefined();
    const status = first.get(VaultSnapshotKind, "s1", "ns")?.status;
    expect(status).toMatchObject({
      phase: "Running",
      clusterID: "cid-1",
      vaultVersion: "1.14.8",
      jobName: "s1",
    });
    // The token is in its Secret only.
    expect(JSON.stringify(status)).not.toContain("hvs.job-token");
    expect(JSON.stringify(first.events)).not.toContain("hvs.job-token");
    expect(JSON.stringify(first.get(Job, "s1", "ns"))).not.toContain("hvs.job-token");

    // The Job succeeded: the results are read from its pod, the token's Secret goes.
    const job = first.get(Job, "s1", "ns") as KubeObject & { status?: unknown };
    job.status = {
      startTime: "2026-12-07T10:00:00Z",
      completionTime: "2026-12-07T10:00:30Z",
      conditions: [{ type: "Complete", status: "True" }],
    };
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "s1-abcde",
        namespace: "ns",
        labels: {
          "vault.capstan.dev/snapshot": "s1",
          "app.kubernetes.io/managed-by": "capstan-vault-operator",
        },
      },
      spec: { containers: [{ name: "upload", image: "op:1" }] },
      status: {
        phase: "Succeeded",
        initContainerStatuses: [
          {
            name: "snapshot",
            state: {
              terminated: {
                exitCode: 0,
                message: JSON.stringify({ size: 10, sha256: SHA, index: 9, term: 2 }),
              },
            },
          },
        ],
        containerStatuses: [
          {
            name: "upload",
            state: {
              terminated: {
                exitCode: 0,
                message: JSON.stringify({ location: "s3://snaps/x", size: 10, sha256: SHA }),
              },
            },
          },
        ],
      },
    } as unknown as KubeObject;
    const second = await run(
      [...first.objects.filter((o) => o.metadata.name !== "s1" || o.kind !== "Job"), job, pod],
      asked,
    );
    second.expectNoError();
    expect(second.get(VaultSnapshotKind, "s1", "ns")?.status).toMatchObject({
      phase: "Succeeded",
      size: 10,
      sha256: SHA,
      raftIndex: 9,
      location: "s3://snaps/ns/demo/s1-u-s1.snap",
    });
    expect(second.get(Secret, "s1-vault-token", "ns")).toBeUndefined();
    expect(asked).toHaveLength(1);

    const third = await run(second.objects, asked);
    third.expectNoError();
    third.expectNoWrites();
    expect(second.get(Pod, "s1-abcde", "ns")).toBeDefined();
  });

  it("with deletionPolicy Delete, adds the finalizer before the Job; with the default Retain, none", async () => {
    const asked: { target: VaultTarget; input: unknown }[] = [];
    const del: VaultSnapshot = { ...snapshot, spec: { ...snapshot.spec, deletionPolicy: "Delete" } };
    const r = await reconcileOnce(
      (req, ctx) => reconcileVaultSnapshot(req, ctx, { operatorImage: "op:1", vaultClient: vault(asked) }),
      { kinds, objects: [...world().filter((o) => o.kind !== "VaultSnapshot"), del], request: del },
    );
    r.expectNoError();
    expect(r.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers).toEqual([
      "vault.capstan.dev/delete-snapshot",
    ]);
    const order = r.writes.map(
      (w) => `${w.verb} ${w.kind}${w.subresource === "" ? "" : `/${w.subresource}`}`,
    );
    expect(order.indexOf("patch VaultSnapshot")).toBeGreaterThanOrEqual(0);
    expect(order.indexOf("patch VaultSnapshot")).toBeLessThan(order.indexOf("create Job"));
    const retained = await run(world(), []);
    expect(retained.get(VaultSnapshotKind, "s1", "ns")?.metadata.finalizers).toBeUndefined();
  });

  it("a token Vault refuses is Degraded SnapshotForbidden, with no Secret and no Job", async () => {
    const asked: { target: VaultTarget; input: unknown }[] = [];
    const refused = await run(
      world(),
      asked,
      new VaultError("/v1/auth/token/create/capstan-vault-snapshot", 403, ["permission denied"]),
    );
    refused.expectNoError();
    expect(refused.get(Job, "s1", "ns")).toBeUndefined();
    expect(refused.get(Secret, "s1-vault-token", "ns")).toBeUndefined();
    const degraded = refused
      .get(VaultSnapshotKind, "s1", "ns")
      ?.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "SnapshotForbidden" });
    expect(refused.events.map((e) => e.reason)).toEqual(["SnapshotForbidden"]);
  });

  it("missing S3 credentials fail it before any token is made", async () => {
    const asked: { target: VaultTarget; input: unknown }[] = [];
    const failed = await run(
      world().filter((o) => o.metadata.name !== "creds"),
      asked,
    );
    failed.expectNoError();
    expect(asked).toEqual([]);
    expect(failed.get(VaultSnapshotKind, "s1", "ns")?.status?.phase).toBe("Failed");
  });
});
