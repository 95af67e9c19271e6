// spec.restore through the VaultCluster controller, against core's in-memory API server and a scripted Vault whose
// keyring the "restore" swaps (as snapshot-force does): every reconcile is a fresh controller reading only the
// objects (an operator restarted at each step), the whole walk from nothing to a confirmed restore, and the faults: a
// claim holding data, the keys missing, keys that do not open the restored data (both key sets kept, nothing
// deleted), a status wiped mid-way.
import type { KubeObject } from "@capstan/core";
import { reconcileOnce } from "@capstan/core/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type VaultCluster, VaultClusterKind } from "../api/vault-cluster.ts";
import { type VaultSnapshot, VaultSnapshotKind } from "../api/vault-snapshot.ts";
import { dataClaim } from "../desired/objects.ts";
import { type VaultClient, VaultError } from "../vault/vault-client.ts";
import { reconcileVaultCluster } from "./controller.ts";
import type { KeysKeeper } from "./keys-keeper.ts";
import { VaultOperatorMetrics } from "./metrics.ts";
import type { VaultTarget } from "./observe.ts";
import { cluster as baseCluster, keysSecretWithToken, serverKeeper } from "./test-fixture.ts";

const kinds = [VaultClusterKind, VaultSnapshotKind];
const SHA = "d".repeat(64);

const restoringCluster = (): VaultCluster => ({
  ...baseCluster(1),
  spec: { ...baseCluster(1).spec, restore: { snapshot: { name: "s1" } } },
});

const snapshot: VaultSnapshot = {
  apiVersion: VaultSnapshotKind.apiVersion,
  kind: VaultSnapshotKind.kind,
  metadata: { name: "s1", namespace: "ns", uid: "u-s1" },
  spec: {
    clusterName: "demo",
    destination: { s3: { bucket: "snaps", credentialsSecret: { name: "creds" } } },
  },
  status: {
    phase: "Succeeded",
    location: "s3://snaps/ns/demo/s1-u-s1.snap",
    sha256: SHA,
    size: 4096,
    vaultVersion: "1.14.8",
    clusterID: "cid-old",
  },
};

/** The S3 credentials the restore Job reads (the VaultSnapshot's destination names them). */
const creds = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "creds", namespace: "ns" },
  data: { AWS_ACCESS_KEY_ID: "YQ==", AWS_SECRET_ACCESS_KEY: "Yg==" },
} as KubeObject;

/** One Vault server whose data is the temporary Vault's, then (once `restore()` ran) the snapshot's. */
class ScriptedVault {
  initialized = false;
  sealed = true;
  data: "temp" | "old" = "temp";
  /** As real Vault: after a restore, the temporary seal configuration stays in memory until a restart. */
  staleSealConfig = false;
  podGone = false;
  calls: string[] = [];
  readonly keys = { temp: ["VA=="], old: ["QQ==", "Qg=="] };
  restore(): void {
    this.data = "old";
    this.sealed = true;
    this.staleSealConfig = true;
  }
  /** The server's process started again (its pod made again): it reads the seal configuration from its data. */
  restarted(): void {
    this.staleSealConfig = false;
    if (this.initialized) this.sealed = true;
  }
  factory = (_t: VaultTarget) => {
    const v = this;
    return {
      close: async () => undefined,
      health: async () => ({
        initialized: v.initialized,
        sealed: v.sealed,
        standby: false,
        version: "1.14.8",
        ...(v.initialized && !v.sealed ? { cluster_id: v.data === "temp" ? "cid-temp" : "cid-old" } : {}),
      }),
      sealStatus: async () => ({ sealed: v.sealed, initialized: v.initialized, t: 1, n: 1, progress: 0 }),
      init: async (shares: number, threshold: number) => {
        v.calls.push(`init ${shares}/${threshold}`);
        v.initialized = true;
        return { keys: ["T"], keys_base64: v.keys.temp, root_token: "hvs.temp-root" };
      },
      unsealWith: async (keys: string[]) => {
        const opens = keys.join() === v.keys[v.data].join() && !(v.staleSealConfig && v.data === "old");
        v.calls.push(`unseal ${opens ? "ok" : "refused"}`);
        if (!opens) throw new VaultError("/v1/sys/unseal", 400, ["cipher: message authentication failed"]);
        v.sealed = false;
        return { sealed: false, t: 1, n: 1, progress: 0 };
      },
      resetUnseal: async () => ({ sealed: v.sealed, t: 1, n: 1, progress: 0 }),
      writePolicy: async (name: string) => {
        v.calls.push(`policy ${name}`);
      },
      createLimitedToken: async (input: { policies?: string[]; numUses: number }) => {
        v.calls.push(`token ${input.policies?.join()} x${input.numUses}`);
        return "hvs.restore-token";
      },
    } as unknown as VaultClient;
  };
}

function reconciler(vault: ScriptedVault, keys: KeysKeeper) {
  return ((req, ctx) =>
    reconcileVaultCluster(req, ctx, {
      metrics: new VaultOperatorMetrics(new Registry()),
      keys,
      reloaderImage: "busybox:1.37",
      operatorImage: "op:1",
      vaultClient: vault.factory,
    })) as Parameters<typeof reconcileOnce>[0];
}

/** What the kubelet would report: pod 0 running with an IP (and its process started again when it was made again). */
function kubelet(objects: KubeObject[], vault?: ScriptedVault): KubeObject[] {
  const pod = objects.find((o) => o.kind === "Pod" && o.metadata.name === "demo-0");
  if (vault !== undefined) {
    if (pod === undefined) vault.podGone = true;
    else if (vault.podGone) {
      vault.podGone = false;
      vault.restarted();
    }
  }
  return objects.map((o) => {
    if (o.kind !== "Pod" || o.metadata.name !== "demo-0") return o;
    return {
      ...o,
      status: { phase: "Running", podIP: "10.0.0.1", conditions: [{ type: "Ready", status: "False" }] },
    } as KubeObject;
  });
}

const claimMark = (objects: KubeObject[]) =>
  objects.find((o) => o.kind === "PersistentVolumeClaim" && o.metadata.name === "data-demo-0")?.metadata
    .annotations?.["vault.capstan.dev/restore"];
const statusOf = (objects: KubeObject[]) =>
  (objects.find((o) => o.kind === "VaultCluster") as VaultCluster | undefined)?.status;
const degraded = (objects: KubeObject[]) => statusOf(objects)?.conditions?.find((c) => c.type === "Degraded");

async function step(vault: ScriptedVault, keeper: ReturnType<typeof serverKeeper>, objects: KubeObject[]) {
  const run = await reconcileOnce(reconciler(vault, keeper.keys), {
    kinds,
    objects: kubelet(objects, vault),
    request: restoringCluster(),
    setup: keeper.bind,
  });
  run.expectNoError();
  await keeper.keys.idle();
  return run;
}

describe("spec.restore through the controller", () => {
  it("walks from nothing to a confirmed restore, each step from the objects alone", async () => {
    const vault = new ScriptedVault();
    const keeper = serverKeeper();
    let objects: KubeObject[] = [restoringCluster(), snapshot, creds, keysSecretWithToken()];
    const steps: string[] = [];
    const next = async () => {
      const run = await step(vault, keeper, objects);
      objects = run.objects;
      steps.push(
        ...run.events
          .filter((e) => e.type === "Normal" && e.reason.startsWith("Restore"))
          .map((e) => e.reason),
      );
      return run;
    };
    // TLS and the first pod on a claim made for the restore.
    for (let i = 0; i < 3 && !objects.some((o) => o.kind === "Pod"); i++) await next();
    expect(claimMark(objects)).toBe("pending");
    await next(); // InitTemporary: one share, its keys apart
    expect(vault.calls).toContain("init 1/1");
    const temp = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-restore-keys") as
      | (KubeObject & { data?: Record<string, string> })
      | undefined;
    expect(temp?.data?.["unseal-key-0"]).toBeDefined();
    // The cluster's own keys Secret is untouched.
    const own = objects.find((o) => o.kind === "Secret" && o.metadata.name === "demo-unseal-keys") as
      | (KubeObject & { data?: Record<string, string> })
      | undefined;
    expect(own?.data).toEqual((keysSecretWithToken() as KubeObject & { data?: unknown }).data);
    await next(); // UnsealTemporary
    await next(); // MakeToken
    expect(vault.calls).toContain("token capstan-vault-restore x3");
    await next(); // CreateJob, the claim marked forced first
    expect(claimMark(objects)).toBe("forced");
    const job = objects.find((o) => o.kind === "Job" && o.metadata.name === "demo-restore");
    expect(job).toBeDefined();
    expect(JSON.stringify(job)).not.toContain("hvs.");
    expect(statusOf(objects)?.phase).toBe("Restoring");
    // The temporary Vault's cluster_id is never taken for the cluster's.
    expect(statusOf(objects)?.clusterID).not.toBe("cid-temp");

    // The Job ran: the server holds the snapshot and sealed itself.
    vault.restore();
    (job as KubeObject & { status?: unknown }).status = {
      conditions: [{ type: "Complete", status: "True" }],
    };
    await next(); // UnsealRestored: refused (the seal configuration in memory), so the server is restarted
    expect(objects.some((o) => o.kind === "Pod" && o.metadata.name === "demo-0")).toBe(false);
    expect(claimMark(objects)).toBe("forced");
    await next(); // CreateFirstPod again, on the same claim
    await next(); // UnsealRestored, with the snapshot's keys
    expect(vault.calls.at(-1)).toBe("unseal ok");
    await next(); // Confirm
    expect(claimMark(objects)).toBe("done");
    expect(statusOf(objects)?.restore).toMatchObject({ source: "snapshot/s1", clusterID: "cid-old" });
    for (const gone of ["demo-restore-keys", "demo-restore-token"]) {
      expect(
        objects.find((o) => o.kind === "Secret" && o.metadata.name === gone),
        gone,
      ).toBeUndefined();
    }
    expect(objects.find((o) => o.kind === "Job")).toBeUndefined();
    expect(steps).toEqual(
      expect.arrayContaining([
        "RestoreCreateFirstPod",
        "RestoreInitTemporary",
        "RestoreUnsealTemporary",
        "RestoreMakeToken",
        "RestoreCreateJob",
        "RestoreUnsealRestored",
      ]),
    );
    // Handed back: the cluster's own planner goes on (no restore step any more).
    const after = await step(vault, keeper, objects);
    expect(after.events.filter((e) => e.reason.startsWith("Restore"))).toEqual([]);
  });

  it("keys that do not open the restored data: Degraded RestoreKeysMismatch, both key sets kept, nothing deleted", async () => {
    const vault = new ScriptedVault();
    vault.initialized = true;
    vault.restore();
    const keeper = serverKeeper();
    const claim = dataClaim(restoringCluster(), "demo-0");
    claim.metadata.annotations = { "vault.capstan.dev/restore": "forced" };
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "demo-0",
        namespace: "ns",
        labels: {
          "app.kubernetes.io/name": "vault",
          "app.kubernetes.io/instance": "demo",
          "app.kubernetes.io/managed-by": "capstan-vault-operator",
        },
        ownerReferences: [
          {
            apiVersion: VaultClusterKind.apiVersion,
            kind: "VaultCluster",
            name: "demo",
            uid: "u1",
            controller: true,
          },
        ],
      },
      spec: { containers: [{ name: "vault", image: "hashicorp/vault:1.14.8" }] },
    } as KubeObject;
    const wrongKeys = keysSecretWithToken() as KubeObject & { data: Record<string, string> };
    wrongKeys.data["unseal-key-0"] = Buffer.from("WA==").toString("base64");
    const tempKeys = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "demo-restore-keys",
        namespace: "ns",
        labels: { "app.kubernetes.io/managed-by": "capstan-vault-operator" },
        annotations: { "vault.capstan.dev/temporary-cluster-id": "cid-temp" },
      },
      data: {
        "unseal-key-0": Buffer.from("VA==").toString("base64"),
        "root-token": Buffer.from("hvs.t").toString("base64"),
      },
    } as KubeObject;
    let objects: KubeObject[] = [restoringCluster(), snapshot, creds, wrongKeys, tempKeys, claim, pod];
    // The first reconcile issues the certificates; the next ones judge.
    for (let i = 0; i < 3; i++) objects = (await step(vault, keeper, objects)).objects;
    expect(degraded(objects)).toMatchObject({ status: "True", reason: "RestoreKeysMismatch" });
    expect(degraded(objects)?.message).toMatch(/spec.restore.unsealKeysSecret/);
    expect(vault.sealed).toBe(true);
    expect(objects.find((o) => o.metadata.name === "demo-restore-keys")).toBeDefined();
    expect(objects.find((o) => o.metadata.name === "demo-unseal-keys")).toBeDefined();
    expect(objects.some((o) => o.kind === "PersistentVolumeClaim" && o.metadata.name === "data-demo-0")).toBe(
      true,
    );
    // The right keys put back: unsealed, and confirmed.
    const fixed = objects.map((o) => (o.metadata.name === "demo-unseal-keys" ? keysSecretWithToken() : o));
    objects = (await step(vault, keeper, fixed)).objects;
    expect(vault.sealed).toBe(false);
    objects = (await step(vault, keeper, objects)).objects;
    expect(claimMark(objects)).toBe("done");
  });

  it("never restores over a data claim it did not make, nor without the keys or the S3 credentials", async () => {
    const vault = new ScriptedVault();
    const keeper = serverKeeper();
    const kept = dataClaim(restoringCluster(), "demo-0");
    let objects: KubeObject[] = [restoringCluster(), snapshot, creds, keysSecretWithToken(), kept];
    for (let i = 0; i < 2; i++) objects = (await step(vault, keeper, objects)).objects;
    expect(degraded(objects)).toMatchObject({ status: "True", reason: "RestoreOverData" });
    expect(objects.some((o) => o.kind === "Pod")).toBe(false);
    expect(vault.calls).toEqual([]);

    let noKeys: KubeObject[] = [restoringCluster(), snapshot, creds];
    for (let i = 0; i < 2; i++) noKeys = (await step(vault, keeper, noKeys)).objects;
    expect(degraded(noKeys)).toMatchObject({ status: "True", reason: "RestoreKeysMissing" });
    expect(noKeys.some((o) => o.kind === "Pod" || o.kind === "PersistentVolumeClaim")).toBe(false);
    expect(noKeys.map((o) => o.kind)).not.toContain("Job");

    // The snapshot's S3 credentials missing: refused before anything is made.
    let noCreds: KubeObject[] = [restoringCluster(), snapshot, keysSecretWithToken()];
    for (let i = 0; i < 2; i++) noCreds = (await step(vault, keeper, noCreds)).objects;
    expect(degraded(noCreds)).toMatchObject({ status: "True", reason: "RestoreCredentialsMissing" });
    expect(degraded(noCreds)?.message).toMatch(
      /VaultSnapshot s1's spec.destination.s3.credentialsSecret.name/,
    );
    expect(noCreds.some((o) => o.kind === "Pod")).toBe(false);
  });
});
