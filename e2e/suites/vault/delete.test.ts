// Deleting a VaultCluster removes what it owned (pods, Services, ConfigMap, disruption budget, the operator-managed
// TLS Secrets) and keeps the raft data claims (spec.storage.whenDeleted, default Retain) and the keys Secret
// (spec.unseal.retainKeysOnDelete, default true): a VaultCluster created again under the same name comes back with
// its data, unsealed, as the same Vault cluster. With whenDeleted: Delete and retainKeysOnDelete: false, everything
// goes. The garbage collector here is the real kube-controller-manager's.
import { type Client, PersistentVolumeClaim } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  keysSecret,
  ownedObjects,
  printFailureReport,
  secretExists,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, kvGet, kvPut } from "./fixtures/vault-http.ts";

const kept = "kept";
const dropped = "dropped";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

const nothing = { pods: [], pvcs: [], services: [], configMaps: [], pdbs: [], secrets: [] as string[] };

describe.skipIf(!vaultSuitesEnabled)("deleting a VaultCluster", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "vault-delete");
    ns = nsObj.name;
    op = await installOperator(client, ns, ns);
  }, minutes(5));

  afterAll(
    () =>
      tearDownSuite(
        client,
        [
          { namespace: ns, name: kept },
          { namespace: ns, name: dropped },
        ],
        op,
        [nsObj],
      ),
    minutes(5),
  );

  beforeEach(({ onTestFailed }) => {
    onTestFailed(async () => {
      await printFailureReport(client, ns, kept, op);
      await printFailureReport(client, ns, dropped, undefined);
    });
  });

  it(
    "keeps the data claims and the keys Secret by default; created again, the cluster comes back with its data",
    async () => {
      await client.create(VaultClusterKind, vaultCluster(ns, kept));
      await waitAvailable(client, ns, kept, 3, minutes(6));
      const before = await waitVault(client, ns, kept, 3);
      const active = await serviceTarget(client, ns, names(kept).activeService, before.ca, kept);
      await enableKv(active, before.token);
      await kvPut(active, before.token, "delete/kept", { survives: "yes" });
      const keysBefore = await keysSecret(client, ns, kept);
      const owned = await ownedObjects(client, ns, kept);
      expect(owned.pods).toHaveLength(3);
      expect(owned.services).toHaveLength(3);
      const claimUids = async () =>
        Object.fromEntries(
          (await client.list(PersistentVolumeClaim, { namespace: ns })).items
            .filter((c) => owned.pvcs.includes(c.metadata.name ?? ""))
            .map((c) => [c.metadata.name, c.metadata.uid]),
        );
      const claimsBefore = await claimUids();
      expect(Object.keys(claimsBefore)).toHaveLength(3);

      await client.delete(VaultClusterKind, kept, ns);
      await eventually(
        async () => {
          const left = await ownedObjects(client, ns, kept);
          // Kept: the data claims, and the keys Secret (it may carry the cluster's labels).
          expect({ ...left, secrets: left.secrets.filter((s) => s !== names(kept).keys) }).toEqual({
            ...nothing,
            pvcs: owned.pvcs,
          });
          const clusters = await client.list(VaultClusterKind, { namespace: ns });
          expect(clusters.items.map((c) => c.metadata.name)).not.toContain(kept);
        },
        {
          timeoutMs: minutes(3),
          intervalMs: 1_000,
          message: "what the cluster owned is deleted, its claims kept",
        },
      );
      for (const s of [names(kept).ca, names(kept).tls])
        expect(await secretExists(client, ns, s), s).toBe(false);
      // Kept, unchanged, and owned by nothing (nothing will garbage-collect them).
      expect(await keysSecret(client, ns, kept)).toEqual(keysBefore);
      for (const c of (await client.list(PersistentVolumeClaim, { namespace: ns })).items) {
        if (owned.pvcs.includes(c.metadata.name ?? ""))
          expect(c.metadata.ownerReferences ?? [], c.metadata.name).toEqual([]);
      }

      // Created again under the same name: the same claims (same uids), the same Vault cluster, the data back.
      await client.create(VaultClusterKind, vaultCluster(ns, kept));
      await waitAvailable(client, ns, kept, 3, minutes(6));
      const after = await waitVault(client, ns, kept, 3);
      expect(after.clusterId).toBe(before.clusterId);
      expect(await claimUids()).toEqual(claimsBefore);
      const again = await serviceTarget(client, ns, names(kept).activeService, after.ca, kept);
      expect(await kvGet(again, after.token, "delete/kept")).toEqual({ survives: "yes" });
    },
    minutes(16),
  );

  it(
    "with whenDeleted: Delete and retainKeysOnDelete: false, the claims and the keys Secret are deleted too",
    async () => {
      await client.create(
        VaultClusterKind,
        vaultCluster(ns, dropped, {
          replicas: 1,
          storage: { size: "1Gi", whenDeleted: "Delete" },
          unseal: { retainKeysOnDelete: false },
        }),
      );
      await waitAvailable(client, ns, dropped, 1, minutes(6));
      expect(await secretExists(client, ns, names(dropped).keys)).toBe(true);
      await client.delete(VaultClusterKind, dropped, ns);
      await eventually(
        async () => {
          expect(await ownedObjects(client, ns, dropped)).toEqual(nothing);
          expect(await secretExists(client, ns, names(dropped).keys)).toBe(false);
        },
        {
          timeoutMs: minutes(3),
          intervalMs: 1_000,
          message: "everything, the keys Secret included, is deleted",
        },
      );
    },
    minutes(8),
  );
});
