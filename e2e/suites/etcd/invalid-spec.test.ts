// The API server rejects bad EtcdCluster specs with the schema's message: bounds, version format, storage rules,
// operator-owned etcd flags; and bad EtcdBackup and EtcdBackupSchedule specs: two destinations or none, a changed
// backup spec, an unknown deletionPolicy; and bad EtcdRestore specs: from: Backup without a source (or a source
// with two locations), from: Survivor with one, a changed spec.
// Needs only the CRDs (no operator): every cluster created here is paused, so an operator elsewhere leaves it
// alone; the backups name a cluster that does not exist.
import { type Client, isInvalid } from "@capstan/core";
import { connect, createNamespace, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { etcdCluster } from "./fixtures/etcd-cluster.ts";
import {
  type EtcdBackup,
  EtcdBackupKind,
  type EtcdBackupSchedule,
  EtcdBackupScheduleKind,
  type EtcdCluster,
  EtcdClusterKind,
  type EtcdClusterSpec,
  type EtcdRestore,
  EtcdRestoreKind,
} from "./fixtures/operator-api.ts";
import { ensureEtcdCrd, etcdSuitesEnabled } from "./fixtures/operator-release.ts";

let client: Client;
let ns: TestNamespace;

function paused(name: string, spec: Record<string, unknown>): EtcdCluster {
  return etcdCluster(ns.name, name, { paused: true, ...(spec as Partial<EtcdClusterSpec>) });
}

/** The API server's message for a write it must refuse as Invalid (422). */
async function rejection(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the API server accepted an invalid EtcdCluster").toBeDefined();
  expect(isInvalid(err), `want 422 Invalid, got ${String(err)}`).toBe(true);
  return (err as Error).message;
}

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster validation by the API server", () => {
  beforeAll(async () => {
    ({ client } = connect());
    await ensureEtcdCrd(client);
    ns = await createNamespace(client, "etcd-invalid");
  });
  afterAll(async () => {
    await ns?.cleanup();
    await client?.close();
  });

  it("fills the defaults of a minimal spec", async () => {
    const created = await client.create(EtcdClusterKind, {
      apiVersion: EtcdClusterKind.apiVersion,
      kind: EtcdClusterKind.kind,
      metadata: { name: "defaults", namespace: ns.name },
      spec: { paused: true } as EtcdClusterSpec,
    });
    expect(created.spec).toMatchObject({
      replicas: 3,
      version: "3.6.15",
      repository: "gcr.io/etcd-development/etcd",
      storage: { size: "8Gi" },
      recovery: {
        memberNotReadySeconds: 300,
        unschedulableSeconds: 300,
        terminatingSeconds: 300,
        learnerStallSeconds: 600,
      },
      maintenance: {
        autoCompactionMode: "periodic",
        autoCompactionRetention: "1h",
        defragThresholdPercent: 50,
      },
    });
  });

  it("rejects replicas out of 1..9", async () => {
    expect(await rejection(client.create(EtcdClusterKind, paused("zero", { replicas: 0 })))).toMatch(
      /spec\.replicas.*should be greater than or equal to 1/,
    );
    expect(await rejection(client.create(EtcdClusterKind, paused("ten", { replicas: 10 })))).toMatch(
      /spec\.replicas.*should be less than or equal to 9/,
    );
  });

  it("rejects a version with a leading v or outside 3.5/3.6", async () => {
    const rule = "version must be an etcd 3.5 or 3.6 release written MAJOR.MINOR.PATCH without a leading v";
    for (const [name, version] of [
      ["leading-v", "v3.6.15"],
      ["three-seven", "3.7.0"],
      ["two-parts", "3.6"],
    ] as const) {
      const message = await rejection(client.create(EtcdClusterKind, paused(name, { version })));
      expect(message, version).toMatch(/spec\.version/);
      expect(message, version).toContain(rule);
    }
  });

  it("rejects storage with both a size and ephemeral", async () => {
    const message = await rejection(
      client.create(EtcdClusterKind, paused("both", { storage: { size: "1Gi", ephemeral: true } })),
    );
    expect(message).toMatch(/spec\.storage/);
    expect(message).toContain("storage: set exactly one of size");
  });

  it("rejects a change of storage.storageClassName", async () => {
    await client.create(
      EtcdClusterKind,
      paused("immutable", { storage: { size: "1Gi", storageClassName: "standard" } }),
    );
    const message = await rejection(
      client.patch(EtcdClusterKind, "immutable", ns.name, {
        spec: { storage: { storageClassName: "fast" } },
      }),
    );
    expect(message).toMatch(/spec\.storage\.storageClassName/);
    expect(message).toContain("storage.storageClassName is immutable");
    const live = await client.get(EtcdClusterKind, "immutable", ns.name);
    expect(live.spec.storage.storageClassName).toBe("standard");
  });

  it("rejects out-of-bounds replicas through the scale subresource too", async () => {
    await client.create(EtcdClusterKind, paused("scaled", {}));
    const message = await rejection(
      client.patch(EtcdClusterKind, "scaled", ns.name, { spec: { replicas: 10 } }, "merge", {
        subresource: "scale",
      }),
    );
    expect(message).toMatch(/spec\.replicas.*should be less than or equal to 9/);
    expect((await client.get(EtcdClusterKind, "scaled", ns.name)).spec.replicas).toBe(3);
  });

  it("rejects a volume under 1Gi and a change of storage.size (the quota is derived from it)", async () => {
    const small = await rejection(
      client.create(EtcdClusterKind, paused("small", { storage: { size: "512Mi" } })),
    );
    expect(small).toMatch(/spec\.storage\.size/);
    expect(small).toContain("storage.size must be at least 1Gi");
    await client.create(EtcdClusterKind, paused("sized", { storage: { size: "2Gi" } }));
    const resized = await rejection(
      client.patch(EtcdClusterKind, "sized", ns.name, { spec: { storage: { size: "4Gi" } } }),
    );
    expect(resized).toContain("storage.size is immutable");
  });

  it("refuses etcd flags the operator owns, in extraArgs and as ETCD_* in extraEnv", async () => {
    const args = await rejection(
      client.create(
        EtcdClusterKind,
        paused("owned-flag", { extraArgs: { "snapshot-count": "100", "quota-backend-bytes": "1" } }),
      ),
    );
    expect(args).toMatch(/spec\.extraArgs/);
    expect(args).toContain("these flags are set by the operator");
    const dashes = await rejection(
      client.create(EtcdClusterKind, paused("dashes", { extraArgs: { "--snapshot-count": "100" } })),
    );
    expect(dashes).toContain("without the leading --");
    const env = await rejection(
      client.create(
        EtcdClusterKind,
        paused("owned-env", { extraEnv: [{ name: "ETCD_DATA_DIR", value: "/x" }] }),
      ),
    );
    expect(env).toMatch(/spec\.extraEnv/);
    const ok = await client.create(
      EtcdClusterKind,
      paused("extra-ok", {
        extraArgs: { "snapshot-count": "100" },
        extraEnv: [{ name: "GOMAXPROCS", value: "2" }],
      }),
    );
    expect(ok.spec.extraArgs).toEqual({ "snapshot-count": "100" });
  });

  it("bounds the recovery thresholds and the defragmentation threshold", async () => {
    expect(
      await rejection(
        client.create(EtcdClusterKind, paused("fast", { recovery: { terminatingSeconds: 5 } })),
      ),
    ).toMatch(/spec\.recovery\.terminatingSeconds.*greater than or equal to 30/);
    expect(
      await rejection(
        client.create(EtcdClusterKind, paused("defrag", { maintenance: { defragThresholdPercent: 99 } })),
      ),
    ).toMatch(/spec\.maintenance\.defragThresholdPercent.*less than or equal to 90/);
  });

  const s3 = { bucket: "backups", credentialsSecret: { name: "creds" } };
  const pvc = { claimName: "backups" };
  const backup = (name: string, spec: Record<string, unknown>): EtcdBackup => ({
    apiVersion: EtcdBackupKind.apiVersion,
    kind: EtcdBackupKind.kind,
    metadata: { name, namespace: ns.name },
    spec: { clusterName: "absent", ...spec } as EtcdBackup["spec"],
  });
  const schedule = (name: string, spec: Record<string, unknown>): EtcdBackupSchedule => ({
    apiVersion: EtcdBackupScheduleKind.apiVersion,
    kind: EtcdBackupScheduleKind.kind,
    metadata: { name, namespace: ns.name },
    spec: {
      schedule: "@daily",
      suspend: true,
      backupTemplate: { spec: { clusterName: "absent", ...spec } },
    } as EtcdBackupSchedule["spec"],
  });

  it("rejects an EtcdBackup or a schedule's template with two destinations or none", async () => {
    const rule = "destination: set exactly one of s3 or pvc";
    expect(
      await rejection(client.create(EtcdBackupKind, backup("both", { destination: { s3, pvc } }))),
    ).toContain(rule);
    expect(await rejection(client.create(EtcdBackupKind, backup("none", { destination: {} })))).toContain(
      rule,
    );
    const templated = await rejection(
      client.create(EtcdBackupScheduleKind, schedule("both", { destination: { s3, pvc } })),
    );
    expect(templated).toMatch(/spec\.backupTemplate\.spec\.destination/);
    expect(templated).toContain(rule);
  });

  it("defaults deletionPolicy to Retain for an EtcdBackup and Delete in a schedule's template; refuses others", async () => {
    const one = await client.create(EtcdBackupKind, backup("defaults", { destination: { pvc } }));
    expect(one.spec.deletionPolicy).toBe("Retain");
    const sched = await client.create(EtcdBackupScheduleKind, schedule("defaults", { destination: { s3 } }));
    expect(sched.spec.backupTemplate.spec.deletionPolicy).toBe("Delete");
    expect(
      await rejection(
        client.create(EtcdBackupKind, backup("bad-policy", { destination: { pvc }, deletionPolicy: "Keep" })),
      ),
    ).toMatch(/spec\.deletionPolicy.*Unsupported value: "Keep"/);
  });

  it("rejects any change of an EtcdBackup's spec, deletionPolicy included", async () => {
    await client.create(EtcdBackupKind, backup("frozen", { destination: { pvc } }));
    const policy = await rejection(
      client.patch(EtcdBackupKind, "frozen", ns.name, { spec: { deletionPolicy: "Delete" } }),
    );
    expect(policy).toContain("spec is immutable: create another EtcdBackup for another snapshot");
    const dest = await rejection(
      client.patch(EtcdBackupKind, "frozen", ns.name, {
        spec: { destination: { pvc: { claimName: "other" } } },
      }),
    );
    expect(dest).toContain("spec is immutable");
    const live = await client.get(EtcdBackupKind, "frozen", ns.name);
    expect(live.spec).toMatchObject({
      deletionPolicy: "Retain",
      destination: { pvc: { claimName: "backups" } },
    });
  });

  it("TLS: defaults the lifetimes, refuses renewBefore >= validity and two sources, and is fixed once created", async () => {
    const created = await client.create(
      EtcdClusterKind,
      paused("tls", { tls: { peer: {}, client: { operatorManaged: {} } } }),
    );
    expect(created.spec.tls?.client?.operatorManaged).toEqual({ validity: "2160h", renewBefore: "720h" });
    expect(
      await rejection(
        client.create(
          EtcdClusterKind,
          paused("tls-short", {
            tls: { client: { operatorManaged: { validity: "10m", renewBefore: "1h" } } },
          }),
        ),
      ),
    ).toMatch(/renewBefore must be shorter than validity/);
    expect(
      await rejection(
        client.create(
          EtcdClusterKind,
          paused("tls-both", { tls: { peer: { operatorManaged: {}, secretRef: { name: "x" } } } }),
        ),
      ),
    ).toMatch(/set at most one of operatorManaged and secretRef/);
    expect(
      await rejection(client.patch(EtcdClusterKind, "tls", ns.name, { spec: { tls: { peer: null } } })),
    ).toMatch(/cannot be turned on or off later/);
    expect(
      await rejection(
        client.patch(EtcdClusterKind, "tls", ns.name, {
          spec: { tls: { client: { operatorManaged: null, secretRef: { name: "mine" } } } },
        }),
      ),
    ).toMatch(/source of the client port certificates .* is immutable/);
    const plain = await client.create(EtcdClusterKind, paused("plain", {}));
    expect(plain.spec.tls).toBeUndefined();
    expect(
      await rejection(client.patch(EtcdClusterKind, "plain", ns.name, { spec: { tls: { client: {} } } })),
    ).toMatch(/cannot be turned on or off later/);
    // The lifetimes may change (the next renewal uses them).
    const longer = await client.patch(EtcdClusterKind, "tls", ns.name, {
      spec: { tls: { client: { operatorManaged: { validity: "4320h" } } } },
    });
    expect(longer.spec.tls?.client?.operatorManaged?.validity).toBe("4320h");
  });

  it("TLS from cert-manager: defaults the issuer's kind and group, refuses a second source, mixing with operatorManaged, short or inverted durations, and a changed issuer", async () => {
    const issuerRef = { name: "etcd-ca" };
    const created = await client.create(
      EtcdClusterKind,
      paused("tls-cm", {
        tls: {
          peer: { certManager: { issuerRef } },
          client: { certManager: { issuerRef, duration: "24h", renewBefore: "8h" } },
        },
      }),
    );
    expect(created.spec.tls?.peer?.certManager?.issuerRef).toEqual({
      name: "etcd-ca",
      kind: "Issuer",
      group: "cert-manager.io",
    });
    const refused = async (name: string, tls: Record<string, unknown>) =>
      rejection(client.create(EtcdClusterKind, paused(name, { tls })));
    expect(
      await refused("tls-cm-two", { peer: { certManager: { issuerRef }, secretRef: { name: "x" } } }),
    ).toMatch(/set at most one of operatorManaged, secretRef and certManager for the peer port/);
    expect(
      await refused("tls-cm-om", { client: { certManager: { issuerRef }, operatorManaged: {} } }),
    ).toMatch(/set at most one of operatorManaged, secretRef and certManager for the client port/);
    expect(await refused("tls-cm-mixed", { peer: { certManager: { issuerRef } }, client: {} })).toMatch(
      /certManager on one port cannot be combined with operatorManaged/,
    );
    expect(
      await refused("tls-cm-kind", { peer: { certManager: { issuerRef: { name: "x", kind: "Other" } } } }),
    ).toMatch(/Unsupported value: "Other"/);
    expect(await refused("tls-cm-short", { peer: { certManager: { issuerRef, duration: "30m" } } })).toMatch(
      /duration must be at least 1h/,
    );
    expect(
      await refused("tls-cm-renew", { peer: { certManager: { issuerRef, renewBefore: "1m" } } }),
    ).toMatch(/renewBefore must be at least 5m/);
    expect(
      await refused("tls-cm-inverted", {
        peer: { certManager: { issuerRef, duration: "2h", renewBefore: "2h" } },
      }),
    ).toMatch(/renewBefore must be shorter than duration/);
    expect(
      await refused("tls-cm-format", { peer: { certManager: { issuerRef, duration: "90 days" } } }),
    ).toMatch(/duration/);
    // A cert-manager port beside a user's Secret is fine.
    await client.create(
      EtcdClusterKind,
      paused("tls-cm-user", {
        tls: { peer: { secretRef: { name: "mine" } }, client: { certManager: { issuerRef } } },
      }),
    );
    // The issuer and the source are fixed; the lifetimes may change.
    for (const patch of [
      { peer: { certManager: { issuerRef: { name: "other" } } } },
      { peer: { certManager: { issuerRef: { kind: "ClusterIssuer" } } } },
      { peer: { certManager: null, secretRef: { name: "mine" } } },
    ]) {
      expect(
        await rejection(client.patch(EtcdClusterKind, "tls-cm", ns.name, { spec: { tls: patch } })),
      ).toMatch(/source of the peer port certificates .* is immutable/);
    }
    const longer = await client.patch(EtcdClusterKind, "tls-cm", ns.name, {
      spec: { tls: { client: { certManager: { duration: "48h" } } } },
    });
    expect(longer.spec.tls?.client?.certManager?.duration).toBe("48h");
  });

  it("network: each client selector needs a pod or namespace selector", async () => {
    expect(
      await rejection(
        client.create(
          EtcdClusterKind,
          paused("net", { network: { networkPolicy: true, clientSelectors: [{}] } }),
        ),
      ),
    ).toMatch(/each entry needs a podSelector or a namespaceSelector/);
  });

  it("EtcdRestore: from: Backup needs one source, Survivor takes none, bumpRevision is defaulted, the spec is fixed", async () => {
    const request = (name: string, spec: Record<string, unknown>): EtcdRestore => ({
      apiVersion: EtcdRestoreKind.apiVersion,
      kind: EtcdRestoreKind.kind,
      metadata: { name, namespace: ns.name },
      spec: { clusterName: "absent", ...spec } as EtcdRestore["spec"],
    });
    const rule = "spec.source is required with from: Backup and not allowed with from: Survivor";
    expect(
      await rejection(client.create(EtcdRestoreKind, request("no-source", { from: "Backup" }))),
    ).toContain(rule);
    expect(
      await rejection(
        client.create(
          EtcdRestoreKind,
          request("survivor-source", { from: "Survivor", source: { backup: { name: "b" } } }),
        ),
      ),
    ).toContain(rule);
    expect(
      await rejection(
        client.create(
          EtcdRestoreKind,
          request("two", {
            from: "Backup",
            source: { backup: { name: "b" }, pvc: { claimName: "c", path: "x.db" } },
          }),
        ),
      ),
    ).toContain("source: set exactly one of backup, s3 or pvc");
    expect(
      await rejection(
        client.create(
          EtcdRestoreKind,
          request("dotdot", { from: "Backup", source: { pvc: { claimName: "c", path: "../x.db" } } }),
        ),
      ),
    ).toContain("source.pvc.path must be a relative file path");
    const created = await client.create(
      EtcdRestoreKind,
      request("ok", { from: "Backup", source: { backup: { name: "b" } } }),
    );
    expect(created.spec.source?.bumpRevision).toBe(1_000_000_000);
    expect(
      await rejection(
        client.patch(EtcdRestoreKind, "ok", ns.name, { spec: { source: { backup: { name: "other" } } } }),
      ),
    ).toContain("spec is immutable: create another EtcdRestore");
  });
});
