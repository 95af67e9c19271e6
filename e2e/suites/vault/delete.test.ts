// Deleting a VaultCluster removes everything it owned (pods, claims, Services, ConfigMap, disruption budget, the
// operator-managed TLS Secrets) and keeps the keys Secret (spec.unseal.retainKeysOnDelete, default true); with
// retainKeysOnDelete: false the keys Secret goes too.
import type { Client } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installOperator, type OperatorRelease, vaultSuitesEnabled } from "./fixtures/operator-release.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  keysSecret,
  ownedObjects,
  printFailureReport,
  secretExists,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";

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
    "removes what the cluster owned and keeps the keys Secret by default",
    async () => {
      await client.create(VaultClusterKind, vaultCluster(ns, kept));
      await waitAvailable(client, ns, kept, 3, minutes(6));
      await waitVault(client, ns, kept, 3);
      const keysBefore = await keysSecret(client, ns, kept);
      const owned = await ownedObjects(client, ns, kept);
      expect(owned.pods).toHaveLength(3);
      expect(owned.services).toHaveLength(3);

      await client.delete(VaultClusterKind, kept, ns);
      await eventually(
        async () => {
          const left = await ownedObjects(client, ns, kept);
          // The keys Secret may carry the cluster's labels: it is the one object allowed to stay.
          expect({ ...left, secrets: left.secrets.filter((s) => s !== names(kept).keys) }).toEqual(nothing);
          const clusters = await client.list(VaultClusterKind, { namespace: ns });
          expect(clusters.items.map((c) => c.metadata.name)).not.toContain(kept);
        },
        { timeoutMs: minutes(3), intervalMs: 1_000, message: "everything the cluster owned is deleted" },
      );
      for (const s of [names(kept).ca, names(kept).tls])
        expect(await secretExists(client, ns, s), s).toBe(false);
      // Kept, unchanged, and no longer owned by the deleted cluster (nothing will garbage-collect it).
      expect(await keysSecret(client, ns, kept)).toEqual(keysBefore);
    },
    minutes(10),
  );

  it(
    "with retainKeysOnDelete: false, the keys Secret is deleted too",
    async () => {
      await client.create(
        VaultClusterKind,
        vaultCluster(ns, dropped, { replicas: 1, unseal: { retainKeysOnDelete: false } }),
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
